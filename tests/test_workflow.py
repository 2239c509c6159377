"""Snakemake over a small matrix: dry run, full run, and resumption after a kill -9 half-way."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import REPO, write_matrix

MATRIX = """
fixed: {model: "arch:tiny-qwen3", data: zipf, device: cpu, warmup_steps: 1, lora_rank: 4, lora_alpha: 4}
design: list
cells:
  - {name: long, context: 64, steps: 500}
  - {name: long-too, context: 48, steps: 500}
  - {name: quick, context: 32, steps: 2}
  - {name: both-kernels, context: 32, kernels: liger+unsloth}
"""


def snakemake(workdir: Path, matrix: Path, cache: Path, *extra: str, config: tuple[str, ...] = (),
              **popen) -> subprocess.Popen:
    env = {**os.environ, "VRAMLAB_CACHE": str(cache), "PYTHONPATH": str(REPO)}
    # one --config flag: a second one would replace the first, matrix included
    command = [sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile"), "--directory", str(workdir),
               "--cores", "1", *extra, "--config", f"matrix={matrix}", *config]
    popen.setdefault("stdout", subprocess.PIPE)
    return subprocess.Popen(command, env=env, stderr=subprocess.STDOUT, text=True, **popen)


def job_counts(dry_run: str) -> dict[str, str]:
    """The `job  count` table of a dry run, for the cell and aggregate rules."""
    rows = (line.split() for line in dry_run.splitlines())
    return {row[0]: row[1] for row in rows if len(row) == 2 and row[0] in ("cell", "aggregate") and row[1].isdigit()}


@pytest.mark.slow
def test_dry_run_lists_one_job_per_cell_then_aggregate_and_report(tmp_path, cache_dir):
    matrix = write_matrix(tmp_path, MATRIX)
    out, _ = snakemake(tmp_path, matrix, cache_dir, "-n").communicate(timeout=120)
    assert job_counts(out) == {"cell": "4", "aggregate": "1"}
    assert "aggregate" in out and "report" in out
    assert "matrix 'm'" in out and "4 cells" in out


@pytest.mark.slow
def test_a_typo_stops_the_workflow_before_any_cell(tmp_path, cache_dir):
    matrix = write_matrix(tmp_path, MATRIX.replace("kernels:", "kernel:"))
    proc = snakemake(tmp_path, matrix, cache_dir)
    out, _ = proc.communicate(timeout=120)
    assert proc.returncode != 0
    assert "unknown setting 'kernel'; did you mean 'kernels'?" in out
    assert not (tmp_path / "results").exists()


@pytest.mark.slow
def test_killed_run_resumes_redoing_only_the_unfinished_cell(tmp_path, cache_dir):
    matrix = write_matrix(tmp_path, MATRIX)
    results = tmp_path / "results" / "m"
    # output to a file: an unread pipe would fill up and stall the run
    log = (tmp_path / "first-run.log").open("w")
    proc = snakemake(tmp_path, matrix, cache_dir, start_new_session=True, stdout=log)
    # Wait until one cell has finished and the next one is training, then kill everything at once.
    deadline = time.time() + 300
    while time.time() < deadline:
        # a result being written is a hidden temporary file (.<id>.*.tmp.json) until it is renamed: skip it
        trained = [p for p in results.glob("[!.]*.json") if json.loads(p.read_text())["status"] == "ok"]
        running = [p for p in (results / "logs").glob("*.log") if "step 1/" in p.read_text()
                   and not (results / (p.stem + ".json")).exists()] if results.exists() else []
        if trained and running:
            break
        if proc.poll() is not None:
            pytest.fail("the run ended before it could be killed half-way")
        time.sleep(0.1)
    else:
        proc.kill()
        pytest.fail("the run never reached a second training cell")
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    killed_cell = running[0].stem
    assert not (results / f"{killed_cell}.json").exists()
    before = {p.name: p.stat().st_mtime_ns for p in results.glob("[!.]*.json")}
    for path in before:  # every file under its final name is a complete result
        assert json.loads((results / path).read_text())["status"] in ("ok", "skipped")

    proc = snakemake(tmp_path, matrix, cache_dir)
    out, _ = proc.communicate(timeout=600)
    assert proc.returncode == 0, out[-3000:]
    after = {p.name: p.stat().st_mtime_ns for p in results.glob("[!.]*.json")}
    assert len(after) == 4
    assert all(after[name] == mtime for name, mtime in before.items())  # finished cells were not rerun
    assert f"{killed_cell}.json" in after
    assert out.count("run-cell") == 4 - len(before)
    # the console shows where the matrix stands and each cell's outcome; the trainer's own output is in the log
    assert re.search(r"vramlab: [0-3]/4 cells done(, about [^;]+ left at one cell at a time)?; cell ", out), out[-3000:]
    assert "4/4 cells done" in out
    assert f"vramlab: cell {json.loads((results / f'{killed_cell}.json').read_text())['name']}: ok" in out
    assert "{'loss'" not in out and "{'loss'" in (results / "logs" / f"{killed_cell}.log").read_text()
    report = (tmp_path / "reports" / "m" / "report.md").read_text()
    assert "skipped" in report and "unsloth-with-liger" in report

    # a third run has nothing to do
    out, _ = snakemake(tmp_path, matrix, cache_dir).communicate(timeout=120)
    assert "Nothing to be done" in out

    # deleting a result file measures that cell again, although a report already exists
    (results / f"{killed_cell}.json").unlink()
    out, _ = snakemake(tmp_path, matrix, cache_dir, "-n").communicate(timeout=120)
    assert job_counts(out) == {"cell": "1", "aggregate": "1"}, out[-2000:]


@pytest.mark.slow
def test_slurm_profile_sends_each_cell_as_a_one_gpu_job(tmp_path, cache_dir):
    proc = snakemake(tmp_path, REPO / "ablations" / "seed-16gb.yaml", cache_dir, "-n", "--profile",
                     str(REPO / "profiles" / "slurm"))
    out, _ = proc.communicate(timeout=120)
    assert proc.returncode == 0, out[-2000:]
    cell_jobs = [block for block in out.split("rule ")[1:] if block.startswith("cell:")]
    assert len(cell_jobs) == 18
    assert all("gpu=1" in block and "slurm_partition=gpu" in block for block in cell_jobs)


@pytest.mark.slow
def test_a_reproduction_measures_again_beside_the_published_results_and_compares(tmp_path, cache_dir):
    from harness.report.reproduce import machine_label

    matrix = write_matrix(tmp_path, """
fixed: {model: "arch:tiny-qwen3", data: zipf, device: cpu, warmup_steps: 1, steps: 2, lora_rank: 4, lora_alpha: 4}
design: list
cells:
  - {name: a, context: 32}
  - {name: b, context: 48}
""")
    out, _ = snakemake(tmp_path, matrix, cache_dir).communicate(timeout=600)  # the published reference
    published = {p.name: p.read_bytes() for p in (tmp_path / "results" / "m").glob("*.json")}
    assert len(published) == 2, out[-3000:]
    assert "made elsewhere" not in out  # this Snakemake made them

    # as on a fresh clone: the published results came with it, and this Snakemake has no record of them
    shutil.rmtree(tmp_path / ".snakemake" / "metadata")
    # Snakemake notes their missing provenance in a dry run only, and the workflow says why there only
    out, _ = snakemake(tmp_path, matrix, cache_dir, "-n", config=("reproduce=true",)).communicate(timeout=120)
    assert "missing provenance" in out and "vramlab: 2 result files of 'm' were made elsewhere" in out
    proc = snakemake(tmp_path, matrix, cache_dir, config=("reproduce=true",))
    out, _ = proc.communicate(timeout=600)
    assert proc.returncode == 0, out[-3000:]
    assert "missing provenance" not in out and "made elsewhere" not in out
    machine = machine_label()
    mine = sorted((tmp_path / "results" / "m" / "reproductions" / machine).glob("*.json"))
    assert [p.name for p in mine] == sorted(published)
    assert {p.name: p.read_bytes() for p in (tmp_path / "results" / "m").glob("*.json")} == published
    comparison = (tmp_path / "reports" / "m" / "reproductions" / machine / "comparison.md").read_text()
    assert comparison.startswith(f"Reproduction on {machine} agrees with the published results: 2 of 2 cells")
    assert "Reproduction on" in out  # the run ends by saying so
    # a second run measures nothing, says so, and gives the comparison again
    out, _ = snakemake(tmp_path, matrix, cache_dir, config=("reproduce=true",)).communicate(timeout=120)
    assert "Nothing to be done" in out and "were reproduced on this machine" in out and "by an earlier run" in out
    assert f"Reproduction on {machine} agrees with the published results: 2 of 2 cells" in out
