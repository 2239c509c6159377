"""What every chart shares: one colour per technique, the same in every chart
(harness/report/charts/technique_colours.py), a stated width with no text under 7 pt at it
(harness/spec/chart_widths.py), axis ranges fitted to the data, the budget drawn where it is in range and noted
where it is not, legends outside the data, and saving as PDF (fonts embedded as TrueType) and PNG at exactly the
stated width.
"""

from __future__ import annotations

import logging
import math
import textwrap
from collections.abc import Iterable, Sequence
from itertools import pairwise
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from matplotlib.artist import Artist
from matplotlib.axes import Axes
from matplotlib.backend_bases import RendererBase
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.patches import Patch
from matplotlib.transforms import Bbox
from matplotlib.typing import LineStyleType

from harness.core.atomic_files import atomic_path
from harness.report.charts.technique_colours import TOL_GREY, Palette
from harness.spec.chart_widths import DOUBLE_IN, LEGEND_BELOW_IN, SMALLEST_PT

# the budget joins an axis only if the axis then spans at most this many times the data's own range: further
# off, it would squeeze the differences the chart is there to show
BUDGET_SPAN = 3.0
PAD = 0.08
# characters of a legend entry before it wraps: beside a chart, a long one would squeeze the chart; below a
# column-wide chart there is the column's width
LEGEND_WIDTH = {"beside": 34, "below": 50}
# embedding TrueType fonts runs fontTools' subsetter, which logs every table it touches at INFO, the level the
# command line logs at
logging.getLogger("fontTools").setLevel(logging.WARNING)
SMALL = SMALLEST_PT
RC = {"pdf.fonttype": 42, "ps.fonttype": 42, "font.size": 8, "axes.titlesize": 8, "axes.labelsize": 8,
      "legend.fontsize": SMALL, "legend.title_fontsize": SMALL, "xtick.labelsize": SMALL,
      "ytick.labelsize": SMALL, "figure.titlesize": 8, "axes.spines.top": False, "axes.spines.right": False,
      "axes.axisbelow": True, "legend.frameon": False, "axes.linewidth": 0.6, "xtick.major.width": 0.6,
      "ytick.major.width": 0.6, "lines.linewidth": 1.2,
      # a report holds every chart of one width open until it saves them: dozens of parts, on purpose
      "figure.max_open_warning": 0}
__all__ = ["RC", "TOL_GREY", "Palette"]


def memory_axis(cpu: bool, prefix: str = "peak") -> str:
    """An axis label for peak memory, with its unit."""
    return f"{prefix} resident memory (CPU), GiB" if cpu else f"{prefix} device memory (GiB)"


def metric_panels(throughput_measured: bool, on_cpu: bool = False) -> list[tuple[str, str]]:
    """The panels of a chart that shows memory and, where it was measured, speed: (column, axis label)."""
    memory = [("peak_device", memory_axis(on_cpu))]
    return [*memory, ("tokens_per_second", "training tokens/s")] if throughput_measured else memory


def figure(rows: int = 1, columns: int = 1, width: float = DOUBLE_IN, height: float = 3.2,
           **kwargs: Any) -> tuple[Figure, Any]:
    """A figure of exactly `width` inches: the layout fits axes, labels and legends inside it (constrained
    layout), so the saved file is as wide as stated and its text the size it was set in."""
    return plt.subplots(rows, columns, figsize=(width, height), squeeze=False, layout="constrained", **kwargs)


def figure_of(ax: Axes) -> Figure:
    """The figure an axes is drawn in: the whole figure, whose size, layout and renderer the charts read (they draw
    no subfigures; matplotlib's `ax.figure` may be one)."""
    fig = ax.get_figure(root=True)
    if fig is None:
        raise ValueError("an axes that is in no figure")
    return fig


def renderer(fig: Figure) -> RendererBase:
    """What text is measured with: the figure's Agg canvas's renderer (matplotlib.use("Agg") above; the base canvas
    that matplotlib types `fig.canvas` as has none)."""
    canvas = fig.canvas
    if not isinstance(canvas, FigureCanvasAgg):
        raise TypeError(f"charts are measured on matplotlib's Agg canvas, not {type(canvas).__name__}")
    return canvas.get_renderer()


def narrow(fig: Figure) -> bool:
    """Whether the figure is too narrow for a legend beside its chart: a column's width."""
    return narrow_width(fig.get_figwidth())


def narrow_width(width: float) -> bool:
    return width < LEGEND_BELOW_IN


# a row of a chart of rows (a cell each), by whether it is drawn at a column's width: there tighter, for a column
# figure to stay under COLUMN_MAX_HEIGHT_IN (a 7 pt name needs about 0.1 in)
ROW_IN = {False: 0.2, True: 0.14}
# the tallest a figure one column wide may be: a taller one is split into parts (harness/report/charts/parts.py)
COLUMN_MAX_HEIGHT_IN = 4.0
DOUBLE_MAX_HEIGHT_IN = 8.0  # two columns wide: at most most of a page
# each budget of a chart its own line style, so that cells judged against 15.57, 23.99 and 31.84 GiB each show theirs
BUDGET_STYLES: list[LineStyleType] = ["--", "-.", ":", (0, (5, 1, 1, 1, 1, 1))]


def save(fig: Figure, out: Path, name: str, formats: Sequence[str] = ("pdf", "png")) -> list[Path]:
    """name.pdf and name.png at the figure's own size (no cropping, which would change the stated width); no
    creation date or software version, so an unchanged chart is an unchanged file."""
    paths = [out / f"{name}.{fmt}" for fmt in formats]
    for path in paths:
        with atomic_path(path) as tmp:
            if path.suffix == ".pdf":
                fig.savefig(tmp, metadata={"CreationDate": None, "Creator": None, "Producer": None})
            else:
                fig.savefig(tmp, dpi=150, metadata={"Software": None})
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
    if shown and budget is not None:
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
                   title: str | None = None, below: bool = False) -> None:
    """The figure's legend outside its charts: beside them at the double-column width, below them at a column's
    (or where `below`: a grid of panels that needs the whole width), the figure made taller by the legend's height
    so the charts keep theirs."""
    if handles is None:
        handles, labels = ax.get_legend_handles_labels()
    if not handles:
        return
    if labels is None:  # each handle's own label
        labels = [str(handle.get_label()) for handle in handles]
    fig = figure_of(ax)
    below = below or narrow(fig)
    width = LEGEND_WIDTH["below" if below else "beside"]
    labels = [textwrap.fill(label, width, subsequent_indent="  ") for label in labels]
    legend = fig.legend(handles, labels, loc="outside lower left" if below else "outside right upper", title=title,
                        alignment="left")
    if below:
        height = legend.get_window_extent(renderer(fig)).height / fig.dpi
        fig.set_figheight(fig.get_figheight() + height)


def fit_labels(fig: Figure) -> Figure:
    """Axis labels wrapped to their panel's width, so that labels of panels side by side never run into each
    other at a column's width. Call it once the chart is drawn."""
    fig.draw_without_rendering()  # the panels' widths as laid out
    for ax in fig.axes:
        for label in (ax.xaxis.label, ax.title):
            text = label.get_text()
            if not text:
                continue
            points = ax.get_position().width * fig.get_figwidth() * 72
            # a character of this sans-serif averages about 0.55 of its size in width
            fits = max(12, int(points / (0.55 * label.get_fontproperties().get_size_in_points())))
            label.set_text("\n".join(textwrap.fill(line, fits) for line in text.split("\n")))
    for ax in fig.axes:
        label = ax.yaxis.label
        if label.get_text():  # along the panel's height: wrapped to it, so stacked panels' labels never meet
            points = ax.get_position().height * fig.get_figheight() * 72
            fits = max(12, int(points / (0.55 * label.get_fontproperties().get_size_in_points())))
            label.set_text("\n".join(textwrap.fill(line, fits) for line in label.get_text().split("\n")))
    for ax in fig.axes:  # once every label is wrapped: a later panel's wrapped label narrows the panels beside it
        _thin_ticks(ax)
    _names_apart(fig)
    return fig


def _named_rows(ax: Axes) -> bool:
    return any(not label.get_text().lstrip("−-").replace(".", "").replace(",", "").isdigit()
               for label in ax.yaxis.get_ticklabels() if label.get_text())


POINT_NAME = "point-name"  # the gid of a name label_points wrote


def _names_apart(fig: Figure) -> None:
    """Point names that the final layout brought into each other or out of their panel taken out (they were
    placed apart on the layout before labels were wrapped): every cell stays in the tables."""
    fig.draw_without_rendering()
    drawn = renderer(fig)
    for ax in fig.axes:
        frame = ax.get_window_extent(drawn)
        kept: list[Bbox] = []
        for text in [t for t in ax.texts if t.get_gid() == POINT_NAME]:
            box = text.get_window_extent(drawn)
            if any(_overlap(box, other) for other in kept) or _outside(box, frame):
                text.remove()
            else:
                kept.append(box)


def _thin_ticks(ax: Axes) -> None:
    """Every other tick label of a number axis dropped, as often as it takes, where neighbouring labels would run
    into each other (contexts of 12,288 and 16,384 at a column's width). Rows' names are never dropped: a chart of
    rows makes its rows tall enough (rows_top_down)."""
    fig = figure_of(ax)
    drawn = renderer(fig)
    for axis in (ax.xaxis, *([] if _named_rows(ax) else [ax.yaxis])):
        for _ in range(4):
            fig.draw_without_rendering()
            # private, so not in the stubs: the ticks as drawn (inside the view, minor ones too) with their labels
            # set; the public get_major_ticks also holds ticks outside the view, with labels that are not drawn
            ticks = axis._update_ticks()  # type: ignore[attr-defined]
            labels = [t.label1 for t in ticks if t.label1.get_visible() and t.label1.get_text()]
            # neighbours closer than about a space apart read as one number ("5.255.50"): half an em between labels
            boxes = [label.get_window_extent(drawn).padded(label.get_fontsize() * fig.dpi / 72 / 4)
                     for label in labels]
            if not any(_overlap(a, b) > 0 for a, b in pairwise(boxes)):
                break
            locations = [float(v) for v in axis.get_ticklocs()]
            shown = {label.get_text() for label in labels}
            texts = [t.get_text() for t in axis.get_ticklabels()]
            axis.set_ticks(locations[::2], [t if t in shown else "" for t in texts][::2])


def legend_texts(fig: Figure) -> list[str]:
    """Every entry of the figure's legends, as one line each."""
    legends = [*fig.legends, *(legend for ax in fig.axes if (legend := ax.get_legend()) is not None)]
    return [" ".join(text.get_text().split()) for legend in legends for text in legend.get_texts()]


# at a column's width, a row's name longer than this wraps after its commas: it would leave the panels no room
ROW_NAME_CHARS = 24


def rows_top_down(ax: Axes, labels: Sequence[str]) -> None:
    """One row per label, the first on top; every row inside the axes, those with only a status written too."""
    fig = figure_of(ax)
    if narrow(fig):
        labels = [textwrap.fill(label.replace(",", ", "), ROW_NAME_CHARS).replace(", ", ",")
                  if len(label) > ROW_NAME_CHARS else label for label in labels]
        lines = max([label.count("\n") + 1 for label in labels] + [1])
        # a name over several lines needs a taller row: the figure grows by it, the rows keep their names
        fig.set_figheight(fig.get_figheight() + (lines - 1) * 0.11 * len(labels))
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
                 avoid: Sequence[tuple[float, float]] = ()) -> list[str]:
    """Name each point, where the name covers no other name and no point (nor the unnamed points to `avoid`);
    points that coincide get one label with all their names. A name that would run into another name wherever it
    went is left out: the names left out are returned, for the legend to send the reader to the table. Call it once
    the axis limits are set: placement is measured on the drawn figure, so the limits are fixed from here."""
    fig = figure_of(ax)
    fig.draw_without_rendering()  # the layout settled first: names are placed in pixels
    ax.set_xlim(ax.get_xlim())  # fixed from here
    ax.set_ylim(ax.get_ylim())
    drawn = renderer(fig)
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
    named: list[Bbox] = []  # the names placed so far
    left_out: list[str] = []
    frame = ax.get_window_extent(drawn)
    for members in sorted(groups, key=lambda m: (-ys[m[0]], xs[m[0]])):
        point = (xs[members[0]], ys[members[0]])
        text = ", ".join(names[i] for i in members)
        costs = []
        for dx, dy in _OFFSETS:
            label = _annotate(ax, text, point, dx, dy)
            box = label.get_window_extent(drawn)
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
        box = label.get_window_extent(drawn)
        if any(_overlap(box, other) for other in named) or _outside(box, frame):
            label.remove()  # wherever it goes it runs into a name or out of the chart: not written at all
            left_out += [names[i] for i in members]
            continue
        occupied.append(box)
        named.append(box)
    return left_out


def _far(dx: float, dy: float) -> bool:
    return abs(dx) > 8 or abs(dy) > 12


def _annotate(ax: Axes, text: str, point: tuple[float, float], dx: float, dy: float, leader: bool = False) -> Any:
    """A name off its point; a name placed further out gets a thin line back to it. Names stay out of the layout:
    placed on the settled layout, they would otherwise move it (and the points) once more."""
    return ax.annotate(text, point, xytext=(dx, dy), textcoords="offset points", fontsize=7, gid=POINT_NAME,
                       ha="left" if dx > 0 else "right" if dx < 0 else "center", va="bottom" if dy >= 0 else "top",
                       arrowprops={"arrowstyle": "-", "color": "0.6", "linewidth": 0.5, "shrinkA": 0, "shrinkB": 3}
                       if leader else None, in_layout=False)


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
