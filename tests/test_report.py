"""The report stage reads only result files: a folder of results in every status -> tables and charts."""

from __future__ import annotations

import pandas as pd
import pytest

from harness import results
from harness.aggregate import aggregate
from harness.matrix import expand
from harness.report import build_report
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
        finished_at="now")
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


def test_aggregate_then_report_keeps_every_cell_visible(result_folder):
    folder, matrix = result_folder
    csv_path = aggregate(str(matrix), folder / "results", folder / "reports")
    cells = pd.read_csv(csv_path)
    assert list(cells["status"]) == ["ok", "oom", "skipped", "error"]
    assert cells.loc[0, "peak_device_bytes"] == 10 * GIB  # raw bytes in the table
    assert cells.loc[0, "final_loss"] == pytest.approx(11.7)
    steps = pd.read_csv(folder / "reports" / "m" / "steps.csv")
    assert len(steps) == 6 and steps["warmup"].sum() == 2

    outputs = build_report(folder / "reports" / "m")
    report = (folder / "reports" / "m" / "report.md").read_text()
    for status in ("ok", "oom", "skipped", "error"):
        assert f"| {status} " in report
    assert "because oom" in report and "because error" in report
    assert cells.loc[1, "failed_phase"] is None or pd.isna(cells.loc[1, "failed_phase"])  # no phases recorded
    assert "10.00" in report and "18.00" in report  # peaks in GiB
    assert "random weights" in report
    assert "Code: `0123456` (4 cells)" in report
    assert "sliced to 900 tokens: 1.25% of its training tokens" in report
    tex = (folder / "reports" / "m" / "tables.tex").read_text()
    assert "\\toprule" in tex and "\\bottomrule" in tex and "peak device (GiB)" in tex
    # a sweep line with one trained cell is said to have one, not to run from 1,024 to 1,024
    assert "`kernels none`: only context 1,024 trained, peak 10.00 GiB, 488 tokens/s; at 2,048: skipped." in report
    for chart in ("overview", "sweep", "deltas", "tradeoff", "loss"):
        for fmt in ("pdf", "png"):
            assert (folder / "reports" / "m" / f"{chart}.{fmt}").stat().st_size > 5000
    assert len(outputs) == 2 + 5 * 2


def test_aggregate_refuses_a_matrix_with_a_missing_result(result_folder):
    folder, matrix = result_folder
    next((folder / "results" / "m").glob("*.json")).unlink()
    with pytest.raises(FileNotFoundError, match="has no result file"):
        aggregate(str(matrix), folder / "results", folder / "reports")


def test_a_result_file_is_never_left_half_written(tmp_path):
    target = tmp_path / "r.json"
    with pytest.raises(ValueError):
        # invalid (an ok cell without its device peak): rejected before anything is written
        results.write_atomic(target, results.CellResult.model_construct(
            cell_id="0" * 12, name="x", matrix="m", status=results.Status.ok, config={}))
    assert list(tmp_path.iterdir()) == []


def test_a_partial_table_shows_cells_not_run_yet_as_pending(result_folder):
    folder, matrix = result_folder
    missing = next((folder / "results" / "m").glob("*.json"))
    missing.unlink()
    cells = pd.read_csv(aggregate(str(matrix), folder / "results", folder / "reports", partial=True))
    assert "pending" in set(cells["status"]) and len(cells) == 4
    build_report(folder / "reports" / "m")
    assert "Not run yet (1): " in (folder / "reports" / "m" / "report.md").read_text()
