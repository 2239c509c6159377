"""A report's cells.csv with one cell's row twice: refused in one line naming both lines, by `vramlab report` as by
the reader every report goes through, rather than a report counting that cell twice ("All 9 cells" of 8)."""

from __future__ import annotations

import pytest

from harness.core.errors import UsageError
from harness.report.inputs import read_cells
from tests.conftest import REPO, copy_repository_files
from tests.refusals import files_in, refused


def _with_a_row_twice(tmp_path):
    folder = tmp_path / "smoke"
    copy_repository_files(REPO / "reports" / "smoke", folder)
    lines = (folder / "cells.csv").read_text().splitlines(keepends=True)
    (folder / "cells.csv").write_text("".join([*lines, lines[1]]))
    return folder, len(lines) + 1


def test_read_cells_refuses_a_cell_id_on_two_lines(tmp_path):  # t11-082
    folder, line = _with_a_row_twice(tmp_path)
    with pytest.raises(UsageError, match=f"cells.csv: line {line} repeats the cell .* of line 2, and each cell has one "
                                         "row; run `vramlab aggregate smoke`"):
        read_cells(folder)


@pytest.mark.slow
def test_report_refuses_a_cells_table_with_a_row_twice_and_writes_nothing(tmp_path, capsys):  # t11-082
    folder, line = _with_a_row_twice(tmp_path)
    before = files_in(folder)
    refused(["report", "smoke", "--reports-dir", str(tmp_path)], capsys, f"line {line} repeats the cell")
    assert files_in(folder) == before
