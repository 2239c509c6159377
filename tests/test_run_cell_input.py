"""`vramlab run-cell` given what it cannot use: where it would write (--out, --log), its limits and
options, an unusable cache, a full disk; and what it never does (replace a measured result with a skip).

The cases come from the bad-input trials (tests/bad_input_trials/); a comment above a test names its case there."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from harness import cli
from harness.process import spare
from tests.conftest import REPO, copy_repository_files
from tests.refusals import (
    GOOD,
    SEED_STACK,
    TINY2,
    F,
    files_in,
    full_disk,
    matrix_at,
    one_line,
    refused,
    said_once,
    tiny_at,
    tiny_cell,
    vramlab,
)


@pytest.mark.slow
def test_a_machine_that_cannot_run_a_cell_never_replaces_its_result(tmp_path):
    source = REPO / "results" / "seed-16gb" / "3232155d81f9.json"
    out = tmp_path / "results" / "seed-16gb" / source.name
    out.parent.mkdir(parents=True)
    shutil.copy(source, out)
    env = {**os.environ, "PYTHONPATH": str(REPO), "CUDA_VISIBLE_DEVICES": "-1"}
    done = subprocess.run([sys.executable, "-m", "harness", "run-cell", "--matrix", "seed-16gb", "--cell",
                           "3232155d81f9", "--results-dir", str(tmp_path / "results")], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert "holds the ok result of this cell from NVIDIA H200" in done.stderr and "--force" in done.stderr
    assert out.read_bytes() == source.read_bytes()


@pytest.mark.slow
def test_out_naming_a_folder_is_refused_before_anything_runs(tmp_path):
    matrix = tmp_path / "m.yaml"
    matrix.write_text(GOOD)
    from harness.spec.matrix import expand

    cell = expand(str(matrix))[0]
    done = subprocess.run([sys.executable, "-m", "harness", "run-cell", "--matrix", str(matrix), "--cell",
                           cell.cell_id, "--out", str(tmp_path)], cwd=tmp_path, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(REPO)}, timeout=120)
    assert done.returncode == 2 and "is a folder; give the path of the result file" in done.stderr
    assert not (tmp_path / "results").exists()


# 1: a log file given by mistake is never truncated; every argument is checked before the log is opened
@pytest.mark.slow
@pytest.mark.parametrize("victim", ["README.md", "4c55591d5771.json"])
def test_a_log_path_that_is_no_log_file_is_refused_and_left_whole(tmp_path, victim):
    target = tmp_path / victim
    target.write_text("kept\n")
    done = vramlab("evaluate", "--matrix", "quality-smoke", "--cell", "6390030c8763", "--results-dir",
                   str(tmp_path / "results"), "--log", str(target))
    one_line(done, "a log file's name ends in .log")
    assert target.read_text() == "kept\n"


# 13: an error about an argument reaches the console, and no log is written for it
@pytest.mark.slow
def test_a_bad_cell_with_a_log_is_said_on_the_console(tmp_path):
    log = tmp_path / "l.log"
    one_line(vramlab("evaluate", "--matrix", "quality-smoke", "--cell", "nosuch", "--log", str(log)),
             "has no cell with the id or name 'nosuch'")
    assert not log.exists()


# 21, 22: run-cell checks a probe's context against the model, and writes into no other matrix's folder
@pytest.mark.slow
def test_run_cell_checks_its_context_and_its_out_folder(tmp_path):
    one_line(vramlab("run-cell", "--matrix", "smoke", "--cell", "d9946bcf27e9", "--results-dir",
                       str(tmp_path / "results"), "--context", "100000"), "8,192 positions")
    copy_repository_files(REPO / "results" / "seed-16gb", tmp_path / "results" / "seed-16gb")
    before = files_in(tmp_path)
    one_line(vramlab("run-cell", "--matrix", "smoke", "--cell", "d9946bcf27e9", "--out",
                       str(tmp_path / "results" / "seed-16gb" / "d9946bcf27e9.json")),
              "holds the results of another matrix")
    assert files_in(tmp_path) == before
    shutil.copy(REPO / "results" / "smoke" / "d9946bcf27e9.json", tmp_path / "results" / "seed-16gb")
    done = vramlab("check", str(tmp_path / "results" / "seed-16gb"))
    assert done.returncode == 1 and "a result of 'smoke' in the results folder of 'seed-16gb'" in done.stderr


# S62: --force on a machine without CUDA never replaces a GPU cell's measured result with a skip
@pytest.mark.slow
@pytest.mark.parametrize("out_given", [False, True])
def test_force_never_replaces_a_measured_result_with_a_skip(tmp_path, out_given):
    copy_repository_files(REPO / "results" / "seed-16gb", tmp_path / "results" / "seed-16gb")
    before = files_in(tmp_path)
    out = ["--out", str(tmp_path / "results" / "seed-16gb" / f"{SEED_STACK}.json")] if out_given else []
    done = vramlab("run-cell", "--force", "--matrix", "seed-16gb", "--cell", "seed-stack", "--results-dir",
                   str(tmp_path / "results"), *out, env={"CUDA_VISIBLE_DEVICES": "-1"})
    one_line(done, "holds the ok result of this cell from NVIDIA H200; this machine has no CUDA GPU")
    assert files_in(tmp_path) == before


def test_a_skip_found_once_the_cell_ran_gives_the_measured_result_back(tmp_path):
    from harness.process.cell_command import _no_skip_over
    from harness.results import Status, read, write_atomic

    measured = REPO / "results" / "smoke" / "d9946bcf27e9.json"
    out, moved = tmp_path / measured.name, tmp_path / "superseded" / "kept.json"
    moved.parent.mkdir()
    shutil.copy(measured, moved)
    skip = read(measured).model_copy(update={"status": Status.skipped, "reason": "needs the package 'x'"})
    write_atomic(out, skip)
    assert _no_skip_over(Status.ok, out, moved, 0) == 2
    assert out.read_bytes() == measured.read_bytes() and not moved.exists()


# what run-cell replaces (--force, or --out naming the file) is kept under results/superseded/<matrix>/
@pytest.mark.slow
def test_what_force_replaces_is_kept_in_results_superseded(tmp_path, cache_dir):
    matrix, cell_id = tiny_cell(tmp_path)
    out = tmp_path / "results" / "m" / f"{cell_id}.json"
    for force in ([], ["--force"]):
        done = vramlab("run-cell", "--matrix", str(matrix), "--cell", cell_id, "--results-dir",
                       str(tmp_path / "results"), *force, cwd=tmp_path)
        assert done.returncode == 0, done.stderr[-3000:]
        if not force:
            first = out.read_bytes()
    kept = list((tmp_path / "results" / "superseded" / "m").iterdir())
    assert [p.read_bytes() for p in kept] == [first] and kept[0].name.startswith(f"{cell_id}.")
    assert kept[0].suffix == ".json" and out.read_bytes() != first


# V13: an unusable VRAMLAB_CACHE is one line before the cell starts, and no result is written
@pytest.mark.slow
@pytest.mark.parametrize("cache", ["afile/cache", "/sys/vramlab-cache"])
def test_an_unusable_cache_is_refused_before_the_cell_starts(tmp_path, cache):
    (tmp_path / "afile").write_text("x")
    (tmp_path / "m.yaml").write_text(GOOD)
    from harness.spec.matrix import expand

    cell_id = expand(str(tmp_path / "m.yaml"))[0].cell_id
    done = vramlab("run-cell", "--matrix", str(tmp_path / "m.yaml"), "--cell", cell_id, "--results-dir",
                   str(tmp_path / "results"), cwd=tmp_path, env={"VRAMLAB_CACHE": str(tmp_path / cache)})
    one_line(done, "VRAMLAB_CACHE=")
    assert "cannot be" in done.stderr
    assert not (tmp_path / "results").exists()


@pytest.mark.slow
def test_run_cell_with_two_matrices_is_one_line(tmp_path):
    one_line(vramlab("run-cell", "--matrix", "smoke", "--matrix", "seed-16gb", "--cell", "x", cwd=tmp_path),
             "argument --matrix: given more than once (--matrix smoke, then --matrix seed-16gb)")
    assert list(tmp_path.iterdir()) == []


# R03: without --out the refusal names the matrix file to rename, not an --out never given; G04: a folder named
# after another matrix is refused outside results/ too; Y02: --memory-history on a CPU cell does nothing, so is refused
@pytest.mark.slow
@pytest.mark.parametrize(("given", "expected"), [
    ([], "holds the results of another matrix file (/elsewhere/base.yaml), as its .matrix file says; rename"),
    (["--out", "{tmp}/rd2/smoke/{cell}.json"], "its folder is named after the matrix 'smoke'"),
    (["--memory-history", "{tmp}/history.pickle"], "--memory-history records the CUDA allocator's history")])
def test_run_cell_says_what_is_wrong_with_where_it_would_write(tmp_path, given, expected):
    from harness.spec.matrix import expand

    path = matrix_at(tmp_path, f"fixed: {{{F}}}\naxes: {{adapter: [lora]}}\n", "base")
    cell = expand(path)[0].cell_id
    (tmp_path / "results" / "base").mkdir(parents=True)
    (tmp_path / "results" / "base" / ".matrix").write_text("/elsewhere/base.yaml\n" if not given else
                                                           f"{Path(path).resolve()}\n")
    args = [a.format(tmp=tmp_path, cell=cell) for a in given]
    before = files_in(tmp_path)
    one_line(vramlab("run-cell", "--matrix", path, "--cell", cell, *args, cwd=tmp_path), expected)
    assert files_in(tmp_path) == before


# F-runcell-fulldisk: the full disk is said with the file it concerns, and the cell's lock and the folders the
# command made go with the failure
def test_run_cell_on_a_full_disk_names_the_file_and_leaves_nothing(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("VRAMLAB_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(os, "pwrite", full_disk)
    results = tmp_path / "results"
    code = cli.main(["run-cell", "--matrix", str(tiny_at(tmp_path)), "--cell", "dca0c19d53c5", "--results-dir",
                     str(results)])
    said = said_once(capsys)
    assert code == 2 and f"{results}/ok/.locks/dca0c19d53c5.json.lock: No space left on device" in said, said
    assert not results.exists()


# C86: a time limit no cell can meet
def test_a_time_limit_under_a_second_is_refused(tmp_path, capsys):
    refused(["run-cell", "--matrix", "smoke", "--cell", "d9946bcf27e9", "--results-dir", str(tmp_path / "r"),
              "--time-limit", "0.001"], capsys, "at least 1")
    assert not (tmp_path / "r").exists()


def test_a_time_limit_past_a_year_is_refused_before_anything(tmp_path, capsys):
    out = tmp_path / "smoke" / "d9946bcf27e9.json"
    refused(["run-cell", "--matrix", "smoke", "--cell", "d9946bcf27e9", "--out", str(out), "--time-limit", "1e40"],
            capsys, "--time-limit: 1e+40 s is more than a year")
    assert not out.parent.exists()


# H04, H05, H07: run-cell wrote results into the package and the matrix files' folder
@pytest.mark.parametrize("where", ["harness/d9946bcf27e9.json", "ablations/smoke/d9946bcf27e9.json"])
def test_run_cell_writes_no_result_among_the_sources(capsys, where):
    refused(["run-cell", "--matrix", "smoke", "--cell", "d9946bcf27e9", "--out", str(REPO / where)], capsys,
            "the folder of vramlab's")
    assert not (REPO / where).exists()


def test_run_cell_writes_no_result_through_a_link_into_the_sources(tmp_path, capsys):
    (tmp_path / "smoke").symlink_to(REPO / "ablations")
    refused(["run-cell", "--matrix", "smoke", "--cell", "d9946bcf27e9", "--results-dir", str(tmp_path)], capsys,
            "the folder of vramlab's matrix files")


# A93, A99, A95: a spare given a launcher that is not its parent waited for as long as that process lived
def test_a_spare_serves_only_the_process_that_started_it(capsys):
    assert spare.launcher_problem(os.getppid()) is None
    refused(["spare", "--launcher", "1"], capsys, "--launcher 1: a spare serves the run-cell that starts it")
    done = subprocess.run([sys.executable, "-m", "harness.process", "--launcher", "1"], capture_output=True,
                          text=True, timeout=60, cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)})
    assert done.returncode == 2 and "a spare serves the run-cell that starts it" in done.stderr


# A106, A107: --keep-adapter on a cell of random weights kept nothing without a word
def test_keep_adapter_on_random_weights_says_it_keeps_nothing(tmp_path, capsys, monkeypatch):
    from harness.process import cell_command

    monkeypatch.setattr(cell_command, "supervise", lambda *a, **k: 0)
    monkeypatch.setattr(cell_command, "start_spares", lambda *a, **k: [], raising=False)
    from harness.spec.matrix import expand

    matrix = matrix_at(tmp_path, TINY2 % ("", ""))
    cell = expand(matrix)[0]
    out = tmp_path / "m" / f"{cell.cell_id}.json"
    cli.main(["run-cell", "--matrix", matrix, "--cell", cell.cell_id, "--out", str(out), "--keep-adapter"])
    assert f"--keep-adapter keeps no adapter of {cell.name}: its model (arch:tiny-llama) has random weights" in \
        capsys.readouterr().err


def test_run_cell_refuses_a_log_among_another_matrix_results_and_out_with_results_dir(tmp_path, capsys):
    refused(["run-cell", "--matrix", "seed-16gb", "--cell", "3232155d81f9", "--out",
              str(tmp_path / "seed-16gb" / "3232155d81f9.json"), "--log", str(REPO / "results" / "smoke" / "x.log")],
             capsys, "holds the results of another matrix")
    refused(["run-cell", "--matrix", "smoke", "--cell", "d9946bcf27e9", "--out",
              str(tmp_path / "smoke" / "d9946bcf27e9.json"), "--results-dir", str(tmp_path / "other")], capsys,
             "is not under --results-dir")
    assert not (REPO / "results" / "smoke" / "x.log").exists()


# d05, d08 (round 9): a log into the reports or into vramlab's code
@pytest.mark.parametrize(("log", "said"), [("harness/x.log", "the folder of vramlab's code"),
                                           ("reports/seed-16gb/x.log", "is inside reports/")])
def test_run_cell_refuses_a_log_among_the_reports_or_the_code(tmp_path, capsys, monkeypatch, log, said):
    monkeypatch.chdir(REPO)
    refused(["run-cell", "--matrix", "smoke", "--cell", "d9946bcf27e9", "--out",
              str(tmp_path / "smoke" / "d9946bcf27e9.json"), "--log", log], capsys, said)
    assert not (REPO / log).exists()
