"""The paired comparisons (reports/<matrix>/comparisons.csv) as a forest plot: each comparison's effect (a's score
less b's) as a dot with its interval at its Holm level, a line at zero, and where the statistics state a margin of "no
difference" that band shaded on the comparison's row. One panel per metric, since bits per byte and exact recall
are on different scales; the axis is fitted to the intervals and zero, so effects of a few thousandths show."""

from __future__ import annotations

import pandas as pd
from matplotlib.artist import Artist
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from harness.report.charts.parts import within
from harness.report.charts.style import (
    COLUMN_MAX_HEIGHT_IN,
    DOUBLE_MAX_HEIGHT_IN,
    legend_outside,
    narrow_width,
    nothing_to_draw,
    rows_top_down,
)
from harness.report.charts.technique_colours import TOL_GREY
from harness.report.comparisons_table import label
from harness.spec.chart_widths import DOUBLE_IN

ROW_IN = 0.16  # a comparison's row: room for a 7 pt label
PANEL_IN = 0.75  # a panel's axis and title
# a verdict's colour: a difference called, none, or undecided
# the decision rule's words (docs/quality.md); inconclusive is grey
VERDICT_COLOURS = {"higher": "#EE6677", "lower": "#228833", "no difference": "#4477AA"}


def row_label(row: pd.Series) -> str:
    """What is held against what, on which task: two comparisons of the same arms (two conditions, two held-out
    languages, a plain difference and a difference-in-differences) must not read alike on the chart."""
    if "task" not in row or pd.isna(row["task"]):
        return label(row)
    did = ", DiD" if str(row.get("did")) == "True" else ""  # the chart description spells it out
    return f"{label(row)} ({row['task']}{did})"


def parts(comparisons: pd.DataFrame | None, width: float = DOUBLE_IN) -> list[Figure]:
    """The forest plot, in parts of as many comparisons as keep each within a column's height where it is one
    column wide."""
    if comparisons is None or comparisons.empty:
        return [draw(comparisons, width)]
    most = COLUMN_MAX_HEIGHT_IN if narrow_width(width) else DOUBLE_MAX_HEIGHT_IN
    # a metric's comparisons together (in the table's order within it): a part then holds as few panels, each with
    # its own axis and label, as it can
    metrics = list(dict.fromkeys(comparisons["metric"]))
    order = sorted(comparisons.index, key=lambda i: metrics.index(comparisons.at[i, "metric"]))
    return within(lambda rows: draw(comparisons.loc[rows], width), order, most,
                  at_least=lambda rows: height(comparisons.loc[rows]))


def height(comparisons: pd.DataFrame) -> float:
    """The figure's height in inches before its legend: a panel per metric, a row per comparison."""
    sizes = comparisons["metric"].value_counts(sort=False)
    return float(sum(ROW_IN * n + PANEL_IN for n in sizes) + 0.4)


def draw(comparisons: pd.DataFrame | None, width: float = DOUBLE_IN) -> Figure:
    import matplotlib.pyplot as plt

    if comparisons is None or comparisons.empty:
        fig, axes = plt.subplots(1, 1, figsize=(width, 1.5), squeeze=False, layout="constrained")
        nothing_to_draw(axes[0][0], "no paired comparisons (comparisons.csv)")
        return fig
    metrics = list(dict.fromkeys(comparisons["metric"]))
    sizes = [int((comparisons["metric"] == m).sum()) for m in metrics]
    fig, axes = plt.subplots(len(metrics), 1, figsize=(width, height(comparisons)),
                             squeeze=False, layout="constrained",
                             gridspec_kw={"height_ratios": [ROW_IN * n + PANEL_IN for n in sizes]})
    margin = "margin" in comparisons
    for ax, metric in zip(axes[:, 0], metrics, strict=True):
        part = comparisons[comparisons["metric"] == metric].reset_index(drop=True)
        for y, row in part.iterrows():
            if margin and pd.notna(row["margin"]):
                ax.fill_betweenx([y - 0.4, y + 0.4], -row["margin"], row["margin"], color="0.88", linewidth=0,
                                 zorder=0)
            colour = next((c for word, c in VERDICT_COLOURS.items() if str(row["verdict"]).startswith(word)),
                          TOL_GREY)
            # the interval as drawn, not as offsets: a percentile interval need not hold the mean over seeds
            if pd.notna(row["low"]) and pd.notna(row["high"]):
                ax.hlines(y, row["low"], row["high"], color=colour, linewidth=0.9, zorder=2)
                ax.vlines([row["low"], row["high"]], y - 0.15, y + 0.15, color=colour, linewidth=0.9, zorder=2)
            ax.plot(row["effect"], y, "o", color=colour, markersize=3.5, zorder=3)
        ax.axvline(0, color="black", linewidth=0.8, zorder=1)
        ends = [*part["low"], *part["high"], 0.0, *((part["margin"].tolist() + (-part["margin"]).tolist())
                                                    if margin else [])]
        low, high = min(e for e in ends if e == e), max(e for e in ends if e == e)
        pad = 0.06 * ((high - low) or 1.0)
        ax.set_xlim(low - pad, high + pad)
        rows_top_down(ax, [row_label(r) for _, r in part.iterrows()])
        ax.set_xlabel(f"effect on {metric.replace('_', ' ')} (a − b), interval at its Holm level")
        ax.grid(axis="x", color="0.9", linewidth=0.6)
    handles: list[Artist] = [Line2D([], [], marker="o", linestyle="", color=c, label=w)
                             for w, c in VERDICT_COLOURS.items()
                             if comparisons["verdict"].astype(str).str.startswith(w).any()]
    if any(not any(str(v).startswith(w) for w in VERDICT_COLOURS) for v in comparisons["verdict"]):
        handles.append(Line2D([], [], marker="o", linestyle="", color=TOL_GREY, label="inconclusive"))
    if margin:
        handles.append(Patch(color="0.88", label="margin of \"no difference\""))
    legend_outside(axes[0][0], handles, below=True)
    return fig
