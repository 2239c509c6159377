"""`vramlab estimate` and its calibration given arguments, folders or files they cannot use.

The cases come from the bad-input trials (tests/bad_input_trials/); a comment above a test names its case there."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from harness import api
from harness.core.errors import UsageError
from harness.estimate import calibration
from harness.report.calibration import rebuild_calibration
from harness.results.store import ResultFileError
from tests.conftest import REPO
from tests.refusals import one_line, refused, vramlab

VALID = sorted(Path("results/seed-16gb").glob("*.json"))[0]


def _truncated(path: Path) -> None:
    path.write_text(VALID.read_text()[:200])


def _zeros(path: Path) -> None:  # sparse: 70 MB on no disk
    with path.open("wb") as handle:
        handle.truncate(70 * 2**20)


def _foreign(path: Path) -> None:
    path.write_text(json.dumps({"a": 1}))


# 7, 8, 26: estimate's arguments are checked before anything is printed; a file in an output path's way is named
@pytest.mark.slow
def test_estimate_arguments_are_checked_first(tmp_path):
    afile = tmp_path / "afile"
    afile.write_text("x")
    (tmp_path / "folder").mkdir()
    for args, expected in ((["smoke", "--chart", str(tmp_path / "x.txt")], "draws .png, .pdf, .svg files"),
                           (["smoke", "--chart", str(tmp_path / "folder")], "is a folder"),
                           (["smoke", "--chart", str(afile / "x.png")], f"{afile} is a file, not a folder"),
                           (["smoke", "--results-dir", str(afile)], "is a file"),
                           (["--calibrate", str(tmp_path / "nonexistent")], "does not exist"),
                           (["--set", "context=8", "--set", "context=16"], "--set context given more than once")):
        done = vramlab("estimate", *args, cwd=tmp_path)
        one_line(done, expected)
        assert done.stdout == ""
    one_line(vramlab("schema", "--out", str(afile / "schemas"), cwd=tmp_path), f"{afile} is a file, not a folder")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile", "folder"]


# C31: a calibration over folders without GPU results printed an empty table and exited 0
def test_a_calibration_over_no_gpu_result_is_refused(tmp_path, capsys):
    (tmp_path / "empty").mkdir()
    refused(["estimate", "--calibrate", str(tmp_path / "empty")], capsys, "--calibrate: no ok GPU cell in")


# R01: `report --all` from an empty results folder rebuilt the committed calibration with no row
def test_a_calibration_is_not_replaced_by_one_over_fewer_cells(tmp_path, capsys):
    committed = REPO / "reports" / "estimate" / "calibration.md"
    folder = tmp_path / "reports" / "estimate"
    folder.mkdir(parents=True)
    shutil.copy(committed, folder / "calibration.md")
    (tmp_path / "empty").mkdir()
    with pytest.raises(UsageError, match=r"calibration.md shows \d{3} measured cells that .*empty holds no result"):
        rebuild_calibration(tmp_path / "empty", tmp_path / "reports", tmp_path / "reports")
    assert (folder / "calibration.md").read_bytes() == committed.read_bytes()
    assert sorted(p.name for p in folder.iterdir()) == ["calibration.md"]


# a truncated result gave a JSONDecodeError traceback, a 70 MB file was read whole, a foreign JSON was skipped
@pytest.mark.parametrize("damage, said", [(_truncated, "not valid JSON"), (_zeros, "than the limit of 64 MiB"),
                                          (_foreign, "not a vramlab result file: it has no schema_version")])
def test_a_calibration_refuses_a_damaged_oversized_or_foreign_file_by_name(tmp_path, capsys, damage, said):
    folder = tmp_path / "seed-16gb"
    folder.mkdir()
    shutil.copy(VALID, folder / VALID.name)
    bad = folder / "0123456789ab.json"
    damage(bad)
    refused(["estimate", "--calibrate", str(folder)], capsys, f"{bad}: ")
    with pytest.raises(ResultFileError, match=said):  # the reader `report --all` rebuilds reports/estimate/ with
        calibration.rows([folder])


# round 8 as it went: A08, A27, A28 (estimate's arguments), R24 (check of an empty folder), R43 (--reports-dir harness)
@pytest.mark.parametrize(("argv", "said"), [
    (["estimate", "smoke", "--cell", ""], "estimate: --cell is empty"),
    (["estimate", "smoke", "--calibrate", str(REPO / "results" / "seed-16gb")], "give it without a matrix"),
    (["estimate", "smoke", "--results-dir", "/nonexistent"], "is read only to draw the measured peaks"),
    (["aggregate", "smoke", "--reports-dir", "harness"], "the folder of vramlab's code"),
    (["aggregate", "smoke", "--results-dir", str(REPO / "ablations")], "the folder of vramlab's matrix files")])
def test_estimate_and_folder_arguments_that_cannot_be_used_are_refused(capsys, argv, said):
    refused(argv, capsys, said)
    assert not (REPO / "harness" / "smoke").exists()


# t20-032: `estimate --set vocabulary=counted` sized SmolLM2's embedding at its full 49,152 rows without a word that
# nothing was counted; the estimate says the count comes only when the cell reads its text, and that this is a bound
def test_an_estimate_of_a_counted_vocabulary_says_it_is_an_upper_bound():
    counted, native = api.estimate(model="arch:qwen3-8b", vocabulary="counted"), api.estimate(model="arch:qwen3-8b")
    assert counted.total_bytes == native.total_bytes
    said = [n for n in counted.notes if n.startswith("vocabulary: counted keeps the tokens its training text uses")]
    assert said and "sized at the full 151,936 rows, an upper bound" in said[0], counted.notes
    assert not any("vocabulary" in n for n in native.notes)
