"""The result files: damaged, foreign, of a newer vramlab, too large or too deep, set aside or superseded;
what `vramlab check` and `vramlab migrate` say of them; the locks and the results measured again.

The cases come from the bad-input trials (tests/bad_input_trials/); a comment above a test names its case there."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest
import yaml

from harness import cli
from harness.estimate import calibration
from harness.results import ResultFileError, check, store
from harness.results.lock import lock_path, result_lock
from harness.tasks.catalog import FAMILY_METRICS, TASK_DIR
from tests.conftest import REPO, copy_repository_files, run_vramlab
from tests.refusals import (
    GOOD,
    SEED_STACK,
    files_in,
    matrix_at,
    one_line,
    refused,
    said_once,
    tiny_cell,
    vramlab,
)


# 3: an error that came from a kill or from the machine is measured again; the cell's own error stands
def _error(tmp_path: Path, reason: str, records: dict) -> tuple[Path, str]:
    from harness.results import Status, new_result, write_atomic
    from harness.spec.matrix import expand

    (tmp_path / "m.yaml").write_text(GOOD)
    cell = expand(str(tmp_path / "m.yaml"))[0]
    path = tmp_path / "results" / "m" / f"{cell.cell_id}.json"
    write_atomic(path, new_result(cell, Status.error, reason, records=records))
    return path, cell.cell_id


def _model_folder(folder: Path) -> Path:
    folder.mkdir()
    (folder / "config.json").write_text('{"model_type": "llama", "max_position_embeddings": 2048}')
    (folder / "model.safetensors").write_bytes(b"weights")
    (folder / "tokenizer.json").write_text("{}")
    return folder


# R09c, R10c: check passed over a result that is a link to /dev/zero or a folder; R09a, R10a, R21: aggregate said
# the file was missing
def _smoke_copy(tmp_path: Path) -> Path:
    folder = tmp_path / "results" / "smoke"
    copy_repository_files(REPO / "results" / "smoke", folder)
    return folder


@pytest.mark.slow
def test_a_damaged_result_is_set_aside_and_its_cell_measured_again(tmp_path, cache_dir):
    matrix = tmp_path / "m.yaml"
    matrix.write_text(GOOD)
    from harness.spec.matrix import expand

    cells = expand(str(matrix))
    results = tmp_path / "results" / "m"
    results.mkdir(parents=True)
    damaged = results / f"{cells[0].cell_id}.json"
    damaged.write_text('{"schema_version": 2, "cell_id": "')  # a write cut short
    env = {**os.environ, "VRAMLAB_CACHE": str(cache_dir), "PYTHONPATH": str(REPO)}

    def snakemake(*extra: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile"), "--directory",
                               str(tmp_path), "--cores", "1", *extra, "--config", f"matrix={matrix}"], env=env,
                              capture_output=True, text=True, timeout=600)

    done = snakemake("-n")  # a dry run says what a run does, and changes nothing
    assert done.returncode == 0, done.stderr[-2000:]
    assert "not valid JSON" in done.stderr and "set aside in results/m/damaged/ and measured again" in done.stderr
    assert damaged.read_text() == '{"schema_version": 2, "cell_id": "' and not (results / "damaged").exists()

    done = snakemake(str(damaged.relative_to(tmp_path)))  # a run: set aside, and that cell measured again
    assert done.returncode == 0, done.stderr[-3000:]
    kept = list((results / "damaged").iterdir())
    assert len(kept) == 1 and kept[0].read_text().startswith('{"schema_version": 2')
    assert json.loads(damaged.read_text())["cell_id"] == cells[0].cell_id


# 3, 14: a result from a newer vramlab is kept and refused, by run-cell and by Snakemake, dry or not
@pytest.mark.slow
def test_a_result_from_a_newer_vramlab_is_kept_and_refused(tmp_path):
    copy_repository_files(REPO / "results" / "smoke", tmp_path / "results" / "smoke")
    newer = tmp_path / "results" / "smoke" / "d9946bcf27e9.json"
    data = json.loads(newer.read_text())
    newer.write_text(json.dumps({**data, "schema_version": 4}))
    before = files_in(tmp_path)
    expected = "written by a newer vramlab (schema 4; this one reads up to 3): upgrade"
    one_line(vramlab("run-cell", "--matrix", "smoke", "--cell", "d9946bcf27e9", "--results-dir",
                       str(tmp_path / "results"), "--out", str(newer)), expected)
    for dry in (["-n"], []):
        done = subprocess.run([sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile"), "--directory",
                               str(tmp_path), "--cores", "1", *dry, "--config", "matrix=smoke", "reproduce=false"],
                              env={**os.environ, "PYTHONPATH": str(REPO)}, capture_output=True, text=True, timeout=300)
        assert done.returncode != 0 and expected in done.stdout + done.stderr, (done.stdout + done.stderr)[-2000:]
    assert files_in(tmp_path) == before | {k: v for k, v in files_in(tmp_path).items() if k.startswith(".snakemake")}


def test_a_superseded_result_keeps_its_place_below_the_matrix(tmp_path):
    from harness.results.store import superseded_path

    path = tmp_path / "results" / "smoke" / "reproductions" / "host" / "abc.json"
    found = superseded_path(path, "smoke")
    assert found.parent == tmp_path / "results" / "superseded" / "smoke" / "reproductions" / "host"
    assert found.name.startswith("abc.") and found.suffix == ".json"


@pytest.mark.parametrize(("reason", "records"), [
    ("the measuring process was killed by SIGKILL in phase 'load'", {"supervisor": {"exit": "was killed by SIGKILL"}}),
    ("the measuring process was killed by SIGTERM", {"error": {"cause": "signal"}}),
    ("OSError: [Errno 28] No space left on device", {"error": {"type": "OSError", "cause": "environment"}}),
    ("PermissionError: [Errno 13] Permission denied: '/cache/models'", {}),  # written before records.error
])
def test_an_error_not_caused_by_the_cell_is_measured_again(tmp_path, reason, records):
    from harness.results.existing import review_cell

    path, cell_id = _error(tmp_path, reason, records)
    redo = review_cell(path, cell_id)
    assert redo is not None and redo.folder == "superseded" and "measured again" in redo.describe()


def test_an_error_records_whether_the_machine_caused_it_and_the_cells_own_stands(tmp_path):
    from harness.results.existing import error_record, review_cell

    assert error_record(PermissionError(13, "Permission denied")) == {"type": "PermissionError",
                                                                       "cause": "environment"}
    assert error_record(KeyError("x"))["cause"] == "cell"
    for reason, records in (("RuntimeError: the chat template is broken", {"error": error_record(RuntimeError())}),
                            ("ValueError: bad settings", {})):
        assert review_cell(*_error(tmp_path, reason, records)) is None


@pytest.mark.slow
def test_a_cell_whose_process_was_killed_is_measured_again(tmp_path, cache_dir):
    matrix, cell_id = tiny_cell(tmp_path)
    out = tmp_path / "results" / "m" / f"{cell_id}.json"
    args = ("run-cell", "--matrix", str(matrix), "--cell", cell_id, "--results-dir", str(tmp_path / "results"))
    done = vramlab(*args, cwd=tmp_path, env={"VRAMLAB_TEST_FAULT": "sigkill:load"})
    assert done.returncode == 0 and json.loads(out.read_text())["records"]["error"] == {"cause": "signal"}
    killed = out.read_bytes()
    done = vramlab(*args, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    assert json.loads(out.read_text())["status"] == "ok"
    assert [p.read_bytes() for p in (out.parent / "superseded").iterdir()] == [killed]


# 8: no reader of a results folder takes a result's hidden temporary file (empty until its rename) for a result
def test_readers_of_results_folders_skip_a_result_being_written(tmp_path):
    from harness.cli import main
    from harness.estimate import outside
    from harness.results.budget_spelling import _move_evaluations
    from harness.results.ceiling import kept_probes
    from harness.results.store import result_files
    from harness.spec.matrix import find_cell

    seed = tmp_path / "seed-16gb"
    copy_repository_files(REPO / "results" / "seed-16gb", seed, leave_out=("superseded", "damaged"))
    (seed / f".{SEED_STACK}.x1y2.tmp.json").write_text("")
    assert calibration.rows([seed]) == calibration.rows([REPO / "results" / "seed-16gb"])
    assert outside.derive([seed]) == outside.derive([REPO / "results" / "seed-16gb"])
    assert main(["check", str(seed)]) == 0

    probe_id = sorted((REPO / "results" / "ceiling-16gb" / "ceiling").iterdir())[0].name
    probes = tmp_path / "probes"
    copy_repository_files(REPO / "results" / "ceiling-16gb" / "ceiling" / probe_id, probes)
    (probes / ".abc.x1y2.tmp.json").write_text("")
    assert kept_probes(probes, find_cell("ceiling-16gb", probe_id))

    evaluations = tmp_path / "evaluations"
    old, new = "dfc7878630a7", "0123456789ab"
    copy_repository_files(REPO / "results" / "quality-smollm2" / "evaluations" / old, evaluations / old)
    (evaluations / old / ".text_de.x1y2.tmp.json").write_text("")
    _move_evaluations(evaluations, old, new)
    assert (evaluations / new / "text_de.json").is_file()
    assert all(not p.name.startswith(".") for p in result_files(tmp_path, "**/*.json"))


# D10: a result file beyond any result's size is not a result (check and aggregate read it through results.check)
def test_a_result_file_of_unbounded_size_is_refused_unread(tmp_path):
    from harness.results import ResultFileError, check
    from harness.results.store import MAX_RESULT_BYTES

    huge = tmp_path / "dca0c19d53c5.json"
    with huge.open("wb") as handle:
        handle.truncate(MAX_RESULT_BYTES + 1)  # sparse: no disk, and never read
    with pytest.raises(ResultFileError, match="more than the limit of 64 MiB for a result file"):
        check(huge)


# H08, Q02: a result (an error, or a measurement) whose local model folder or user data changed since is redone
@pytest.mark.parametrize(("status", "change"), [("error", "model"), ("ok", "model"), ("ok", "data")])
def test_a_result_whose_input_changed_since_is_superseded(tmp_path, status, change):
    from harness.results import CellResult, write_atomic
    from harness.results.existing import review_cell
    from harness.spec.cell_input import recorded_input
    from harness.spec.matrix import expand

    model = _model_folder(tmp_path / "model")
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.txt").write_text("# Title\n\nA document.\n\n# More\n\nIts second section.\n")
    fixed = f'model: "{model}", data: "text:{tmp_path / "docs"}", device: cpu, steps: 1, context: 64'
    cell = expand(matrix_at(tmp_path, f"fixed: {{{fixed}}}\naxes: {{adapter: [lora]}}\n"))[0]
    out = tmp_path / "results" / "m" / f"{cell.cell_id}.json"
    write_atomic(out, CellResult(cell_id=cell.cell_id, name=cell.name, matrix="m", status=status,
                                 reason="ValueError: as it was" if status == "error" else None, config=cell.settings,
                                 metrics={"peak_device_bytes": 2**20} if status == "ok" else {},
                                 records={"input": recorded_input(cell.settings)}))
    assert review_cell(out, cell.cell_id, cell.settings) is None  # nothing changed: it stands
    if change == "model":
        (model / "config.json").write_text('{"model_type": "llama", "max_position_embeddings": 4096}')
    else:
        (tmp_path / "docs" / "a.txt").write_text("# Title\n\nAnother document.\n\n# More\n\nIts second section.\n")
    redo = review_cell(out, cell.cell_id, cell.settings)
    assert redo is not None and redo.folder == "superseded" and "has changed since" in redo.reason, redo
    assert ("the model folder" if change == "model" else "data 'text:") in redo.reason


@pytest.mark.parametrize(("damage", "expected"), [("marker", "is damaged (not a matrix path)"),
                                                  ("folder", "is a file, not a folder")])
def test_a_damaged_owner_file_or_a_file_for_the_results_folder_is_one_line(tmp_path, damage, expected):
    from harness.spec.matrix import MatrixError
    from harness.spec.owners import claim_results_folder

    if damage == "marker":
        (tmp_path / "base").mkdir()
        (tmp_path / "base" / ".matrix").write_bytes(b"\x00\xff garbage")
    else:
        (tmp_path / "base").write_text("")
    with pytest.raises(MatrixError, match=expected.replace("(", r"\(").replace(")", r"\)")):
        claim_results_folder(tmp_path, "base", tmp_path / "base.yaml", write=False)


def test_a_result_lock_is_removed_on_every_exit_but_a_kill(tmp_path):
    out = tmp_path / "m" / "abc.json"
    with result_lock(out) as waited:
        assert not waited and lock_path(out).is_file()
    assert not lock_path(out).parent.exists()
    with pytest.raises(RuntimeError), result_lock(out):
        raise RuntimeError("the cell failed")
    assert not lock_path(out).exists()


def test_a_waiter_takes_the_lock_of_a_holder_that_removed_its_file(tmp_path):
    out = tmp_path / "m" / "abc.json"
    held, release, order = threading.Event(), threading.Event(), []

    def first() -> None:
        with result_lock(out):
            held.set()
            release.wait(10)
            order.append("first")

    thread = threading.Thread(target=first)
    thread.start()
    held.wait(10)
    # flock locks are per open file, so a second one in this process waits as another process would
    with result_lock(out, waiting=lambda *_: release.set()) as waited:
        order.append("second")
        assert waited and lock_path(out).is_file()  # the file there now, not the one the first removed
    thread.join(10)
    assert order == ["first", "second"] and not lock_path(out).exists()


# D-migrate-othercell: migrate says of another cell's result what check and aggregate say, and leaves it as it is
def test_migrate_names_another_cells_result_and_changes_nothing(tmp_path, capsys):
    folder = tmp_path / "smoke"
    folder.mkdir()
    copy = folder / "d9946bcf27e9.json"
    copy.write_bytes((REPO / "results" / "smoke" / "c5338522d7ed.json").read_bytes())
    before = copy.read_bytes()
    assert cli.main(["migrate", str(copy)]) == 1
    said = said_once(capsys)
    assert f"not migrated: {copy}: cell_id/task: the file of this result would be named c5338522d7ed.json" in said
    assert copy.read_bytes() == before and sorted(p.name for p in folder.iterdir()) == [copy.name]


# D-check-devzero, D-check-fifo: what is no regular file once its links are followed is refused before it is read
# (a FIFO would block, /dev/zero never ends); run in a child whose memory is capped, in case it reads
@pytest.mark.slow
def test_check_refuses_a_device_and_a_named_pipe_unread(tmp_path, cache_dir):
    zero, fifo = tmp_path / "zero.json", tmp_path / "fifo.json"
    zero.symlink_to("/dev/zero")
    os.mkfifo(fifo)
    done = run_vramlab("check", str(zero), str(fifo), cwd=tmp_path, cache=cache_dir, timeout=120,
                       address_space=4 << 30)
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr[-3000:]
    assert (f"vramlab check: {zero}: a character device (a symlink to /dev/zero), not a file, so it is not a "
            "result") in done.stderr
    assert f"vramlab check: {fifo}: a FIFO (a named pipe), not a file, so it is not a result" in done.stderr


def test_a_result_file_is_read_no_further_than_the_limit(tmp_path, monkeypatch):
    path = tmp_path / "c5338522d7ed.json"
    path.write_bytes((REPO / "results" / "smoke" / "c5338522d7ed.json").read_bytes())
    monkeypatch.setattr(store, "MAX_RESULT_BYTES", 100)
    real = os.fstat
    # a file whose size is not what it reads (a device, a file growing): only what is read counts
    monkeypatch.setattr(os, "fstat", lambda fd: os.stat_result((*real(fd)[:6], 0, *real(fd)[7:])))
    with pytest.raises(ResultFileError, match="more bytes than the limit"):
        check(path)


# C24: a JSON object with no schema_version was guessed to be from a newer vramlab
@pytest.mark.parametrize("content", [{"a": 1}, [1, 2]])
def test_check_tells_a_foreign_json_file_as_no_vramlab_result(tmp_path, capsys, content):
    path = tmp_path / "foreign.json"
    path.write_text(json.dumps(content))
    assert cli.main(["check", str(path)]) != 0
    err = capsys.readouterr().err
    assert f"{path}: not a vramlab result file" in err and "newer" not in err, err


# t13-066: schema_version 0 (older than any) or a word was guessed to come from "a newer vramlab"
@pytest.mark.parametrize(("version", "says"), [
    pytest.param(0, "schema_version: 0 is older than any schema vramlab has written (this vramlab reads schemas 1 "
                 "to 3)", id="t13-066"),
    pytest.param(-2, "schema_version: -2 is older than any schema", id="negative"),
    pytest.param("x", 'schema_version: "x" is not a schema number (this vramlab reads schemas 1 to 3', id="word"),
])
def test_an_unknown_schema_version_names_the_range_and_guesses_no_newer_vramlab(tmp_path, capsys, version, says):
    path = tmp_path / "odd.json"
    path.write_text(json.dumps({"schema_version": version}))
    assert cli.main(["migrate", str(path)]) != 0
    err = capsys.readouterr().err
    assert says in err and "newer vramlab wrote" not in err, err
    assert json.loads(path.read_text()) == {"schema_version": version}  # kept as it was


@pytest.mark.parametrize("which", ["zero", "folder"])
def test_a_result_that_is_no_file_is_named_by_check_and_by_aggregate(tmp_path, capsys, which):
    folder = _smoke_copy(tmp_path)
    target = folder / "d9946bcf27e9.json"
    target.unlink()
    target.symlink_to("/dev/zero") if which == "zero" else target.mkdir()
    assert cli.main(["check", str(folder)]) == 1
    said = capsys.readouterr()
    kind = "a character device (a symlink to /dev/zero)" if which == "zero" else "a folder"
    assert f"{target}: {kind}, not a file" in said.err
    assert "7 of 8 result files valid" in said.out
    refused(["aggregate", "smoke", "--results-dir", str(tmp_path / "results"), "--reports-dir",
              str(tmp_path / "reports")], capsys, f"{target} is a ")
    assert not (tmp_path / "reports").exists()


# A66: check of the committed results folder failed on the superseded files' names and the benchmarks' own tables
def test_check_of_the_committed_results_knows_superseded_names_and_tables_that_are_no_results(capsys):
    assert cli.main(["check", str(REPO / "results")]) == 0
    said = capsys.readouterr()
    assert said.err == "" and "are a benchmark's own tables or memory-history peaks, not results" in said.out
    kept = next((REPO / "results" / "superseded").rglob("*.json"))
    check(kept)
    wrong = Path(str(kept).replace("/superseded/", "/"))
    wrong = wrong.parent / ("x" + wrong.name)
    with pytest.raises(ResultFileError, match="would be named"):  # outside superseded/ the name is the id's alone
        from harness.results.store import check_place, read

        check_place(wrong, read(kept))


# A70, A72: migrate on a folder said "Is a directory"
def test_migrate_takes_a_folder_as_check_does(tmp_path, capsys):
    folder = _smoke_copy(tmp_path)
    before = {p.name: p.read_bytes() for p in folder.glob("*.json")}
    assert cli.main(["migrate", str(folder)]) == 0
    assert capsys.readouterr().out.count("already in the current schema") == 8
    assert {p.name: p.read_bytes() for p in folder.glob("*.json")} == before


# R17c, R17a: a schema-2 result relabelled schema 1 passed as a schema-1 one
def test_a_result_relabelled_as_schema_1_is_refused(tmp_path):
    folder = _smoke_copy(tmp_path)
    path = folder / "d9946bcf27e9.json"
    data = json.loads(path.read_text())
    path.write_text(json.dumps({**data, "schema_version": 1}))
    with pytest.raises(ResultFileError, match="schema_version 1, but without the 'quality' field"):
        check(path)


# R16a: the owner message named results/<name>/ for a folder elsewhere, and only said to rename the matrix
def test_a_results_folder_of_another_matrix_is_named_where_it_is(tmp_path, capsys):
    results = tmp_path / "elsewhere"
    (results / "smoke").mkdir(parents=True)
    (results / "smoke" / ".matrix").write_text("other-matrix\n")
    refused(["aggregate", "smoke", "--results-dir", str(results), "--reports-dir", str(tmp_path / "reports")],
            capsys, f"{results / 'smoke'}/ holds the results of another matrix file (other-matrix), as its .matrix "
                     "file says; rename this file (its name becomes the results folder's), or give another results "
                     "folder")


# R32c, R32a: a result file nested 100,000 deep ended check and aggregate in a RecursionError
def test_a_result_nested_too_deep_is_one_line(tmp_path, capsys):
    folder = _smoke_copy(tmp_path)
    path = folder / "d9946bcf27e9.json"
    path.write_text(path.read_text()[:-2] + ', "deep": ' + "[" * 100_000 + "]" * 100_000 + "}\n")
    assert cli.main(["check", str(path)]) == 1
    assert "its JSON is nested too deep to read" in capsys.readouterr().err


# A105: the superseded results the harness keeps were refused by migrate as misnamed
def test_migrate_takes_the_superseded_results_as_they_are_named(tmp_path, capsys):
    kept = sorted((REPO / "results" / "superseded" / "seed-16gb").glob("*.json"))[:3]
    folder = tmp_path / "superseded" / "seed-16gb"
    folder.mkdir(parents=True)
    for path in kept:
        shutil.copy(path, folder)
    assert cli.main(["migrate", str(folder)]) == 0
    assert capsys.readouterr().out.count("already in the current schema") == len(kept) == 3


# Q04, Q05: a damaged kept adapter was evaluated into an error naming no file
def test_a_damaged_adapter_is_named_by_its_file(tmp_path):
    from harness.results.adapter_files import adapter_digest, adapter_problem

    folder = tmp_path / "adapter"
    folder.mkdir()
    header = json.dumps({"w": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}}).encode()
    (folder / "adapter_model.safetensors").write_bytes(len(header).to_bytes(8, "little") + header + b"\0" * 4)
    (folder / "adapter_config.json").write_text('{"r": 4}')
    sha = adapter_digest(folder)
    assert adapter_problem(folder, sha) is None
    (folder / "adapter_config.json").write_text('{"broken": ')
    assert adapter_problem(folder, sha).startswith(f"{folder / 'adapter_config.json'}: not valid JSON")
    (folder / "adapter_config.json").write_text('{"r": 4}')
    (folder / "adapter_model.safetensors").write_bytes(len(header).to_bytes(8, "little") + header + b"\0" * 2)
    assert "cut short" in adapter_problem(folder, sha)
    (folder / "adapter_model.safetensors").write_bytes(len(header).to_bytes(8, "little") + header + b"\1" * 4)
    assert "their sha256 differs" in adapter_problem(folder, sha)


def test_check_of_a_folder_without_results_says_so(tmp_path, capsys):
    assert cli.main(["check", str(tmp_path)]) == 1
    assert f"vramlab check: no result file in {tmp_path}" in capsys.readouterr().err


def _contradicting(tmp_path: Path, edit) -> Path:
    """A copy of a committed ok result (5 steps after 1 warm-up step, a 16GiB budget) with `edit` applied."""
    folder = tmp_path / "results" / "seed-16gb"
    copy_repository_files(REPO / "results" / "seed-16gb", folder)
    path = folder / "1f7282a39590.json"
    data = json.loads(path.read_text())
    edit(data, data["metrics"])
    path.write_text(json.dumps(data))
    return path


def _oom_with_every_step(data: dict, metrics: dict) -> None:
    data["status"], data["reason"] = "oom", "CUDA out of memory"


# result files whose values contradict each other, edited after vramlab wrote them: each refused as damaged, in one
# line naming the file and the fields, by check and (the first) by aggregate and report
CONTRADICTIONS = {
    # a speed with no measured step
    "speed without steps": (lambda d, m: m.update(measured_steps=0), "metrics.measured_steps is 0"),
    # status ok with a peak over the budget limit (t12-057: a claims result edited to a 40 GiB peak of a 15.57 GiB
    # budget made claims write the verdict holds with -24.43 GiB left)
    "ok over budget": (lambda d, m: m.update(peak_device_bytes=d["budget"]["limit_bytes"] + 1), "status is ok"),
    # a zero median step time with a speed
    "zero median step": (lambda d, m: m.update(median_step_seconds=0), "metrics.median_step_seconds is 0"),
    # measured_steps greater than steps
    "more measured than steps": (lambda d, m: m.update(measured_steps=9), "more than the 5 steps of config.steps"),
    # host unmapped memory greater than the host's total
    "unmapped over host total": (lambda d, m: m.update(peak_host_unmapped_bytes=d["environment"]["host_memory_bytes"]
                                                       + 1), "environment.host_memory_bytes"),
    # finished before started
    "finished before started": (lambda d, m: d.update(started_at=d["finished_at"], finished_at=d["started_at"]),
                                "is before started_at"),
    # a loss list longer than the steps measured
    "loss list length": (lambda d, m: m["loss"].append(1.0), "metrics.loss holds 7 steps, not the 6"),
    # a step-seconds list shorter than the steps measured
    "step seconds length": (lambda d, m: m["step_seconds"].pop(), "metrics.step_seconds holds 5 steps"),
    # a budget limit different from the cell's budget setting
    "budget limit not the setting": (lambda d, m: d["budget"].update(limit_bytes=2**35),
                                     "not the 17179869184 bytes of config.budget (16GiB)"),
    # train seconds less than the sum of the step seconds
    "train shorter than its steps": (lambda d, m: m.update(train_seconds=1.0), "less than the"),
    # oom with a speed (every step measured) but no peak over the budget
    "oom within budget": (_oom_with_every_step, "status is oom with every step measured"),
    # more allocated than the allocator reserved (t12-058: allocated twice the device peak passed check)
    "allocated over reserved": (lambda d, m: m.update(peak_allocated_bytes=m["peak_device_bytes"] * 2),
                                "metrics.peak_allocated_bytes is more than metrics.peak_reserved_bytes"),
}


@pytest.mark.parametrize("case", CONTRADICTIONS)
def test_a_result_whose_values_contradict_each_other_is_refused_as_damaged(tmp_path, capsys, case):
    edit, expected = CONTRADICTIONS[case]
    path = _contradicting(tmp_path, edit)
    assert cli.main(["check", str(path)]) == 1
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1, err
    assert str(path) in err and "damaged" in err and expected in err, err


# the same contradicting file stops aggregate in one line, and it writes nothing
def test_aggregate_refuses_a_result_that_contradicts_itself(tmp_path, capsys):
    path = _contradicting(tmp_path, CONTRADICTIONS["speed without steps"][0])
    refused(["aggregate", "seed-16gb", "--results-dir", str(tmp_path / "results"), "--reports-dir",
             str(tmp_path / "reports")], capsys, f"{path}: ")
    assert not (tmp_path / "reports").exists()


# ... and `report --all` names it, leaving the report it would have rebuilt as it was
def test_report_all_names_a_result_that_contradicts_itself_and_keeps_the_report(tmp_path, capsys):
    path = _contradicting(tmp_path, CONTRADICTIONS["speed without steps"][0])
    reports = tmp_path / "reports" / "seed-16gb"
    copy_repository_files(REPO / "reports" / "seed-16gb", reports)
    before = files_in(reports)
    code = cli.main(["report", "--all", "--results-dir", str(tmp_path / "results"), "--reports-dir",
                     str(tmp_path / "reports")])
    err = capsys.readouterr().err
    assert code != 0 and f"{path}: " in err and "damaged" in err and "not rebuilt" in err, (code, err)
    assert files_in(reports) == before


# t13-096, t13-101: a score no measurement can give (a share above 1, negative bits, a perplexity under 1) is a
# damaged evaluation: `check` names it, and `aggregate` refuses it before writing any table
@pytest.mark.parametrize(("metric", "value", "said"), [
    ("exact_match", 7.5, "exact_match 7.5 cannot be: its values are 0 to 1"),
    ("bits_per_byte", -0.5, "bits_per_byte -0.5 cannot be: its values are at least 0"),
    ("byte_perplexity", 0.5, "byte_perplexity 0.5 cannot be: its values are at least 1"),
], ids=["t13-096-share", "negative-bits", "perplexity-below-1"])
def test_an_impossible_score_is_a_damaged_evaluation(tmp_path, metric, value, said):
    folder = copy_repository_files(REPO / "results" / "quality-smollm2", tmp_path / "quality-smollm2")
    path = next(p for p in sorted(folder.glob("evaluations/*/*.json"))
                if any(s["metric"] == metric for s in json.loads(p.read_text())["scores"]))
    data = json.loads(path.read_text())
    next(s for s in data["scores"] if s["metric"] == metric)["value"] = value
    path.write_text(json.dumps(data))
    checked = vramlab("check", str(folder))
    assert checked.returncode != 0 and said in checked.stdout + checked.stderr, checked.stdout[-2000:]
    if metric == "exact_match":
        reports = tmp_path / "reports"
        done = vramlab("aggregate", "quality-smollm2", "--results-dir", str(tmp_path), "--reports-dir",
                           str(reports))
        assert done.returncode == 2 and said in done.stderr and not reports.exists(), done.stderr[-2000:]


# t14-026: an MLflow store that export had left in results/smoke/ (runs.db, runs-artifacts/) passed `vramlab check`
# without a word; a file no vramlab command writes there, that git neither tracks nor ignores, is now named and fails
# it, while the files vramlab writes there (a new result, a log) and the benchmark scripts' own tables do not
def test_check_names_stray_files_among_the_published_results(tmp_path, capsys, monkeypatch):
    from tests.checkout_copy import git

    (tmp_path / "ablations").mkdir()
    shutil.copytree(REPO / "results" / "smoke", tmp_path / "results" / "smoke")
    git("init", "-q", cwd=tmp_path)
    git("add", "-A", cwd=tmp_path)
    git("commit", "-q", "-m", "published", cwd=tmp_path)
    monkeypatch.chdir(tmp_path)
    smoke = Path("results/smoke")
    (smoke / "runs.db").write_bytes(b"SQLite format 3\0")
    (smoke / "runs-artifacts" / "6a1f" / "figures").mkdir(parents=True)
    for name in ("figures/overview.png", "report.md"):
        (smoke / "runs-artifacts" / "6a1f" / name).write_text("x")
    (smoke / "logs").mkdir()
    (smoke / "logs" / "4c55591d5771.log").write_text("a log\n")
    (smoke / "damaged").mkdir()  # a result set aside, as a run does
    shutil.copy(smoke / "4c55591d5771.json", smoke / "damaged")
    (tmp_path / "results" / "benchmarks").mkdir()
    (tmp_path / "results" / "benchmarks" / "walls.tsv").write_text("variant\n")
    for given in ("results/smoke", "results"):
        assert cli.main(["check", given]) == 1
        err = capsys.readouterr().err.splitlines()
        assert [line.split(":")[1] for line in err] == [" results/smoke/runs-artifacts/ (2 files)",
                                                         " results/smoke/runs.db"], err
        assert "vramlab writes no such file among published results, and git neither tracks nor ignores it" in err[0]
    shutil.rmtree(smoke / "runs-artifacts")
    (smoke / "runs.db").unlink()
    assert cli.main(["check", "results/smoke"]) == 0


def _evaluation_copy(folder: Path, edit, with_cell: bool = True) -> Path:
    """A committed evaluation of quality-smollm2 (with its cell's result unless not `with_cell`), `edit` applied."""
    (folder / "evaluations" / "00ee07c5a5e0").mkdir(parents=True)
    if with_cell:
        shutil.copy(REPO / "results" / "quality-smollm2" / "00ee07c5a5e0.json", folder)
    path = folder / "evaluations" / "00ee07c5a5e0" / "text_de.json"
    data = json.loads((REPO / "results" / "quality-smollm2" / "evaluations" / "00ee07c5a5e0" / "text_de.json")
                      .read_text())
    edit(data)
    path.write_text(json.dumps(data))
    return path


def _bits_per_byte(scores: list[dict], edit: str) -> None:
    bits = next(s for s in scores if s["metric"] == "bits_per_byte")
    if edit == "text":
        bits["value"] = "2.03"
    elif edit == "no items":
        bits["n"] = 0
    elif edit == "twice":
        scores.append(dict(bits))
    else:
        bits["higher_is_better"] = True


# t14-030, t14-032, t14-034, t14-035: a score given as text, over no items, listed twice or turned the wrong way
# passed check (and so would have been aggregated and reported); the result model refuses each
@pytest.mark.parametrize(("edit", "said"), [
    ("text", 'scores.2.value: Input should be a valid number, not text "2.03"'),
    ("no items", "scores.2: Value error, bits_per_byte 2.03919 is a score over no items (n 0)"),
    ("twice", "scores: the metric bits_per_byte is listed 2 times"),
    ("direction", "bits_per_byte: higher_is_better true, but lower is better for bits_per_byte"),
], ids=["t14-030", "t14-032", "t14-034", "t14-035"])
def test_a_score_the_result_model_cannot_hold_is_a_damaged_evaluation(tmp_path, edit, said):
    folder = tmp_path / "quality-smollm2"
    path = _evaluation_copy(folder, lambda data: _bits_per_byte(data["scores"], edit))
    with pytest.raises(ResultFileError, match=re.escape(said)):
        store.read_evaluation(path)
    checked = vramlab("check", str(folder))
    assert checked.returncode == 1 and said in checked.stderr and "1 of 2 result files valid" in checked.stdout, \
        checked.stderr[-2000:]


# t15-044: an evaluation that finished a year before it started passed check; refused as a cell result is
def test_an_evaluation_finished_before_it_started_is_damaged(tmp_path, capsys):
    folder = tmp_path / "quality-smollm2"
    path = _evaluation_copy(folder, lambda data: data.update(finished_at="2025-11-30T12:01:34+00:00"))
    assert cli.main(["check", str(folder)]) == 1
    captured = capsys.readouterr()
    assert captured.err.count("\n") == 1 and f"{path}: " in captured.err, captured.err
    assert "finished_at (2025-11-30T12:01:34+00:00) is before started_at (2026-11-30T12:01:34+00:00)" in captured.err
    assert "1 of 2 result files valid" in captured.out


# t15-043: an evaluation whose cell has no result file beside it passed check; it cannot be reported, so check
# names it and fails
def test_check_names_an_evaluation_without_its_cells_result(tmp_path, capsys):
    folder = tmp_path / "quality-smollm2"
    path = _evaluation_copy(folder, lambda data: None, with_cell=False)
    assert cli.main(["check", str(folder)]) == 1
    captured = capsys.readouterr()
    assert captured.err.count("\n") == 1, captured.err
    assert f"{path}: an evaluation of cell 00ee07c5a5e0, which has no result {folder / '00ee07c5a5e0.json'}" \
        in captured.err
    assert "0 of 1 result files valid" in captured.out


# t15-046, t15-032: a committed result whose name says context=256 while its settings say 128 passed check and was
# aggregated without a word; both refuse it in one line naming the file, its name and the setting
def test_a_result_whose_name_contradicts_its_settings_is_refused(tmp_path, capsys):
    folder = _smoke_copy(tmp_path)
    path = folder / "4c55591d5771.json"
    data = json.loads(path.read_text())
    data["name"] = data["name"].replace("context=128", "context=256")
    path.write_text(json.dumps(data))
    said = (f"{path}: (top level): Value error, name 'adapter=rslora,checkpointing=off,context=256' contradicts "
            "config: the name says context=256, but the cell has context=128")
    assert cli.main(["check", str(path)]) == 1
    assert capsys.readouterr().err == f"vramlab check: {said}\n"
    refused(["aggregate", "smoke", "--results-dir", str(tmp_path / "results"), "--reports-dir",
             str(tmp_path / "reports")], capsys, said)
    assert not (tmp_path / "reports").exists()


# A result with a field no run writes passed check: started_at a word (t16-037) or a time without its zone beside a
# finished_at with one (t18-067), both times in 2099 (t20-044), an ok result with no loss recorded for its steps
# (t16-039), a name with a NUL appended (t17-044), losses made negative (t17-045); each is refused in one line naming
# the file and the field
@pytest.mark.parametrize(("edit", "said"), [
    pytest.param(lambda data: data.update(started_at="yesterday"),
                 "started_at: Value error, 'yesterday' is not a time stamp; vramlab writes one as ISO 8601",
                 id="t16-037"),
    pytest.param(lambda data: data.update(started_at="2026-11-29T13:12:05"),
                 "started_at: Value error, '2026-11-29T13:12:05' has no time zone; vramlab writes every time stamp "
                 "with its zone", id="t18-067"),
    pytest.param(lambda data: data.update(started_at="2099" + data["started_at"][4:],
                                          finished_at="2099" + data["finished_at"][4:]),
                 "damaged, its values contradict each other: finished_at (2099-", id="t20-044"),
    pytest.param(lambda data: data["metrics"].update(loss=[]),
                 "damaged, its values contradict each other: metrics.loss holds no steps, not the 4 of "
                 "config.warmup_steps (1) and metrics.measured_steps (3)", id="t16-039"),
    pytest.param(lambda data: data.update(name=data["name"] + "\0"),
                 "name: Value error, 'adapter=rslora,checkpointing=off,context=128\\x00' holds the control character "
                 "U+0000, which no name vramlab writes has", id="t17-044"),
    pytest.param(lambda data: data["metrics"].update(loss=[-abs(x) for x in data["metrics"]["loss"]]),
                 "metrics.loss: Value error, -3.32866 at step 1 cannot be: a training loss (a cross-entropy) is never "
                 "negative", id="t17-045"),
])
def test_check_refuses_a_result_with_a_field_no_run_writes(tmp_path, capsys, edit, said):
    folder = _smoke_copy(tmp_path)
    path = folder / "4c55591d5771.json"
    data = json.loads(path.read_text())
    edit(data)
    path.write_text(json.dumps(data))
    assert cli.main(["check", str(folder)]) == 1
    captured = capsys.readouterr()
    assert captured.err.count("\n") == 1 and captured.err.startswith(f"vramlab check: {path}: "), captured.err
    assert said in captured.err and "7 of 8 result files valid" in captured.out


# t16-043: an evaluation whose score was renamed to 'bleu', a metric its task (text_de) never records, passed check
def test_an_evaluation_with_a_metric_its_task_does_not_record_is_damaged(tmp_path, capsys):
    folder = tmp_path / "quality-smollm2"
    path = _evaluation_copy(folder, lambda data: data["scores"][0].update(metric="bleu"))
    assert cli.main(["check", str(folder)]) == 1
    captured = capsys.readouterr()
    assert captured.err == (f"vramlab check: {path}: (top level): Value error, scores.0.metric: 'bleu' is not a metric "
                            "task text_de records; its metrics are bits_per_byte, byte_perplexity, word_perplexity\n")
    assert "1 of 2 result files valid" in captured.out


# the metrics check takes each task's from harness/tasks/catalog.py: they must be those its lm-eval YAML scores, or
# check would refuse an evaluation as written
def test_each_task_familys_metrics_are_those_its_yaml_lists():
    class Loader(yaml.SafeLoader):
        pass

    Loader.add_constructor("!function", lambda loader, node: loader.construct_scalar(node))
    for family, metrics in FAMILY_METRICS.items():
        listed = {m["metric"] for m in yaml.load((TASK_DIR / f"{family}.yaml").read_text(), Loader)["metric_list"]}
        assert listed == metrics - {"exact_match_in_context"}, family


# t17-047, t17-048: an evaluation whose score lost its value (n still 30, no note saying why), or whose limit is -5,
# passed check; each is refused in one line naming the file and the field
@pytest.mark.parametrize(("edit", "said"), [
    pytest.param(lambda data: data["scores"][0].update(value=None),
                 "scores.0: Value error, word_perplexity has no value over n 91 items and no note saying why it could "
                 "not be computed", id="t17-047"),
    pytest.param(lambda data: data.update(limit=-5), "limit: Input should be greater than or equal to 1",
                 id="t17-048"),
])
def test_check_refuses_an_evaluation_with_a_value_no_run_records(tmp_path, capsys, edit, said):
    folder = tmp_path / "quality-smollm2"
    path = _evaluation_copy(folder, edit)
    assert cli.main(["check", str(folder)]) == 1
    captured = capsys.readouterr()
    assert captured.err.count("\n") == 1 and captured.err.startswith(f"vramlab check: {path}: {said}"), captured.err
    assert "1 of 2 result files valid" in captured.out


# t17-049: `check results/smoke results/smoke` said '16 of 16 result files valid' for 8 files; a folder given twice
# (or a file and its folder) is read and counted once
def test_check_counts_each_file_once_whatever_the_paths_given(tmp_path, capsys):
    folder = _smoke_copy(tmp_path)
    assert cli.main(["check", str(folder), f"{folder}/", str(folder / "4c55591d5771.json")]) == 0
    captured = capsys.readouterr()
    assert captured.out == "8 of 8 result files valid\n" and captured.err == ""


# t17-042: a result renamed 4c55591d5771.JSON (upper case) passed check unnamed ('7 of 7 result files valid') while no
# reader finds it; check reads it and names it with the name it must have, once, among published results too
@pytest.mark.parametrize("published", [False, True], ids=["t17-042", "t17-042-published"])
def test_check_names_a_result_named_in_upper_case(tmp_path, capsys, monkeypatch, published):
    from tests.checkout_copy import git

    shutil.copytree(REPO / "results" / "smoke", tmp_path / "results" / "smoke")
    if published:
        (tmp_path / "ablations").mkdir()
        git("init", "-q", cwd=tmp_path)
        git("add", "-A", cwd=tmp_path)
        git("commit", "-q", "-m", "published", cwd=tmp_path)
    monkeypatch.chdir(tmp_path)
    path = Path("results/smoke/4c55591d5771.JSON")
    Path("results/smoke/4c55591d5771.json").rename(path)
    assert cli.main(["check", "results/smoke"]) == 1
    captured = capsys.readouterr()
    assert captured.err == (f"vramlab check: {path}: cell_id/task: the file of this result would be named "
                            "4c55591d5771.json\n")
    assert captured.out == "7 of 8 result files valid\n"


# t17-053: a schema-2 result relabelled 1 was refused with 'Its schema_version is 3 if it was written so', and so
# relabelled 3 it passed check without a word; the fields tell the schema a result was written in (1 'quality', 3
# 'fingerprint', 2 neither), so either relabelling is refused naming schema 2, as migrate refuses it
@pytest.mark.parametrize(("version", "clue"), [
    pytest.param(1, "without the 'quality' field every schema-1 result has", id="t17-053"),
    pytest.param(3, "without the 'fingerprint' field every schema-3 result has (null where none was taken)",
                 id="t17-053-advice-followed"),
])
def test_a_result_relabelled_with_another_schema_names_the_schema_it_was_written_in(tmp_path, capsys, version, clue):
    folder = _smoke_copy(tmp_path)
    path = folder / "4c55591d5771.json"
    data = json.loads(path.read_text())
    assert data["schema_version"] == 2
    path.write_text(json.dumps({**data, "schema_version": version}))
    said = (f"{path}: schema_version {version}, but {clue}: a schema-2 result relabelled after vramlab wrote it; set "
            "its schema_version back to 2, which this vramlab reads as it is (no fingerprint recorded)\n")
    assert cli.main(["check", str(path)]) == 1
    assert capsys.readouterr().err == f"vramlab check: {said}"
    assert cli.main(["migrate", str(path)]) == 1
    assert capsys.readouterr().err == f"vramlab migrate: not migrated: {said}"
    assert json.loads(path.read_text())["schema_version"] == version  # left as it was


# the schema a result's fields are of is read back from what each schema's writer wrote: a result written now (3,
# its fingerprint null) and one migrated from schema 1 pass as they are
def test_results_written_in_each_schema_pass_as_labelled(tmp_path):
    path = _smoke_copy(tmp_path) / "4c55591d5771.json"
    data = json.loads(path.read_text())
    written = store.parse(path, data)
    assert store.parse(path, written.model_dump(mode="json")).fingerprint is None
    old = {**data, "schema_version": 1, "quality": None}
    assert store.parse(path, old).cell_id == "4c55591d5771"


# t20-045: a file in place of a cell's evaluations/<id>/ folder passed check, and aggregate --partial then left that
# cell's scores out of quality.csv; check names it (exit 1), and aggregate refuses before writing a table
def test_a_file_in_place_of_a_cells_evaluations_folder_is_said(tmp_path, capsys):
    folder = tmp_path / "quality-smollm2"
    (folder / "evaluations").mkdir(parents=True)
    shutil.copy(REPO / "results" / "quality-smollm2" / "00ee07c5a5e0.json", folder)
    (folder / "evaluations" / "00ee07c5a5e0").write_text("x\n")
    assert cli.main(["check", str(folder)]) == 1
    captured = capsys.readouterr()
    assert captured.err == (f"vramlab check: {folder}/evaluations/00ee07c5a5e0: a file where the folder of cell "
                            "00ee07c5a5e0's evaluations belongs, so its evaluations read as none; move it away (the "
                            "evaluations are evaluations/<cell id>/<task>.json)\n"), captured.err
    refused(["aggregate", "quality-smollm2", "--results-dir", str(tmp_path), "--reports-dir",
             str(tmp_path / "reports"), "--partial"], capsys,
            f"{folder}/evaluations/00ee07c5a5e0: a file where the folder of cell 00ee07c5a5e0's evaluations belongs")
    assert not (tmp_path / "reports").exists()


# t21-035: migrate of an empty folder exited 0 and said nothing, where check of it says there is no result file and
# exits 1; migrate says the same
def test_migrate_of_a_folder_without_results_says_so(tmp_path, capsys):
    assert cli.main(["migrate", str(tmp_path)]) == 1
    assert capsys.readouterr().err == f"vramlab migrate: no result file in {tmp_path}\n"
