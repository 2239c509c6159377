"""One clock on a real SLURM cluster (tests/slurm_cluster.py): a cell in a job shorter than the cell's own limit (a
runtime set by hand over the one the Snakefile derives) ends as a `timeout` result before SLURM would kill it, told
the job's end by squeue (SLURM 22.05 tells a job no end in its environment). That each job asks for the cell's own
minutes is tests/test_job_clock.py's (a dry run through the profile)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from harness.process.job_clock import job_minutes
from harness.spec.matrix import expand
from tests.conftest import REPO, TINY, write_matrix
from tests.slurm_cluster import cluster, vramlab_env


def _snakemake(workdir: Path, env: dict[str, str], matrix: Path, *extra: str) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile"), "--directory", str(workdir),
               "--profile", str(REPO / "profiles" / "slurm"), "--slurm-init-seconds-before-status-checks", "5",
               "--slurm-keep-successful-logs", *extra, "--config", f"matrix={matrix}"]
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=1800)


def _time_limits(env: dict[str, str]) -> list[str]:
    """The TimeLimit of every cell job SLURM still knows (MinJobAge keeps a finished one for 300 s)."""
    shown = subprocess.run(["scontrol", "show", "job", "-o"], env=env, capture_output=True, text=True).stdout
    return [re.search(r"TimeLimit=(\S+)", line)[1] for line in shown.splitlines() if "Comment=rule_cell" in line]


@pytest.mark.slow
def test_on_slurm_a_cell_in_a_job_shorter_than_its_limit_ends_as_a_timeout(tmp_path, cache_dir):
    env = vramlab_env(cache_dir)
    matrix = write_matrix(tmp_path, TINY.format(cells="  - {name: b, context: 48}"))
    (cell,) = expand(str(matrix))
    assert job_minutes(cell.settings) > 4  # what the Snakefile would ask for, cut short below
    (tmp_path / "slurm").mkdir()
    with cluster(tmp_path / "slurm", cpus=8, memory_mb=70_000) as slurm_env:
        done = _snakemake(tmp_path / "run", {**env, **slurm_env}, matrix, "--set-resources", "cell:runtime=4")
        assert done.returncode == 0, done.stderr[-3000:]
        assert _time_limits(slurm_env) == ["00:04:00"]
    (result,) = [json.loads(p.read_text()) for p in (tmp_path / "run" / "results" / "m").glob("*.json")]
    assert result["status"] == "timeout", result.get("reason")
    logs = "".join(p.read_text() for p in (tmp_path / "run").rglob("*.log"))
    assert "the SLURM job it runs in ends in" in logs
