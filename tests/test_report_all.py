"""Two `vramlab report --all` into one folder at once: the second is told, in one line, that another is writing there
(each removes the charts it has not drawn, and would remove the other's files being written); and no rebuild takes
a file being written (its hidden temporary name) for a stale chart."""

from __future__ import annotations

import os
import shutil

import pytest

from harness import cli
from harness.results.lock import result_lock
from tests.conftest import REPO


def test_a_second_report_all_into_one_folder_is_told_another_is_writing(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(REPO)  # read only: refused before any file is read or written
    out = tmp_path / "rebuilt"
    with result_lock(out / ".report-all"):
        assert cli.main(["report", "--all", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1, err
    assert f"another `vramlab report --all` is writing into {out}/ (pid " in err and "run this one again once it " \
        "has ended" in err
    assert sorted(p.name for p in out.iterdir()) == []  # its lock is gone with it


@pytest.mark.slow
def test_a_rebuild_leaves_a_file_being_written_beside_its_charts(tmp_path):
    from harness.core.atomic_files import writer_host
    from harness.report.rebuild import rebuild

    shutil.copytree(REPO / "reports" / "smoke", tmp_path / "smoke")
    # another writer's chart mid-write (a live pid: this test's own), as atomic_path names it
    being_written = tmp_path / "smoke" / f".overview.{writer_host()}-{os.getpid()}-abcdefgh.tmp.pdf"
    being_written.write_bytes(b"%PDF-")
    stale = tmp_path / "smoke" / "loss.png"  # a chart the data no longer call for
    stale.write_bytes(b"png")
    rebuild("smoke", REPO / "results", REPO / "reports", tmp_path)
    assert being_written.read_bytes() == b"%PDF-" and not stale.exists()
