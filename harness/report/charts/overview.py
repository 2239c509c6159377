"""Every cell in one chart, whatever happened to it: its peak device memory (and its speed where speed was
measured) as a dot (its marker: its level of the technique its colour names), its status written where it has no
number. A cell that ran out of memory needs more than the budget: its mark sits past the budget line, joined by a
dotted line to the peak it reached, never left of the line where it would read as "fits". Dots, not bars: the
axis can then start near the data, so small differences stay visible."""

from __future__ import annotations

from matplotlib.artist import Artist
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from harness.report.cell_groups import GIB, group_name
from harness.report.charts.style import (
    BUDGET_STYLES,
    ROW_IN,
    Palette,
    figure,
    legend_outside,
    metric_panels,
    narrow_width,
    rows_top_down,
)
from harness.report.frames import Frames
from harness.spec.chart_widths import DOUBLE_IN

OOM_MARKER = ">"  # points past the budget: the cell needs more than it


def group_budgets(frames: Frames) -> dict[str, float]:
    """Each group's budget in GiB (a matrix may judge cells against several: an RTX 4080's 15.57 GiB, a round
    16 or 24 GiB); none on a CPU."""
    if frames.budget is None:
        return {}
    cells = frames.cells.dropna(subset=["budget_bytes"])
    return {group_name(n): b / GIB for n, b in zip(cells["name"], cells["budget_bytes"], strict=True)}


def draw(frames: Frames, palette: Palette, width: float = DOUBLE_IN, part: list[str] | None = None) -> Figure:
    """part: the groups to draw (a part of a figure split to stay within a column's height), on the axes of
    all."""
    everything, design = frames.table, frames.design
    table = everything.loc[part] if part is not None else everything
    panels = metric_panels(design.throughput_measured, frames.on_cpu)
    fig, axes = figure(1, len(panels), width=width, height=ROW_IN[narrow_width(width)] * len(table) + 1.0,
                       sharey=True)
    rows = list(range(len(table)))
    repeats = bool((table["n"] > 1).any())
    budgets = group_budgets(frames)
    budget_entry: list[Artist] = []
    for ax, (metric, label) in zip(axes[0], panels, strict=True):
        mine = metric == "peak_device"
        # from zero: a peak of 8.5 GiB beside one of 11 is 77% of it, not a quarter
        high = max([v for v in everything[metric] if v == v] + (list(budgets.values()) if mine else []) + [0.0])
        low, high = 0.0, 1.05 * high or 1.0
        for y, (group, row) in zip(rows, table.iterrows(), strict=True):
            change = design.changes[group]
            budget = budgets.get(group)
            if row["peak_reached"] and mine and row[metric] == row[metric]:
                needs = max(row[metric], budget) if budget is not None else row[metric]
                ax.plot([row[metric], needs], [y, y], color=palette(change), linestyle=":", linewidth=1, zorder=3)
                ax.plot([needs], [y], marker=OOM_MARKER, color=palette(change), markersize=5, zorder=3)
            elif row["status"] == "ok" and row[metric] == row[metric]:
                ax.errorbar(row[metric], y, xerr=row[f"{metric}_sd"] if row[f"{metric}_n"] > 1 else None,
                            fmt=palette.marker(change), color=palette(change), markersize=4.5, capsize=2,
                            zorder=3)
            else:
                ax.annotate(str(row["status"]), (low, y), xytext=(3, 0), textcoords="offset points", va="center",
                            fontsize=7, color="0.35", style="italic")
            if mine and budget is not None:  # each cell's own budget, on its row
                ax.plot([budget, budget], [y - 0.45, y + 0.45], color="black", linestyle=BUDGET_STYLES[
                    sorted(set(budgets.values())).index(budget) % len(BUDGET_STYLES)], linewidth=1, zorder=2)
        ax.set_xlim(low, high)
        ax.set_xlabel(label)
        ax.grid(axis="x", color="0.9", linewidth=0.6)
    for i, budget in enumerate(sorted(set(budgets.values()))):  # one entry per budget, whichever rows show it
        budget_entry.append(Line2D([], [], color="black", linestyle=BUDGET_STYLES[i % len(BUDGET_STYLES)],
                                   linewidth=1, label=f"budget {budget:.2f} GiB"))
    rows_top_down(axes[0][0], list(table.index))
    handles: list[Artist] = []
    if (table["status"] == "ok").any():
        handles.append(Line2D([], [], marker="o", linestyle="", color="0.3",
                              label="trained" + (" (mean ± sd over seeds)" if repeats else "")))
    if table["peak_reached"].any():
        handles.append(Line2D([], [], marker=OOM_MARKER, linestyle=":", color="0.3",
                              label="ran out of memory: needs more than the budget (dotted from the peak reached)"
                              if budgets else "ran out of memory (peak reached)"))
    handles += budget_entry
    drawn = table[(table["status"] == "ok") | table["peak_reached"]].index
    changes = list(dict.fromkeys(design.changes[g] for g in drawn))
    aside = f", {design.x} aside" if design.x else ""
    handles.append(Patch(facecolor="none", edgecolor="none",
                         label=f"colour: what differs from {design.baseline}{aside}"))
    handles += [Line2D([], [], marker=palette.marker(c), linestyle="", color=palette(c), label=c or "nothing")
                for c in changes]
    legend_outside(axes[0][-1], handles)
    return fig
