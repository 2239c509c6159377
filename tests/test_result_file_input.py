"""A result file edited after vramlab wrote it, in ways JSON itself lets pass: a key written twice (json keeps the
last, so a result would pass for what it is not), a schema_version written as text or as 2.0 (which would pass for
the number, or be told as a newer vramlab's); and a results folder whose .matrix is no file. Each refused in one
line naming the file and what to do."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from harness.results.store import ResultFileError, parse
from tests.conftest import REPO
from tests.refusals import refused

RESULT = "d9946bcf27e9.json"  # a committed smoke result, copied: results/ is never changed here


@pytest.fixture
def smoke(tmp_path) -> Path:
    shutil.copytree(REPO / "results" / "smoke", tmp_path / "smoke")
    return tmp_path / "smoke"


def test_a_key_written_twice_is_refused_by_check_and_by_aggregate(smoke, capsys):  # t10-128
    path = smoke / RESULT
    text = path.read_text()
    path.write_text(text.replace("{", '{"status": "oom",', 1))
    said = "key 'status' is written twice in one object; the second would silently replace the first"
    refused(["check", str(path)], capsys, said, code=1)
    err = refused(["aggregate", "smoke", "--results-dir", str(smoke.parent), "--reports-dir",
                   str(smoke.parent / "rep")], capsys, said)
    assert str(path) in err and "keep the one value meant" in err, err
    assert not (smoke.parent / "rep" / "smoke" / "cells.csv").exists()


@pytest.mark.parametrize(("written", "said"), [
    pytest.param("2", 'schema_version: "2" is text, not the whole number vramlab writes there', id="t10-126-text"),
    pytest.param(2.0, "schema_version: 2.0 is a decimal number, not the whole number", id="decimal"),
    pytest.param(True, "schema_version: true is true/false, not the whole number", id="boolean"),
])
def test_a_schema_version_written_otherwise_than_a_whole_number_is_named_so(smoke, capsys, written, said):
    path = smoke / RESULT
    data = json.loads(path.read_text())
    path.write_text(json.dumps({**data, "schema_version": written}))
    err = refused(["check", str(path)], capsys, said, code=1)
    assert "newer vramlab" not in err, err


def test_a_schema_version_of_digits_in_text_says_the_number_to_write():
    with pytest.raises(ResultFileError, match=r'"3" is text, .*: write it as 3$'):
        parse(Path("r.json"), {"schema_version": "3"})


def test_a_matrix_owner_file_replaced_by_a_folder_is_refused_by_aggregate(smoke, capsys):  # t10-131
    (smoke / ".matrix").unlink(missing_ok=True)
    (smoke / ".matrix").mkdir()
    refused(["aggregate", "smoke", "--results-dir", str(smoke.parent), "--reports-dir", str(smoke.parent / "rep")],
            capsys, f"{smoke / '.matrix'} is a folder, not the file that names the matrix file whose results")
    assert (smoke / ".matrix").is_dir() and len(list(smoke.glob("*.json"))) == 8
