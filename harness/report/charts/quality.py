"""Quality where the matrix evaluates it (quality.csv): each task's main metric against peak device memory (the
trade-off, a Pareto front per context), and per cell as a dot beside the same model untrained: dots on an axis
fitted to the scores, since differences of a few hundredths would vanish on bars from 0. Error bars: standard
deviation over seeds, cut at 0 (no score is negative). Colours and markers are those of the other charts."""

from __future__ import annotations

import math
from functools import partial

import pandas as pd
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from harness.report.charts.parts import within
from harness.report.charts.style import (
    COLUMN_MAX_HEIGHT_IN,
    DOUBLE_MAX_HEIGHT_IN,
    ROW_IN,
    Palette,
    figure,
    label_points,
    legend_outside,
    limits,
    memory_axis,
    narrow_width,
    nothing_to_draw,
    rows_top_down,
)
from harness.report.charts.tradeoff import front_lines
from harness.report.frames import Frames
from harness.report.pareto_fronts import fronts_by_context
from harness.report.quality_findings import main_metric, summarize
from harness.spec.chart_widths import DOUBLE_IN

# tasks in one figure, by whether it is a column wide: more and the panels get too small to read, so the chart is
# split into parts (every task is drawn, in one part or another)
TASKS_PER_FIGURE = {"by_cell": {False: 4, True: 2}, "against_memory": {False: 6, True: 4}}
# the untrained scores join a panel's axis only if it then spans at most this many times the trained scores'
UNTRAINED_SPAN = 3.0
# white with a black edge: it shows on a bar of any colour
UNTRAINED = {"marker": "D", "s": 18, "facecolors": "white", "edgecolors": "black", "linewidths": 0.8, "zorder": 3}


def _better(part: pd.DataFrame) -> str:
    return "higher" if part["higher_is_better"].any() else "lower"


def _scores(quality: pd.DataFrame, tasks: list[str] | None = None) -> tuple[pd.DataFrame, list[str]]:
    table = summarize(quality)
    return table, tasks if tasks is not None else list(dict.fromkeys(table["task"]))


def _task_runs(quality: pd.DataFrame, chart: str, width: float) -> list[list[str]]:
    every = list(dict.fromkeys(summarize(quality)["task"]))
    size = TASKS_PER_FIGURE[chart][narrow_width(width)]
    return [every[i:i + size] for i in range(0, len(every), size)] or [[]]


def by_cell_parts(frames: Frames, palette: Palette, quality: pd.DataFrame, width: float = DOUBLE_IN) -> list[Figure]:
    """by_cell over every task, in parts of a few tasks and, at a column's width, of as many cells as fit its
    height."""
    groups = list(dict.fromkeys(summarize(quality)["group"]))
    most = COLUMN_MAX_HEIGHT_IN if narrow_width(width) else DOUBLE_MAX_HEIGHT_IN
    return [fig for tasks in _task_runs(quality, "by_cell", width)
            for fig in within(partial(by_cell, frames, palette, quality, width, tasks), groups or [""], most)]


def against_memory_parts(frames: Frames, palette: Palette, quality: pd.DataFrame,
                         width: float = DOUBLE_IN) -> list[Figure]:
    return [against_memory(frames, palette, quality, width, tasks)
            for tasks in _task_runs(quality, "against_memory", width)]


def _no_scores(width: float) -> Figure:
    fig, axes = figure(1, 1, width=width, height=1.5)
    nothing_to_draw(axes[0][0], "no quality scores (random weights, or no evaluation has run)")
    return fig


def spread_from_zero(means: pd.Series, sd: pd.Series) -> list[list[float]]:
    """Error bars of ± sd, the lower one cut at 0: a score (bits per byte, an accuracy) is never negative."""
    sd = sd.fillna(0)
    return [list(pd.concat([means, sd], axis=1).min(axis=1)), list(sd)]


def against_memory(frames: Frames, palette: Palette, quality: pd.DataFrame, width: float = DOUBLE_IN,
                   tasks: list[str] | None = None) -> Figure:
    table, tasks = _scores(quality, tasks)
    if not tasks:
        return _no_scores(width)
    columns = min(len(tasks), 2 if width < 5 else 3)
    rows = math.ceil(len(tasks) / columns)
    fig, axes = figure(rows, columns, width=width, height=(1.45 if width < 5 else 2.3) * rows)
    for ax in axes.flat[len(tasks):]:
        ax.set_visible(False)
    memory = frames.table["peak_device"]
    repeats = bool((table["n"] > 1).any())
    named = []
    front_handles: dict[str, Line2D] = {}
    for ax, task in zip(axes.flat, tasks, strict=False):
        metric = main_metric(quality, task)
        part = table[(table["task"] == task) & (table["metric"] == metric)]
        x = [memory.get(g, math.nan) for g in part["group"]]
        # where seeds repeat, repeated cells carry the comparisons and get labels; single cells (equivalence
        # checks) sit on the reference and would only hide it, so they are drawn hollow and named in the tables
        labelled = (part["n"] > 1).tolist() if repeats else [True] * len(part)
        errors = spread_from_zero(part["mean"], part["sd"].where(part["n"] > 1))
        for i, (xi, (_, row), keep) in enumerate(zip(x, part.iterrows(), labelled, strict=True)):
            change = frames.design.changes.get(row["group"], "")
            colour = palette(change)
            ax.errorbar(xi, row["mean"], yerr=[[errors[0][i]], [errors[1][i]]] if row["n"] > 1 else None,
                        fmt=palette.marker(change), capsize=2, markersize=4.5, color=colour,
                        markerfacecolor=colour if keep else "none")
        on_front = part.assign(peak=x).set_index("group").dropna(subset=["peak", "mean"])
        on_front["context"] = [frames.table.at[g, "context"] if "context" in frames.table else 0
                               for g in on_front.index]
        fronts = fronts_by_context(on_front, "peak", "mean", gain_higher=_better(part) == "higher")
        for handle in front_lines(ax, on_front, fronts, "peak", "mean"):
            front_handles.setdefault(str(handle.get_label()), handle)
        ax.set_xlabel(memory_axis(frames.on_cpu))
        ax.set_ylabel(f"{task} {metric}\n({_better(part)} is better)")
        ax.grid(color="0.9", linewidth=0.6)
        named.append((ax, x, part, labelled))
    handles = [Line2D([], [], marker="o", linestyle="", color="0.3",
                      label="mean ± sd over seeds" if repeats else "one cell each")]
    if repeats and (table["n"] == 1).any():
        handles.append(Line2D([], [], marker="o", linestyle="", color="0.3", markerfacecolor="none",
                              label="a cell run once (unlabelled: see the tables)"))
    handles += front_handles.values()
    if front_handles:
        handles.append(Line2D([], [], linestyle="", label="front: no cell at its context needs less memory and "
                                                          "scores better"))
    legend_outside(axes[0][columns - 1], handles, below=True)
    for ax, x, part, labelled in named:  # named last, on the final layout
        if any(labelled):
            points = list(zip(x, part["mean"], strict=True))
            label_points(ax, [p[0] for p, keep in zip(points, labelled, strict=True) if keep],
                         [p[1] for p, keep in zip(points, labelled, strict=True) if keep],
                         [g for g, keep in zip(part["group"], labelled, strict=True) if keep],
                         avoid=[p for p, keep in zip(points, labelled, strict=True) if not keep])
    return fig


def by_cell(frames: Frames, palette: Palette, quality: pd.DataFrame, width: float = DOUBLE_IN,
            tasks: list[str] | None = None, shown_groups: list[str] | None = None) -> Figure:
    """Each task's main metric per cell: the trained score (mean, standard deviation over seeds) as a dot with its
    interval, the same model untrained as a diamond, on an axis fitted to the scores, so both the effect of a
    setting and the gain from training show however small."""
    table, tasks = _scores(quality, tasks)
    if not tasks:
        return _no_scores(width)
    every = table
    groups = shown_groups if shown_groups is not None else list(dict.fromkeys(table["group"]))
    table = table[table["group"].isin(groups)]
    fig, axes = figure(1, len(tasks), width=width, height=ROW_IN[narrow_width(width)] * len(groups) + 1.3,
                       sharey=True)
    off_axis = False
    for ax, task in zip(axes[0], tasks, strict=True):
        metric = main_metric(quality, task)
        part = table[(table["task"] == task) & (table["metric"] == metric)].set_index("group")
        shown = [g for g in groups if g in part.index]
        means, sd = part.loc[shown, "mean"], part.loc[shown, "sd"].where(part.loc[shown, "n"] > 1)
        errors = spread_from_zero(means, sd)
        for i, group in enumerate(shown):
            change = frames.design.changes.get(group, "")
            ax.errorbar(means.iloc[i], groups.index(group), xerr=[[errors[0][i]], [errors[1][i]]],
                        fmt=palette.marker(change), color=palette(change), markersize=4, capsize=2,
                        elinewidth=0.8, zorder=3)
        # the axis of every part alike: fitted to the task's scores over all cells
        whole = every[(every["task"] == task) & (every["metric"] == metric)]
        low, high = _fitted(list(whole["mean"] - whole["sd"].fillna(0)) + list(whole["mean"] + whole["sd"].fillna(0)),
                            whole["baseline"])
        ax.set_xlim(low, high)
        rows = [groups.index(g) for g in shown]
        untrained = part.loc[shown, "baseline"]
        inside = untrained.between(low, high)
        ax.scatter(untrained[inside.values], [r for r, keep in zip(rows, inside, strict=True) if keep], **UNTRAINED)
        beyond = untrained[~inside.values]
        if len(beyond):  # far off the trained scores: marked at the edge it lies beyond
            off_axis = True
            ax.scatter([high if v > high else low for v in beyond],
                       [r for r, keep in zip(rows, inside, strict=True) if not keep],
                       marker=">" if beyond.iloc[0] > high else "<", s=14, color="black", zorder=4)
        ax.set_title(f"{task}\n{metric} ({_better(part)} is better)", fontsize=8)
        ax.grid(axis="x", color="0.9", linewidth=0.6)
    rows_top_down(axes[0][0], groups)
    repeats = " (mean ± sd over seeds)" if (table["n"] > 1).any() else ""
    handles = [Line2D([], [], marker="o", linestyle="", color="0.3", label=f"trained{repeats}"),
               Line2D([], [], marker="D", markersize=4, markerfacecolor="white", markeredgecolor="black",
                      linestyle="", label="untrained (the adapter disabled)")]
    if off_axis:
        handles.append(Line2D([], [], marker=">", markersize=4, color="black", linestyle="",
                              label="untrained, beyond the axis's edge (its score: the quality table)"))
    legend_outside(axes[0][-1], handles, below=True)
    return fig


def _fitted(trained: list[float], untrained: pd.Series) -> tuple[float, float]:
    """An axis around the trained scores, taking in the untrained ones where that leaves the trained scores'
    differences at least a third of the axis; never below 0."""
    low, high, _ = limits(trained)
    both_low, both_high, _ = limits([*trained, *untrained])
    if (both_high - both_low) <= UNTRAINED_SPAN * (high - low):
        low, high = both_low, both_high
    return max(low, 0.0), high
