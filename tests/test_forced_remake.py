"""Every way Snakemake can be told to remake a published result treats it alike: -F, -R naming the cell rule or a
result file (by any path), -f naming one, with --touch too, is refused with one line unless --config replace=true
says so, and the options that would delete or unprotect outputs (--all-temp, --omit-flags update or ancient) are
refused outright; whatever else makes Snakemake run a cell again, run-cell is given --force only under
replace=true, and keeps a result that stands. Each runs on a copy of the checkout and asks git what changed."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.checkout_copy import copy_checkout, last_line, snakemake, status, vramlab

pytestmark = pytest.mark.slow

CELL = "d9946bcf27e9"
RESULT = f"results/smoke/{CELL}.json"


@pytest.fixture(scope="module")
def clone(tmp_path_factory) -> Path:
    return copy_checkout(tmp_path_factory.mktemp("forced") / "clone")


@pytest.mark.parametrize("forced", [["-f", RESULT], ["-R", RESULT], ["--forcerun", f"./{RESULT}"], ["-f", RESULT, "-t"],
                                    ["--forcerun", "ABSOLUTE"], ["--force", f"./{RESULT}"]])
def test_a_published_result_named_for_a_remake_is_refused(clone, forced):
    forced = [str(clone / RESULT) if a == "ABSOLUTE" else a for a in forced]  # -f takes no value: the file is a target
    done = snakemake(clone, *forced, "--config", "matrix=smoke")
    assert done.returncode == 2, done.stderr[-3000:]
    said = last_line(done)
    assert "would measure its cell again and replace the result there" in said and "replace=true" in said, said
    assert status(clone) == ""


@pytest.mark.parametrize("forced", [["-F"], ["--forceall", "--touch"], ["-R", "cell"], ["-R", "evaluate"]])
def test_every_cell_forced_is_refused(clone, forced):
    done = snakemake(clone, *forced, "--config", "matrix=smoke")
    assert done.returncode == 2, done.stderr[-3000:]
    assert "-F (or -R cell) would measure the 8 cells of 'smoke' that have a result again" in last_line(done)
    assert status(clone) == ""


# t19-064: -R evaluate over a matrix with published evaluations was refused with the line of -F (or -R cell), which was
# not given, saying its cells would be measured again; it says what -R evaluate itself would replace
def test_every_evaluation_forced_is_refused_naming_the_evaluations(clone):
    done = snakemake(clone, "-n", "-R", "evaluate", "--config", "matrix=quality-smollm2")
    assert done.returncode == 2, done.stderr[-3000:]
    said = last_line(done)
    assert said.startswith("vramlab: -R evaluate would evaluate the 43 cells of 'quality-smollm2' that have a result "
                           "again and replace their evaluations (in results/quality-smollm2/evaluations/"), said
    assert status(clone) == ""


# t13-084: with --config reproduce=true, -R cell was refused with advice to give reproduce=true, which was given; the
# reproduction's own rule is named instead, and the advice, followed, plans only reproductions
@pytest.mark.parametrize(("forced", "again"), [(["-R", "cell"], "give -R reproduce instead"),
                                               (["-F"], "give -R reproduce instead"),
                                               (["-R", RESULT], f"/{CELL}.json instead")])
def test_a_remake_forced_with_reproduce_true_is_sent_to_the_reproduce_rule(clone, forced, again):
    done = snakemake(clone, "-n", *forced, "--config", "matrix=smoke", "reproduce=true")
    assert done.returncode == 2, done.stderr[-3000:]
    said = last_line(done)
    assert "by the rule reproduce, not cell: to measure that again" in said and again in said, said
    assert "give --config reproduce=true" not in said, said
    assert status(clone) == ""


def test_the_advice_to_force_the_reproduce_rule_plans_only_reproductions(clone):  # t13-084, followed
    done = snakemake(clone, "-n", "-R", "reproduce", "--config", "matrix=smoke", "reproduce=true")
    assert done.returncode == 0, done.stderr[-3000:]
    assert "rule reproduce:" in done.stdout and "rule cell:" not in done.stdout, done.stdout[-3000:]
    assert status(clone) == ""


@pytest.mark.parametrize(("option", "said"), [(["--all-temp"], "--all-temp would make every output temporary"),
                                              (["--omit-flags", "update"], "--omit-flags update: the workflow's"),
                                              (["--omit-flags", "ancient"], "--omit-flags ancient: the workflow's"),
                                              (["--delete-all-output"], "--delete-all-output would delete")])
def test_options_that_would_delete_or_unprotect_outputs_are_refused(clone, option, said):
    done = snakemake(clone, "-R", "aggregate", *option, "--config", "matrix=smoke")
    assert done.returncode == 2 and said in last_line(done), done.stderr[-3000:]
    assert status(clone) == ""


def test_replace_true_lets_a_named_result_be_measured_again(clone):
    done = snakemake(clone, "-n", "-p", "-f", RESULT, "--config", "matrix=smoke", "replace=true")
    assert done.returncode == 0, done.stderr[-3000:]
    # run-cell gets --force from replace=true alone, and names the results folder, not the file to write over
    assert f"run-cell --matrix smoke --cell {CELL} --results-dir results" in done.stdout and "--force" in done.stdout
    assert status(clone) == ""


def test_the_cell_jobs_command_keeps_a_result_that_stands(clone):
    """What the cell rule runs when something this workflow did not foresee makes Snakemake run a published cell
    again: the result is kept, and the job fails with one line (Snakemake then puts the update() output back)."""
    done = vramlab(clone, "run-cell", "--matrix", "smoke", "--cell", CELL, "--results-dir", "results", "--log",
                   f"results/smoke/logs/{CELL}.log")
    assert done.returncode == 2 and "already holds the ok result of this cell" in last_line(done), done.stderr
    assert status(clone) == ""
