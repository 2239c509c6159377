"""The trade-off itself: peak device memory against training tokens/s, a point per trained cell, the Pareto front
of each context (no other cell at that context needs less memory and runs faster) joined and ringed, a line
style per context, the budget where it is in range. Cells at different contexts do different work, so no front
runs across contexts."""

from __future__ import annotations

import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from harness.report.charts.style import (
    Palette,
    budget_mark,
    figure,
    label_points,
    legend_outside,
    limits,
    memory_axis,
    nothing_to_draw,
)
from harness.report.charts.technique_colours import LINE_STYLES
from harness.report.frames import Frames
from harness.spec.chart_widths import DOUBLE_IN

FRONT_COLOUR = "0.4"


def front_lines(ax: Axes, points: pd.DataFrame, fronts: dict[int, list[str]], x: str, y: str) -> list[Line2D]:
    """Each context's front joined (a line style per context) and its cells ringed; the legend's entries."""
    handles = []
    for i, (context, members) in enumerate(fronts.items()):
        front = points.loc[[m for m in members if m in points.index]]
        if front.empty:
            continue
        style = LINE_STYLES[(i + 1) % len(LINE_STYLES)]
        ax.plot(front[x], front[y], color=FRONT_COLOUR, linestyle=style, linewidth=1, zorder=2)
        ax.scatter(front[x], front[y], s=90, facecolors="none", edgecolors="black", linewidths=0.8, zorder=4)
        at = f" at context {context:,}" if len(fronts) > 1 else ""
        handles.append(Line2D([], [], color=FRONT_COLOUR, linestyle=style, marker="o", markerfacecolor="none",
                              markeredgecolor="black", markersize=7, label=f"Pareto front{at}"))
    return handles


def draw(frames: Frames, palette: Palette, width: float = DOUBLE_IN) -> Figure:
    table = frames.table
    points = table[(table["status"] == "ok")].dropna(subset=["peak_device", "tokens_per_second"])
    fig, axes = figure(1, 1, width=width, height=2.8)
    ax = axes[0][0]
    if points.empty:
        nothing_to_draw(ax, "no cell trained with its speed measured")
        return fig
    for group, row in points.iterrows():
        ax.errorbar(row["peak_device"], row["tokens_per_second"],
                    xerr=row["peak_device_sd"] if row["peak_device_n"] > 1 else None,
                    yerr=row["tokens_per_second_sd"] if row["tokens_per_second_n"] > 1 else None,
                    fmt=palette.marker(frames.design.changes[group]), color=palette(frames.design.changes[group]),
                    markersize=4.5, capsize=2, zorder=3)
    fronts = front_lines(ax, points, frames.front, "peak_device", "tokens_per_second")
    low, high, shown = limits(points["peak_device"], frames.budget)
    ax.set_xlim(low, high)
    y_low, y_high, _ = limits(points["tokens_per_second"])
    ax.set_ylim(y_low, y_high)
    ax.set_xlabel(memory_axis(frames.on_cpu))
    ax.set_ylabel("training tokens/s")
    ax.grid(color="0.9", linewidth=0.6)
    budget_entry = budget_mark(ax, frames.budget, shown)
    handles = [*fronts, Patch(facecolor="none", edgecolor="none",
                              label="front: no cell at its context needs less memory and runs faster")]
    handles += budget_entry
    if (points["n"] > 1).any():
        handles.append(Line2D([], [], color="0.3", marker="o", label="mean ± sd over seeds"))
    legend_outside(ax, handles, [h.get_label() for h in handles])
    # named last: the legend's room is taken first, so the names are placed on the final layout
    label_points(ax, list(points["peak_device"]), list(points["tokens_per_second"]), list(points.index))
    return fig
