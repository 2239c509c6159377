"""The report's charts, each as PDF and PNG: which ones a matrix gets is its design's (harness/spec/design.py),
what they draw comes from the frames every part of the report shares (harness/report/frames.py). Each drawer
builds a figure from those alone; saving is done here, in one place."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import matplotlib.pyplot as plt
import pandas as pd
from matplotlib.figure import Figure

from harness.report.charts import deltas, loss, overview, quality, recall_age, sweep, tradeoff
from harness.report.charts.style import RC, Palette, save
from harness.report.frames import Frames

Drawer = Callable[[Frames, Palette, pd.DataFrame], Figure]
DRAWERS: dict[str, Drawer] = {
    "overview": lambda frames, palette, _: overview.draw(frames, palette),
    "sweep": lambda frames, palette, _: sweep.draw(frames, palette),
    "deltas": lambda frames, palette, _: deltas.draw(frames, palette),
    "tradeoff": lambda frames, palette, _: tradeoff.draw(frames, palette),
    "loss": lambda frames, palette, _: loss.draw(frames, palette),
    "quality_vs_memory": quality.against_memory,
    "quality_by_cell": quality.by_cell,
}
CAPTIONS = {
    "overview": "every cell's peak device memory (and speed, where measured), whatever its status",
    "sweep": "memory and speed against the sweep's x, a line per stack",
    "deltas": "each change against the baseline: Δ peak memory and Δ% tokens/s",
    "tradeoff": "peak memory against tokens/s, the Pareto front marked",
    "loss": "training loss per step, warm-up shaded, coinciding curves named together",
    "quality_vs_memory": "each task's score against peak memory",
    "quality_by_cell": "each task's score per cell, trained and untrained",
    "recall_by_age": "exact recall of planted facts by how many sections back they were introduced, per policy",
}
# charts drawn from the items of the evaluations (items.csv) rather than from the scores
ITEM_DRAWERS: dict[str, Callable[[Frames, pd.DataFrame | None], Figure]] = {
    "recall_by_age": lambda frames, items: recall_age.draw(frames.cells, items),
}
NO_QUALITY = pd.DataFrame(columns=["name", "task", "status", "metric", "value", "stderr", "baseline", "delta",
                                   "partial", "higher_is_better"])


def figures(frames: Frames, quality_scores: pd.DataFrame | None = None,
            items: pd.DataFrame | None = None) -> dict[str, Figure]:
    """Every chart of the design, by name, drawn in the report's style (the caller closes them)."""
    palette = Palette(frames.design.changes.values())
    scores = quality_scores if quality_scores is not None else NO_QUALITY
    with plt.rc_context(RC):
        return {name: ITEM_DRAWERS[name](frames, items) if name in ITEM_DRAWERS
                else DRAWERS[name](frames, palette, scores) for name in frames.design.charts}


def draw(frames: Frames, quality_scores: pd.DataFrame | None, out: Path,
         items: pd.DataFrame | None = None) -> list[Path]:
    paths: list[Path] = []
    with plt.rc_context(RC):
        for name, fig in figures(frames, quality_scores, items).items():
            paths += save(fig, out, name)
    return paths
