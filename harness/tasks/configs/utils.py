"""Scoring functions the task YAML beside this file names with `!function utils.<name>`."""

from __future__ import annotations

from typing import Any

from harness.tasks.ruler import score


def _answer(generation: str) -> str:
    return generation.strip().split("\n")[0].strip()


def process_recall(doc: dict[str, Any], results: list[str]) -> dict[str, float]:
    """The first line of the generation must be the planted value (surrounding spaces and a final full stop
    aside). answer_in_context is the share of items whose value survived truncation: the evaluate stage
    also scores exact_match over those alone, so that a report can tell 'cut away' from 'not recalled'."""
    answer = _answer(results[0]).rstrip(".")
    return {"exact_match": float(answer == doc["answer"]), "answer_in_context": float(doc["in_context"])}


def process_section_bpb(doc: dict[str, Any], results: list[tuple[float, bool]]) -> dict[str, tuple[float, int]]:
    loglikelihood, _ = results[0]
    return {"bits_per_byte": (loglikelihood, len(doc["continuation"].encode("utf-8")))}


def process_ruler(doc: dict[str, Any], results: list[str]) -> dict[str, float]:
    return score(results[0], doc["answers"])
