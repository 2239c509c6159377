"""Training loss per optimizer step: a curve per group (mean over seeds with a ±sd band where seeds repeat),
whole steps on the axis, the warm-up steps shaded. Curves that coincide are drawn once and named together, so a
reader never takes a hidden curve for a missing cell. Cells of one technique share its colour and differ in style.
A matrix of many techniques gets a panel per technique (each with the baseline's curve, in black, to read it
against) and its own complete legend, in parts of at most a column's height: twenty curves in one panel could not
be told apart. Drawn only where the loss says something (harness/spec/design.py: real weights, at least
LOSS_MIN_STEPS steps)."""

from __future__ import annotations

from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.patches import Patch
from matplotlib.ticker import MaxNLocator

from harness.report.charts.parts import within
from harness.report.charts.style import (
    COLUMN_MAX_HEIGHT_IN,
    DOUBLE_MAX_HEIGHT_IN,
    Palette,
    figure,
    figure_of,
    legend_outside,
    narrow,
    narrow_width,
    nothing_to_draw,
)
from harness.report.charts.technique_colours import LINE_STYLES, technique
from harness.report.frames import SAME_CURVE, Frames
from harness.spec.chart_widths import DOUBLE_IN

# up to this many steps each is marked; beyond, markers would only blot the curves
MARKED_STEPS = 20


# at most this many curves share a panel; more and the panels are split by technique
CURVES_PER_PANEL = 6
PANEL_IN = 1.9


def panels(frames: Frames) -> list[list[list[str]]]:
    """The curves (frames.drawn) of each panel: all in one where they are few, else one panel per technique, the
    baseline's curve in each."""
    if len(frames.drawn) <= CURVES_PER_PANEL:
        return [frames.drawn]
    base = [m for m in frames.drawn if frames.design.baseline in m]
    by_technique: dict[str, list[list[str]]] = {}
    for members in frames.drawn:
        if members not in base:
            by_technique.setdefault(technique(frames.design.changes[members[0]]), []).append(members)
    return [[*base, *curves[i:i + CURVES_PER_PANEL]] for curves in by_technique.values()
            for i in range(0, len(curves), CURVES_PER_PANEL)]


def parts(frames: Frames, palette: Palette, width: float = DOUBLE_IN) -> list[Figure]:
    if not frames.curves:
        return [draw(frames, palette, width)]
    most = COLUMN_MAX_HEIGHT_IN if narrow_width(width) else DOUBLE_MAX_HEIGHT_IN
    return within(lambda run: draw(frames, palette, width, run), panels(frames), most)


def draw(frames: Frames, palette: Palette, width: float = DOUBLE_IN,
         shown: list[list[list[str]]] | None = None) -> Figure:
    """shown: the panels, each a list of curves (frames.drawn's groups); one panel of every curve by default."""
    shown = shown if shown is not None else [frames.drawn]
    columns = 1 if narrow_width(width) or len(shown) == 1 else 2
    rows = -(-len(shown) // columns)
    fig, axes = figure(rows, columns, width=width, height=(2.6 if len(shown) == 1 else PANEL_IN) * rows)
    for ax in axes.flat[len(shown):]:
        ax.set_visible(False)
    if not frames.curves:
        nothing_to_draw(axes[0][0], "no cell recorded a loss")
        return fig
    for ax, curves in zip(axes.flat, shown, strict=False):
        _panel(ax, frames, palette, curves, single=len(shown) == 1)
    return fig


def _panel(ax: Axes, frames: Frames, palette: Palette, curves: list[list[str]], single: bool) -> None:
    used: dict[str, int] = {}
    warmup: set[int] = set()
    for members in curves:
        curve = frames.curves[members[0]]
        change = frames.design.changes[members[0]]
        colour = palette(change)
        # a level of a technique has its style; further groups of that level (another context) the next ones
        style = LINE_STYLES[(palette.level(change) + used.get(change, 0)) % len(LINE_STYLES)]
        used[change] = used.get(change, 0) + 1
        label = " = ".join(members) + (" (same curve)" if len(members) > 1 else "")
        ax.plot(curve["step"], curve["mean"], color=colour, linestyle=style, linewidth=1.2, label=label,
                marker="o" if len(curve) <= MARKED_STEPS else None, markersize=2.5)
        if (curve["n"] > 1).any():
            ax.fill_between(curve["step"], curve["mean"] - curve["sd"], curve["mean"] + curve["sd"], color=colour,
                            alpha=0.15, linewidth=0)
        warmup |= set(curve.loc[curve["warmup"], "step"].astype(int))
    for step in sorted(warmup):
        ax.axvspan(step - 0.5, step + 0.5, color="0.92", zorder=0, linewidth=0)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    at_column = narrow(figure_of(ax))
    if single or not at_column:  # a split panel at a column's width has its legend there: x in its title
        ax.set_xlabel("optimizer step")
    ax.set_ylabel("training loss")
    ax.grid(axis="y", color="0.9", linewidth=0.6)
    handles, labels = ax.get_legend_handles_labels()
    if not single:  # a panel of a split chart: its technique above it, its own legend beside it
        name = technique(frames.design.changes[next(m for m in curves if frames.design.baseline not in m)[0]]) \
            or f"{frames.design.baseline} at other {frames.design.x or 'settings'}"
        ax.set_title(f"{name}: loss per optimizer step" if at_column else name, fontsize=8)
        ax.legend(handles, labels, loc="upper left", bbox_to_anchor=(0, -0.3) if at_column else (1.02, 1),
                  fontsize=7, handlelength=2.4, borderaxespad=0, ncols=2 if at_column else 1)
        return
    if warmup:
        handles.append(Patch(color="0.92"))
        labels.append("warm-up step (not timed)")
    if any((c["n"] > 1).any() for c in frames.curves.values()):
        handles.append(Patch(color="0.3", alpha=0.15))
        labels.append("± sd over seeds")
    if any(len(m) > 1 for m in frames.drawn):
        labels.append(f"same curve: within {SAME_CURVE:.2%} at every step")
        handles.append(Patch(facecolor="none", edgecolor="none"))
    legend_outside(ax, handles, labels)
