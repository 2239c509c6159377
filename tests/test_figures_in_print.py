"""Every chart as a paper prints it: no text that runs into text or into another panel (read from the extents the
renderer draws), a column-wide figure at most COLUMN_MAX_HEIGHT_IN tall (split into parts rather than grown),
every task and every loss curve drawn and named, one budget line per budget, each delta against a reference of
the same model. The committed reports' figures are drawn again as the project's report command draws them."""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt
import pandas as pd
import pytest
from matplotlib.figure import Figure

from harness.report import comparisons_table as comparisons
from harness.report.build import read
from harness.report.charts import figures
from harness.report.charts.style import COLUMN_MAX_HEIGHT_IN, legend_texts
from harness.spec.chart_widths import COLUMN_IN, WIDTHS
from tests.conftest import REPO
from tests.figure_text import overlaps
from tests.test_charts import report  # noqa: F401  (the fixture matrix's report)

REPORTS = sorted(p.parent for p in (REPO / "reports").glob("*/cells.csv"))


def drawn(folder: Path, width: float) -> dict[str, Figure]:
    """A committed report's charts at a width, drawn from its tables as `vramlab report` draws them."""
    frames, _, quality = read(folder)
    items = pd.read_csv(folder / "items.csv", dtype={"cell_id": str, "item": str}) \
        if (folder / "items.csv").is_file() else None
    return figures(frames, quality, items, width, comparisons.read(folder))


def _in_print(charts: dict[str, Figure], width: float) -> list[str]:
    found = []
    for name, fig in charts.items():
        found += [f"{name}: {problem}" for problem in overlaps(fig)]
        if width == COLUMN_IN and fig.get_figheight() > COLUMN_MAX_HEIGHT_IN + 0.01:
            found.append(f"{name}: {fig.get_figheight():.2f} in tall at a column's width")
        plt.close(fig)
    return found


@pytest.mark.slow
@pytest.mark.parametrize("width", list(WIDTHS.values()))
def test_the_fixture_reports_charts_have_no_text_overlapping_and_fit_a_column(report, width):  # noqa: F811
    frames = report[1]
    assert not _in_print(figures(frames, pd.read_csv(report[0] / "quality.csv"), width=width), width)


@pytest.mark.slow
@pytest.mark.parametrize("width", list(WIDTHS.values()), ids=list(WIDTHS))
@pytest.mark.parametrize("folder", REPORTS, ids=lambda p: p.name)
def test_every_committed_reports_charts_have_no_text_overlapping_and_fit_a_column(folder, width):
    assert not _in_print(drawn(folder, width), width)


def _titles(charts: dict[str, Figure], name: str) -> str:
    return " ".join(ax.get_title() for chart, fig in charts.items() if chart.split("-part")[0] == name
                    for ax in fig.axes)


@pytest.mark.slow
@pytest.mark.parametrize("width", list(WIDTHS.values()), ids=list(WIDTHS))
def test_every_task_is_drawn_and_every_loss_curve_named(width):
    folder = REPO / "reports" / "quality-qwen"
    charts = drawn(folder, width)
    try:
        tasks = set(pd.read_csv(folder / "quality.csv")["task"])
        assert "help_fr" in tasks
        shown = _titles(charts, "quality_by_cell")
        assert all(task in shown for task in tasks), shown
        labels = " ".join(" ".join(legend_texts(fig)) for chart, fig in charts.items()
                          if chart.split("-part")[0] == "loss")
        frames = read(folder)[0]
        assert all(group in labels for members in frames.drawn for group in members)
    finally:
        for fig in charts.values():
            plt.close(fig)


@pytest.mark.slow
def test_a_chart_of_cells_under_several_budgets_draws_one_line_for_each():
    charts = drawn(REPO / "reports" / "claims", COLUMN_IN)
    try:
        labels = [t for chart, fig in charts.items() if chart.startswith("overview") for t in legend_texts(fig)]
        budgets = {t for t in labels if t.startswith("budget")}
        assert budgets == {"budget 15.57 GiB", "budget 23.99 GiB", "budget 31.84 GiB"}, budgets
    finally:
        for fig in charts.values():
            plt.close(fig)


def test_a_delta_of_another_model_is_held_against_that_models_reference():
    frames = read(REPO / "reports" / "seed-16gb")[0]
    deltas = frames.deltas.set_index("group")
    assert deltas.at["llama-100k-vocab", "reference"] == "llama-128k-vocab"
    assert deltas.at["llama-100k-vocab", "differs"] == "vocabulary 100000"
    assert deltas.at["llama-100k-vocab", "d_peak"] == pytest.approx(-0.41, abs=0.005)  # slicing alone
    assert deltas.at["llama-128k-vocab", "reference"] == frames.design.baseline  # the change of model itself
