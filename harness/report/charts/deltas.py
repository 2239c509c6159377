"""Each change against the baseline, as the reader would otherwise subtract by eye: Δ peak device memory (GiB)
and, where speed was measured, Δ tokens/s (% of the baseline's), a bar per cell, its value written at its end.
A cell that ran out of memory gets a hatched bar to the peak it reached and '≥' (it needs at least that much);
a cell with no number gets its status. Error bars: the standard error of the difference, where seeds repeat.
The budget, seen from the baseline, is the headroom the baseline leaves: a line at +headroom, labelled so."""

from __future__ import annotations

import math

from matplotlib.artist import Artist
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.patches import Patch

from harness.report.cell_groups import measured_so_far
from harness.report.charts.style import (
    ROW_IN,
    Palette,
    budget_mark,
    figure,
    figure_of,
    legend_outside,
    limits,
    memory_axis,
    narrow_width,
    nothing_to_draw,
    renderer,
    rows_top_down,
)
from harness.report.frames import Frames
from harness.report.tables import gib_digits
from harness.spec.chart_widths import DOUBLE_IN

# room beyond the longest bar for its value, as a share of the bars' span at the double-column width
LABEL_ROOM = 0.3


def values_inside(ax: Axes) -> None:
    """The axis widened until every value written beyond a bar's end lies inside the panel (a long value beside
    a narrow panel would otherwise reach into the row names)."""
    fig = figure_of(ax)
    drawn = renderer(fig)
    for _ in range(3):
        fig.draw_without_rendering()
        frame = ax.get_window_extent(drawn)
        boxes = [t.get_window_extent(drawn) for t in ax.texts]
        short_left = max([frame.x0 - b.x0 for b in boxes] + [0.0])
        short_right = max([b.x1 - frame.x1 for b in boxes] + [0.0])
        if short_left <= 0 and short_right <= 0:
            return
        low, high = ax.get_xlim()
        per_pixel = (high - low) / frame.width
        ax.set_xlim(low - 1.1 * short_left * per_pixel, high + 1.1 * short_right * per_pixel)


def draw(frames: Frames, palette: Palette, width: float = DOUBLE_IN, part: list[str] | None = None) -> Figure:
    """part: the groups to draw (a part of a figure split to stay within a column's height), on the axes of
    all."""
    design, every = frames.design, frames.deltas
    deltas = every[every["group"].isin(part)] if part is not None else every
    baseline_ok = measured_so_far(frames.table.at[design.baseline, "status"])  # some seeds may not have run yet
    panels = [("d_peak", memory_axis(frames.on_cpu, "Δ peak"), f"+.{gib_digits(every['d_peak'])}f")]
    if design.throughput_measured:
        panels.append(("d_tokens_pct", "Δ training tokens/s (%)", "+.1f"))
    fig, axes = figure(1, len(panels), width=width, height=ROW_IN[narrow_width(width)] * len(deltas) + 1.1,
                       sharey=True)
    rows = list(range(len(deltas)))
    own_model = bool((every["reference"] != design.baseline).any())
    budget_entry: list[Artist] = []
    for ax, (metric, label, fmt) in zip(axes[0], panels, strict=True):
        values = every[metric]  # the axis of every part alike
        errors = every[f"{metric}_se"]
        ends = [v + sign * (e if e == e else 0) for v, e in zip(values, errors, strict=True) if v == v
                for sign in (-1, 1)]
        low, high = min([0.0, *ends]), max([0.0, *ends])
        headroom = None
        if metric == "d_peak" and frames.budget is not None and baseline_ok:
            # the budget, seen from the baseline: a change whose bar passes it does not fit
            headroom = frames.budget - frames.table.at[design.baseline, "peak_device"]
            _, _, shown = limits([low, high], headroom)
            low, high = (min(low, headroom), max(high, headroom)) if shown else (low, high)
        span = (high - low) or 1.0
        for y, (_, row) in zip(rows, deltas.iterrows(), strict=True):
            value = row[metric]
            if not baseline_ok or math.isnan(value):
                ax.annotate(str(row["status"]), (0, y), xytext=(3, 0), textcoords="offset points", va="center",
                            fontsize=7, color="0.35", style="italic")
                continue
            lower_bound = bool(row["peak_reached"]) and metric == "d_peak"
            ax.barh(y, value, color=palette(row["change"]), height=0.65,
                    hatch="///" if lower_bound else palette.hatch(row["change"]),
                    edgecolor="white", linewidth=0,
                    xerr=row[f"{metric}_se"] if row[f"{metric}_se"] == row[f"{metric}_se"] else None,
                    error_kw={"capsize": 2, "elinewidth": 0.8})
            error = row[f"{metric}_se"] if row[f"{metric}_se"] == row[f"{metric}_se"] else 0.0
            end = value + error if value >= 0 else value - error  # the value is written beyond its error bar
            ax.annotate(("≥" if lower_bound else "") + f"{value:{fmt}}", (end, y), fontsize=7, va="center",
                        xytext=(3 if value >= 0 else -3, 0), textcoords="offset points",
                        ha="left" if value >= 0 else "right", zorder=4,
                        # the headroom line passes behind a value, never through it
                        bbox={"facecolor": "white", "edgecolor": "none", "pad": 0.3})
        ax.axvline(0, color="black", linewidth=0.8)
        room = LABEL_ROOM * DOUBLE_IN / width  # a value's text is as wide in a narrower chart: more of its axis
        ax.set_xlim(low - room * span if low < 0 else -0.02 * span,
                    high + room * span if high > 0 else 0.02 * span)
        if headroom is not None:
            budget_entry = budget_mark(ax, headroom, low <= headroom <= high,
                                       label=f"headroom to the {frames.budget:.2f} GiB budget: {headroom:+.2f} GiB"
                                       + (f" (from {design.baseline})" if own_model else ""))
        ax.set_xlabel(label)
        ax.grid(axis="x", color="0.9", linewidth=0.6)
        values_inside(ax)
        if not baseline_ok:
            nothing_to_draw(ax, f"the baseline {design.baseline} did not train: nothing to compare against")
    fig.suptitle(f"Each change against {design.baseline}", fontsize=9)  # another model's cells name theirs
    rows_top_down(axes[0][0], [g if r == design.baseline else f"{g} (vs {r})"
                               for g, r in zip(deltas["group"], deltas["reference"], strict=True)])
    handles: list[Artist] = []
    if deltas["peak_reached"].any():
        handles.append(Patch(facecolor="0.6", hatch="///", edgecolor="white",
                             label="ran out of memory: needs at least this much"))
    if deltas[[f"{m}_se" for m, _, _ in panels]].notna().any().any():
        handles.append(Patch(facecolor="none", edgecolor="none", label="error bars: standard error over seeds"))
    handles += budget_entry
    legend_outside(axes[0][-1], handles)
    return fig
