"""Quality where the matrix evaluates it (quality.csv): each task's main metric against peak device memory (the
trade-off), and per cell as a bar beside the same model untrained. Error bars: standard deviation over seeds.
Colours are the changes' colours of the other charts."""

from __future__ import annotations

import math

import pandas as pd
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from harness.report.charts.style import (
    TOL_GREY,
    Palette,
    figure,
    label_points,
    legend_outside,
    memory_axis,
    nothing_to_draw,
    rows_top_down,
)
from harness.report.frames import Frames
from harness.report.quality_findings import main_metric, summarize

# more tasks than this in one figure and the panels get too small to read
MOST_TASKS = 6
# white with a black edge: it shows on a bar of any colour
UNTRAINED = {"marker": "D", "s": 18, "facecolors": "white", "edgecolors": "black", "linewidths": 0.8, "zorder": 3}


def _better(part: pd.DataFrame) -> str:
    return "higher" if part["higher_is_better"].any() else "lower"


def _scores(quality: pd.DataFrame) -> tuple[pd.DataFrame, list[str]]:
    table = summarize(quality)
    return table, list(dict.fromkeys(table["task"]))[:MOST_TASKS]


def _no_scores() -> Figure:
    fig, axes = figure(1, 1)
    nothing_to_draw(axes[0][0], "no quality scores (random weights, or no evaluation has run)")
    return fig


def against_memory(frames: Frames, palette: Palette, quality: pd.DataFrame) -> Figure:
    table, tasks = _scores(quality)
    if not tasks:
        return _no_scores()
    columns = min(len(tasks), 3)
    rows = math.ceil(len(tasks) / columns)
    fig, axes = figure(rows, columns, width=4.0 * columns + 1.8, height=3.2 * rows)
    for ax in axes.flat[len(tasks):]:
        ax.set_visible(False)
    memory = frames.table["peak_device"]
    repeats = bool((table["n"] > 1).any())
    for ax, task in zip(axes.flat, tasks, strict=False):
        metric = main_metric(quality, task)
        part = table[(table["task"] == task) & (table["metric"] == metric)]
        x = [memory.get(g, math.nan) for g in part["group"]]
        # where seeds repeat, repeated cells carry the comparisons and get labels; single cells (equivalence
        # checks) sit on the reference and would only hide it, so they are drawn hollow and named in the tables
        labelled = (part["n"] > 1).tolist() if repeats else [True] * len(part)
        for xi, (_, row), keep in zip(x, part.iterrows(), labelled, strict=True):
            colour = palette(frames.design.changes.get(row["group"], ""))
            ax.errorbar(xi, row["mean"], yerr=row["sd"] if row["n"] > 1 else None, fmt="o", capsize=2,
                        markersize=5, color=colour, markerfacecolor=colour if keep else "none")
        if any(labelled):
            points = list(zip(x, part["mean"], strict=True))
            label_points(ax, [p[0] for p, keep in zip(points, labelled, strict=True) if keep],
                         [p[1] for p, keep in zip(points, labelled, strict=True) if keep],
                         [g for g, keep in zip(part["group"], labelled, strict=True) if keep],
                         avoid=[p for p, keep in zip(points, labelled, strict=True) if not keep])
        ax.set_xlabel(memory_axis(frames.on_cpu))
        ax.set_ylabel(f"{task} {metric} ({_better(part)} is better)")
        ax.grid(color="0.9", linewidth=0.6)
    handles = [Line2D([], [], marker="o", linestyle="", color="0.3",
                      label="mean ± sd over seeds" if repeats else "one cell each")]
    if repeats and (table["n"] == 1).any():
        handles.append(Line2D([], [], marker="o", linestyle="", color="0.3", markerfacecolor="none",
                              label="a cell run once (unlabelled: see the tables)"))
    legend_outside(axes[0][columns - 1], handles, [h.get_label() for h in handles])
    return fig


def by_cell(frames: Frames, palette: Palette, quality: pd.DataFrame) -> Figure:
    """Each task's main metric per cell: the trained score (mean, standard deviation over seeds) as a bar, the
    same model untrained as a diamond, so both the effect of a setting and the gain from training show."""
    table, tasks = _scores(quality)
    if not tasks:
        return _no_scores()
    groups = list(dict.fromkeys(table["group"]))
    fig, axes = figure(1, len(tasks), width=2.6 * len(tasks) + 2.2, height=0.24 * len(groups) + 1.6, sharey=True)
    for ax, task in zip(axes[0], tasks, strict=True):
        metric = main_metric(quality, task)
        part = table[(table["task"] == task) & (table["metric"] == metric)].set_index("group")
        shown = [g for g in groups if g in part.index]
        y = [groups.index(g) for g in shown]
        colours = [palette(frames.design.changes.get(g, "")) for g in shown]
        ax.barh(y, part.loc[shown, "mean"], xerr=part.loc[shown, "sd"].fillna(0), color=colours, height=0.7,
                error_kw={"capsize": 2, "elinewidth": 0.8})
        ax.scatter(part.loc[shown, "baseline"], y, **UNTRAINED)
        ax.set_title(f"{task}\n{metric} ({_better(part)} is better)", fontsize=8)
        ax.grid(axis="x", color="0.9", linewidth=0.6)
    rows_top_down(axes[0][0], groups)
    repeats = " (mean ± sd over seeds)" if (table["n"] > 1).any() else ""
    handles = [Line2D([], [], color=TOL_GREY, linewidth=6, label=f"trained{repeats}"),
               Line2D([], [], marker="D", markersize=4, markerfacecolor="white", markeredgecolor="black",
                      linestyle="", label="untrained (the adapter disabled)")]
    legend_outside(axes[0][-1], handles, [h.get_label() for h in handles])
    return fig
