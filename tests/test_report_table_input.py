"""The tables `vramlab report` reads (reports/<matrix>/cells.csv, steps.csv), checked as they are read against what
a result can hold: a number typed as "nan" or "inf", a measurement out of the result model's bounds (a negative
throughput), an ok row without its device peak, and the steps of trained cells cut away. Each is one line naming
the file, the line and the column, and the report is not written."""

from __future__ import annotations

import csv
import shutil
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.refusals import refused


def _copy(tmp_path: Path) -> Path:
    shutil.copytree(REPO / "reports" / "smoke", tmp_path / "smoke")
    return tmp_path / "smoke"


def _edit_cells(folder: Path, column: str, value: str, row: int = 0) -> None:
    with open(folder / "cells.csv", newline="") as handle:
        rows = list(csv.DictReader(handle))
    rows[row][column] = value
    with open(folder / "cells.csv", "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def _refused_report(folder: Path, capsys: pytest.CaptureFixture[str], said: str) -> None:
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    refused(["report", "smoke", "--reports-dir", str(folder.parent)], capsys, said)
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == before  # nothing written


@pytest.mark.parametrize(("column", "value", "said"), [
    pytest.param("peak_device_bytes", "nan", "line 2, column peak_device_bytes: 'nan' is not a number",
                 id="t10-134-nan-peak"),
    pytest.param("peak_device_bytes", "", "line 2, column peak_device_bytes: empty on an ok row (every ok result "
                                          "records its peak)", id="empty-peak-on-an-ok-row"),
    pytest.param("tokens_per_second", "-5", "line 2, column tokens_per_second: -5 is none a result can hold (input "
                                            "should be greater than 0)", id="t10-135-negative-throughput"),
    pytest.param("median_step_seconds", "inf", "line 2, column median_step_seconds: 'inf' is not a number",
                 id="infinite-step-time"),
    pytest.param("measured_steps", "2.5", "line 2, column measured_steps: 2.5 is none a result can hold",
                 id="half-a-step"),
    pytest.param("peak_host_bytes", "-1", "line 2, column peak_host_bytes: -1 is none a result can hold",
                 id="negative-bytes"),
])
def test_a_measurement_no_result_can_hold_is_refused(column, value, said, tmp_path, capsys):
    folder = _copy(tmp_path)
    _edit_cells(folder, column, value)
    _refused_report(folder, capsys, f"{folder / 'cells.csv'}: {said}")


def test_steps_cut_to_their_header_are_refused_naming_a_cell(tmp_path, capsys):  # t10-138
    folder = _copy(tmp_path)
    header = (folder / "steps.csv").read_text().splitlines()[0]
    (folder / "steps.csv").write_text(header + "\n")
    _refused_report(folder, capsys, f"{folder / 'steps.csv'}: no step of the ok cell adapter=lora,checkpointing=off,"
                                    "context=128 (d9946bcf27e9), which")


def test_one_cell_steps_cut_away_are_refused_naming_it(tmp_path, capsys):
    folder = _copy(tmp_path)
    lines = (folder / "steps.csv").read_text().splitlines(keepends=True)
    (folder / "steps.csv").write_text("".join(line for line in lines if not line.startswith("c5338522d7ed,")))
    _refused_report(folder, capsys, "no step of the ok cell adapter=lora,checkpointing=off,context=256 "
                                    "(c5338522d7ed), which")


def test_the_committed_tables_are_read_as_they_are(tmp_path):
    from harness.report.inputs import read_cells, read_steps

    for cells_csv in sorted((REPO / "reports").glob("*/cells.csv")):
        cells = read_cells(cells_csv.parent)
        assert len(read_steps(cells_csv.parent, cells))
