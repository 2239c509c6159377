"""The trade-off itself: peak device memory against training tokens/s, a point per trained cell, the Pareto front
(no other cell needs less memory and runs faster) joined and ringed, the budget where it is in range."""

from __future__ import annotations

from matplotlib.figure import Figure
from matplotlib.lines import Line2D

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
from harness.report.frames import Frames


def draw(frames: Frames, palette: Palette) -> Figure:
    table = frames.table
    points = table[(table["status"] == "ok")].dropna(subset=["peak_device", "tokens_per_second"])
    fig, axes = figure(1, 1, width=6.4, height=4.0)
    ax = axes[0][0]
    if points.empty:
        nothing_to_draw(ax, "no cell trained with its speed measured")
        return fig
    for group, row in points.iterrows():
        ax.errorbar(row["peak_device"], row["tokens_per_second"],
                    xerr=row["peak_device_sd"] if row["peak_device_n"] > 1 else None,
                    yerr=row["tokens_per_second_sd"] if row["tokens_per_second_n"] > 1 else None,
                    fmt="o", color=palette(frames.design.changes[group]), markersize=5, capsize=2, zorder=3)
    front = points.loc[frames.front]
    ax.plot(front["peak_device"], front["tokens_per_second"], color="0.4", linestyle="--", linewidth=1, zorder=2)
    ax.scatter(front["peak_device"], front["tokens_per_second"], s=140, facecolors="none", edgecolors="black",
               linewidths=1, zorder=4)
    low, high, shown = limits(points["peak_device"], frames.budget)
    ax.set_xlim(low, high)
    y_low, y_high, _ = limits(points["tokens_per_second"])
    ax.set_ylim(y_low, y_high)
    label_points(ax, list(points["peak_device"]), list(points["tokens_per_second"]), list(points.index))
    ax.set_xlabel(memory_axis(frames.on_cpu))
    ax.set_ylabel("training tokens/s")
    ax.grid(color="0.9", linewidth=0.6)
    budget_entry = budget_mark(ax, frames.budget, shown)
    handles = [Line2D([], [], color="0.4", linestyle="--", marker="o", markerfacecolor="none",
                      markeredgecolor="black", markersize=9, label="Pareto front: no cell needs less memory\n"
                                                                   "and runs faster")]
    handles += budget_entry
    if (points["n"] > 1).any():
        handles.append(Line2D([], [], color="0.3", marker="o", label="mean ± sd over seeds"))
    legend_outside(ax, handles, [h.get_label() for h in handles])
    return fig
