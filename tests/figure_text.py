"""Text that runs into text, or into a panel it does not belong to, in a drawn matplotlib figure: read from the
extents the renderer gives each visible text (tick labels, axis labels, titles, legends, annotations)."""

from __future__ import annotations

from itertools import combinations

from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.text import Text
from matplotlib.transforms import Bbox

TOLERANCE_PX = 1.0  # glyph boxes include a little air: touching by a pixel is not running into


def drawn_ticks(ax: Axes, axes: str = "xy") -> list[Text]:
    """The tick labels drawn on the named axes: those of the ticks inside the view (matplotlib keeps others,
    undrawn)."""
    found = []
    for axis in [a for name, a in (("x", ax.xaxis), ("y", ax.yaxis)) if name in axes]:
        if not axis.get_visible():
            continue
        for tick in axis._update_ticks():  # the ticks the next draw draws
            found += [label for label in (tick.label1, tick.label2) if label.get_visible()]
    return found


def _texts(fig: Figure) -> list[tuple[Text, Axes | None, Bbox]]:
    renderer = fig.canvas.get_renderer()
    found: list[tuple[Text, Axes | None]] = []
    for ax in fig.axes:
        if not ax.get_visible():
            continue
        found += [(t, ax) for t in [*drawn_ticks(ax), ax.xaxis.label, ax.yaxis.label, ax.title, ax._left_title,
                                    ax._right_title, *ax.texts]]
        if ax.get_legend() is not None:
            found += [(t, ax) for t in [*ax.get_legend().get_texts(), ax.get_legend().get_title()]]
    for legend in fig.legends:
        found += [(t, None) for t in [*legend.get_texts(), legend.get_title()]]
    found += [(t, None) for t in fig.texts]  # the suptitle among them
    return [(t, owner, t.get_window_extent(renderer)) for t, owner in found
            if t.get_visible() and t.get_text().strip()]


def _overlap(a: Bbox, b: Bbox) -> bool:
    return min(a.x1, b.x1) - max(a.x0, b.x0) > TOLERANCE_PX and min(a.y1, b.y1) - max(a.y0, b.y0) > TOLERANCE_PX


def overlaps(fig: Figure) -> list[str]:
    """Each pair of texts that overlap, and each text inside a panel other than its own."""
    fig.draw_without_rendering()
    texts = _texts(fig)
    found = [f"{a.get_text()!r} overlaps {b.get_text()!r}" for (a, _, box_a), (b, _, box_b) in combinations(texts, 2)
             if _overlap(box_a, box_b)]
    renderer = fig.canvas.get_renderer()
    panels = [(ax, ax.get_window_extent(renderer)) for ax in fig.axes if ax.get_visible()]
    for text, owner, box in texts:
        for ax, frame in panels:
            if ax is not owner and owner is not None and _overlap(box, frame):
                found.append(f"{text.get_text()!r} runs into another panel")
    return found
