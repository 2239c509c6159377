"""Every cell in one chart, whatever happened to it: its peak device memory (and its speed where speed was
measured) as a dot, a cross where it ran out of memory (the peak it reached), its status written where it has no
number. Dots, not bars: the axis can then start near the data, so small differences stay visible."""

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

MARKERS = {"ok": "o", "oom": "X"}


def draw(frames: Frames, palette: Palette) -> Figure:
    table, design = frames.table, frames.design
    panels = metric_panels(design.throughput_measured, frames.on_cpu)
    fig, axes = figure(1, len(panels), width=4.2 * len(panels) + 2.2, height=0.24 * len(table) + 1.3, sharey=True)
    rows = list(range(len(table)))
    repeats = bool((table["n"] > 1).any())
    budget_entry: list = []
    for ax, (metric, label) in zip(axes[0], panels, strict=True):
        limit = frames.budget if metric == "peak_device" else None
        low, high, shown = limits(table[metric], limit)
        for y, (group, row) in zip(rows, table.iterrows(), strict=True):
            status = "oom" if row["peak_reached"] and metric == "peak_device" else row["status"]
            if status in MARKERS and row[metric] == row[metric]:
                ax.errorbar(row[metric], y, xerr=row[f"{metric}_sd"] if row[f"{metric}_n"] > 1 else None,
                            fmt=MARKERS[status], color=palette(design.changes[group]), markersize=6, capsize=2,
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
    statuses = set(table["status"]) | ({"oom"} if table["peak_reached"].any() else set())
    handles = [Line2D([], [], marker=MARKERS[s], linestyle="", color="0.3",
                      label={"ok": "trained" + (" (mean ± sd over seeds)" if repeats else ""),
                             "oom": "ran out of memory (peak reached)"}[s]) for s in MARKERS if s in statuses]
    handles += budget_entry
    drawn = table[(table["status"] == "ok") | table["peak_reached"]].index
    changes = list(dict.fromkeys(design.changes[g] for g in drawn))
    aside = f", {design.x} aside" if design.x else ""
    handles.append(Patch(facecolor="none", edgecolor="none",
                         label=f"colour: what differs from {design.baseline}{aside}"))
    handles += [Line2D([], [], marker="o", linestyle="", color=palette(c), label=c or "nothing") for c in changes]
    legend_outside(axes[0][-1], handles, [h.get_label() for h in handles])
    return fig
