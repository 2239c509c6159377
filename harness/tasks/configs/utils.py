"""Scoring functions the task YAML beside this file names with `!function utils.<name>`."""

from __future__ import annotations

from typing import Any

from harness.tasks.answers import exact, holds
from harness.tasks.ruler import score


def process_recall(doc: dict[str, Any], results: list[str]) -> dict[str, float]:
    """exact_match: the first line of the generation is the planted value; recall: it holds the value once both
    are normalised (harness/tasks/answers.py). answer_in_context is the share of items whose value survived
    truncation: the evaluate stage also scores exact_match over those alone, so that a report can tell 'cut
    away' from 'not recalled'."""
    return {"exact_match": float(exact(results[0], doc["answer"])), "recall": float(holds(results[0], doc["answer"])),
            "answer_in_context": float(doc["in_context"])}


def process_section_bpb(doc: dict[str, Any], results: list[tuple[float, bool]]) -> dict[str, tuple[float, int]]:
    loglikelihood, _ = results[0]
    return {"bits_per_byte": (loglikelihood, len(doc["continuation"].encode("utf-8")))}


def process_ruler(doc: dict[str, Any], results: list[str]) -> dict[str, float]:
    return score(results[0], doc["answers"])
