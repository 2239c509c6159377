"""What the console shows while a matrix runs: where the matrix stands, and each cell's progress line."""

from __future__ import annotations

import io
import json

from harness.core.progress import StepLine, matrix_standing


def _result(folder, cell_id, started, finished):
    (folder / f"{cell_id}.json").write_text(json.dumps({"started_at": f"2026-11-30T10:{started}+00:00",
                                                        "finished_at": f"2026-11-30T10:{finished}+00:00"}))


def test_the_standing_counts_this_folder_and_estimates_from_its_median_cell(tmp_path):
    assert matrix_standing(["a", "b", "c", "d"], tmp_path) == "0/4 cells done"
    _result(tmp_path, "a", "00:00", "01:00")
    _result(tmp_path, "b", "01:00", "03:00")
    _result(tmp_path, "z", "00:00", "30:00")  # not a cell of this matrix
    assert matrix_standing(["a", "b", "c", "d"], tmp_path) == \
        "2/4 cells done, about 3 min left at one cell at a time"  # median 90 s, two cells to go
    _result(tmp_path, "c", "00:00", "01:00")
    _result(tmp_path, "d", "00:00", "01:00")
    assert matrix_standing(["a", "b", "c", "d"], tmp_path) == "4/4 cells done"


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_log_gets_a_line_per_phase_and_per_quarter_of_the_steps():
    stream = io.StringIO()
    line = StepLine("cell a", stream)
    for status in [{"phase": "load"}, {"phase": "train"}, *({"phase": "train", "step": s, "steps": 8, "loss": 2.0}
                                                           for s in range(1, 9))]:
        line.update(status)
    line.close("vramlab: cell a: ok")
    lines = stream.getvalue().splitlines()
    assert lines[:2] == ["cell a: load", "cell a: train"]
    assert [ln.split("] ")[1] for ln in lines[2:-1]] == ["step 1/8, loss 2.000", "step 2/8, loss 2.000",
                                                         "step 4/8, loss 2.000", "step 6/8, loss 2.000",
                                                         "step 8/8, loss 2.000"]
    assert lines[-1] == "vramlab: cell a: ok" and "\r" not in stream.getvalue()


def test_a_terminal_gets_one_line_redrawn_in_place():
    stream = _Terminal()
    line = StepLine("cell a", stream)
    line.update({"phase": "train", "step": 3, "steps": 4})
    line.close("vramlab: cell a: ok")
    text = stream.getvalue()
    assert text.startswith("\r\033[Kcell a: [##################......] step 3/4") and text.endswith("ok\n")
    assert text.count("\n") == 1
