"""The Snakemake workflow given what it cannot use: `--config` keys and values, folders, targets,
forced replacement of the published results; refused in one line before any job.

The cases come from the bad-input trials (tests/bad_input_trials/); a comment above a test names its case there."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from harness.core.errors import UsageError
from harness.report.reproduce import machine_label
from harness.workflow import check_config, check_writable
from tests import checkout_copy
from tests.conftest import REPO, copy_repository_files
from tests.refusals import base_matrix, snakemake, tiny_at


def _snakemake_dry(tmp_path: Path, *config: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run([sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile"), "--directory",
                           str(tmp_path), "-n", "--cores", "1", "--config", *config], env=env, capture_output=True,
                          text=True, timeout=300)


# 6: the Snakefile's --config values, each one line and exit 2, nothing written
CONFIG_CASES = [
    (["matrix=smoke", "results_dir="], "--config results_dir= names no folder"),
    (["matrix=smoke", "reports_dir="], "--config reports_dir= names no folder"),
    (["matrix=smoke", "results_dir=afile"], "afile is a file, not a folder"),
    (["matrix=[a,b]"], "give one matrix, not a list"),
    (["matrix=smoke", "matrix=gpu-check"], "--config matrix=... given more than once"),
    (["matrix=missing.yaml"], "no matrix file"),
    (["matrix=smoke", "warm_start="], "write warm_start=true or warm_start=false"),
    # results_dir=5: a number (YAML's reading), which stopped the Snakefile in a TypeError traceback from pathlib
    (["matrix=smoke", "results_dir=5"], "--config results_dir=5: YAML reads 5 as a number, not as a folder"),
    # t17-030: Snakemake hands ~ on as it is, and the cells were planned into a folder named ~ in the checkout
    (["matrix=smoke", "results_dir=~/res"], "--config results_dir=~/res: the shell did not expand ~ (quoted, it "
     "stays a plain name), so it would name a folder called ~ in the working folder; give the path unquoted"),
    (["matrix=smoke", "reports_dir=~"], "--config reports_dir=~: the shell did not expand ~"),
]


@pytest.mark.slow
def test_a_gpu_matrix_on_a_cpu_machine_says_what_will_happen(tmp_path, cache_dir):
    env = {**os.environ, "VRAMLAB_CACHE": str(cache_dir), "PYTHONPATH": str(REPO), "CUDA_VISIBLE_DEVICES": "-1"}
    done = subprocess.run([sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile"), "--directory",
                           str(tmp_path), "-n", "--config", "matrix=seed-16gb"], env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "18 of 18 cells need a CUDA GPU and this machine has none: the 18 without a result" in done.stderr


@pytest.mark.slow
def test_an_empty_matrix_in_config_is_an_error_not_the_default(tmp_path):
    done = _snakemake_dry(tmp_path, "matrix=")
    said = done.stdout + done.stderr  # Snakemake prints a Snakefile's error on stdout
    assert done.returncode != 0 and "--config matrix= names no matrix" in said, said[-2000:]
    assert "smoke" not in said


@pytest.mark.slow
@pytest.mark.parametrize(("word", "reproduces"), [("on", True), ("yes", True), ("True", True), ("off", False),
                                                  ("maybe", None)])
def test_reproduce_is_yes_or_no_never_silently_no(tmp_path, word, reproduces):
    copy_repository_files(REPO / "results" / "smoke", tmp_path / "results" / "smoke")
    done = _snakemake_dry(tmp_path, "matrix=smoke", f"reproduce={word}")
    if reproduces is None:
        said = done.stdout + done.stderr  # Snakemake prints a Snakefile's error on stdout
        assert done.returncode != 0 and "--config reproduce='maybe': write reproduce=true or reproduce=false" \
            in said, said[-2000:]
        return
    assert done.returncode == 0, done.stderr[-2000:]
    assert ("reproducing the 8 published cells of 'smoke'" in done.stderr) is reproduces


# 29: the Snakefile refuses a --config key it does not read
@pytest.mark.slow
def test_a_misspelled_config_key_is_refused(tmp_path):
    done = subprocess.run([sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile"), "--directory",
                           str(tmp_path), "-n", "--cores", "1", "--config", "matrx=smoke"],
                          env={**os.environ, "PYTHONPATH": str(REPO)}, capture_output=True, text=True, timeout=300)
    said = done.stdout + done.stderr
    assert done.returncode != 0 and "--config matrx=...: no such key; did you mean 'matrix'?" in said, said[-2000:]


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


# S-target-bogus: a target that is no rule runs nothing, so nothing is said of a run
@pytest.mark.slow
def test_a_target_that_is_no_rule_gets_no_word_of_a_run(tmp_path):
    done = snakemake(tmp_path, "-n", "--cores", "1", "nosuch_target", "--config", f"matrix={tiny_at(tmp_path)}")
    said = done.stdout + done.stderr
    assert done.returncode != 0 and "No rule to produce nosuch_target" in said and "vramlab:" not in said, said
    done = snakemake(tmp_path, "-n", "--cores", "1", "--config", f"matrix={tiny_at(tmp_path)}")
    assert done.returncode == 0 and "vramlab: matrix 'ok'" in done.stderr, done.stderr[-3000:]


# S-reports-ro-real: a folder nothing can be written to is refused before any job (a dry run too)
@pytest.mark.parametrize("key", ["results_dir", "reports_dir"])
def test_a_folder_that_cannot_be_written_is_refused_before_any_job(tmp_path, monkeypatch, key):
    locked = tmp_path / "ro"
    locked.mkdir()
    access = os.access
    monkeypatch.setattr(os, "access", lambda path, mode: access(path, mode) and not str(path).startswith(str(locked)))
    with pytest.raises(UsageError, match=f"--config {key}={locked}/sub: {locked} cannot be written"):
        check_writable({key: str(locked / "sub")}, "ok")
    check_writable({key: str(tmp_path / "rw")}, "ok")


# t20-065: --config reports_dir=D whose D/smoke is a file was refused as "cannot be written (a read-only file system,
# or no permission)"; the file in the folder's place is named as what it is
@pytest.mark.parametrize("key", ["results_dir", "reports_dir"])
def test_a_file_where_the_matrix_folder_goes_is_named(tmp_path, key):
    (tmp_path / "smoke").write_text("x\n")
    with pytest.raises(UsageError, match=f"--config {key}={tmp_path}: {tmp_path}/smoke is a file, so the folder "
                                         f"{tmp_path}/smoke cannot be made there; move the file away"):
        check_writable({key: str(tmp_path)}, "smoke")


@pytest.mark.slow
def test_snakemake_refuses_a_read_only_reports_folder_in_one_line(tmp_path):
    locked = tmp_path / "ro"
    locked.mkdir()
    # the child's os.access answers for `locked` as on a read-only file system (sitecustomize runs at its start)
    (tmp_path / "site").mkdir()
    (tmp_path / "site" / "sitecustomize.py").write_text(
        f"import os\n_access = os.access\nos.access = lambda p, m, **k: _access(p, m, **k) and not "
        f"str(p).startswith({str(locked)!r})\n")
    done = snakemake(tmp_path, "-n", "--cores", "1", "--config", f"matrix={tiny_at(tmp_path)}",
                     f"reports_dir={locked}", env={"PYTHONPATH": f"{tmp_path / 'site'}:{REPO}"})
    said = done.stdout + done.stderr
    assert done.returncode == 2 and f"vramlab: --config reports_dir={locked}: {locked} cannot be written" in said, \
        said[-3000:]
    assert not (tmp_path / "results").exists()


# I-sigint-snakemake: Snakemake's own tracebacks at a second SIGINT are said where interruptions are
def test_the_docs_say_what_a_second_sigint_prints():
    text = " ".join((REPO / "docs" / "resuming.md").read_text().split())
    assert "a second SIGINT while Snakemake waits for its jobs to end" in text
    assert "makes Snakemake print tracebacks of its own executor" in text


def test_the_workflow_refuses_a_matrix_that_measures_nothing_before_any_cell_runs():
    text = (Path(__file__).resolve().parent.parent / "Snakefile").read_text()
    expanded = text.index("CELLS = expand_matrix(MATRIX)")
    assert text.index("check_measurable(MATRIX, CELLS)", expanded) < text.index("rule ", expanded)


@pytest.mark.slow
def test_snakemake_refuses_a_matrix_that_measures_nothing_in_one_line(tmp_path):
    import os
    import subprocess
    import sys

    repo = Path(__file__).resolve().parent.parent
    path = base_matrix(tmp_path, "quantization: nf4")
    done = subprocess.run([sys.executable, "-m", "snakemake", "-n", "--cores", "1", "--snakefile",
                           str(repo / "Snakefile"), "--directory", str(tmp_path), "--config", f"matrix={path}",
                           f"results_dir={tmp_path / 'results'}", f"reports_dir={tmp_path / 'reports'}"],
                          capture_output=True, text=True, timeout=300, env={**os.environ, "PYTHONPATH": str(repo)})
    assert done.returncode == 2, done.stderr
    line = next(line for line in done.stderr.splitlines() if line.startswith("vramlab: "))
    assert "every one of its 2 cells is skipped by a declared conflict" in line and "cuda-level-on-cpu" in line
    assert not (tmp_path / "results").exists()


# S23: one folder for results and reports
def test_the_workflow_refuses_one_folder_for_results_and_reports(tmp_path):
    same = str(tmp_path / "same")
    with pytest.raises(UsageError, match="results_dir and reports_dir are the same folder"):
        check_config({"matrix": "smoke", "results_dir": same, "reports_dir": same + "/"}, [])


# t15-028: results_dir and reports_dir swapped (or one of them in the other's published folder of the checkout)
@pytest.mark.parametrize(("config", "said"), [
    pytest.param({"results_dir": str(REPO / "reports"), "reports_dir": str(REPO / "results")},
                 f"results_dir={REPO / 'reports'}: {REPO / 'reports'}/ is the checkout's folder of published reports, "
                 "so the results would be written among them; give results and reports each a folder of their own",
                 id="t15-028"),
    pytest.param({"reports_dir": str(REPO / "results" / "mine")},
                 f"{REPO / 'results'}/ is the checkout's folder of published results, so the reports would be written "
                 "among them", id="reports-under-results"),
])
def test_results_and_reports_folders_swapped_are_refused(config, said):
    with pytest.raises(UsageError, match="give results and reports each a folder of their own") as refused:
        check_config({"matrix": "smoke", **config}, [])
    assert said in str(refused.value)


# t15-080: the real run of one cell with the folders swapped started the cell, which refused its log only then, in
# Snakemake's many lines, leaving reports/smoke/logs/<id>.log behind; refused before any job, nothing written
@pytest.mark.slow
def test_a_run_with_the_folders_swapped_writes_nothing(tmp_path):
    clone = checkout_copy.copy_checkout(tmp_path / "clone")
    done = checkout_copy.snakemake(clone, "reports/smoke/4c55591d5771.json", "--config", "matrix=smoke",
                                   "results_dir=reports", "reports_dir=results")
    assert done.returncode == 2, done.stderr[-3000:]
    assert done.stderr.splitlines()[-1] == (
        f"vramlab: --config results_dir=reports: {clone / 'reports'}/ is the checkout's folder of published reports, "
        "so the results would be written among them; give results and reports each a folder of their own (leave "
        "results_dir out for results/)")
    assert checkout_copy.status(clone) == ""


# S25, S31, S36, S38: a Snakemake results folder inside a matrix's results folder, or inside ablations/
@pytest.mark.parametrize(("key", "value", "said"), [
    ("results_dir", str(REPO / "results" / "smoke"), "a matrix's results folder (its .matrix file says whose)"),
    ("reports_dir", str(REPO / "results" / "smoke" / "tables"), "a matrix's results folder"),
    ("results_dir", str(REPO / "ablations"), "the folder of vramlab's matrix files")])
def test_a_workflow_folder_inside_one_that_is_taken_is_refused(key, value, said):
    (REPO / "results" / "smoke" / ".matrix").exists() or pytest.skip("the committed smoke folder has no owner file")
    with pytest.raises(Exception, match=r"give a folder of its own") as refused:
        check_config({key: value}, [])
    assert said in str(refused.value)


# S22: snakemake -F replaced every committed result of a matrix the machine can run
@pytest.mark.slow
def test_snakemake_forced_over_published_results_is_refused_unless_replace_says_so(tmp_path):
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(REPO), str(clone)], check=True)
    env = {**os.environ, "PYTHONPATH": str(clone)}
    for forced in (["-F"], ["-R", "cell"]):
        done = subprocess.run(["snakemake", "-n", "--cores", "1", *forced, "--config", "matrix=smoke"], cwd=clone,
                              env=env, capture_output=True, text=True, timeout=300)
        assert done.returncode == 2, done.stderr[-2000:]
        assert "vramlab: -F (or -R cell) would measure the 8 cells of 'smoke' that have a result again" in done.stderr
    done = subprocess.run(["snakemake", "-n", "--cores", "1", "-R", "aggregate", "report", "--config",
                           "matrix=smoke"], cwd=clone, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    done = subprocess.run(["snakemake", "-n", "--cores", "1", "-F", "--config", "matrix=smoke", "replace=true"],
                          cwd=clone, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and "cell" in done.stdout, done.stderr[-2000:]
    assert subprocess.run(["git", "status", "--porcelain"], cwd=clone, capture_output=True, text=True).stdout == ""


# S43: reproduce=true of a GPU matrix on a CPU machine "reproduced" every cell as skipped and said "differs"
@pytest.mark.slow
def test_reproducing_gpu_cells_without_a_gpu_is_refused(tmp_path):
    done = subprocess.run(["snakemake", "-n", "--cores", "1", "--config", "matrix=seed-16gb", "reproduce=true"],
                          cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)}, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 2 and "published cells need a CUDA GPU" in done.stderr, done.stderr[-2000:]


def test_replace_and_reproduce_at_once_are_refused():
    with pytest.raises(Exception, match="ask for opposite things"):
        check_config({"matrix": "smoke", "replace": "yes", "reproduce": "yes"}, [])


# round 8: S31 (--delete-all-output deleted the committed results), S40 (replace=true without -F), S41 (the note said
# "kept" where -F and replace replace them), P10, P11, P14 (a gguf: that is a folder, a FIFO, a device), A62 (ceiling
# searches of GPU cells on a CPU machine), A75 (a log into another matrix's results), A79 (--out with --results-dir)
@pytest.mark.slow
def test_snakemake_deletes_no_results_and_replace_acts_only_with_force(tmp_path):
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(REPO), str(clone)], check=True)
    env = {**os.environ, "PYTHONPATH": str(clone)}

    def snakemake(*argv: str) -> subprocess.CompletedProcess:
        return subprocess.run(["snakemake", "--cores", "1", *argv], cwd=clone, env=env, capture_output=True,
                              text=True, timeout=300)

    done = snakemake("--delete-all-output", "--config", "matrix=smoke")
    assert done.returncode == 2 and "--delete-all-output would delete the result files of 'smoke'" in done.stderr
    done = snakemake("-n", "--config", "matrix=smoke", "replace=true")
    assert done.returncode == 2 and "replace=true acts only with -F" in done.stderr
    done = snakemake("-n", "-F", "--config", "matrix=smoke", "replace=true")
    assert done.returncode == 0 and "kept as they are" not in done.stderr, done.stderr[-2000:]
    assert subprocess.run(["git", "status", "--porcelain"], cwd=clone, capture_output=True, text=True).stdout == ""


# a folder given as a number, on the command line (`--config results_dir=5`) or in a --configfile (`reports_dir: 5`)
@pytest.mark.parametrize(("argv", "said"), [
    (["--config", "results_dir=5"], "--config results_dir=5: YAML reads 5 as a number"),
    (["--configfile", "c.yaml"], "reports_dir: 2.5 in the --configfile: YAML reads 2.5 as a number")])
def test_a_folder_given_as_a_number_is_refused(argv, said):
    config = {"results_dir": 5} if "--config" in argv else {"reports_dir": 2.5}
    with pytest.raises(UsageError, match=said):
        check_config(config, ["snakemake", "-n", *argv])


# `snakemake -R` (or --forcerun) with no rule after it: Snakemake forces nothing and runs as without it
@pytest.mark.parametrize("argv", [["-R"], ["-R", "--config", "matrix=smoke"], ["--forcerun", "-n"]])
def test_forcerun_with_no_rule_is_refused(argv):
    with pytest.raises(UsageError, match="names no rule, so Snakemake would force nothing"):
        check_config({}, ["snakemake", *argv])
    check_config({}, ["snakemake", "-R", "aggregate", "report", "-n"])  # rules named: accepted


# the same through Snakemake itself (a --configfile with a number for a folder, -R with no rule): one line, exit 2
@pytest.mark.slow
@pytest.mark.parametrize("argv", [["--configfile", "c.yaml"], ["-R", "--config", "matrix=smoke"]])
def test_snakemake_refuses_a_numbered_folder_and_an_empty_forcerun_in_one_line(tmp_path, argv):
    (tmp_path / "c.yaml").write_text("matrix: smoke\nresults_dir: 5\n")
    argv = [str(tmp_path / a) if a == "c.yaml" else a for a in argv]
    done = subprocess.run([sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile"), "--directory",
                           str(tmp_path), "-n", "--cores", "1", *argv],
                          env={**os.environ, "PYTHONPATH": str(REPO)}, capture_output=True, text=True, timeout=300)
    ours = [line for line in done.stderr.splitlines() if line.startswith("vramlab:")]
    assert done.returncode == 2 and len(ours) == 1 and "Traceback" not in done.stderr, done.stderr[-2000:]
    assert ("results_dir: 5 in the --configfile" if "--configfile" in argv else "-R names no rule") in ours[0]


# `snakemake --touch` sets the outputs' times only: it says that no cell is measured and no report is made
@pytest.mark.slow
def test_touch_says_it_makes_no_report(tmp_path):
    copy_repository_files(REPO / "results" / "smoke", tmp_path / "results" / "smoke")
    copy_repository_files(REPO / "reports" / "smoke", tmp_path / "reports" / "smoke")
    done = snakemake(tmp_path, "--cores", "1", "--touch", "--config", "matrix=smoke")
    assert done.returncode == 0, done.stderr[-2000:]
    assert "vramlab: --touch marks the outputs as up to date without running any job: no cell is measured and no " \
           "report is made or rebuilt" in done.stderr, done.stderr[-2000:]


# t13-059 (the workflow's side): a reproductions/<machine> folder linked to the published results/smoke would have the
# reproduce rule write its measurements among them; refused before any job, naming the link
@pytest.mark.slow
def test_a_reproduction_into_a_link_to_the_published_results_is_refused(tmp_path):
    clone = checkout_copy.copy_checkout(tmp_path / "clone")
    (clone / "results" / "smoke" / "reproductions").mkdir()
    (clone / "results" / "smoke" / "reproductions" / machine_label()).symlink_to("../../smoke")
    done = checkout_copy.snakemake(clone, "-n", "--config", "matrix=smoke", "reproduce=true")
    assert done.returncode == 2, done.stderr[-3000:]
    assert f"results/smoke/reproductions/{machine_label()} is a link that resolves to" in done.stderr.splitlines()[-1]
    assert checkout_copy.status(clone) == ""  # (reproductions/ is ignored by git: the link itself is not listed)


# t14-036: results/smoke/reproductions a link to results/seed-16gb (another matrix's published folder) was taken: the
# reproduce rule would have written its measurements through it, among seed-16gb's results; refused before any job
@pytest.mark.slow
def test_a_reproduction_through_a_link_into_another_published_folder_is_refused(tmp_path):
    clone = checkout_copy.copy_checkout(tmp_path / "clone")
    (clone / "results" / "smoke" / "reproductions").symlink_to(clone / "results" / "seed-16gb")
    done = checkout_copy.snakemake(clone, "-n", "--config", "matrix=smoke", "reproduce=true")
    assert done.returncode == 2, done.stderr[-3000:]
    assert done.stderr.splitlines()[-1] == (
        f"vramlab: results/smoke/reproductions is a link that resolves to {clone / 'results' / 'seed-16gb'}, inside "
        "results/seed-16gb, among the published results of 'seed-16gb'; a machine's reproductions are written into "
        "a folder of their own, never through a link: remove the link (what it leads to stays as it is) and run again")
    # the link itself is listed (git's reproductions/ rule matches folders only): nothing else is there
    assert checkout_copy.status(clone) == "?? results/smoke/reproductions\n"


# t14-036: no link is taken for reproductions/ or reproductions/<machine>/, wherever it leads; a folder is
@pytest.mark.parametrize(("link", "to", "said"), [
    pytest.param("reproductions", "seed-16gb", ", inside ", id="t14-036"),
    pytest.param("reproductions/vm", "elsewhere", "; a machine's", id="machine-outside-results"),
    pytest.param(None, None, None, id="folder"),
])
def test_a_reproductions_folder_that_is_a_link_is_refused(tmp_path, link, to, said):
    from harness.results.reproduction_folders import reproduction_folder_problem

    results = tmp_path / "results"
    for folder in (results / "seed-16gb", results / "smoke", tmp_path / "elsewhere"):
        folder.mkdir(parents=True)
    if link != "reproductions":
        (results / "smoke" / "reproductions").mkdir()
    if link is None:
        (results / "smoke" / "reproductions" / "vm").mkdir()
    else:
        (results / "smoke" / link).symlink_to(results / to if to == "seed-16gb" else tmp_path / to)
    problem = reproduction_folder_problem(results, "smoke", "vm")
    assert problem is None if link is None else problem.startswith(f"{results / 'smoke' / link} is a link") \
        and said in problem, problem


# a --config folder that is a symlink loop ended in a RuntimeError traceback from pathlib's resolve
@pytest.mark.parametrize("key", ["results_dir", "reports_dir"])
def test_a_config_folder_that_is_a_symlink_loop_is_refused(tmp_path, key):
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    with pytest.raises(UsageError, match=f"--config {key}={tmp_path}/loop: a symlink on the path .* loops"):
        check_config({key: str(tmp_path / "loop")}, [])


# reports_dir whose <matrix>/ is a link to another matrix's published reports: -R aggregate would write over them
@pytest.mark.slow
def test_snakemake_refuses_a_reports_folder_linked_to_published_reports(tmp_path):
    clone = checkout_copy.copy_checkout(tmp_path / "clone")
    (tmp_path / "given").mkdir()
    (tmp_path / "given" / "smoke").symlink_to(clone / "reports" / "seed-16gb")
    done = checkout_copy.snakemake(clone, "-n", "-R", "aggregate", "--config", "matrix=smoke",
                                   f"reports_dir={tmp_path / 'given'}")
    assert done.returncode == 2, done.stderr[-3000:]
    assert done.stderr.splitlines()[-1] == (
        f"vramlab: {tmp_path / 'given' / 'smoke'} is a link to the published {clone / 'reports' / 'seed-16gb'}/, "
        "whose files the reports written there would replace; give a folder of its own")
    assert checkout_copy.status(clone) == ""
