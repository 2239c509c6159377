"""Bad input, sixth round (docs/bad-input/round6.md), the calibration's reading and a foreign JSON file: the
calibration reads its result files as every other result reader does (bounded, validated, the file named), and a
JSON file with no schema_version is told as no vramlab result, not as one from a newer vramlab."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from harness import cli
from harness.estimate import calibration
from harness.results.store import ResultFileError

VALID = sorted(Path("results/seed-16gb").glob("*.json"))[0]


def _refused(argv: list[str], capsys: pytest.CaptureFixture[str], said: str) -> str:
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and said in err, err
    return err


def _truncated(path: Path) -> None:
    path.write_text(VALID.read_text()[:200])


def _zeros(path: Path) -> None:  # sparse: 70 MB on no disk
    with path.open("wb") as handle:
        handle.truncate(70 * 2**20)


def _foreign(path: Path) -> None:
    path.write_text(json.dumps({"a": 1}))


# a truncated result gave a JSONDecodeError traceback, a 70 MB file was read whole, a foreign JSON was skipped
@pytest.mark.parametrize("damage, said", [(_truncated, "not valid JSON"), (_zeros, "than the limit of 64 MiB"),
                                          (_foreign, "not a vramlab result file: it has no schema_version")])
def test_a_calibration_refuses_a_damaged_oversized_or_foreign_file_by_name(tmp_path, capsys, damage, said):
    folder = tmp_path / "seed-16gb"
    folder.mkdir()
    shutil.copy(VALID, folder / VALID.name)
    bad = folder / "0123456789ab.json"
    damage(bad)
    _refused(["estimate", "--calibrate", str(folder)], capsys, f"{bad}: ")
    with pytest.raises(ResultFileError, match=said):  # the reader `report --all` rebuilds reports/estimate/ with
        calibration.rows([folder])


# C24: a JSON object with no schema_version was guessed to be from a newer vramlab
@pytest.mark.parametrize("content", [{"a": 1}, [1, 2]])
def test_check_tells_a_foreign_json_file_as_no_vramlab_result(tmp_path, capsys, content):
    path = tmp_path / "foreign.json"
    path.write_text(json.dumps(content))
    assert cli.main(["check", str(path)]) != 0
    err = capsys.readouterr().err
    assert f"{path}: not a vramlab result file" in err and "newer" not in err, err


def test_an_unknown_schema_version_keeps_the_newer_vramlab_hint(tmp_path, capsys):
    path = tmp_path / "odd.json"
    path.write_text(json.dumps({"schema_version": "x"}))
    assert cli.main(["check", str(path)]) != 0
    assert "schema_version: 'x' is not one this vramlab reads (1 to 3); a newer vramlab wrote it?" in \
        capsys.readouterr().err
