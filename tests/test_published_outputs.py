"""The published reports survive every job that remakes them, whatever its end: a job that fails, is killed
(kill -9, as the out-of-memory killer does) or refuses leaves every committed file as it was (Snakemake's update():
never deleted before the job, put back when it fails), and a backend the shell names for a screen or a notebook
stops no job. Each runs the commands of issue 35 on a copy of the checkout and asks git what changed."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.checkout_copy import copy_checkout, git, snakemake, status
from tests.conftest import REPO

# Snakemake in a child process on a copy of the checkout: seconds each
pytestmark = pytest.mark.slow

# kills (SIGKILL) the vramlab command named by KILL_COMMAND as it starts, as the kernel's out-of-memory killer would
KILLER = """import os
args = open("/proc/self/cmdline", "rb").read().split(b"\\0")
if b"harness" in args and os.environ.get("KILL_COMMAND", "").encode() in args:
    os.kill(os.getpid(), 9)
"""


@pytest.fixture
def clone(tmp_path: Path) -> Path:
    return copy_checkout(tmp_path / "clone")


def killer(tmp_path: Path, clone: Path, command: str) -> dict[str, str]:
    folder = tmp_path / "killer"
    folder.mkdir()
    (folder / "sitecustomize.py").write_text(KILLER)
    return {"PYTHONPATH": f"{clone}:{folder}", "KILL_COMMAND": command}


@pytest.mark.parametrize("backend", ["module://matplotlib_inline.backend_inline", "tkagg", "no-such-backend"])
def test_a_backend_for_a_screen_or_a_notebook_stops_no_report_job(clone, backend):
    done = snakemake(clone, "-R", "aggregate", "report", "--config", "matrix=smoke", MPLBACKEND=backend)
    assert done.returncode == 0, done.stderr[-3000:]
    assert status(clone) == ""


def test_a_killed_aggregate_job_leaves_the_published_tables(tmp_path, clone):
    done = snakemake(clone, "-R", "aggregate", "report", "--config", "matrix=smoke",
                     **killer(tmp_path, clone, "aggregate"))
    assert done.returncode != 0 and "SIGKILL" in done.stderr, done.stderr[-3000:]
    assert "Restored previous version of reports/smoke/cells.csv" in done.stderr
    assert status(clone) == ""


def test_a_killed_report_job_leaves_the_published_report(tmp_path, clone):
    done = snakemake(clone, "-R", "report", "--config", "matrix=smoke", **killer(tmp_path, clone, "report"))
    assert done.returncode != 0 and "SIGKILL" in done.stderr, done.stderr[-3000:]
    assert status(clone) == ""


def test_a_killed_ceiling_job_leaves_the_published_ceiling_report(tmp_path, clone):
    done = snakemake(clone, "--forcerun", "ceiling", "--config", "matrix=claims-context", "--", "ceiling",
                     **killer(tmp_path, clone, "ceiling"))
    # its output goes to a log, so bash, not Snakemake, tells the kill
    assert done.returncode != 0 and "exit status 137" in done.stderr, done.stderr[-3000:]
    assert "Restored previous version of reports/claims-context/ceiling.md" in done.stderr
    assert status(clone) == ""


def test_a_report_job_that_refuses_leaves_the_published_report(clone):
    # tables of another matrix's cells in reports/smoke/ (committed so in this copy): the report refuses to title them
    shutil.copy(clone / "reports" / "seed-16gb" / "cells.csv", clone / "reports" / "smoke" / "cells.csv")
    git("commit", "-q", "-am", "another matrix's tables", cwd=clone)
    done = snakemake(clone, "-R", "report", "--config", "matrix=smoke")
    assert done.returncode != 0 and "are no cells of the matrix smoke" in done.stderr, done.stderr[-3000:]
    assert "Restored previous version of reports/smoke/report.md" in done.stderr
    assert status(clone) == ""


def test_the_ceiling_report_and_the_matrix_report_write_no_file_of_each_other(tmp_path):
    """A ceiling matrix's cells measured (or skipped) here get a report beside the published ceiling report: its
    tables.tex once replaced the ceiling's table, which is ceiling.tex."""
    from harness.report.rebuild import rebuild_ceiling

    written = rebuild_ceiling("claims-context", REPO / "results", tmp_path)
    committed = {p.name: p.read_bytes() for p in (REPO / "reports" / "claims-context").iterdir()}
    assert {p.name: p.read_bytes() for p in written} == committed
    assert "tables.tex" not in committed and "ceiling.tex" in committed
