"""The SLURM profile on a real, single-node SLURM cluster started by the test (tests/slurm_cluster.py): the smoke
matrix goes through `--profile profiles/slurm` unchanged, each cell as its own SLURM job, on a cluster without
an accounting database, and its results agree with a local run in status and training loss."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from harness.report.reproduce import LOSS_TOLERANCE
from tests.conftest import REPO
from tests.slurm_cluster import cluster, vramlab_env

SMOKE = REPO / "ablations" / "smoke.yaml"


def _snakemake(workdir: Path, env: dict[str, str], *extra: str) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile"), "--directory", str(workdir),
               *extra, "--config", f"matrix={SMOKE}"]
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=2400)


def _results(workdir: Path) -> dict[str, dict]:
    return {p.stem: json.loads(p.read_text()) for p in (workdir / "results" / "smoke").glob("*.json")}


@pytest.mark.slow
@pytest.mark.minutes
def test_the_smoke_matrix_through_the_slurm_profile_agrees_with_a_local_run(tmp_path, cache_dir):
    env = vramlab_env(cache_dir)
    local = _snakemake(tmp_path / "local", env, "--cores", "1")
    assert local.returncode == 0, local.stdout[-3000:] + local.stderr[-3000:]

    (tmp_path / "slurm").mkdir()
    # the node declares what the profile asks of a job (8 CPUs, 64 GiB), so the profile runs as shipped
    with cluster(tmp_path / "slurm", cpus=8, memory_mb=70_000) as slurm_env:
        # the two options only make the test faster and let it count the jobs (the plugin deletes the log
        # of a job that succeeded, unless told to keep it)
        done = _snakemake(tmp_path / "slurm", {**env, **slurm_env}, "--profile", str(REPO / "profiles" / "slurm"),
                          "--slurm-init-seconds-before-status-checks", "5", "--slurm-keep-successful-logs")
    log = done.stdout[-3000:] + done.stderr[-3000:]
    assert done.returncode == 0, log

    submitted = sorted((tmp_path / "slurm" / ".snakemake" / "slurm_logs" / "rule_cell").glob("*/*.log"))
    here, there = _results(tmp_path / "local"), _results(tmp_path / "slurm")
    assert len(here) == 8 and set(there) == set(here), log
    assert len(submitted) == 8, [str(p) for p in submitted]  # one SLURM job a cell
    for cell_id, mine in there.items():
        reference = here[cell_id]
        assert mine["status"] == reference["status"] == "ok", cell_id
        loss, reference_loss = mine["metrics"]["loss"][-1], reference["metrics"]["loss"][-1]
        assert abs(loss - reference_loss) <= LOSS_TOLERANCE * abs(reference_loss), (cell_id, loss, reference_loss)
    assert (tmp_path / "slurm" / "reports" / "smoke" / "report.md").is_file()
