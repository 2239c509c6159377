"""The sweep: a line per stack (a group of cells that differ only in x) against x, peak device memory and, where
it was measured, speed; the budget where it is in range; a cross where a cell ran out of memory (the peak it
reached); error bars (sd over seeds) where cells repeat."""

from __future__ import annotations

from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from harness.report.charts.style import (
    Palette,
    budget_mark,
    figure,
    legend_outside,
    limits,
    metric_panels,
    nothing_to_draw,
)
from harness.report.frames import Frames, same_lines
from harness.spec.chart_widths import DOUBLE_IN
from harness.spec.design import x_label

NAMES = {"peak_device": "memory", "tokens_per_second": "speed"}


def draw(frames: Frames, palette: Palette, width: float = DOUBLE_IN) -> Figure:
    design, points = frames.design, frames.points
    panels = metric_panels(design.throughput_measured, frames.on_cpu)
    fig, axes = figure(1, len(panels), width=width, height=2.4)
    levels = sorted(set(points["x"]))
    handles: list = []
    budget_entry: list = []
    notes: dict[str, list[str]] = {}
    for ax, (metric, label) in zip(axes[0], panels, strict=True):
        limit = frames.budget if metric == "peak_device" else None
        low, high, shown = limits(points[metric], limit)
        low = 0.0  # from zero: memory and speed are amounts, a line's height is read as one
        if limit is not None and not shown and limit <= 2 * high:  # from zero, a budget this near fits the axis
            high, shown = 1.05 * limit, True
        # a line on top of an identical one is drawn dashed, so the one below shows between its dashes
        same = same_lines(points, metric)
        for line, part in points.groupby("line", sort=False):
            change = part["change"].iloc[0]
            colour, marker = palette(change), palette.marker(change)
            ok = part[part["status"] == "ok"]
            ax.errorbar(ok["x"], ok[metric], yerr=ok[f"{metric}_sd"].where(ok[f"{metric}_n"] > 1),
                        color=colour, marker=marker, markersize=4, capsize=2, linewidth=1.4,
                        linestyle=(0, (4, 3)) if line in same else "-")
            if line in same:
                notes.setdefault(line, []).append(f"{NAMES[metric]} as {same[line]}")
            if metric == "peak_device":
                statuses = ", ".join(sorted(set(part["status"])))
                handles.append(Line2D([], [], color=colour, marker=marker, markersize=4,
                                      label=line if len(ok) else f"{line}: no cell trained ({statuses})"))
            reached = part[part["peak_reached"]]
            if metric == "peak_device" and len(reached):
                ax.plot(reached["x"], reached[metric], linestyle="", marker="X", color=colour, markersize=7)
                if len(ok):  # the line runs on, dotted, to where the stack stopped fitting
                    after = reached[reached["x"] > ok["x"].max()].head(1)
                    ax.plot([ok["x"].iloc[-1], *after["x"]], [ok[metric].iloc[-1], *after[metric]], color=colour,
                            linestyle=":", linewidth=1.2)
        ax.set_xticks(levels, [f"{v:,.0f}" for v in levels])
        ax.set_xlabel(x_label(design.x))
        ax.set_ylabel(label)
        ax.grid(color="0.9", linewidth=0.6)
        if points[metric].notna().any():
            ax.set_ylim(low, high)
        else:
            nothing_to_draw(ax, "no cell of the sweep trained")
        if metric == "peak_device":
            budget_entry = budget_mark(ax, frames.budget, shown, vertical=False)
    for handle in handles:
        if handle.get_label() in notes:
            handle.set_label(f"{handle.get_label()} (same {' and '.join(notes[handle.get_label()])})")
            handle.set_linestyle((0, (4, 3)))
    handles += budget_entry
    if points["peak_reached"].any():
        handles.append(Line2D([], [], linestyle="", marker="X", color="0.3", label="ran out of memory (peak reached)"))
    if (points["n"] > 1).any():
        handles.append(Line2D([], [], color="0.3", marker="o", markersize=4, label="error bars: sd over seeds"))
    legend_outside(axes[0][-1], handles, [h.get_label() for h in handles])
    return fig
