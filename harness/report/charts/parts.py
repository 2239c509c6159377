"""A chart too tall for a paper's column split into parts rather than grown: each part is the same chart over
some of its rows (cells, tasks, techniques), on the same axes' scale where the drawer keeps it, saved as
`name-partN`. A part is as tall as its content needs and no taller than COLUMN_MAX_HEIGHT_IN at a column's width."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import TypeVar

import matplotlib.pyplot as plt
from matplotlib.figure import Figure

from harness.report.charts.style import COLUMN_MAX_HEIGHT_IN

T = TypeVar("T")


def chunks(items: Sequence[T], parts: int) -> list[list[T]]:
    """items in `parts` runs of nearly equal length, in order."""
    size = math.ceil(len(items) / parts)
    return [list(items[i:i + size]) for i in range(0, len(items), size)]


def within(draw_part: Callable[[list[T]], Figure], items: Sequence[T], most_height: float = COLUMN_MAX_HEIGHT_IN,
           first_parts: int = 1, at_least: Callable[[list[T]], float] | None = None) -> list[Figure]:
    """The parts, as few as keep each within most_height (a single item that alone is taller stays one part).
    `at_least` (a height draw_part's figure for a run cannot be under) skips, without drawing, counts too few."""
    parts = max(1, min(first_parts, len(items)))
    while at_least is not None and parts < len(items) and \
            max(at_least(run) for run in chunks(items, parts)) > most_height + 0.01:
        parts += 1
    while True:
        figures = [draw_part(run) for run in chunks(items, parts)]
        if all(fig.get_figheight() <= most_height + 0.01 for fig in figures) or parts >= len(items):
            return figures
        for fig in figures:
            plt.close(fig)
        parts += 1


def named(name: str, figures: Figure | list[Figure]) -> dict[str, Figure]:
    """name for the first part, name-part2, -part3 ... for the others."""
    found = figures if isinstance(figures, list) else [figures]
    return {name if i == 1 else f"{name}-part{i}": fig for i, fig in enumerate(found, 1)}
