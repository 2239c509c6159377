"""Bad input, third round (issue 25): a measured result is never replaced by a machine that can only skip its cell
and whatever is replaced is kept, an unusable cache or a kill leaves no error that sticks, options given twice and
bad --config values are one line, data errors name the path read, and no reader takes a result's temporary file for
a result."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO, TINY, copy_repository_files, write_matrix

# the helpers of the second round: one vramlab in a child process, its one line, a folder's files
from tests.test_bad_input_round2 import GOOD, _files, _one_line, _vramlab

SEED_STACK = "3232155d81f9"  # seed-16gb's `seed-stack`, measured on the H200


def _tiny_cell(tmp_path: Path) -> tuple[Path, str]:
    matrix = write_matrix(tmp_path, TINY.format(cells="  - {name: plain, context: 32}"))
    from harness.spec.matrix import expand

    return matrix, expand(str(matrix))[0].cell_id


# S62: --force on a machine without CUDA never replaces a GPU cell's measured result with a skip
@pytest.mark.slow
@pytest.mark.parametrize("out_given", [False, True])
def test_force_never_replaces_a_measured_result_with_a_skip(tmp_path, out_given):
    copy_repository_files(REPO / "results" / "seed-16gb", tmp_path / "results" / "seed-16gb")
    before = _files(tmp_path)
    out = ["--out", str(tmp_path / "results" / "seed-16gb" / f"{SEED_STACK}.json")] if out_given else []
    done = _vramlab("run-cell", "--force", "--matrix", "seed-16gb", "--cell", "seed-stack", "--results-dir",
                    str(tmp_path / "results"), *out, env={"CUDA_VISIBLE_DEVICES": "-1"})
    _one_line(done, "holds the ok result of this cell from NVIDIA H200; this machine has no CUDA GPU")
    assert _files(tmp_path) == before


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
    matrix, cell_id = _tiny_cell(tmp_path)
    out = tmp_path / "results" / "m" / f"{cell_id}.json"
    for force in ([], ["--force"]):
        done = _vramlab("run-cell", "--matrix", str(matrix), "--cell", cell_id, "--results-dir",
                        str(tmp_path / "results"), *force, cwd=tmp_path)
        assert done.returncode == 0, done.stderr[-3000:]
        if not force:
            first = out.read_bytes()
    kept = list((tmp_path / "results" / "superseded" / "m").iterdir())
    assert [p.read_bytes() for p in kept] == [first] and kept[0].name.startswith(f"{cell_id}.")
    assert kept[0].suffix == ".json" and out.read_bytes() != first


def test_a_superseded_result_keeps_its_place_below_the_matrix(tmp_path):
    from harness.results.store import superseded_path

    path = tmp_path / "results" / "smoke" / "reproductions" / "host" / "abc.json"
    found = superseded_path(path, "smoke")
    assert found.parent == tmp_path / "results" / "superseded" / "smoke" / "reproductions" / "host"
    assert found.name.startswith("abc.") and found.suffix == ".json"


# V13: an unusable VRAMLAB_CACHE is one line before the cell starts, and no result is written
@pytest.mark.slow
@pytest.mark.parametrize("cache", ["afile/cache", "/sys/vramlab-cache"])
def test_an_unusable_cache_is_refused_before_the_cell_starts(tmp_path, cache):
    (tmp_path / "afile").write_text("x")
    (tmp_path / "m.yaml").write_text(GOOD)
    from harness.spec.matrix import expand

    cell_id = expand(str(tmp_path / "m.yaml"))[0].cell_id
    done = _vramlab("run-cell", "--matrix", str(tmp_path / "m.yaml"), "--cell", cell_id, "--results-dir",
                    str(tmp_path / "results"), cwd=tmp_path, env={"VRAMLAB_CACHE": str(tmp_path / cache)})
    _one_line(done, "VRAMLAB_CACHE=")
    assert "cannot be" in done.stderr
    assert not (tmp_path / "results").exists()


# 3: an error that came from a kill or from the machine is measured again; the cell's own error stands
def _error(tmp_path: Path, reason: str, records: dict) -> tuple[Path, str]:
    from harness.results import Status, new_result, write_atomic
    from harness.spec.matrix import expand

    (tmp_path / "m.yaml").write_text(GOOD)
    cell = expand(str(tmp_path / "m.yaml"))[0]
    path = tmp_path / "results" / "m" / f"{cell.cell_id}.json"
    write_atomic(path, new_result(cell, Status.error, reason, records=records))
    return path, cell.cell_id


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
    matrix, cell_id = _tiny_cell(tmp_path)
    out = tmp_path / "results" / "m" / f"{cell_id}.json"
    args = ("run-cell", "--matrix", str(matrix), "--cell", cell_id, "--results-dir", str(tmp_path / "results"))
    done = _vramlab(*args, cwd=tmp_path, env={"VRAMLAB_TEST_FAULT": "sigkill:load"})
    assert done.returncode == 0 and json.loads(out.read_text())["records"]["error"] == {"cause": "signal"}
    killed = out.read_bytes()
    done = _vramlab(*args, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    assert json.loads(out.read_text())["status"] == "ok"
    assert [p.read_bytes() for p in (out.parent / "superseded").iterdir()] == [killed]


# 4: an option given twice is refused, for every subcommand and every option that keeps one value
def _twice_cases() -> list[tuple[str, str, list[str]]]:
    import argparse

    from harness.cli import parser

    sub = next(a for a in parser()._actions if isinstance(a, argparse._SubParsersAction))
    cases = []
    for command, p in sub.choices.items():
        for action in p._actions:
            if not action.option_strings or isinstance(action, argparse._HelpAction | argparse._AppendAction):
                continue
            value = [] if action.nargs == 0 else [str(action.choices[0]) if action.choices else "1"]
            cases.append((command, action.option_strings[-1], value))
    return cases


@pytest.mark.parametrize(("command", "option", "value"), _twice_cases())
def test_an_option_given_twice_is_refused(capsys, command, option, value):
    from harness.cli import main

    with pytest.raises(SystemExit) as ended:
        main([command, option, *value, option, *value])
    err = capsys.readouterr().err
    assert ended.value.code == 2 and len(err.strip().splitlines()) == 1, err
    assert f"argument {option}" in err and "given more than once" in err, err


def test_the_processes_run_cell_starts_refuse_an_option_given_twice(capsys):
    from harness.process import cell_command, spare
    from harness.run import worker

    for main, argv in ((cell_command.main, ["run-cell", "--out", "a", "--out", "b"]),
                       (worker.main, ["--matrix", "a", "--matrix", "b"]),
                       (spare.main, ["--launcher", "1", "--launcher", "2"])):
        with pytest.raises(SystemExit) as ended:
            main(argv)
        assert ended.value.code == 2 and "given more than once" in capsys.readouterr().err


@pytest.mark.slow
def test_run_cell_with_two_matrices_is_one_line(tmp_path):
    _one_line(_vramlab("run-cell", "--matrix", "smoke", "--matrix", "seed-16gb", "--cell", "x", cwd=tmp_path),
              "argument --matrix: given more than once (--matrix smoke, then --matrix seed-16gb)")
    assert list(tmp_path.iterdir()) == []


# 5: data errors name the path they read, resolved
def test_data_errors_name_the_resolved_path(tmp_path, monkeypatch):
    from harness.data.workload.userdata import DataError, read_chat_jsonl, read_text_folder
    from harness.spec.matrix import MatrixError, expand

    monkeypatch.chdir(tmp_path)
    (tmp_path / "bad.jsonl").write_text("not json\n")
    (tmp_path / "docs").mkdir()
    for read, given, expected in ((read_chat_jsonl, "bad.jsonl", f"{tmp_path / 'bad.jsonl'}:1: invalid JSON"),
                                  (read_text_folder, "docs", f"{tmp_path / 'docs'}: holds no .txt file")):
        with pytest.raises(DataError) as raised:
            read(given)
        assert str(raised.value).startswith(expected), raised.value
    for data, expected in (("chat:missing.jsonl", f"no such file {tmp_path / 'missing.jsonl'}"),
                           ("chat:docs", f"{tmp_path / 'docs'} is a folder, not a file"),
                           ("text:./bad.jsonl", f"{tmp_path / 'bad.jsonl'} is a file, not a folder"),
                           ("chat:bad.jsonl", f"{tmp_path / 'bad.jsonl'}:1: invalid JSON")):
        (tmp_path / "m.yaml").write_text(f"fixed: {{model: 'arch:tiny-llama', device: cpu, data: '{data}'}}\n"
                                         "axes: {adapter: [lora]}\n")
        with pytest.raises(MatrixError) as raised:
            expand(str(tmp_path / "m.yaml"))
        assert expected in str(raised.value), raised.value


# 6: the Snakefile's --config values, each one line and exit 2, nothing written
CONFIG_CASES = [
    (["matrix=smoke", "results_dir="], "--config results_dir= names no folder"),
    (["matrix=smoke", "reports_dir="], "--config reports_dir= names no folder"),
    (["matrix=smoke", "results_dir=afile"], "afile is a file, not a folder"),
    (["matrix=[a,b]"], "give one matrix, not a list"),
    (["matrix=smoke", "matrix=gpu-check"], "--config matrix=... given more than once"),
    (["matrix=missing.yaml"], "no matrix file"),
    (["matrix=smoke", "warm_start="], "write warm_start=true or warm_start=false"),
]


@pytest.mark.slow
@pytest.mark.parametrize(("config", "expected"), CONFIG_CASES)
def test_a_bad_config_value_is_one_line(tmp_path, config, expected):
    (tmp_path / "afile").write_text("x")
    done = subprocess.run([sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile"), "--directory",
                           str(tmp_path), "-n", "--cores", "1", "--config", *config],
                          env={**os.environ, "PYTHONPATH": str(REPO)}, capture_output=True, text=True, timeout=300)
    ours = [line for line in done.stderr.splitlines() if line.startswith("vramlab:")]
    assert done.returncode == 2 and len(ours) == 1 and expected in ours[0], done.stderr[-2000:]
    assert "Traceback" not in done.stderr and 'File "' not in done.stderr, done.stderr[-2000:]
    assert sorted(p.name for p in tmp_path.iterdir() if p.name != ".snakemake") == ["afile"]


def test_config_keys_given_twice_are_found_on_snakemakes_command_line():
    from harness.workflow import repeated_keys

    assert repeated_keys(["-n", "--config", "matrix=a", "reproduce=true", "matrix=b", "--cores", "1"]) == ["matrix"]
    assert repeated_keys(["--config=matrix=a", "-C", "matrix=b"]) == ["matrix"]
    assert repeated_keys(["--config", "matrix=a", "--cores", "1", "matrix=b"]) == []


# 7: the parser error Snakemake raises before the Snakefile is read is explained where --config is
def test_the_docs_explain_a_config_without_equals():
    page = (REPO / "docs" / "reproducing.md").read_text()
    section = " ".join(page.split("## Which matrix runs", 1)[1].split("\n## ", 1)[0].split())
    assert "Config entries have to be defined as name=value pairs" in section and "--config matrix" in section


# 8: no reader of a results folder takes a result's hidden temporary file (empty until its rename) for a result
def test_readers_of_results_folders_skip_a_result_being_written(tmp_path):
    from harness.cli import main
    from harness.estimate import calibration, outside
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
