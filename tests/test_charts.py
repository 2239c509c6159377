"""Every chart type and table from a small fixture matrix with repeats (seeds), a context sweep, a cell that ran
out of memory and one that was skipped; and the committed smoke report, whose small differences the budget
once squeezed."""

from __future__ import annotations

import math

import matplotlib.pyplot as plt
import numpy as np
import pytest
from matplotlib.collections import PathCollection
from matplotlib.container import BarContainer, ErrorbarContainer
from matplotlib.figure import Figure

from harness import results
from harness.report.aggregate import aggregate
from harness.report.build import build_report, read, report_tables
from harness.report.charts import figures
from harness.report.charts.style import legend_texts
from harness.report.frames import Frames
from harness.report.summary import summary
from harness.spec.matrix import expand
from tests.conftest import REPO, write_matrix
from tests.test_report import write_result

GIB = 2**30
MATRIX = """
fixed: {model: "arch:tiny-llama", budget: 16GiB, context: 256, kernels: liger, steps: 3, warmup_steps: 1}
seeds: [0, 1, 2]
design: list
cells:
  - {name: stack}
  - {name: no-liger, kernels: none}
  - {name: stack-128, context: 128}
  - {name: no-liger-128, context: 128, kernels: none}
  - {name: checkpointing, checkpointing: "on", seed: 0}
  - {name: both-kernels, kernels: liger+unsloth, seed: 0}
  - {name: stack-512, context: 512, seed: 0}
evaluation: {tasks: [text_en]}
"""
# group -> (status, peak GiB at seed 0, tokens/s at seed 0, loss per step, text_en bits per byte at seed 0);
# seeds add 0.1 GiB, 10 tokens/s and 0.01 bits per byte each
CELLS = {
    "stack": ("ok", 3.0, 1000, [3.0, 2.5, 2.0], 1.00),
    "no-liger": ("ok", 3.5, 800, [3.0, 2.6, 2.2], 1.05),
    "stack-128": ("ok", 2.0, 1200, [3.1, 2.7, 2.4], 1.10),
    "no-liger-128": ("ok", 2.4, 1000, [3.1, 2.8, 2.5], 1.12),
    # the same numbers as stack: checkpointing changes none
    "checkpointing": ("ok", 1.5, 700, [3.0, 2.5, 2.0], 1.00),
    "both-kernels": ("skipped", None, None, [], None),
    "stack-512": ("oom", 16.0, None, [], None),
}
UNTRAINED = 1.5


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> tuple[pytest.TempPathFactory, Frames]:
    folder = tmp_path_factory.mktemp("charts")
    matrix = write_matrix(folder, MATRIX)
    for cell in expand(str(matrix)):
        group, seed = cell.name.split("/seed=")[0], cell.settings["seed"]
        status, peak, tokens, loss, score = CELLS[group]
        metrics = {}
        if status in ("ok", "oom"):
            metrics = {"peak_device_bytes": int((peak + 0.1 * seed) * GIB), "load_seconds": 1.0}
        if status == "ok":
            noisy = [v + 0.05 * seed for v in loss] if group == "no-liger" else loss  # a band over seeds
            metrics |= {"step_seconds": [4.0, 1.0, 1.0], "loss": noisy, "tokens_per_second": tokens + 10 * seed,
                        "median_step_seconds": 1.0}
        write_result(folder / "results", cell, status, metrics)
        if status == "ok":
            def bits_per_byte(value: float) -> list[results.Score]:
                return [results.Score(metric="bits_per_byte", value=value, stderr=0.01, n=30, higher_is_better=False)]

            evaluation = results.EvaluationResult(
                cell_id=cell.cell_id, name=cell.name, matrix=cell.matrix, task="text_en", status="ok",
                scores=bits_per_byte(score + 0.01 * seed), baseline=bits_per_byte(UNTRAINED))
            results.write_atomic(results.evaluation_path(folder / "results", cell.matrix, cell.cell_id, "text_en"),
                                 evaluation)
    aggregate(str(matrix), folder / "results", folder / "reports")
    return folder / "reports" / "m", read(folder / "reports" / "m")[0]


@pytest.fixture(scope="module")
def charts(report) -> dict[str, Figure]:
    drawn = figures(report[1], read(report[0])[2])
    yield drawn
    for fig in drawn.values():
        plt.close(fig)


def legend(fig: Figure) -> list[str]:
    return legend_texts(fig)


@pytest.mark.slow
def test_every_chart_is_written_as_a_vector_pdf_with_embedded_fonts_and_a_png(report):
    folder, frames = report
    # three optimizer steps of random weights: no loss chart
    assert frames.design.charts == ("overview", "sweep", "deltas", "tradeoff", "quality_vs_memory", "quality_by_cell")
    outputs = build_report(folder)
    for name in frames.design.files():
        data = (folder / name).read_bytes()
        assert (folder / name) in outputs
        if name.endswith(".pdf"):
            # fonttype 42: TrueType embedded (FontFile2), text stays text
            assert data.startswith(b"%PDF") and b"/FontFile2" in data and b"CreationDate" not in data, name
        else:
            assert data.startswith(b"\x89PNG\r\n\x1a\n") and len(data) > 10_000, name


def test_the_sweep_draws_a_line_per_stack_with_its_spread_and_the_cell_that_ran_out_of_memory(charts):
    memory, speed = charts["sweep"].axes[:2]
    lines = [c for c in memory.containers if isinstance(c, ErrorbarContainer)]
    # kernels liger at 128 and 256 (512 ran out of memory: a cross, not a point of the line), kernels none
    assert [list(c.lines[0].get_xdata()) for c in lines] == [[128, 256], [128, 256]]
    assert list(lines[0].lines[0].get_ydata()) == pytest.approx([2.1, 3.1])
    assert all(c.has_yerr and c.lines[2] for c in lines)  # sd over three seeds
    crosses = [line for line in memory.lines if line.get_marker() == "X"]
    assert [list(line.get_xdata()) for line in crosses] == [[512]]
    # 16 GiB reached by the cell that ran out: the budget is within the range, and drawn
    assert any(list(line.get_ydata()) == [16, 16] for line in memory.lines)
    assert [list(c.lines[0].get_ydata()) for c in speed.containers][1] == pytest.approx([1010, 810])
    assert legend(charts["sweep"])[:2] == ["kernels liger", "kernels none"]
    assert "ran out of memory (peak reached)" in legend(charts["sweep"])
    assert memory.get_xlabel() == "context (tokens)"


def test_the_deltas_are_against_the_baseline_with_standard_errors(charts):
    memory, speed = charts["deltas"].axes[:2]
    assert [t.get_text() for t in memory.get_yticklabels()] == ["no-liger", "checkpointing", "both-kernels"]
    bars = [c for c in memory.containers if isinstance(c, BarContainer)]
    # checkpointing, one cell at seed 0, against stack's cell of seed 0 (3.0 GiB), not stack's mean (3.1)
    assert [b.patches[0].get_width() for b in bars] == pytest.approx([0.5, -1.5], abs=1e-6)
    errors = [c for c in memory.containers if isinstance(c, ErrorbarContainer)]
    # no-liger against stack, three seeds each (sd 0.1): sqrt(2 * 0.01 / 3); checkpointing: one cell against one,
    # no spread to give
    segments = [s for e in errors for s in e.lines[2][0].get_segments()]
    widths = [s[:, 0] for s in segments if len(s) and not any(map(math.isnan, s[:, 0]))]
    assert [w[1] - w[0] for w in widths] == pytest.approx([2 * (2 * 0.01 / 3) ** 0.5], rel=1e-3)
    assert "skipped" in [t.get_text() for t in memory.texts]
    assert [c.patches[0].get_width() for c in speed.containers if isinstance(c, BarContainer)] == \
        pytest.approx([100 * (810 / 1010 - 1), 100 * (700 / 1000 - 1)])
    assert "error bars: standard error over seeds" in legend(charts["deltas"])


def test_the_tradeoff_marks_the_pareto_front_of_each_context_and_notes_a_budget_out_of_range(charts, report):
    ax = charts["tradeoff"].axes[0]
    # stack-128 needs less memory than stack and runs faster, but at half the context: a front per context
    assert report[1].front == {128: ["stack-128"], 256: ["checkpointing", "stack"]}
    rings = [c for c in ax.collections if isinstance(c, PathCollection) and c.get_sizes()[0] > 50]
    assert [[v for p in ring.get_offsets() for v in p] for ring in rings] == [
        pytest.approx([2.1, 1210]), pytest.approx([1.5, 700, 3.1, 1010])]
    assert {"Pareto front at context 128", "Pareto front at context 256"} <= set(legend(charts["tradeoff"]))
    assert ax.get_xlim()[1] < 4  # the ok cells span 1.5-3.6 GiB: a 16 GiB budget would squeeze them
    assert "budget 16.00 GiB: above the range shown" in legend(charts["tradeoff"])
    assert {t.get_text() for t in ax.texts} >= {"stack", "no-liger", "stack-128", "no-liger-128", "checkpointing"}


def test_the_loss_chart_has_whole_steps_the_warm_up_shaded_a_band_and_coinciding_curves_named(report):
    import dataclasses

    # drawn as it would be for a run of real weights long enough for a curve
    frames = dataclasses.replace(report[1], design=dataclasses.replace(report[1].design, steps=20,
                                                                        random_weights=False))
    charts = figures(frames)
    ax = charts["loss"].axes[0]
    ticks = [t for t in ax.get_xticks() if ax.get_xlim()[0] <= t <= ax.get_xlim()[1]]
    assert ticks and all(float(t).is_integer() for t in ticks)
    labels = legend(charts["loss"])
    assert "stack = checkpointing (same curve)" in labels and "warm-up step (not timed)" in labels
    assert not any(label.startswith("checkpointing") for label in labels)  # drawn once, not hidden under stack
    warmup = [p for p in ax.patches if p.get_x() == 0.5]
    assert len(warmup) == 1 and warmup[0].get_width() == 1.0
    # a ±sd band for each curve of repeated cells; only no-liger's seeds differ in their loss
    def thickness(band) -> float:
        vertices = band.get_paths()[0].vertices
        return max(np.ptp(vertices[vertices[:, 0] == x][:, 1]) for x in set(vertices[:, 0]))

    assert [thickness(band) > 0 for band in ax.collections] == [False, True, False, False]


def test_the_overview_keeps_every_cell_and_lists_only_statuses_that_occur(charts):
    memory = charts["overview"].axes[0]
    assert [t.get_text() for t in memory.get_yticklabels()] == list(CELLS)
    assert "skipped" in [t.get_text() for t in memory.texts]
    labels = legend(charts["overview"])
    assert "trained (mean ± sd over seeds)" in labels
    assert "ran out of memory: needs more than the budget (dotted from the peak reached)" in labels
    assert "colour: what differs from stack, context aside" in labels and "kernels none" in labels


def test_quality_is_drawn_against_memory_and_per_cell_beside_the_untrained_model(charts):
    ax = charts["quality_vs_memory"].axes[0]
    points = [c for c in ax.containers if isinstance(c, ErrorbarContainer)]
    # one point a trained group: (mean peak GiB, mean bits per byte), error bars where seeds repeat
    assert [v for c in points for v in (c.lines[0].get_xdata()[0], c.lines[0].get_ydata()[0])] == pytest.approx(
        [3.1, 1.01, 3.6, 1.06, 2.1, 1.11, 2.5, 1.13, 1.5, 1.00])
    assert [c.has_yerr for c in points] == [True, True, True, True, False]
    # the cell run once is hollow and left unnamed; the repeated ones are named
    assert points[-1].lines[0].get_markerfacecolor() == "none"
    assert {t.get_text() for t in ax.texts} == {"stack", "no-liger", "stack-128", "no-liger-128"}
    assert ax.get_ylabel() == "text_en bits_per_byte\n(lower is better)"
    by_cell = charts["quality_by_cell"].axes[0]
    # dots with their interval, not bars from 0: differences of 0.01 bits per byte stay visible
    assert not [c for c in by_cell.containers if isinstance(c, BarContainer)]
    dots = [c for c in by_cell.containers if isinstance(c, ErrorbarContainer)]
    assert [round(c.lines[0].get_xdata()[0], 3) for c in dots] == [1.01, 1.06, 1.11, 1.13, 1.0]
    assert by_cell.get_xlim()[0] > 0.9
    # untrained at 1.5, far off the trained scores (1.00-1.13): marked at the axis's edge, not squeezing them
    edge = [c for c in by_cell.collections if isinstance(c, PathCollection) and len(c.get_offsets())]
    assert [p[0] for c in edge for p in c.get_offsets()] == [by_cell.get_xlim()[1]] * 5
    assert by_cell.get_xlim()[1] < UNTRAINED
    assert "untrained (the adapter disabled)" in legend(charts["quality_by_cell"])
    assert any("beyond the axis's edge" in label for label in legend(charts["quality_by_cell"]))


def test_each_question_has_its_table_with_units_and_aligned_numbers(report):
    _, frames = report
    tables = {t.key: t for t in report_tables(frames)}
    assert list(tables) == ["memory", "speed", "deltas", "sweep", "loss"]
    memory = tables["memory"]
    assert [c.header for c in memory.columns][:5] == ["cell", "status", "n", "peak device (GiB)", "± sd"]
    rows = {row[0]: row for row in memory.rows}
    assert rows["stack"][2:5] == ["3", "3.10", "0.10"] and rows["stack-512"][3] == "≥16.00"
    deltas = {row[0]: row for row in tables["deltas"].rows}
    # Δ% tokens/s: 810/1010 - 1, its standard error 100 * 810/1010 * hypot(5.77/810, 5.77/1010) = 0.73
    assert deltas["no-liger"][1:] == ["kernels none", "ok", "+0.50", "0.08", "-19.8", "0.7"]
    assert deltas["both-kernels"][2:4] == ["skipped", "–"]
    markdown = "\n".join(tables["deltas"].markdown())
    assert "| Δ peak device (GiB) |" in markdown and "| ------------------: |" in markdown
    latex = tables["deltas"].latex("m")
    assert r"\begin{tabular}{lllS[table-format=+1.2]S[table-format=1.2]S[table-format=+2.1]S[table-format=1.1]}" \
        in latex and r"\toprule" in latex and r"$\Delta$ peak device" in latex
    assert r"& -19.8 &" in latex and r"& +0.50 &" in latex and r"\label{tab:m-deltas}" in latex
    sweep = tables["sweep"].rows
    assert [row[:4] for row in sweep][:3] == [["kernels liger", "128", "stack-128", "ok"],
                                              ["kernels liger", "256", "stack", "ok"],
                                              ["kernels liger", "512", "stack-512", "oom"]]
    loss = {row[0]: row for row in tables["loss"].rows}
    assert loss["stack"][-1] == "checkpointing" and loss["checkpointing"][-1] == "stack"


def test_the_summary_states_the_findings_in_numbers(report):
    text = "\n".join(summary(report[1]))
    assert "Of 15 cells, 13 trained within the 16.00 GiB budget, 1 ran out of memory (`stack-512`) and 1 was " \
           "skipped (`both-kernels`)." in text
    assert "Baseline `stack` (n=3): 3.10 ± 0.10 GiB peak device memory, 1,010 ± 10 tokens/s." in text
    # checkpointing (seed 0) against stack's seed 0: one cell against one, no spread
    assert "peak memory from `checkpointing` (checkpointing on, -1.50 GiB) to `no-liger` (kernels none, " \
           "+0.50 GiB ± 0.08)" in text
    assert "`kernels liger`: from context 128 to 256, peak 2.10 → 3.10 GiB, 1,210 → 1,010 tokens/s; at 512: oom." \
        in text
    assert "Pareto front at context 128 (no other cell at context 128 needs less memory and runs faster): " \
        "`stack-128` (2.10 GiB, 1,210 tokens/s)." in text
    assert "front at context 256 (no other cell at context 256 needs less memory and runs faster): `checkpointing` " \
        "(1.50 GiB, 700 tokens/s), `stack` (3.10 GiB, 1,010 tokens/s)." in text
    assert "the same curve: `stack` = `checkpointing`" in text


def test_the_smoke_report_shows_its_small_differences_and_its_hidden_curves(tmp_path):
    """The CPU smoke matrix peaks at 1.5-1.9 GiB of resident memory, and eight cells draw four loss curves; a CPU
    matrix draws no GPU budget."""
    frames = read(REPO / "reports" / "smoke")[0]
    # three steps each, two contexts per line: neither a loss curve nor a sweep to draw
    assert "loss" not in frames.design.charts and "sweep" not in frames.design.charts
    drawn = figures(frames)
    try:
        for name in ("overview", "tradeoff"):
            ax = drawn[name].axes[0]
            low, high = ax.get_xlim()
            # the data's range, not the budget's; the overview's peaks from zero (a dot's distance from the axis's
            # start reads as its amount), the trade-off's around its points
            assert (low == 0 if name == "overview" else low > 1.3) and high < 2.1, name
            assert not any("budget" in label for label in legend(drawn[name])), name
        assert not any("out of memory" in label for label in legend(drawn["overview"]))  # no cell did
    finally:
        for fig in drawn.values():
            plt.close(fig)
