"""The rules a chart must keep to go into a paper as it is, one test each: its stated width and no text under
7 pt at it, one fixed colour per technique, charts chosen by the data (no loss chart for random weights or a few
steps, no sweep chart for lines of two points), no Pareto front across contexts, an out-of-memory mark never left
of the budget, a delta chart's budget line labelled as the headroom, error bars of scores cut at 0."""

from __future__ import annotations

import dataclasses
import json
import re

import matplotlib.pyplot as plt
import pandas as pd
import pytest
from matplotlib.text import Text

from harness.report.charts import figures
from harness.report.charts.quality import spread_from_zero
from harness.report.charts.style import legend_texts, save
from harness.report.charts.technique_colours import Palette, technique
from harness.report.frames import pareto_front
from harness.spec.chart_widths import COLUMN_IN, DOUBLE_IN, SMALLEST_PT, WIDTHS
from harness.spec.design import LOSS_MIN_STEPS, ReportDesign, SweepLine
from tests.conftest import REPO
from tests.test_charts import charts, report  # noqa: F401  (the fixture matrix's report and charts)

MEDIA_BOX = re.compile(rb"/MediaBox \[\s*([\d.]+) ([\d.]+) ([\d.]+) ([\d.]+)\s*\]")


def pdf_width_pt(data: bytes) -> float:
    x0, _, x1, _ = map(float, MEDIA_BOX.search(data).groups())
    return x1 - x0


def smallest_font(fig) -> float:
    texts = [t for t in fig.findobj(Text) if t.get_visible() and t.get_text().strip()]
    return min(t.get_fontsize() for t in texts)


@pytest.mark.parametrize("suffix", list(WIDTHS))
def test_every_chart_is_saved_at_its_stated_width_with_no_text_under_7_pt_and_nothing_cut_off(
        report, tmp_path, suffix):  # noqa: F811
    width = WIDTHS[suffix]
    for name, fig in figures(report[1], pd.read_csv(report[0] / "quality.csv"), width=width).items():
        assert smallest_font(fig) >= SMALLEST_PT, name
        fig.draw_without_rendering()
        # every text and legend inside the figure: constrained layout fitted them, nothing is cropped or spills
        inside = fig.get_tightbbox(fig.canvas.get_renderer())
        assert inside.x0 >= -1 / 72 and inside.x1 <= width + 1 / 72, name
        (path,) = save(fig, tmp_path, name + suffix, ("pdf",))
        assert pdf_width_pt(path.read_bytes()) == pytest.approx(width * 72, abs=0.5), name


def test_every_committed_chart_pdf_is_a_column_or_two_columns_wide():
    pdfs = sorted((REPO / "reports").glob("*/*.pdf"))
    assert pdfs
    for path in pdfs:
        stated = COLUMN_IN if path.stem.endswith("-column") else DOUBLE_IN
        assert pdf_width_pt(path.read_bytes()) == pytest.approx(stated * 72, abs=0.5), path


def test_a_technique_has_one_colour_in_every_report_and_no_two_techniques_of_a_chart_share_one():
    first = Palette(["", "kernels liger", "quantization nf4"])
    second = Palette(["", "quantization nf4", "adapter rslora"])
    assert first("quantization nf4") == second("quantization nf4")
    # levels of one technique share its colour and differ in marker
    kernels = Palette(["kernels liger", "kernels unsloth"])
    assert kernels("kernels liger") == kernels("kernels unsloth")
    assert kernels.marker("kernels liger") != kernels.marker("kernels unsloth")
    assert technique("vocabulary 1024, vocabulary_source corpus:en") == "vocabulary"
    assert technique("lora_rank 64") == technique("adapter lora") == "adapter"
    for design in sorted((REPO / "reports").glob("*/design.json")):
        changes = json.loads(design.read_text())["changes"].values()
        palette = Palette(changes)
        colours = {technique(c): palette(c) for c in changes}
        assert len(set(colours.values())) == len(colours), design.parent.name


def test_the_same_change_has_the_same_colour_in_every_chart_of_a_report(charts):  # noqa: F811
    def colour_of(fig, name: str) -> str:
        return next(h.get_color() for legend in fig.legends for h, t in zip(legend.legend_handles, legend.get_texts(),
                                                                            strict=True) if t.get_text() == name)

    assert colour_of(charts["overview"], "kernels none") == colour_of(charts["sweep"], "kernels none")


def _design(steps: int, random_weights: bool, points: int = 2) -> ReportDesign:
    line = SweepLine("kernels liger", "", tuple(f"c{i}" for i in range(points)))
    return ReportDesign(baseline="c0", x="context", lines=("kernels",), sweep=(line,), changes={}, deltas=(),
                        throughput_measured=True, quality=False, steps=steps, random_weights=random_weights)


def test_no_loss_chart_for_random_weights_or_fewer_than_20_steps():
    assert "loss" not in _design(LOSS_MIN_STEPS - 1, random_weights=False).charts
    assert "loss" not in _design(LOSS_MIN_STEPS, random_weights=True).charts
    assert "loss" in _design(LOSS_MIN_STEPS, random_weights=False).charts


def test_no_sweep_chart_for_lines_of_fewer_than_3_points():
    assert "sweep" not in _design(20, False, points=2).charts
    assert "sweep" in _design(20, False, points=3).charts


def test_no_pareto_front_runs_across_contexts():
    table = pd.DataFrame({"status": "ok", "context": [8192, 8192, 20480], "peak_device": [10.0, 11.0, 9.0],
                          "tokens_per_second": [5000.0, 6000.0, 7000.0]}, index=["a", "b", "long"])
    # `long` needs less memory and runs faster than both, at another context: it beats neither
    assert pareto_front(table) == {8192: ["a", "b"], 20480: ["long"]}


def test_a_cell_that_ran_out_of_memory_is_never_marked_left_of_the_budget(charts, report):  # noqa: F811
    ax = charts["overview"].axes[0]
    oom = [line for line in ax.lines if line.get_marker() == ">"]
    assert oom and all(x >= report[1].budget for line in oom for x in line.get_xdata())


def test_the_delta_chart_labels_its_budget_line_as_the_headroom(report):  # noqa: F811
    frames = report[1]
    # the fixture's 16 GiB budget is far off its deltas; a tight budget brings the line into range
    tight = dataclasses.replace(frames, budget=float(frames.table.at["stack", "peak_device"]) + 0.4)
    fig = figures(tight)["deltas"]
    try:
        labels = legend_texts(fig)
        assert any(label.startswith("headroom to the") and "+0.40 GiB" in label for label in labels), labels
        assert not any(label.startswith("budget") for label in labels)
    finally:
        plt.close(fig)


def test_error_bars_of_a_score_stop_at_0():
    lower, upper = spread_from_zero(pd.Series([0.01, 0.5]), pd.Series([0.03, 0.1]))
    assert lower == pytest.approx([0.01, 0.1]) and upper == pytest.approx([0.03, 0.1])
