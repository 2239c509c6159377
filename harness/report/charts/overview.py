"""Every cell in one chart, whatever happened to it: its peak device memory (and its speed where speed was
measured) as a dot (its marker: its level of the technique its colour names), its status written where it has no
number. A cell that ran out of memory needs more than the budget: its mark sits past the budget line, joined by a
dotted line to the peak it reached, never left of the line where it would read as "fits". Dots, not bars: the
axis can then start near the data, so small differences stay visible."""

from __future__ import annotations

from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from harness.report.charts.style import (
    Palette,
    budget_mark,
    figure,
    legend_outside,
    limits,
    metric_panels,
    rows_top_down,
)
from harness.report.frames import Frames
from harness.spec.chart_widths import DOUBLE_IN

OOM_MARKER = ">"  # points past the budget: the cell needs more than it


def draw(frames: Frames, palette: Palette, width: float = DOUBLE_IN) -> Figure:
    table, design = frames.table, frames.design
    panels = metric_panels(design.throughput_measured, frames.on_cpu)
    fig, axes = figure(1, len(panels), width=width, height=0.2 * len(table) + 1.0, sharey=True)
    rows = list(range(len(table)))
    repeats = bool((table["n"] > 1).any())
    budget_entry: list = []
    for ax, (metric, label) in zip(axes[0], panels, strict=True):
        limit = frames.budget if metric == "peak_device" else None
        low, high, shown = limits(table[metric], limit)
        for y, (group, row) in zip(rows, table.iterrows(), strict=True):
            change = design.changes[group]
            if row["peak_reached"] and metric == "peak_device" and row[metric] == row[metric]:
                needs = max(row[metric], frames.budget) if shown else row[metric]
                ax.plot([row[metric], needs], [y, y], color=palette(change), linestyle=":", linewidth=1, zorder=3)
                ax.plot([needs], [y], marker=OOM_MARKER, color=palette(change), markersize=5, zorder=3)
            elif row["status"] == "ok" and row[metric] == row[metric]:
                ax.errorbar(row[metric], y, xerr=row[f"{metric}_sd"] if row[f"{metric}_n"] > 1 else None,
                            fmt=palette.marker(change), color=palette(change), markersize=4.5, capsize=2,
                            zorder=3)
            else:
                ax.annotate(str(row["status"]), (low, y), xytext=(3, 0), textcoords="offset points", va="center",
                            fontsize=7, color="0.35", style="italic")
        ax.set_xlim(low, high)
        ax.set_xlabel(label)
        ax.grid(axis="x", color="0.9", linewidth=0.6)
        if metric == "peak_device":
            budget_entry = budget_mark(ax, frames.budget, shown)
    rows_top_down(axes[0][0], list(table.index))
    handles = []
    if (table["status"] == "ok").any():
        handles.append(Line2D([], [], marker="o", linestyle="", color="0.3",
                              label="trained" + (" (mean ± sd over seeds)" if repeats else "")))
    if table["peak_reached"].any():
        handles.append(Line2D([], [], marker=OOM_MARKER, linestyle=":", color="0.3",
                              label="ran out of memory: needs more than the budget (dotted from the peak reached)"
                              if frames.budget is not None else "ran out of memory (peak reached)"))
    handles += budget_entry
    drawn = table[(table["status"] == "ok") | table["peak_reached"]].index
    changes = list(dict.fromkeys(design.changes[g] for g in drawn))
    aside = f", {design.x} aside" if design.x else ""
    handles.append(Patch(facecolor="none", edgecolor="none",
                         label=f"colour: what differs from {design.baseline}{aside}"))
    handles += [Line2D([], [], marker=palette.marker(c), linestyle="", color=palette(c), label=c or "nothing")
                for c in changes]
    legend_outside(axes[0][-1], handles, [h.get_label() for h in handles])
    return fig
