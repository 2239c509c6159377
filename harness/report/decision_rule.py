"""The one decision rule of every quality verdict: bootstrap p-values, Holm's step-down over each family, each
comparison's interval at the level its Holm step gives it, and the word. Why it is so: docs/quality.md.

The interval of a comparison is cut from its draws at ranks chosen with the p-value's own +1 correction, so that
the interval excludes 0 exactly when p is at or under 1 - level: the word and the printed interval always agree.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from harness.spec.comparisons import DEFAULT_MIN_SEEDS

ALPHA = 0.05
MIN_SEEDS = DEFAULT_MIN_SEEDS  # where a matrix declares no min_seeds
WORDS = ("higher", "lower", "no difference", "inconclusive")
NO_VERDICT = "no verdict"


def p_value(draws: np.ndarray) -> float:
    """Two-sided: twice the smaller share of draws on either side of 0 (a draw at 0 counts on both), each share
    with the usual +1 correction, at most 1."""
    below, above = int(np.count_nonzero(draws <= 0)), int(np.count_nonzero(draws >= 0))
    return min(1.0, 2 * (min(below, above) + 1) / (len(draws) + 1))


def interval(draws: np.ndarray, level: float) -> tuple[float, float]:
    """The draws' interval at `level`: the r-th smallest and largest draw, r = floor((1 - level) (B + 1) / 2), which
    excludes 0 exactly when p_value <= 1 - level; unbounded where the draws are too few for the level."""
    rank = math.floor((1 - level) * (len(draws) + 1) / 2 + 1e-9)
    if rank < 1:
        return -math.inf, math.inf
    ordered = np.sort(draws)
    return float(ordered[rank - 1]), float(ordered[len(draws) - rank])


@dataclass(frozen=True)
class Step:
    p_holm: float  # Holm's adjusted p-value
    level: float  # the level of the printed interval
    rejected: bool


def holm(p: Sequence[float], alpha: float = ALPHA) -> list[Step]:
    """Holm's step-down over one family, in the order given. The k-th smallest p (k from 1 of m) is held to
    alpha / (m - k + 1) and its interval printed at 1 - alpha / (m - k + 1); from the first step that does not
    reject on, every comparison keeps that step's level, so none of their intervals excludes 0."""
    m = len(p)
    order = sorted(range(m), key=lambda i: p[i])
    steps: list[Step | None] = [None] * m
    adjusted, stopped_at = 0.0, None
    for k, i in enumerate(order):
        adjusted = max(adjusted, min(1.0, (m - k) * p[i]))
        rejected = stopped_at is None and p[i] <= alpha / (m - k)
        if not rejected and stopped_at is None:
            stopped_at = k
        level = 1 - alpha / (m - (k if stopped_at is None else stopped_at))
        steps[i] = Step(adjusted, level, rejected)
    return [step for step in steps if step is not None]


def word(low: float, high: float, rejected: bool, margin: float) -> str:
    """higher or lower where Holm rejects (the interval then excludes 0); no difference where the interval lies
    inside +/- margin; otherwise inconclusive."""
    if rejected:
        return "higher" if low > 0 else "lower"
    if -margin <= low and high <= margin:
        return "no difference"
    return "inconclusive"


def rule(verdict: str, level: float, p_holm: float, margin: float) -> str:
    """Why the word, in a few words: the step of the rule that gave it."""
    at = f"{100 * level:.4g}% interval"
    if verdict in ("higher", "lower"):
        return f"Holm p = {p_holm:.2g} <= {ALPHA:g}: the {at} excludes 0"
    if verdict == "no difference":
        return f"Holm p = {p_holm:.2g}; the {at} lies inside ±{margin:g}"
    return f"Holm p = {p_holm:.2g}; the {at} holds 0 and reaches past ±{margin:g}"
