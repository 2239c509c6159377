"""A reports folder marked read-only (chmod a-w): the system refuses a write there to anyone but root, and vramlab
with it (harness/core/path_problems.py, unwritable); root writes it all the same, and is told so."""

from __future__ import annotations

import os

import pytest

from harness import cli
from harness.core.path_problems import written_as_root

ROOT = os.geteuid() == 0


@pytest.fixture
def read_only(tmp_path):
    folder = tmp_path / "reports"
    folder.mkdir()
    folder.chmod(0o555)
    yield folder
    folder.chmod(0o755)


def test_a_folder_marked_read_only_is_named_where_root_writes_it(read_only, tmp_path):
    assert written_as_root(read_only / "smoke" / "x") == (read_only if ROOT else None)
    assert written_as_root(tmp_path / "other") is None


@pytest.mark.slow
def test_aggregate_into_a_read_only_reports_folder_says_what_happens(read_only, capsys):  # t11-150
    code = cli.main(["aggregate", "smoke", "--reports-dir", str(read_only)])
    said = capsys.readouterr().err
    if ROOT:
        assert code == 0 and said.startswith(f"vramlab: {read_only} is marked read-only (no write permission), but "
                                             "this process runs as root, which may write it all the same"), said
    else:
        assert code == 2 and "cannot be written" in said, said
