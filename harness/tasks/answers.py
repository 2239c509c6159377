"""How a recall answer is scored: exact match of the first line (the older metric), and a normalised match that
reads the answer the way the task means it. The rule, as the study's methods state it (docs/quality-study.md):
both the first line and the answer are normalised (Unicode NFKC, lower case, punctuation and symbols such as
currency signs and thousands separators deleted, runs of white space folded), and the answer counts when it stands
in the line as a whole-word span: "Dr. Maria Lopez." holds "Maria Lopez", "$1,284,300" is "$1,284,300", but
"12843001" does not hold "1284300"."""

from __future__ import annotations

import unicodedata


def first_line(generation: str) -> str:
    return generation.strip().split("\n")[0].strip()


def normalise(text: str) -> str:
    folded = unicodedata.normalize("NFKC", text).lower()
    kept = "".join(ch for ch in folded if unicodedata.category(ch)[0] not in "PS")
    return " ".join(kept.split())


def exact(generation: str, answer: str) -> bool:
    """The first line is the answer, surrounding spaces and a final full stop aside."""
    return first_line(generation).rstrip(".") == answer


def holds(generation: str, answer: str) -> bool:
    """The normalised answer stands as a whole-word span in the normalised first line."""
    wanted = normalise(answer)
    return bool(wanted) and f" {wanted} " in f" {normalise(first_line(generation))} "
