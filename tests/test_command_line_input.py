"""What every `vramlab` command does with arguments it cannot use: an option given twice, a path that
is no file or folder, output into the sources, an interrupt; one line and exit 2.

The cases come from the bad-input trials (tests/bad_input_trials/); a comment above a test names its case there."""

from __future__ import annotations

import importlib
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from harness import cli, matrix_commands
from harness.core.atomic_files import write_text_atomic
from harness.core.console import run_command
from harness.core.path_problems import explain_os_error, not_a_regular_file, unexpanded_home
from harness.process import spare
from tests.conftest import REPO, copy_repository_files
from tests.refusals import GOOD, full_disk, odd_files, one_line, refused, said_once, validate, vramlab


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


@pytest.mark.slow
def test_an_error_message_prints_a_bounded_value(tmp_path):
    code, err = validate(tmp_path, f"fixed: {{data: '{'z' * 100_000}'}}\naxes: {{adapter: [lora]}}")
    assert code == 2 and "\n" not in err and len(err) < 2000 and "zzz" in err


@pytest.mark.slow
def test_commands_given_what_they_cannot_use_say_so_in_one_line(tmp_path):
    matrix = tmp_path / "m.yaml"
    matrix.write_text(GOOD)
    one_line(vramlab("aggregate", str(matrix), cwd=tmp_path), "has no result file")
    assert not (tmp_path / "reports").exists()
    one_line(vramlab("report", "m", cwd=tmp_path), "reports/m/cells.csv does not exist; run `vramlab aggregate")
    one_line(vramlab("compare", str(matrix), cwd=tmp_path), "--results-dir results does not exist")
    assert vramlab("aggregate", str(matrix), "--partial", cwd=tmp_path).returncode == 0
    one_line(vramlab("report", "m", cwd=tmp_path), "no cell of m has a result yet")
    assert sorted(p.name for p in (tmp_path / "reports" / "m").iterdir()) == \
        ["cells.csv", "design.json", "environment.csv", "estimate.csv", "steps.csv"]  # nothing more written

    copy_repository_files(REPO / "results" / "smoke", tmp_path / "results" / "smoke")
    cell = sorted((tmp_path / "results" / "smoke").glob("*.json"))[0].stem
    one_line(vramlab("evaluate", "--matrix", "smoke", "--cell", cell, "--results-dir",
                     str(tmp_path / "results"), cwd=REPO), "has no `evaluation:` section")


@pytest.mark.slow
def test_paths_and_task_names_a_command_cannot_use_are_one_line(tmp_path):
    copy_repository_files(REPO / "results" / "smoke", tmp_path / "results" / "smoke")
    cell = sorted((tmp_path / "results" / "smoke").glob("*.json"))[0].stem
    before = sorted(p for p in tmp_path.rglob("*"))
    for task, expected in (("../../x", "'../../x' is not a task name"),
                           ("text_eng", "no installed lm-eval task is named 'text_eng'; did you mean 'text_en'?")):
        one_line(vramlab("evaluate", "--matrix", "smoke", "--cell", cell, "--task", task, "--results-dir",
                         str(tmp_path / "results"), cwd=REPO), expected)
    (tmp_path / "a-file").write_text("")
    one_line(vramlab("aggregate", "smoke", "--results-dir", str(tmp_path / "results"), "--reports-dir",
                     str(tmp_path / "a-file"), cwd=REPO), "a-file")
    assert sorted(p for p in tmp_path.rglob("*")) == sorted([*before, tmp_path / "a-file"])


# 12: Ctrl-C is one line and exit 130
@pytest.mark.slow
def test_an_interrupt_is_one_line_and_exit_130(monkeypatch, capsys):

    def interrupted(_):
        raise KeyboardInterrupt

    monkeypatch.setitem(matrix_commands.HANDLERS, "validate", interrupted)
    assert cli.main(["validate", "smoke"]) == 130
    assert capsys.readouterr().err.strip() == "vramlab: interrupted; nothing was left half-written"


# 23, 24, 27: arguments of compare, migrate, ceiling and report
@pytest.mark.slow
def test_command_arguments_are_checked(tmp_path):
    one_line(vramlab("compare", "smoke", "--machine", "..", "--results-dir", str(tmp_path)), "--machine '..'")
    one_line(vramlab("ceiling", "ceiling-16gb", "--jobs", "0", "--results-dir", str(tmp_path)), "--jobs 0")
    one_line(vramlab("report", str(REPO / "reports" / "smoke"), "--reports-dir", str(tmp_path)),
                     "is not a matrix name")
    listed = tmp_path / "list.json"
    listed.write_text("[1]")
    done = vramlab("migrate", str(listed))
    assert done.returncode == 1 and "not migrated" in done.stderr and listed.read_text() == "[1]"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["list.json"]


@pytest.mark.parametrize(("command", "option", "value"), _twice_cases())
def test_an_option_given_twice_is_refused(capsys, command, option, value):
    from harness.cli import main

    with pytest.raises(SystemExit) as ended:
        main([command, option, *value, option, *value])
    err = capsys.readouterr().err
    assert ended.value.code == 2 and len(err.strip().splitlines()) == 1, err
    assert f"argument {option}" in err and "given more than once" in err, err


def test_the_processes_run_cell_starts_refuse_an_option_given_twice(capsys):
    from harness.process import cell_command
    from harness.run import worker

    for main, argv in ((cell_command.main, ["run-cell", "--out", "a", "--out", "b"]),
                       (worker.main, ["--matrix", "a", "--matrix", "b"]),
                       (spare.main, ["--launcher", "1", "--launcher", "2"])):
        with pytest.raises(SystemExit) as ended:
            main(argv)
        assert ended.value.code == 2 and "given more than once" in capsys.readouterr().err


# the class: an OSError of standard output (a full disk under a redirection) names it too
def test_output_that_cannot_be_written_is_named(monkeypatch, capsys):
    class FullDisk:
        write = flush = staticmethod(full_disk)

    monkeypatch.setattr(sys, "stdout", FullDisk())
    assert run_command(lambda: print("a table") or 0) == 2
    assert "vramlab: standard output" in said_once(capsys)


# C40: a file given as --results-dir was told as every result missing under it
@pytest.mark.parametrize("command, option", [("aggregate", "--results-dir"), ("aggregate", "--reports-dir"),
                                             ("report", "--reports-dir"), ("run-cell", "--results-dir")])
def test_a_file_given_as_a_results_or_reports_folder_is_named(tmp_path, capsys, command, option):
    afile = tmp_path / "afile"
    afile.write_text("not a folder")
    argv = [command, "smoke"] if command != "run-cell" else [command, "--matrix", "smoke", "--cell", "d9946bcf27e9"]
    refused([*argv, option, str(afile / "below")], capsys, f"{option} {afile / 'below'}: {afile} is a file, not a "
                                                             "folder")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile"]


# t17-073: `export --out '~/tb'` (quoted, so the shell left the ~) wrote nine event files under a folder named ~ in
# the working folder, without a word; every path option that starts with a literal ~ (or ~user) is refused
@pytest.mark.parametrize("argv", [
    ["export", "smoke", "--to", "tensorboard", "--out", "~/tb"], ["aggregate", "smoke", "--results-dir", "~/r"],
    ["aggregate", "smoke", "--reports-dir", "~"], ["estimate", "smoke", "--chart", "~root/c.png"]],
    ids=["out", "results-dir", "reports-dir", "chart-of-a-user"])
def test_a_literal_tilde_in_a_path_option_is_refused(tmp_path, capsys, monkeypatch, argv):
    monkeypatch.chdir(tmp_path)
    first = argv[-1].split("/")[0]
    refused(argv, capsys, f"{argv[-2]} {argv[-1]}: the shell did not expand {first} (quoted, it stays a plain name), "
            f"so it would name a folder called {first} in the working folder; give the path unquoted, as $HOME/..., "
            "or in full")
    assert list(tmp_path.iterdir()) == []


def test_a_tilde_that_names_no_home_folder_is_left_as_a_name():
    assert unexpanded_home("./~/r") is None and unexpanded_home("r/~") is None
    assert unexpanded_home("~no-such-user-of-this-machine/r") is None  # a plain name: the shell leaves it too


# R02, C97, C99: output paths among the results, or over a report's own files
def test_outputs_never_go_among_results_or_over_a_reports_files(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "results").mkdir()
    (tmp_path / "reports" / "smoke").mkdir(parents=True)
    (tmp_path / "reports" / "smoke" / "overview.png").write_bytes(b"a committed chart")
    refused(["report", "--all", "--out", "results/x"], capsys, "--out results/x is inside the results folder")
    refused(["schema", "--out", "reports/smoke"], capsys, "--out reports/smoke is inside results or reports")
    refused(["estimate", "smoke", "--chart", "reports/smoke/overview.png"], capsys,
            "--chart reports/smoke/overview.png is inside results or reports")
    assert (tmp_path / "reports" / "smoke" / "overview.png").read_bytes() == b"a committed chart"
    assert sorted(p.name for p in (tmp_path / "results").iterdir()) == []


def test_what_a_path_is_when_it_is_no_regular_file(tmp_path):
    for path, kind in odd_files(tmp_path).values():
        assert not_a_regular_file(path) == kind
    (tmp_path / "file").write_text("x")
    assert not_a_regular_file(tmp_path / "file") is None and not_a_regular_file(tmp_path / "missing") is None


# H15, H19: an unwritable folder was said by the temporary file's name
def test_an_unwritable_folder_is_named_not_the_temporary_file():
    with pytest.raises(OSError) as failed:
        write_text_atomic(Path("/proc/cells.csv"), "x")
    said = explain_os_error(failed.value)
    assert said.startswith("/proc/: the folder cannot be written (") and ".tmp" not in said


# round 8: H10, H11, H16 (outputs into harness/ or a results folder), S25 (replace and reproduce at once), D33 (a
# key twice in a chat line), D19, D28, D29, D36 (text documents of one section, refused only once the model loaded)
@pytest.mark.parametrize(("argv", "said"), [
    (["estimate", "smoke", "--chart", "harness/x.png"], "the folder of vramlab's code"),
    (["estimate", "smoke", "--chart", "results/smoke/x.png"], "--chart results/smoke/x.png is inside results"),
    (["schema", "--out", "harness"], "the folder of vramlab's code; give a folder of its own (default: "
                                     "harness/results/schema)")])
def test_outputs_into_the_sources_or_the_results_are_refused(capsys, monkeypatch, argv, said):
    monkeypatch.chdir(REPO)
    refused(argv, capsys, said)
    assert not (REPO / "harness" / "x.png").exists() and not (REPO / "results" / "smoke" / "x.png").exists()


# a library's INFO lines on the console: torch's exit hook printing FakeTensor lines once the root logger said INFO;
# only the vramlab logger says INFO, the root stays at WARNING
def test_only_the_vramlab_logger_says_info_on_the_console():
    program = ("import logging; from harness.core.console import start_logging; start_logging(); "
               "logging.getLogger('torch._subclasses.fake_tensor').info('FakeTensor cache stats'); "
               "logging.getLogger('vramlab').info('cell starts'); logging.getLogger('torch').warning('a warning')")
    done = subprocess.run([sys.executable, "-c", program], cwd=REPO, capture_output=True, text=True, check=True)
    assert "FakeTensor" not in done.stderr
    assert "cell starts" in done.stderr and "a warning" in done.stderr


# t16-059: `cells smoke >&-` ended in a traceback (AttributeError from the missing sys.stdout); every command ends in
# one line before it does anything
def test_a_closed_standard_output_is_one_line():
    done = subprocess.run(f"exec {shlex.quote(sys.executable)} -m harness cells smoke >&-", shell=True, cwd=REPO,
                          stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": str(REPO)}, timeout=120)
    one_line(done, "vramlab: standard output is closed (as `>&-` leaves it); give the command one")


# t18-072: a matrix 4,200 characters deep (over PATH_MAX) was refused with the path cut at 1,000 characters, the
# reason cut off with the rest; a long message loses its middle, so the line still ends on what is wrong
def test_a_message_too_long_for_one_line_keeps_its_reason(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for _ in range(18):  # one level at a time: the whole path is too long for any single call
        os.mkdir("d" * 230)
        os.chdir("d" * 230)
    shutil.copy(REPO / "ablations" / "smoke.yaml", "m.yaml")
    deep = os.getcwd() + "/m.yaml"
    monkeypatch.chdir(REPO)
    err = refused(["validate", deep], capsys, "…")
    assert err.startswith(f"vramlab: {tmp_path}/") and err.rstrip().endswith("/m.yaml: File name too long"), err
    assert len(err.strip()) <= 1000 + len("vramlab: ")


# t16-077: run from a working folder deleted since, a command said only "No such file or directory"; every command
# says that the working folder is gone, and names it
@pytest.mark.parametrize("argv", [["validate", str(REPO / "ablations" / "smoke.yaml")], ["matrices"]],
                         ids=["t16-077", "matrices"])
def test_a_deleted_working_folder_is_named(tmp_path, argv):
    gone = tmp_path.resolve() / "gone"
    gone.mkdir()
    done = subprocess.run(["bash", "-c", 'cd "$1" && rmdir "$1" && shift && exec "$@"', "-", str(gone),
                           sys.executable, "-m", "harness", *argv], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(REPO)}, timeout=120)
    one_line(done, f"vramlab: the working folder {gone} no longer exists (deleted since the command started there); "
                   "cd to a folder that exists and run it again")


# a folder option that is a symlink loop ended in a RuntimeError traceback from pathlib; one that is a link to nowhere
@pytest.mark.parametrize("option", ["--results-dir", "--reports-dir"])
@pytest.mark.parametrize("link", ["loop", "nowhere"])
def test_a_folder_option_that_is_a_broken_link_says_so(tmp_path, capsys, option, link):
    given = tmp_path / "given"
    given.symlink_to(given if link == "loop" else tmp_path / "nowhere")
    said = (f"a symlink on the path {given} loops (leads back to itself), so there is no folder there" if link == "loop"
            else f"{given} is a link to {tmp_path}/nowhere, which does not exist")
    refused(["aggregate", "smoke", option, str(given)], capsys, f"vramlab: {option} {given}: {said}; give a folder")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["given"]


# t17-065 was `--machine` taking a name with a newline at its end (its pattern ended in `$`, which matches before a
# final newline); every other name pattern is held to the same end of text
@pytest.mark.parametrize(("pattern", "name"), [
    ("harness.spec.matrix:MATRIX_NAME", "smoke"), ("harness.spec.matrix:CELL_NAME", "adapter=lora"),
    ("harness.spec.comparisons:FAMILY_NAME", "truncation"), ("harness.tasks.plan:TASK_NAME", "text_en"),
    ("harness.stack.models.hub:COMMIT", "0" * 40), ("harness.stack.models.hub:HUB_NAME", "Qwen"),
])
def test_no_name_pattern_takes_a_trailing_newline(pattern, name):
    module, attribute = pattern.split(":")
    compiled = getattr(importlib.import_module(module), attribute)
    assert compiled.match(name) and not compiled.match(name + "\n")
