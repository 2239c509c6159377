"""--machine names a folder of results (a reproduction's, the real-card check's): compare and card-check hold it to
one rule, and card-check --dry-run refuses it as the real run would, not after the measurements."""

from __future__ import annotations

import pytest

from tests.refusals import refused

RULE = "a machine is named by its folder under {folder}: letters, digits, '-' and '_', starting with a letter or digit"


@pytest.mark.parametrize(("argv", "folder"), [
    pytest.param(["card-check", "--dry-run", "--machine", "a b"], "results/card-check/reproductions/", id="t11-110"),
    pytest.param(["card-check", "--dry-run", "--machine", "../x"], "results/card-check/reproductions/", id="a-path"),
    pytest.param(["compare", "smoke", "--machine", "a b"], "results/<matrix>/reproductions/", id="compare"),
    # a regex ending in $ matches before a trailing newline: 'vm\n' passed, and was told as results/.../vm\n/ (t17-065)
    pytest.param(["compare", "smoke", "--machine", "vm\n"], "results/<matrix>/reproductions/",
                 id="a-trailing-newline")])
def test_a_machine_name_that_is_no_folder_name_is_refused(argv, folder, capsys):
    said = refused(argv, capsys, f"vramlab: --machine {argv[-1]!r}: " + RULE.format(folder=folder))
    assert said.count("\n") == 1


def test_card_check_dry_run_with_a_good_machine_name_says_its_plan(capsys):
    from harness import cli

    assert cli.main(["card-check", "--dry-run", "--machine", "rtx4080-box_1"]) == 0
    assert capsys.readouterr().out.startswith("The real-card check runs")
