"""The report stage reads only result files: a folder of results in every status -> tables and charts."""

from __future__ import annotations

import pandas as pd
import pytest

from harness import results
from harness.report.aggregate import aggregate
from harness.report.build import build_report, read
from harness.report.cell_groups import measured_so_far
from harness.report.summary import summary
from harness.spec.matrix import expand
from tests.conftest import write_matrix

GIB = 2**30

MATRIX = """
fixed: {model: "arch:tiny-llama", budget: 16GiB}
axes: {context: [1024, 2048], kernels: [none, liger+unsloth]}
"""


def fake_environment() -> dict:
    return {"host": "h", "platform": "p", "python": "3.11", "cuda_available": True, "gpu": "Test GPU",
            "cpu": "Test CPU", "versions": {"torch": "2.x"}, "git": {"commit": "0123456789abcdef", "dirty": False}}


def write_result(results_dir, cell, status: str, metrics: dict, records: dict | None = None) -> None:
    """A result file as a cell on a 16 GiB budget with a random-weight model would leave it."""
    result = results.CellResult(
        cell_id=cell.cell_id, name=cell.name, matrix=cell.matrix, status=status,
        reason=None if status == "ok" else f"because {status}", config=cell.settings,
        environment=fake_environment(), budget={"limit_bytes": 16 * GIB, "judged_on": "test"},
        model={"source": "arch:tiny-llama", "random_weights": True}, metrics=metrics, records=records or {},
        finished_at=results.now())
    results.write_atomic(results.result_path(results_dir, cell.matrix, cell.cell_id), result)


@pytest.fixture
def result_folder(tmp_path):
    matrix = write_matrix(tmp_path, MATRIX)
    cells = expand(str(matrix))
    statuses = ["ok", "oom", "skipped", "error"]
    for i, (cell, status) in enumerate(zip(cells, statuses, strict=True)):
        metrics = {}
        if status in ("ok", "oom"):
            metrics = dict(peak_device_bytes=(10 + 8 * i) * GIB, peak_allocated_bytes=9 * GIB,
                           peak_reserved_bytes=int((9.5 + 8 * i) * GIB), load_seconds=3.0,
                           step_seconds=[5.0, 2.0, 2.2], loss=[11.9, 11.8, 11.7],
                           tokens_per_second=1024 / 2.1, median_step_seconds=2.1)
        records = {"vocabulary": {"size": 900, "native_size": 1000, "outside_share": 0.0125}} \
            if status == "ok" else {}
        write_result(tmp_path / "results", cell, status, metrics, records)
    return tmp_path, matrix


@pytest.mark.slow
def test_aggregate_then_report_keeps_every_cell_visible(result_folder):
    folder, matrix = result_folder
    csv_path = aggregate(str(matrix), folder / "results", folder / "reports")
    cells = pd.read_csv(csv_path)
    assert list(cells["status"]) == ["ok", "oom", "skipped", "error"]
    assert cells.loc[0, "peak_device_bytes"] == 10 * GIB  # raw bytes in the table
    assert cells.loc[0, "final_loss"] == pytest.approx(11.7)
    steps = pd.read_csv(folder / "reports" / "m" / "steps.csv")
    assert len(steps) == 6 and steps["warmup"].sum() == 2

    # charts an earlier build drew that this one does not (a part beyond those drawn now, a chart this report has
    # not), beside files of the user's own
    earlier = ["overview-part7-column.pdf", "loss.png", "paired_differences-part2.pdf"]
    own = ["overview-draft.png", "notes.pdf", "loss.svg"]
    for name in earlier + own:
        (folder / "reports" / "m" / name).write_bytes(b"x")
    outputs = build_report(folder / "reports" / "m")
    assert not any((folder / "reports" / "m" / name).exists() for name in earlier)
    assert all((folder / "reports" / "m" / name).exists() for name in own)
    report = (folder / "reports" / "m" / "report.md").read_text()
    for status in ("ok", "oom", "skipped", "error"):
        assert f"| {status} " in report
    assert "because oom" in report and "because error" in report
    assert cells.loc[1, "failed_phase"] is None or pd.isna(cells.loc[1, "failed_phase"])  # no phases recorded
    assert "10.00" in report and "18.00" in report  # peaks in GiB
    assert "random weights" in report
    assert "Code: `0123456` (4 cells)" in report
    vocabulary = report.split("### Sliced vocabularies", 1)[1].split("\n\n", 2)[1].splitlines()[2]
    assert [c.strip() for c in vocabulary.strip("|").split("|")] == [
        "context=1024,kernels=none", "900", "–", "–", "1.25", "not recorded", "–", "not known"]
    tex = (folder / "reports" / "m" / "tables.tex").read_text()
    assert "\\toprule" in tex and "\\bottomrule" in tex and "peak device" in tex and "(GiB)" in tex
    # a sweep line with one trained cell is said to have one, not to run from 1,024 to 1,024
    assert "`kernels none`: only context 1,024 trained, peak 10.00 GiB, 488 tokens/s; at 2,048: skipped." in report
    # random weights, a few steps, two-point sweep lines: neither a loss nor a sweep chart
    for chart in ("overview", "deltas", "tradeoff"):
        for name in (f"{chart}.pdf", f"{chart}.png", f"{chart}-column.pdf"):
            assert (folder / "reports" / "m" / name).stat().st_size > 5000
    assert len(outputs) == 4 + 3 * 3  # report.md, tables.tex, methods.md, methods.tex and the charts at two widths


def test_aggregate_refuses_a_matrix_with_a_missing_result(result_folder):
    folder, matrix = result_folder
    next((folder / "results" / "m").glob("*.json")).unlink()
    with pytest.raises(results.ResultFileError, match="has no result file"):
        aggregate(str(matrix), folder / "results", folder / "reports")


def test_a_result_file_is_never_left_half_written(tmp_path):
    target = tmp_path / "r.json"
    with pytest.raises(ValueError):
        # invalid (an ok cell without its device peak): rejected before anything is written
        results.write_atomic(target, results.CellResult.model_construct(
            cell_id="0" * 12, name="x", matrix="m", status=results.Status.ok, config={}))
    assert list(tmp_path.iterdir()) == []


@pytest.mark.slow
def test_a_partial_table_shows_cells_not_run_yet_as_pending(result_folder):
    folder, matrix = result_folder
    missing = next((folder / "results" / "m").glob("*.json"))
    missing.unlink()
    cells = pd.read_csv(aggregate(str(matrix), folder / "results", folder / "reports", partial=True))
    assert "pending" in set(cells["status"]) and len(cells) == 4
    build_report(folder / "reports" / "m")
    assert "Not run yet (1): " in (folder / "reports" / "m" / "report.md").read_text()


def test_a_matrix_run_in_parts_states_what_its_measured_seeds_show_so_far(tmp_path):
    """A study runs its seeds over several sessions: a group with some seeds measured and the others not run yet is
    a measurement so far (its n said), not a baseline that did not train."""
    matrix = write_matrix(tmp_path, """
fixed: {model: "arch:tiny-llama", budget: 16GiB, context: 1024, data: grant-reports}
seeds: [0, 1, 2]
design: list
cells:
  - {name: exp, truncation: exp_decay}
  - {name: tail, truncation: tail}
""")
    for cell in expand(str(matrix)):
        if cell.settings["seed"] == 0:
            peak = 5 * GIB if cell.name.startswith("exp") else 4 * GIB
            write_result(tmp_path / "results", cell, "ok", {"peak_device_bytes": peak, "loss": [1.0, 0.9]})
    aggregate(str(matrix), tmp_path / "results", tmp_path / "reports", partial=True)
    text = "\n".join(summary(read(tmp_path / "reports" / "m")[0]))
    assert "Baseline `exp` (2 pending, 1 ok: so far n=1 of 3): 5.00 GiB peak device memory" in text
    assert "Each change against it: peak memory `tail` (truncation tail, -1.00 GiB)." in text
    assert "did not train" not in text
    assert [measured_so_far(s) for s in ("ok", "2 pending, 1 ok", "1 ok, 1 oom", "pending", "1 pending, 1 oom")] \
        == [True, True, False, False, False]


def _estimate_row(report: str, name: str) -> list[str]:
    """The cell's row of the report's section on the memory estimate."""
    section = report.split("## The memory estimate beside the measurement", 1)[1].split("\n## ", 1)[0]
    line = next(line for line in section.splitlines() if line.startswith(f"| {name} "))
    return [c.strip() for c in line.strip("|").split("|")]


@pytest.mark.slow
def test_the_report_shows_the_estimate_beside_each_measured_gpu_peak(result_folder):
    from harness.estimate import estimate_cell

    folder, matrix = result_folder
    cells = expand(str(matrix))  # ok, oom (liger+unsloth: no memory model), skipped, error
    # the skipped cell (context 2048, no kernels) as one that ran out of memory at 18 GiB instead
    write_result(folder / "results", cells[2], "oom", dict(peak_device_bytes=18 * GIB, peak_allocated_bytes=17 * GIB))
    aggregate(str(matrix), folder / "results", folder / "reports")
    estimate = pd.read_csv(folder / "reports" / "m" / "estimate.csv", dtype={"cell_id": str})
    # a row for each cell with a measured device peak; the error cell has none
    assert list(estimate["cell_id"]) == [c.cell_id for c in cells[:3]]
    assert list(estimate["status"]) == ["ok", "oom", "oom"]
    ok, oom = estimate_cell(cells[0].settings), estimate_cell(cells[2].settings)
    for i, est, measured in ((0, ok, 10 * GIB), (2, oom, 18 * GIB)):
        row = estimate.iloc[i]
        assert row["measured_bytes"] == measured and row["predicted_bytes"] == est.total_bytes  # raw bytes
        assert row["error"] == pytest.approx(est.total_bytes / measured - 1)
        assert row["predicted_allocated_bytes"] == est.allocated_bytes and row["peak_moment"] == est.peak_moment
    assert pd.isna(estimate.iloc[1]["predicted_bytes"]) and "no memory model" in estimate.iloc[1]["unpredicted"]

    build_report(folder / "reports" / "m")
    report = (folder / "reports" / "m" / "report.md").read_text()
    assert "## The memory estimate beside the measurement" in report
    assert _estimate_row(report, cells[0].name) == [cells[0].name, "ok", "10.00", f"{ok.total_bytes / GIB:.2f}",
                                                 f"{100 * (ok.total_bytes / (10 * GIB) - 1):+.1f}", ok.peak_moment]
    # an oom cell's peak is a lower bound of its need, so its error is an upper bound
    assert _estimate_row(report, cells[2].name) == [cells[2].name, "oom", "≥18.00", f"{oom.total_bytes / GIB:.2f}",
                                                 f"≤{100 * (oom.total_bytes / (18 * GIB) - 1):+.1f}", oom.peak_moment]
    assert _estimate_row(report, cells[1].name) == [cells[1].name, "oom", "≥18.00", "–", "–", "–"]
    assert f"No prediction for `{cells[1].name}`: no memory model for kernels 'liger+unsloth'" in report
    within = int(abs(ok.total_bytes / (10 * GIB) - 1) <= 0.10)
    assert f"{within} of 1 ok cells within 10% of the measured device peak" in report  # oom cells do not count
    assert "tab:m-estimate" in (folder / "reports" / "m" / "tables.tex").read_text()


@pytest.mark.slow
def test_a_matrix_of_cpu_cells_has_no_estimate_rows(result_folder):
    import json

    folder, matrix = result_folder
    for path in (folder / "results" / "m").glob("*.json"):
        data = json.loads(path.read_text())
        data["environment"]["cuda_available"] = False
        path.write_text(json.dumps(data))
    aggregate(str(matrix), folder / "results", folder / "reports")
    assert pd.read_csv(folder / "reports" / "m" / "estimate.csv").empty
    build_report(folder / "reports" / "m")
    report = (folder / "reports" / "m" / "report.md").read_text()
    assert "No cell of this matrix measured its device peak on a CUDA GPU" in report
    assert "| error (%) |" not in report


def _cells_with_seeds() -> pd.DataFrame:
    """A baseline over three seeds (peaks 3.0, 3.1, 3.2 GiB; 100, 110, 120 tokens/s) and one change at seed 0."""
    rows = []
    for name, seed, peak, speed in (("baseline/seed=0", 0, 3.0, 100), ("baseline/seed=1", 1, 3.1, 110),
                                    ("baseline/seed=2", 2, 3.2, 120), ("fa2", 0, 2.9, 105)):
        rows.append({"name": name, "seed": seed, "status": "ok", "peak_device_bytes": peak * GIB,
                     "tokens_per_second": speed, "median_step_seconds": 1.0, "mfu": 0.1, "first_loss": 2.0,
                     "final_loss": 1.0, "throughput_measured": True})
    return pd.DataFrame(rows)


def test_a_single_seed_change_is_held_against_the_baseline_at_the_same_seed():
    from harness.report.cell_groups import group_table
    from harness.report.frames import deltas
    from harness.report.tables import deltas_table
    from harness.spec.design import ReportDesign

    cells = _cells_with_seeds()
    design = ReportDesign(baseline="baseline", x=None, lines=(), sweep=(), changes={"baseline": "", "fa2": "fa2"},
                          deltas=("fa2",), throughput_measured=True, quality=False)
    row = deltas(group_table(cells), design, cells).iloc[0]
    assert row["d_peak"] == pytest.approx(2.9 - 3.0)  # the baseline's seed 0, not its mean 3.1
    assert row["d_tokens_pct"] == pytest.approx(5.0)  # against 100 tokens/s, not 110
    assert bool(row["same_seed"]) and pd.isna(row["d_peak_se"])  # one cell against one cell: no spread to give
    assert "held against `baseline`'s cell of the same seed" in deltas_table(
        deltas(group_table(cells), design, cells), design, True).note


def test_a_table_of_one_seed_does_not_speak_of_a_mean_over_seeds():
    from harness.report.cell_groups import group_table
    from harness.report.tables import loss_table

    cells = _cells_with_seeds()
    assert "mean over seeds" in loss_table(group_table(cells), []).note
    single = cells[cells["seed"] == 0]
    assert "mean over seeds" not in loss_table(group_table(single), []).note


@pytest.mark.slow
def test_a_cpu_matrix_speaks_of_resident_memory_and_draws_no_gpu_budget_or_mfu(tmp_path):
    from matplotlib.lines import Line2D

    from harness.report.build import read
    from harness.report.charts import figures
    from harness.report.charts.style import legend_texts

    matrix = write_matrix(tmp_path, MATRIX.replace("budget: 16GiB}", "budget: 16GiB, device: cpu}"))
    for cell in expand(str(matrix)):
        write_result(tmp_path / "results", cell, "ok",
                     dict(peak_device_bytes=2 * GIB, peak_host_bytes=2 * GIB, step_seconds=[5.0, 2.0, 2.2],
                          loss=[11.9, 11.8, 11.7], tokens_per_second=1024 / 2.1, median_step_seconds=2.1,
                          mfu=0.3))
    for path in (tmp_path / "results" / "m").glob("*.json"):
        path.write_text(path.read_text().replace('"cuda_available": true', '"cuda_available": false'))
    aggregate(str(matrix), tmp_path / "results", tmp_path / "reports")
    folder = tmp_path / "reports" / "m"
    build_report(folder)
    report, tex = (folder / "report.md").read_text(), (folder / "tables.tex").read_text()
    assert "resident memory (CPU)" in report and "resident memory (CPU)" in tex
    for text in (report, tex):
        assert "device memory" not in text and "peak device" not in text and "MFU (%)" not in text
    frames, _, _ = read(folder)
    assert frames.on_cpu and frames.budget is None
    for name, fig in figures(frames).items():
        assert not any("budget" in t for t in legend_texts(fig)), name
        for ax in fig.axes:
            labels = " ".join(f"{ax.get_xlabel()} {ax.get_ylabel()}".split())  # as read, wrapped or not
            assert "device" not in labels, name
            if "memory" in labels:
                assert "resident memory (CPU" in labels, name
            assert not any("budget" in str(line.get_label()) for line in ax.get_lines() if isinstance(line, Line2D))


@pytest.mark.slow
def test_methods_md_states_hardware_budget_versions_and_definitions_from_the_results(result_folder):
    folder, matrix = result_folder
    aggregate(str(matrix), folder / "results", folder / "reports")
    environment = pd.read_csv(folder / "reports" / "m" / "environment.csv")
    assert list(environment["cells"]) == [4] and environment.at[0, "version:torch"] == "2.x"
    build_report(folder / "reports" / "m")
    methods = (folder / "reports" / "m" / "methods.md").read_text()
    assert "# Methods: m" in methods
    assert ("All 4 cells with a result ran on one Test GPU (CUDA not recorded, driver not recorded) with a host CPU "
            "Test CPU, Python 3.11.") in methods
    assert "recorded it: torch 2.x [@paszke2019pytorch]." in methods
    assert "Each cell's budget, 16.00 GiB, was judged on test." in methods
    assert "over seeds 0." in methods and "optimizer steps in all" in methods
    for term in ("Tokens/s are", "MFU (model FLOPs utilisation) is", "Peak device memory is"):
        assert term in methods
    assert "Bits per byte" not in methods  # no quality evaluated here
