"""The committed results are the published reference: no command replaces one except by measuring its cell (or
evaluating it) again on a machine that can; a dry run changes nothing; a fresh clone redoes nothing, whatever the
order in which git wrote its files."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO, copy_repository_files

# every test here runs vramlab or Snakemake in a child process: seconds each (docs/reproducing.md, the test suite)
pytestmark = pytest.mark.slow

TEMPLATE = """fixed: {{model: "arch:tiny-llama", device: cpu, steps: 2}}
design: list
cells:
  - {{name: a, context: {context}}}
evaluation: {{tasks: [text_en, text_de]}}
"""
SHA = "ab" * 32


def _env(cache_dir: Path | None = None, **extra: str) -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": str(REPO), **extra}
    if cache_dir is not None:
        env["VRAMLAB_CACHE"] = str(cache_dir)
    return env


def matrix_with_cell_id_after(folder: Path, first: str = "f") -> tuple[Path, str]:
    """A one-cell matrix whose cell id sorts after 'evaluations', so that git, which writes a checkout in path
    order, writes results/m/<cell_id>.json after results/m/evaluations/<cell_id>/*.json."""
    from harness.spec.matrix import expand

    for context in range(32, 4096):
        path = folder / "m.yaml"
        path.write_text(TEMPLATE.format(context=context))
        cell = expand(str(path))[0]
        if cell.cell_id.startswith(first):
            return path, cell.cell_id
    raise AssertionError("no such cell")


def write_published(results: Path, matrix: Path) -> None:
    """An ok cell result with its adapter recorded (the adapter itself is not committed) and an ok score per task,
    as a GPU machine leaves them."""
    from harness.results import CellResult, EvaluationResult, Score, evaluation_path, result_path, write_atomic
    from harness.spec.matrix import expand

    for cell in expand(str(matrix)):
        write_atomic(result_path(results, cell.matrix, cell.cell_id), CellResult(
            cell_id=cell.cell_id, name=cell.name, matrix=cell.matrix, status="ok", config=cell.settings,
            metrics={"peak_device_bytes": 2**30, "tokens_per_second": 100.0, "step_seconds": [1.0, 1.0],
                     "loss": [2.0, 1.5], "median_step_seconds": 1.0},
            adapter={"folder": cell.cell_id, "sha256": SHA, "bytes": 10}))
        for task in ("text_en", "text_de"):
            write_atomic(evaluation_path(results, cell.matrix, cell.cell_id, task), EvaluationResult(
                cell_id=cell.cell_id, name=cell.name, matrix=cell.matrix, task=task, status="ok",
                scores=[Score(metric="bits_per_byte", value=1.25, n=8, higher_is_better=False)],
                adapter_sha256=SHA))


def snakemake(workdir: Path, matrix: Path, cache_dir: Path, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile"), "--directory",
                           str(workdir), "--cores", "1", *extra, "--config", f"matrix={matrix}"],
                          env=_env(cache_dir), capture_output=True, text=True, timeout=300)


def git(*args: str, cwd: Path) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=cwd, check=True,
                   capture_output=True)


def snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file() and ".git" not in p.parts and ".snakemake" not in p.parts}


def test_a_fresh_clone_redoes_nothing_whatever_order_git_wrote_its_files(tmp_path, cache_dir):
    source = tmp_path / "published"
    source.mkdir()
    matrix, cell_id = matrix_with_cell_id_after(source)
    write_published(source / "results", matrix)
    for command in (["aggregate", str(matrix)], ["report", "m"]):
        done = subprocess.run([sys.executable, "-m", "harness", *command], cwd=source, env=_env(cache_dir),
                              capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr[-2000:]
    (source / "results" / "m" / ".matrix").write_text("m.yaml\n")  # a path from the checkout, true in every clone
    # a large file that git writes between the evaluations and the result (as the thousands of files of a real
    # checkout do), so that their times differ by more than the file system's clock tick
    (source / "results" / "m" / "ex-large.bin").write_bytes(os.urandom(48 * 2**20))
    git("init", "-q", cwd=source)
    git("add", "-A", cwd=source)
    git("commit", "-q", "-m", "published", cwd=source)

    clone = tmp_path / "clone"
    git("clone", "-q", str(source), str(clone), cwd=tmp_path)
    result = clone / "results" / "m" / f"{cell_id}.json"
    evaluation = clone / "results" / "m" / "evaluations" / cell_id / "text_en.json"
    # as git wrote them: the result after its evaluations, the tables before the results
    assert result.stat().st_mtime_ns > evaluation.stat().st_mtime_ns
    assert (clone / "reports" / "m" / "cells.csv").stat().st_mtime_ns < result.stat().st_mtime_ns
    before = snapshot(clone)

    planned = snakemake(clone, clone / "m.yaml", cache_dir, "-n")
    assert planned.returncode == 0, planned.stderr[-3000:]
    assert "Nothing to be done" in planned.stdout + planned.stderr, planned.stdout[-3000:]
    # and a real run (on this machine, which has neither the adapter nor a GPU) changes nothing either
    done = snakemake(clone, clone / "m.yaml", cache_dir)
    assert done.returncode == 0, done.stderr[-3000:]
    assert snapshot(clone) == before


def test_an_ok_score_is_never_replaced_by_a_machine_that_cannot_evaluate_the_cell(tmp_path):
    matrix, cell_id = matrix_with_cell_id_after(tmp_path, first="")
    write_published(tmp_path / "results", matrix)
    before = snapshot(tmp_path / "results")
    done = subprocess.run([sys.executable, "-m", "harness", "evaluate", "--matrix", str(matrix), "--cell", cell_id],
                          cwd=tmp_path, env=_env(), capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert snapshot(tmp_path / "results") == before
    assert "kept" in done.stderr and "adapter is not on this machine" in done.stderr


def test_a_damaged_evaluation_is_set_aside_and_evaluated_again(tmp_path, cache_dir):
    matrix, cell_id = matrix_with_cell_id_after(tmp_path, first="")
    write_published(tmp_path / "results", matrix)
    damaged = tmp_path / "results" / "m" / "evaluations" / cell_id / "text_de.json"
    damaged.write_text('{"kind": "evaluation", "cell_')  # a write cut short

    planned = snakemake(tmp_path, matrix, cache_dir, "-n")  # a dry run says so and changes nothing
    assert planned.returncode == 0, planned.stderr[-3000:]
    assert f"{damaged}: not valid JSON" in planned.stderr or f"{damaged.relative_to(tmp_path)}: not valid JSON" \
        in planned.stderr, planned.stderr[-3000:]
    assert damaged.read_text() == '{"kind": "evaluation", "cell_'
    assert not (damaged.parent / "damaged").exists()

    done = subprocess.run([sys.executable, "-m", "harness", "evaluate", "--matrix", str(matrix), "--cell", cell_id],
                          cwd=tmp_path, env=_env(), capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    kept = list((damaged.parent / "damaged").iterdir())
    assert len(kept) == 1 and kept[0].read_text() == '{"kind": "evaluation", "cell_'
    assert json.loads(damaged.read_text())["status"] == "skipped"  # evaluated again: no adapter here
    assert json.loads((damaged.parent / "text_en.json").read_text())["status"] == "ok"


def test_a_dry_run_changes_nothing(tmp_path, cache_dir):
    matrix, cell_id = matrix_with_cell_id_after(tmp_path, first="")
    damaged = tmp_path / "results" / "m" / f"{cell_id}.json"
    damaged.parent.mkdir(parents=True)
    damaged.write_text('{"schema_version": 2, "cell_id": "')
    planned = snakemake(tmp_path, matrix, cache_dir, "-n")
    assert planned.returncode == 0, planned.stderr[-3000:]
    assert "not valid JSON" in planned.stderr and "measured again" in planned.stderr
    assert sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*") if ".snakemake" not in p.parts) == \
        ["m.yaml", "results", "results/m", f"results/m/{cell_id}.json"]  # nothing moved, no marker written


def test_run_cell_without_out_never_replaces_a_committed_result(tmp_path, cache_dir):
    source = sorted((REPO / "results" / "smoke").glob("*.json"))[0]
    out = tmp_path / "results" / "smoke" / source.name
    out.parent.mkdir(parents=True)
    shutil.copy(source, out)
    done = subprocess.run([sys.executable, "-m", "harness", "run-cell", "--matrix", "smoke", "--cell", source.stem,
                           "--results-dir", str(tmp_path / "results"), "--time-limit", "1"], cwd=REPO,
                          env=_env(cache_dir), capture_output=True, text=True, timeout=300)
    assert done.returncode == 2, done.stderr[-2000:]
    assert len(done.stderr.strip().splitlines()) == 1 and "already holds" in done.stderr, done.stderr
    assert out.read_bytes() == source.read_bytes()
    assert sorted(p.name for p in out.parent.iterdir()) == [source.name]


@pytest.mark.parametrize("name", ["README.md", "notes.json"])
def test_out_writes_only_the_cells_result_file(tmp_path, name):
    matrix, cell_id = matrix_with_cell_id_after(tmp_path, first="")
    target = tmp_path / name
    target.write_text("# someone's notes\n")
    done = subprocess.run([sys.executable, "-m", "harness", "run-cell", "--matrix", str(matrix), "--cell", cell_id,
                           "--out", str(target)], cwd=tmp_path, env=_env(), capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 2
    assert len(done.stderr.strip().splitlines()) == 1 and f"{cell_id}.json" in done.stderr, done.stderr
    assert target.read_text() == "# someone's notes\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["m.yaml", name])


def test_every_argument_is_checked_before_any_file_is_touched(tmp_path):
    matrix, cell_id = matrix_with_cell_id_after(tmp_path, first="")
    damaged = tmp_path / "results" / "m" / f"{cell_id}.json"
    damaged.parent.mkdir(parents=True)
    damaged.write_text('{"schema_version": 2, "cell_id": "')
    done = subprocess.run([sys.executable, "-m", "harness", "run-cell", "--matrix", str(matrix), "--cell", cell_id,
                           "--time-limit", "-5"], cwd=tmp_path, env=_env(), capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 2 and "time" in done.stderr, done.stderr
    assert damaged.read_text() == '{"schema_version": 2, "cell_id": "'
    assert not (damaged.parent / "damaged").exists()


def test_aggregate_refuses_a_file_that_holds_another_cells_result(tmp_path):
    copy_repository_files(REPO / "results" / "smoke", tmp_path / "results" / "smoke")
    first, second = sorted((tmp_path / "results" / "smoke").glob("*.json"))[:2]
    second.write_bytes(first.read_bytes())
    done = subprocess.run([sys.executable, "-m", "harness", "aggregate", "smoke", "--results-dir",
                           str(tmp_path / "results"), "--reports-dir", str(tmp_path / "reports")], cwd=REPO,
                          capture_output=True, text=True, env=_env(), timeout=120)
    assert done.returncode == 2
    assert len(done.stderr.strip().splitlines()) == 1 and str(second) in done.stderr, done.stderr
    assert not (tmp_path / "reports").exists()


def test_an_error_caused_by_data_that_has_changed_since_is_measured_again(tmp_path, cache_dir):
    from harness.results import CellResult, write_atomic
    from harness.spec.cell_input import recorded_input
    from harness.spec.matrix import expand

    # text: data, since chat: data needs a chat template that the arch: presets' placeholder tokenizer has not
    (tmp_path / "docs").mkdir()
    data = tmp_path / "docs" / "a.txt"
    data.write_text("# Title\n\nSome words of a document, as the user gave it.\n\n# More\n\nIts second section.\n")
    matrix = tmp_path / "m.yaml"
    matrix.write_text(f'fixed: {{model: "arch:tiny-llama", device: cpu, steps: 2, data: "text:{data.parent}"}}\n'
                      "axes: {adapter: [lora]}\n")
    cell = expand(str(matrix))[0]
    out = tmp_path / "results" / "m" / f"{cell.cell_id}.json"
    # the error the data as it was then caused (recorded with its digest), and the data fixed since
    write_atomic(out, CellResult(cell_id=cell.cell_id, name=cell.name, matrix="m", status="error",
                                 reason="DataError: a.txt: the file is empty", config=cell.settings,
                                 records={"input": recorded_input(cell.settings)}))
    before = out.read_bytes()
    data.write_text(data.read_text() + data.read_text())

    planned = snakemake(tmp_path, matrix, cache_dir, "-n")
    assert planned.returncode == 0, planned.stderr[-3000:]
    assert "its error came from data" in planned.stderr and "superseded" in planned.stderr, planned.stderr[-3000:]
    assert out.read_bytes() == before  # a dry run changes nothing

    done = subprocess.run([sys.executable, "-m", "harness", "run-cell", "--matrix", str(matrix), "--cell",
                           cell.cell_id, "--time-limit", "1"], cwd=tmp_path, env=_env(cache_dir),
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    kept = list((out.parent / "superseded").iterdir())
    assert len(kept) == 1 and kept[0].read_bytes() == before
    assert json.loads(out.read_text())["status"] == "timeout"  # measured again (under a 1 s limit here)


def test_forcing_snakemake_on_a_machine_that_cannot_run_the_cells_keeps_their_results(tmp_path, cache_dir):
    """`snakemake -F` deletes a job's outputs before running it; a published result is no such output: run-cell
    decides, and on a machine without a CUDA GPU it keeps the GPU cells' results."""
    copy_repository_files(REPO / "results" / "seed-16gb", tmp_path / "results" / "seed-16gb")
    before = snapshot(tmp_path / "results")
    command = [sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile"), "--directory", str(tmp_path),
               "--cores", "1", "-F", "--config", "matrix=seed-16gb"]
    # without replace=true, forcing over results is refused before any job; with it, run-cell still keeps them
    done = subprocess.run(command, env=_env(cache_dir, CUDA_VISIBLE_DEVICES="-1"), capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 2 and "-F (or -R cell) would measure the 18 cells" in done.stderr, done.stderr[-3000:]
    done = subprocess.run([*command, "replace=true"], env=_env(cache_dir, CUDA_VISIBLE_DEVICES="-1"),
                          capture_output=True, text=True, timeout=600)
    said = done.stdout + done.stderr
    assert "this machine has no CUDA GPU, so here the cell could only be skipped: the result is kept" in said, \
        said[-3000:]
    assert {k: v for k, v in snapshot(tmp_path / "results").items() if "/logs/" not in k and "/.locks/" not in k} \
        == before
