"""Snakemake's own options and targets as vramlab's Snakefile meets them: each either does what was asked with a
word that removes the surprise, or is refused in one line with nothing changed. A result file's name of no cell,
--cleanup-metadata of a committed result, --config replace=1, --allowed-rules beside a rule it leaves out,
--cores 0, a file target of the default run (no reproduction told), and a listing piped into `head`."""

from __future__ import annotations

import subprocess
import sys

import pytest

from harness.workflow import cleanup_paths, only_prints, reproduction_targeted, rules_left_out
from tests.checkout_copy import copy_checkout, environment, last_line, snakemake, status

SMOKE = ("--config", "matrix=smoke")
COMMITTED = "results/smoke/d9946bcf27e9.json"


@pytest.fixture(scope="module")
def clone(tmp_path_factory):
    return copy_checkout(tmp_path_factory.mktemp("clone"))


def refused(clone, done: subprocess.CompletedProcess, said: str) -> None:
    assert done.returncode == 2 and said in last_line(done), done.stderr[-3000:]
    assert sum(line.startswith("vramlab:") for line in done.stderr.splitlines()) == 1, done.stderr[-3000:]
    assert status(clone) == ""


@pytest.mark.slow
def test_a_result_file_of_no_cell_is_refused_naming_the_matrix(clone):  # t10-085
    done = snakemake(clone, "-n", *SMOKE, "--", "results/smoke/000000000000.json")
    refused(clone, done, "vramlab: 'smoke' (")
    assert "has no cell 000000000000, so no job makes a file of that id" in last_line(done)
    assert "KeyError" not in done.stderr and "Traceback" not in done.stderr


@pytest.mark.slow
def test_cleanup_metadata_of_a_committed_result_says_there_is_none_in_one_line(clone):  # t10-081
    done = snakemake(clone, "--cleanup-metadata", COMMITTED, *SMOKE)
    refused(clone, done, f"--cleanup-metadata {COMMITTED}: Snakemake holds no record of making it")
    assert "WorkflowError" not in done.stderr


@pytest.mark.slow
def test_replace_given_as_1_is_quoted_as_given_and_read_as_true(clone):  # t10-092
    refused(clone, snakemake(clone, "-n", *SMOKE, "replace=1"), "--config replace=1 (read as true) acts only with -F")


@pytest.mark.slow
def test_a_rule_that_allowed_rules_leaves_out_is_refused(clone):  # t10-102
    done = snakemake(clone, "-n", "--allowed-rules", "cell", "-R", "aggregate", *SMOKE)
    refused(clone, done, "--allowed-rules cell leaves out the rule aggregate, which the run names")


@pytest.mark.slow
def test_cores_0_is_refused_since_no_job_would_start(clone):  # t10-103
    done = subprocess.run([sys.executable, "-m", "snakemake", "-n", "--cores", "0", *SMOKE], cwd=clone,
                          env=environment(clone), capture_output=True, text=True, timeout=600)
    refused(clone, done, "--cores 0 lets no job run, so Snakemake would wait without end")


@pytest.mark.slow
def test_a_file_target_of_the_default_run_is_not_told_as_a_reproduction(clone):  # t10-084
    done = snakemake(clone, "-n", "reports/smoke/report.md")
    assert done.returncode == 0 and "Nothing to be done" in done.stdout, done.stderr[-3000:]
    assert "matrix 'smoke'" in done.stderr and "reproducing the" not in done.stderr, done.stderr
    whole = snakemake(clone, "-n")  # the default target reproduces the published cells, and says so
    assert "vramlab: reproducing the 8 published cells of 'smoke'" in whole.stderr, whole.stderr[-3000:]


@pytest.mark.slow
def test_a_summary_piped_into_head_ends_without_a_traceback(clone):  # t10-100
    done = subprocess.run(f"{sys.executable} -m snakemake --cores 1 --summary --config matrix=smoke | head -2",
                          shell=True, cwd=clone, env=environment(clone), capture_output=True, text=True, timeout=600)
    assert done.stdout.startswith("output_file\t") and len(done.stdout.splitlines()) == 2, done.stdout
    assert "Traceback" not in done.stderr and "BrokenPipeError" not in done.stderr, done.stderr[-3000:]


def test_only_printing_runs_are_the_ones_whose_pipe_may_close_quietly():
    assert only_prints(["snakemake", "--summary"]) and only_prints(["snakemake", "-n", "--cores", "1"])
    assert not only_prints(["snakemake", "--cores", "1", "--config", "matrix=smoke"])


def test_cleanup_paths_are_the_words_after_the_option_up_to_the_next():
    assert cleanup_paths(["--cores", "1", "--cleanup-metadata", "a.json", "b.json", "--config", "matrix=x"]) == \
        ["a.json", "b.json"]
    assert cleanup_paths(["--cores", "1", "--config", "matrix=x"]) == []


def test_the_reproduction_is_targeted_by_default_all_and_its_own_rules_and_files():
    assert reproduction_targeted(set()) and reproduction_targeted({"all"}) and reproduction_targeted({"compare"})
    assert reproduction_targeted({"results/smoke/reproductions/vm/d9946bcf27e9.json"})
    assert not reproduction_targeted({"reports/smoke/report.md"}) and not reproduction_targeted({"aggregate"})


def test_rules_left_out_are_the_named_rules_not_allowed():
    assert rules_left_out({"cell"}, ["aggregate", "all", "cell"]) == ["aggregate", "all"]
    assert rules_left_out(set(), ["aggregate"]) == [] and rules_left_out({"cell"}, ["cell"]) == []
