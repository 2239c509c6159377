"""What every chart shares: Paul Tol's colour-blind-safe palettes, one colour per change against the baseline
(so a technique or stack has the same colour in every chart), axis ranges fitted to the data, the budget drawn
where it is in range and noted where it is not, legends outside the data, and saving as PDF (fonts embedded as
TrueType) and PNG.
"""

from __future__ import annotations

import logging
import math
import textwrap
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from matplotlib.artist import Artist
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.patches import Patch
from matplotlib.transforms import Bbox

# Paul Tol's qualitative schemes (personal.sron.nl/~pault): muted (9 colours, colour-blind safe), then the
# colours of his light scheme that look like none of them; beyond that colours repeat, and every point, bar and
# curve is named anyway
TOL_MUTED = ("#CC6677", "#332288", "#DDCC77", "#117733", "#88CCEE", "#882255", "#44AA99", "#999933", "#AA4499")
TOL_LIGHT_EXTRA = ("#EE8866", "#BBCC33", "#77AADD", "#FFAABB")
TOL_GREY = "#BBBBBB"
BASELINE_COLOUR = "#000000"
# within one colour (cells of one stack), further curves are told apart by their line style
LINE_STYLES = ("-", "--", ":", "-.")
# the budget joins an axis only if the axis then spans at most this many times the data's own range: further
# off, it would squeeze the differences the chart is there to show
BUDGET_SPAN = 3.0
PAD = 0.08
# characters of a legend entry before it wraps: a long one would push the chart into a corner
LEGEND_WIDTH = 48
# embedding TrueType fonts runs fontTools' subsetter, which logs every table it touches at INFO, the level the
# command line logs at
logging.getLogger("fontTools").setLevel(logging.WARNING)
RC = {"pdf.fonttype": 42, "ps.fonttype": 42, "font.size": 9, "axes.titlesize": 9, "axes.labelsize": 9,
      "legend.fontsize": 8, "xtick.labelsize": 8, "ytick.labelsize": 8, "axes.spines.top": False,
      "axes.spines.right": False, "axes.axisbelow": True, "legend.frameon": False}


def memory_axis(cpu: bool, prefix: str = "peak") -> str:
    """An axis label for peak memory, with its unit."""
    return f"{prefix} resident memory (CPU), GiB" if cpu else f"{prefix} device memory (GiB)"


def metric_panels(throughput_measured: bool, on_cpu: bool = False) -> list[tuple[str, str]]:
    """The panels of a chart that shows memory and, where it was measured, speed: (column, axis label)."""
    memory = [("peak_device", memory_axis(on_cpu))]
    return [*memory, ("tokens_per_second", "training tokens/s")] if throughput_measured else memory


class Palette:
    """A colour per change against the baseline, in the order the matrix first shows it; the baseline black."""

    def __init__(self, changes: Iterable[str]) -> None:
        keys = [k for k in dict.fromkeys(changes) if k]
        colours = TOL_MUTED + TOL_LIGHT_EXTRA
        self._colours = {"": BASELINE_COLOUR} | {k: colours[i % len(colours)] for i, k in enumerate(keys)}

    def __call__(self, change: str) -> str:
        return self._colours.get(change, TOL_GREY)


def figure(rows: int = 1, columns: int = 1, width: float = 6.5, height: float = 3.2,
           **kwargs: Any) -> tuple[Figure, Any]:
    return plt.subplots(rows, columns, figsize=(width, height), squeeze=False, **kwargs)


def save(fig: Figure, out: Path, name: str) -> list[Path]:
    """name.pdf and name.png; no creation date or software version, so an unchanged chart is an unchanged file."""
    paths = [out / f"{name}.pdf", out / f"{name}.png"]
    fig.savefig(paths[0], bbox_inches="tight", metadata={"CreationDate": None, "Creator": None, "Producer": None})
    fig.savefig(paths[1], bbox_inches="tight", dpi=150, metadata={"Software": None})
    plt.close(fig)
    return paths


def limits(values: Iterable[float], budget: float | None = None) -> tuple[float, float, bool]:
    """An axis range around the finite values, and whether the budget is inside it."""
    finite = [v for v in values if v is not None and not math.isnan(v)]
    if not finite:
        return 0.0, 1.0, False
    low, high = min(finite), max(finite)
    span = high - low or abs(high) * 0.1 or 1.0
    shown = budget is not None and max(high, budget) - min(low, budget) <= BUDGET_SPAN * span
    if shown:
        low, high = min(low, budget), max(high, budget)
    pad = PAD * ((high - low) or span)
    return low - pad, high + pad, shown


def budget_mark(ax: Axes, budget: float | None, shown: bool, vertical: bool = True,
                label: str | None = None) -> list[Artist]:
    """A dashed line at the budget where it is in range, else nothing drawn: either way the legend entry that
    says so (none without a budget)."""
    if budget is None:
        return []
    label = label or f"budget {budget:.2f} GiB"
    if shown:
        line = ax.axvline if vertical else ax.axhline
        return [line(budget, color="black", linestyle="--", linewidth=1, label=label)]
    high = (ax.get_xlim() if vertical else ax.get_ylim())[1]
    return [Patch(facecolor="none", edgecolor="none",
                  label=f"{label}: {'above' if budget > high else 'below'} the range shown")]


def legend_outside(ax: Axes, handles: Sequence[Any] | None = None, labels: Sequence[str] | None = None,
                   title: str | None = None) -> None:
    if handles is None:
        handles, labels = ax.get_legend_handles_labels()
    if handles:
        labels = [textwrap.fill(label, LEGEND_WIDTH, subsequent_indent="  ") for label in labels or []]
        ax.legend(handles, labels, loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0, title=title,
                  title_fontsize=8, alignment="left")


def rows_top_down(ax: Axes, labels: Sequence[str]) -> None:
    """One row per label, the first on top; every row inside the axes, those with only a status written too."""
    ax.set_yticks(range(len(labels)), labels)
    ax.set_ylim(len(labels) - 0.5, -0.5)


def nothing_to_draw(ax: Axes, why: str) -> None:
    ax.text(0.5, 0.5, why, ha="center", va="center", transform=ax.transAxes, fontsize=8, color="0.35", wrap=True)
    ax.set_xticks([])
    ax.set_yticks([])


# where a point's name may go, in points from the point, tried in this order: beside it, then further out
_OFFSETS = [(5, 2), (5, -9), (-5, 2), (-5, -9), (0, 7), (0, -13), (12, 10), (12, -16), (-12, 10), (-12, -16),
            (22, 0), (-22, 0), (0, 18), (0, -24), (30, 18), (30, -24), (-30, 18), (-30, -24), (0, 30), (0, -36)]
# the cost (in square pixels of overlap) of a name that sits nearer another point than its own
_MISLEADING = 400.0
# points closer than this (in pixels) share one label: they sit on each other and could not be told apart
_COINCIDE_PX = 4.0


def label_points(ax: Axes, xs: Sequence[float], ys: Sequence[float], names: Sequence[str],
                 avoid: Sequence[tuple[float, float]] = ()) -> None:
    """Name each point, where the name covers no other name and no point (nor the unnamed points to `avoid`);
    points that coincide get one label with all their names. Call it once the axis limits are set: placement
    is measured on the drawn figure, so the limits are fixed from here."""
    ax.set_xlim(ax.get_xlim())  # fixed from here: names are placed in pixels
    ax.set_ylim(ax.get_ylim())
    renderer = ax.figure.canvas.get_renderer()
    pixels = [tuple(ax.transData.transform((x, y))) for x, y in zip(xs, ys, strict=True)]
    groups: list[list[int]] = []
    for i, (px, py) in enumerate(pixels):
        for members in groups:
            qx, qy = pixels[members[0]]
            if math.hypot(px - qx, py - qy) < _COINCIDE_PX:
                members.append(i)
                break
        else:
            groups.append([i])
    others = [tuple(ax.transData.transform(point)) for point in avoid]
    occupied = [Bbox.from_extents(px - 4, py - 4, px + 4, py + 4) for px, py in [*pixels, *others]]
    frame = ax.get_window_extent(renderer)
    for members in sorted(groups, key=lambda m: (-ys[m[0]], xs[m[0]])):
        point = (xs[members[0]], ys[members[0]])
        text = ", ".join(names[i] for i in members)
        costs = []
        for dx, dy in _OFFSETS:
            label = _annotate(ax, text, point, dx, dy)
            box = label.get_window_extent(renderer)
            label.remove()
            own = pixels[members[0]]
            # a name further out gets a line back to its point, so only a name close by can be taken for another's
            misleading = not _far(dx, dy) and any(_distance(box, q) < _distance(box, own)
                                                  for j, q in enumerate(pixels) if j not in members)
            costs.append(sum(_overlap(box, other) for other in occupied) + _outside(box, frame)
                         + (_MISLEADING if misleading else 0))
            if costs[-1] == 0:
                break
        dx, dy = _OFFSETS[costs.index(min(costs))]
        label = _annotate(ax, text, point, dx, dy, leader=_far(dx, dy))
        occupied.append(label.get_window_extent(renderer))


def _far(dx: float, dy: float) -> bool:
    return abs(dx) > 8 or abs(dy) > 12


def _annotate(ax: Axes, text: str, point: tuple[float, float], dx: float, dy: float, leader: bool = False) -> Any:
    """A name off its point; a name placed further out gets a thin line back to it."""
    return ax.annotate(text, point, xytext=(dx, dy), textcoords="offset points", fontsize=7,
                       ha="left" if dx > 0 else "right" if dx < 0 else "center", va="bottom" if dy >= 0 else "top",
                       arrowprops={"arrowstyle": "-", "color": "0.6", "linewidth": 0.5, "shrinkA": 0, "shrinkB": 3}
                       if leader else None)


def _distance(box: Bbox, point: tuple[float, float]) -> float:
    x, y = point
    return math.hypot(max(box.x0 - x, 0, x - box.x1), max(box.y0 - y, 0, y - box.y1))


def _overlap(a: Bbox, b: Bbox) -> float:
    width = min(a.x1, b.x1) - max(a.x0, b.x0)
    height = min(a.y1, b.y1) - max(a.y0, b.y0)
    return width * height if width > 0 and height > 0 else 0.0


def _outside(box: Bbox, frame: Bbox) -> float:
    inside = _overlap(box, frame)
    return box.width * box.height - inside
