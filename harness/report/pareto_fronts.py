"""Pareto fronts, one per context: a cell at 8k and one at 20k tokens do not train on the same work, so neither
can be said to beat the other, and a front drawn across contexts would claim just that."""

from __future__ import annotations

import pandas as pd

CONTEXT = "context"


def front(points: pd.DataFrame, cost: str, gain: str, gain_higher: bool = True) -> list[str]:
    """The rows (by index) that no other row beats on both counts (no more `cost` and at least as good a `gain`,
    one of them strictly), in increasing cost."""
    good = points[gain] if gain_higher else -points[gain]
    found = []
    for name in points.index:
        beaten = ((points[cost] <= points.at[name, cost]) & (good >= good[name])
                  & ((points[cost] < points.at[name, cost]) | (good > good[name])))
        if not beaten.any():
            found.append(name)
    return sorted(found, key=lambda n: points.at[n, cost])


def fronts_by_context(points: pd.DataFrame, cost: str, gain: str, gain_higher: bool = True) -> dict[int, list[str]]:
    """A front among the rows of each context (0 where the rows have no context), contexts in increasing order."""
    contexts = points[CONTEXT] if CONTEXT in points else pd.Series(0, index=points.index)
    return {int(context): front(part, cost, gain, gain_higher)
            for context, part in points.groupby(contexts.fillna(0), sort=True)}
