"""The report's charts, each at the double-column width (PDF and PNG) and at a column's (PDF: name-column.pdf),
harness/spec/chart_widths.py: which ones a matrix gets is its design's (harness/spec/design.py), what they draw
comes from the frames every part of the report shares (harness/report/frames.py). Each drawer builds a figure from
those alone, at the width it is given; saving is done here, in one place."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import matplotlib.pyplot as plt
import pandas as pd
from matplotlib.figure import Figure

from harness.report.charts import deltas, loss, overview, paired, parts, quality, recall_age, sweep, tradeoff
from harness.report.charts.style import COLUMN_MAX_HEIGHT_IN, DOUBLE_MAX_HEIGHT_IN, RC, Palette, fit_labels, save
from harness.report.frames import Frames
from harness.spec.chart_widths import DOUBLE_IN, FORMATS, LEGEND_BELOW_IN, WIDTHS

Drawer = Callable[[Frames, Palette, pd.DataFrame, float], Figure]
DRAWERS: dict[str, Drawer] = {
    "sweep": lambda frames, palette, _, width: sweep.draw(frames, palette, width),
    "tradeoff": lambda frames, palette, _, width: tradeoff.draw(frames, palette, width),
}
# charts that split into parts where one figure would be too tall (harness/report/charts/parts.py)
SPLIT_DRAWERS: dict[str, Callable[[Frames, Palette, pd.DataFrame, float], list[Figure]]] = {
    "overview": lambda frames, palette, _, width: parts.within(
        lambda groups: overview.draw(frames, palette, width, groups), list(frames.table.index),
        COLUMN_MAX_HEIGHT_IN if width < LEGEND_BELOW_IN else DOUBLE_MAX_HEIGHT_IN),
    "deltas": lambda frames, palette, _, width: parts.within(
        lambda groups: deltas.draw(frames, palette, width, groups), list(frames.deltas["group"]),
        COLUMN_MAX_HEIGHT_IN if width < LEGEND_BELOW_IN else DOUBLE_MAX_HEIGHT_IN),
    "loss": lambda frames, palette, _, width: loss.parts(frames, palette, width),
    "quality_by_cell": quality.by_cell_parts,
    "quality_vs_memory": quality.against_memory_parts,
}
CAPTIONS = {
    "overview": "every cell's peak device memory (and speed, where measured), whatever its status",
    "sweep": "memory and speed against the sweep's x, a line per stack",
    "deltas": "each change against the baseline: Δ peak memory and Δ% tokens/s",
    "tradeoff": "peak memory against tokens/s, the Pareto front of each context marked (a name that would cover "
                "another is left out: every cell is in the tables)",
    "loss": "training loss per step, warm-up shaded, coinciding curves named together",
    "quality_vs_memory": "each task's score against peak memory, the Pareto front of each context marked (a name "
                         "that would cover another is left out: every cell is in the tables)",
    "quality_by_cell": "each task's score per cell (dots, ± sd), trained and untrained",
    "recall_by_age": "recall of planted facts by how many sections back they were introduced (bins from the data), "
                     "per policy",
    "paired_differences": "each planned comparison's paired effect with its interval at its Holm level, zero marked; "
                          "each row names its task (DiD: a difference-in-differences against the untrained model)",
}
PAIRED = "paired_differences"  # drawn where the report has comparisons.csv
# charts drawn from the items of the evaluations (items.csv) rather than from the scores
ITEM_DRAWERS: dict[str, Callable[[Frames, pd.DataFrame | None, float], Figure]] = {
    "recall_by_age": lambda frames, items, width: recall_age.draw(frames.cells, items, width),
}
NO_QUALITY = pd.DataFrame(columns=["name", "task", "status", "metric", "value", "stderr", "baseline", "delta",
                                   "partial", "higher_is_better"])


def names(frames: Frames, comparisons: pd.DataFrame | None = None) -> list[str]:
    """The charts a report draws: its design's, and the paired differences where it has comparisons.csv."""
    return [*frames.design.charts, *([PAIRED] if comparisons is not None else [])]


def figures(frames: Frames, quality_scores: pd.DataFrame | None = None,
            items: pd.DataFrame | None = None, width: float = DOUBLE_IN,
            comparisons: pd.DataFrame | None = None) -> dict[str, Figure]:
    """Every chart of the design, by name, drawn in the report's style at `width` inches (the caller closes
    them)."""
    palette = Palette(frames.design.changes.values())
    scores = quality_scores if quality_scores is not None else NO_QUALITY

    def one(name: str) -> Figure | list[Figure]:
        if name == PAIRED:
            return paired.parts(comparisons, width)
        if name in ITEM_DRAWERS:
            return ITEM_DRAWERS[name](frames, items, width)
        if name in SPLIT_DRAWERS:
            return SPLIT_DRAWERS[name](frames, palette, scores, width)
        return DRAWERS[name](frames, palette, scores, width)

    with plt.rc_context(RC):
        return {part: fit_labels(fig) for name in names(frames, comparisons)
                for part, fig in parts.named(name, one(name)).items()}


def not_drawn(out: Path, drawn: list[Path]) -> list[Path]:
    """The chart files in out that this build did not draw: parts beyond the number now drawn (a chart split in
    fewer parts than before), or a chart the report no longer has. Only names vramlab gives its charts."""
    formats = "|".join(sorted({fmt for fmts in FORMATS.values() for fmt in fmts}))
    widths = "|".join(re.escape(suffix) for suffix in WIDTHS if suffix)
    ours = re.compile(rf"(?:{'|'.join(map(re.escape, CAPTIONS))})(?:-part\d+)?(?:{widths})?\.(?:{formats})")
    kept = set(drawn)
    return sorted(p for p in out.iterdir() if p.is_file() and ours.fullmatch(p.name) and p not in kept)


def draw(frames: Frames, quality_scores: pd.DataFrame | None, out: Path,
         items: pd.DataFrame | None = None, comparisons: pd.DataFrame | None = None) -> list[Path]:
    """Every chart at every width, one width at a time (a figure is closed once saved)."""
    paths: list[Path] = []
    with plt.rc_context(RC):
        for suffix, width in WIDTHS.items():
            for name, fig in figures(frames, quality_scores, items, width, comparisons).items():
                paths += save(fig, out, name + suffix, FORMATS[suffix])
    return paths
