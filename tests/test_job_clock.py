"""One clock on a cluster: a cell's SLURM job asks for the cell's own time limit and the minutes around it, and a
cell inside a job that ends sooner ends before it, so a slow cell always leaves a `timeout` result."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time

import pytest

from harness.process.job_clock import JOB_END_ENV, OUTSIDE_LIMIT_SECONDS, job_minutes, seconds_to_job_end, within_job
from harness.process.supervisor import time_limit
from harness.results import read, result_path
from harness.spec.matrix import expand
from tests.conftest import REPO, TINY, run_vramlab, write_matrix


@pytest.mark.parametrize("matrix", ["quality-qwen", "seed-16gb", "smoke"])
def test_every_cells_job_outlasts_its_time_limit_and_the_time_around_it(matrix):
    for cell in expand(matrix, check_model=False):
        assert job_minutes(cell.settings) * 60 >= time_limit(cell.settings) + OUTSIDE_LIMIT_SECONDS


def test_a_quality_qwen_cell_is_given_more_than_the_45_minutes_slurm_gave_it():
    limits = {time_limit(c.settings) for c in expand("quality-qwen", check_model=False)}
    assert max(limits) > 45 * 60  # the supervisor's limit the profile's old runtime cut short
    assert min(job_minutes(c.settings) for c in expand("quality-qwen", check_model=False)) * 60 > max(limits)


def test_the_slurm_profile_sets_no_runtime_of_its_own_for_cells():
    profile = (REPO / "profiles" / "slurm" / "config.yaml").read_text()
    overrides = profile.split("set-resources:", 1)[1].split("\nset-threads", 1)[0]
    assert not re.search(r"^\s+(cell|reproduce):", overrides, re.M), overrides


def test_a_cell_ends_before_its_job_does(monkeypatch):
    now = 1_000_000.0
    monkeypatch.setenv(JOB_END_ENV, str(now + 600))
    assert seconds_to_job_end(now) == 600
    limit, why = within_job(3600.0, now)
    assert limit == 600 - OUTSIDE_LIMIT_SECONDS and "the SLURM job it runs in ends in 600 s" in why
    assert within_job(60.0, now) == (60.0, None)  # a limit that ends in time is kept
    monkeypatch.setenv(JOB_END_ENV, str(now + 30))
    assert within_job(3600.0, now)[0] == 1.0  # a job about to end: the shortest limit, a timeout result at once


@pytest.mark.parametrize("value", ["", "soon", "0", "nan", "999"])  # 999: a time long past
def test_outside_a_job_with_an_end_the_limit_is_the_cells_own(monkeypatch, value):
    monkeypatch.setenv(JOB_END_ENV, value)
    monkeypatch.delenv("SLURM_JOB_ID", raising=False)
    assert seconds_to_job_end(1_000_000.0) is None and within_job(3600.0, 1_000_000.0) == (3600.0, None)


@pytest.mark.slow
def test_snakemake_on_slurm_asks_for_each_cells_own_minutes(tmp_path):
    pytest.importorskip("snakemake_executor_plugin_slurm")
    matrix = write_matrix(tmp_path, TINY.format(cells="  - {name: a, context: 32}\n  - {name: b, context: 64}"))
    env = {**os.environ, "VRAMLAB_TIME_LIMIT": "7200", "PYTHONPATH": str(REPO)}
    done = subprocess.run([sys.executable, "-m", "snakemake", "-n", "--profile", str(REPO / "profiles" / "slurm"),
                           "-s", str(REPO / "Snakefile"), "--directory", str(tmp_path), "--config", f"matrix={matrix}",
                           f"results_dir={tmp_path / 'results'}", f"reports_dir={tmp_path / 'reports'}"],
                          env=env, capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    cells = re.findall(r"rule cell:.*?resources: ([^\n]*)", done.stdout + done.stderr, re.S)
    assert len(cells) == 2
    minutes = -(-(7200 + OUTSIDE_LIMIT_SECONDS) // 60)  # the limit VRAMLAB_TIME_LIMIT gives, not the profile's 60
    assert all(f"runtime={minutes:g}," in line or line.endswith(f"runtime={minutes:g}") for line in cells), cells


@pytest.mark.slow
def test_a_cell_in_a_job_about_to_end_is_recorded_as_a_timeout(tmp_path, cache_dir):
    matrix = write_matrix(tmp_path, TINY.format(cells="  - {name: a, context: 32}"))
    os.environ[JOB_END_ENV] = str(time.time() + OUTSIDE_LIMIT_SECONDS + 3)
    try:
        done = run_vramlab("run-cell", "--matrix", str(matrix), "--cell", "a", "--results-dir",
                           str(tmp_path / "results"), cwd=tmp_path, cache=cache_dir)
    finally:
        del os.environ[JOB_END_ENV]
    assert done.returncode == 0, done.stderr[-3000:]
    assert "the SLURM job it runs in ends in" in done.stderr
    (cell,) = expand(str(matrix))
    result = read(result_path(tmp_path / "results", "m", cell.cell_id))
    assert result.status.value == "timeout" and "passed its wall-clock limit" in result.reason

