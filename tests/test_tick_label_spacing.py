"""Tick labels of a number axis as a paper prints them: once every axis label is wrapped to its panel, neighbouring
tick labels stand at least half an em apart, so that two numbers never read as one ("5.255.50"). Drawn on a
committed report whose column-wide panels are narrow (four quality panels beside long axis labels)."""

from __future__ import annotations

from itertools import pairwise

import matplotlib.pyplot as plt
import pytest
from matplotlib.figure import Figure

from harness.spec.chart_widths import COLUMN_IN
from tests.conftest import REPO
from tests.figure_text import drawn_ticks
from tests.test_figures_in_print import drawn


def _gaps_in_em(fig: Figure) -> list[float]:
    fig.draw_without_rendering()
    renderer = fig.canvas.get_renderer()
    gaps = []
    for ax in fig.axes:
        if not ax.get_visible():
            continue
        labels = [label for label in drawn_ticks(ax, "x") if label.get_text()]
        boxes = sorted((label.get_window_extent(renderer) for label in labels), key=lambda b: b.x0)
        gaps += [(b.x0 - a.x1) / (labels[0].get_fontsize() * fig.dpi / 72) for a, b in pairwise(boxes)]
    return gaps


@pytest.mark.slow
def test_tick_labels_of_narrow_column_panels_stay_half_an_em_apart() -> None:
    charts = drawn(REPO / "reports" / "study-truncation", COLUMN_IN)
    try:
        fig = charts["quality_vs_memory"]
        assert all(any(t.get_text() for t in ax.get_xticklabels()) for ax in fig.axes if ax.get_visible())
        for name, chart in charts.items():
            gaps = _gaps_in_em(chart)
            assert gaps == [] or min(gaps) >= 0.5 - 1e-6, (name, gaps)
    finally:
        for chart in charts.values():
            plt.close(chart)
