"""Training loss per optimizer step: a curve per group (mean over seeds with a ±sd band where seeds repeat),
whole steps on the axis, the warm-up steps shaded. Curves that coincide are drawn once and named together, so a
reader never takes a hidden curve for a missing cell. Cells of one technique share its colour and differ in style.
Drawn only where the loss says something (harness/spec/design.py: real weights, at least LOSS_MIN_STEPS steps)."""

from __future__ import annotations

from matplotlib.figure import Figure
from matplotlib.patches import Patch
from matplotlib.ticker import MaxNLocator

from harness.report.charts.style import Palette, figure, legend_outside, nothing_to_draw
from harness.report.charts.technique_colours import LINE_STYLES
from harness.report.frames import SAME_CURVE, Frames
from harness.spec.chart_widths import DOUBLE_IN

# up to this many steps each is marked; beyond, markers would only blot the curves
MARKED_STEPS = 20


def draw(frames: Frames, palette: Palette, width: float = DOUBLE_IN) -> Figure:
    fig, axes = figure(1, 1, width=width, height=2.6)
    ax = axes[0][0]
    if not frames.curves:
        nothing_to_draw(ax, "no cell recorded a loss")
        return fig
    used: dict[str, int] = {}
    warmup: set[int] = set()
    for members in frames.drawn:
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
    ax.set_xlabel("optimizer step")
    ax.set_ylabel("training loss")
    ax.grid(axis="y", color="0.9", linewidth=0.6)
    handles, labels = ax.get_legend_handles_labels()
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
    return fig
