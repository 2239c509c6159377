"""Bad input, fourth round (issue 25, /work/trial-report-round4.md): each case the trial found unclear, accepted or
damaging gets one line and a non-zero exit, nothing written, and no committed report or result replaced by one
built from less. Tests that run vramlab in a child process are marked slow."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.test_bad_input_round2 import _files, _one_line, _vramlab  # the house's helpers

F = 'model: "arch:tiny-llama", data: zipf, device: cpu, warmup_steps: 0, steps: 1, context: 64'


def _matrix(tmp_path: Path, text: str, name: str = "m") -> str:
    path = tmp_path / f"{name}.yaml"
    path.write_text(text)
    return str(path)


def _refused(path: str, expected: str) -> None:
    from harness.spec.matrix import MatrixError, expand

    with pytest.raises(MatrixError) as err:
        expand(path)
    assert expected in str(err.value) and "\n" not in str(err.value), str(err.value)


# F12, F13: a control character in a matrix file is a YAML error like any other, not a traceback
@pytest.mark.parametrize("junk", ["\x00\n", 'description: "\x07bell"\n'])
def test_a_control_character_in_a_matrix_file_is_one_line(tmp_path, junk):
    _refused(_matrix(tmp_path, f"fixed: {{{F}}}\naxes: {{adapter: [lora]}}\n{junk}"), "unacceptable character")


# P08: YAML's merge key is read as YAML reads it; a key written twice is still refused
def test_a_merge_key_is_read_and_duplicates_beside_it_are_still_refused(tmp_path):
    from harness.spec.matrix import expand

    base = f"fixed: &b {{{F}, adapter: lora}}\ndesign: list\ncells:\n"
    cells = expand(_matrix(tmp_path, base + "  - {name: one, <<: *b}\n  - {name: two, <<: *b, adapter: rslora}\n"))
    assert [(c.name, c.settings["adapter"]) for c in cells] == [("one", "lora"), ("two", "rslora")]
    _refused(_matrix(tmp_path, base + "  - {name: one, <<: *b, name: two}\n", "dup"), "is written twice")


# M38 (and S11's plan): cells sharing one GPU are bounded, wherever the number is given
def test_cells_per_device_beyond_the_limit_are_refused(tmp_path, monkeypatch):
    from harness.core.environment_variables import MAX_DEVICE_SLOTS, device_slots
    from harness.core.errors import UsageError
    from harness.process.device_lease import slots_wanted

    _refused(_matrix(tmp_path, f"fixed: {{{F}}}\naxes: {{adapter: [lora]}}\nconcurrent_cells: 1000000000000\n"),
             f"more than the limit of {MAX_DEVICE_SLOTS}")
    with pytest.raises(ValueError, match="more than the limit"):
        slots_wanted(MAX_DEVICE_SLOTS + 1)
    monkeypatch.setenv("VRAMLAB_DEVICE_SLOTS", str(MAX_DEVICE_SLOTS + 1))
    with pytest.raises(UsageError, match=f"from 1 to {MAX_DEVICE_SLOTS}"):
        device_slots()
    assert slots_wanted(MAX_DEVICE_SLOTS) == MAX_DEVICE_SLOTS


# M55: an exclude entry that matches no cell is stale, said, not dropped without a word
def test_an_exclude_entry_that_matches_no_cell_is_refused(tmp_path):
    _refused(_matrix(tmp_path, f"fixed: {{{F}}}\naxes: {{adapter: [lora]}}\nexclude: [{{adapter: rslora}}]\n"),
             "exclude[0]: matches no cell")


# M69: the description is free text, not any YAML value
def test_a_description_that_is_no_text_is_refused(tmp_path):
    _refused(_matrix(tmp_path, f"description: [a, list]\nfixed: {{{F}}}\naxes: {{adapter: [lora]}}\n"),
             "description: expected text, got a list")


# N07: a name in the setting=level form names the cell's own level
def test_a_cell_name_that_states_another_setting_is_refused(tmp_path):
    from harness.spec.matrix import expand

    cells = "cells: [{name: \"adapter=rslora\", adapter: lora}, {name: y, adapter: rslora}]\n"
    _refused(_matrix(tmp_path, f"fixed: {{{F}}}\ndesign: list\n{cells}"),
             "the name says adapter=rslora, but the cell has adapter=lora")
    # the same form stating the cell's own levels (budget and rate in other spellings), or free text, stands
    fine = ('cells: [{name: "adapter=rslora,budget=16384MiB,learning_rate=2e-4", adapter: rslora, budget: 16GiB},'
            ' {name: "adapter=my-own,checkpointing=off", adapter: lora, checkpointing: "off"}]\n')
    assert len(expand(_matrix(tmp_path, f"fixed: {{{F}}}\ndesign: list\n{fine}", "fine"))) == 2


# M74, H04: a model folder whose config.json names no model_type is refused when the matrix is read
def test_a_model_folder_without_a_model_type_is_refused(tmp_path):
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "config.json").write_text("{}")
    fixed = F.replace('"arch:tiny-llama"', f'"{tmp_path / "empty"}"')
    _refused(_matrix(tmp_path, f"fixed: {{{fixed}}}\naxes: {{adapter: [lora]}}\n"), "config.json: no model_type")


# Q01: chat data needs a chat template, which the arch: presets' placeholder tokenizer has not
def test_chat_data_for_a_model_without_a_chat_template_is_refused(tmp_path):
    chat = tmp_path / "chat.jsonl"
    chat.write_text('{"messages": [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello"}]}\n')
    fixed = F.replace("data: zipf", f'data: "chat:{chat}"')
    _refused(_matrix(tmp_path, f"fixed: {{{fixed}}}\naxes: {{adapter: [lora]}}\n"), "has a placeholder tokenizer")


# P10: a folder given to chat: (or a file to text:) is named as what it is
@pytest.mark.parametrize("kind", ["chat", "text"])
def test_user_data_of_the_wrong_kind_says_what_the_path_is(tmp_path, kind):
    given = tmp_path if kind == "chat" else _matrix(tmp_path, "x: 1\n", "afile")
    fixed = F.replace("data: zipf", f'data: "{kind}:{given}"')
    _refused(_matrix(tmp_path, f"fixed: {{{fixed}}}\naxes: {{adapter: [lora]}}\n"),
             f"is a {'folder, not a file' if kind == 'chat' else 'file, not a folder'}; chat: takes a .jsonl file")


# D10: a result file beyond any result's size is not a result (check and aggregate read it through results.check)
def test_a_result_file_of_unbounded_size_is_refused_unread(tmp_path):
    from harness.results import ResultFileError, check
    from harness.results.store import MAX_RESULT_BYTES

    huge = tmp_path / "dca0c19d53c5.json"
    with huge.open("wb") as handle:
        handle.truncate(MAX_RESULT_BYTES + 1)  # sparse: no disk, and never read
    with pytest.raises(ResultFileError, match="more than the limit of 64 MiB for a result file"):
        check(huge)


def _model_folder(folder: Path) -> Path:
    folder.mkdir()
    (folder / "config.json").write_text('{"model_type": "llama", "max_position_embeddings": 2048}')
    (folder / "model.safetensors").write_bytes(b"weights")
    return folder


# H08, Q02: a result (an error, or a measurement) whose local model folder or user data changed since is redone
@pytest.mark.parametrize(("status", "change"), [("error", "model"), ("ok", "model"), ("ok", "data")])
def test_a_result_whose_input_changed_since_is_superseded(tmp_path, status, change):
    from harness.results import CellResult, write_atomic
    from harness.results.existing import recorded_input, review_cell
    from harness.spec.matrix import expand

    model = _model_folder(tmp_path / "model")
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.txt").write_text("# Title\n\nA document.\n\n# More\n\nIts second section.\n")
    fixed = f'model: "{model}", data: "text:{tmp_path / "docs"}", device: cpu, steps: 1, context: 64'
    cell = expand(_matrix(tmp_path, f"fixed: {{{fixed}}}\naxes: {{adapter: [lora]}}\n"))[0]
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


# R04: aggregate holds the results folder's owner (.matrix) as Snakemake and run-cell do; W01: a damaged owner file
# and W04: a file where the results folder goes are one line each
def test_aggregate_refuses_another_matrix_files_results_folder(tmp_path):
    from harness.report.aggregate import aggregate
    from harness.spec.matrix import MatrixError

    (tmp_path / "other").mkdir()
    path = _matrix(tmp_path / "other", f"fixed: {{{F}}}\naxes: {{adapter: [rslora, lora]}}\n", "base")
    (tmp_path / "results" / "base").mkdir(parents=True)
    (tmp_path / "results" / "base" / ".matrix").write_text("/elsewhere/base.yaml\n")
    with pytest.raises(MatrixError, match=r"holds the results of another matrix file \(/elsewhere/base.yaml\)"):
        aggregate(path, tmp_path / "results", tmp_path / "reports", partial=True)
    assert not (tmp_path / "reports").exists()


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


# G06: compare reads a reproduction only as the result of the cell its file is named by
def test_compare_refuses_another_cells_result_as_a_reproduction(tmp_path):
    import shutil

    from harness.report.reproduce import write_comparison
    from harness.results import ResultFileError

    results = tmp_path / "results"
    shutil.copytree(REPO / "results" / "smoke", results / "smoke")
    (results / "smoke" / "reproductions" / "vm").mkdir(parents=True)
    shutil.copy(results / "smoke" / "c5338522d7ed.json", results / "smoke" / "reproductions" / "vm" /
                "d9946bcf27e9.json")  # the result of the cell at context 256 as the one at 128
    with pytest.raises(ResultFileError, match=r"would be named c5338522d7ed\.json"):
        write_comparison("smoke", results, tmp_path / "reports", "vm")
    assert not (tmp_path / "reports").exists()


# R03: without --out the refusal names the matrix file to rename, not an --out never given; G04: a folder named
# after another matrix is refused outside results/ too; Y02: --memory-history on a CPU cell does nothing, so is refused
@pytest.mark.slow
@pytest.mark.parametrize(("given", "expected"), [
    ([], "holds the results of another matrix file (/elsewhere/base.yaml), as its .matrix file says; rename"),
    (["--out", "{tmp}/rd2/smoke/{cell}.json"], "its folder is named after the matrix 'smoke'"),
    (["--memory-history", "{tmp}/history.pickle"], "--memory-history records the CUDA allocator's history")])
def test_run_cell_says_what_is_wrong_with_where_it_would_write(tmp_path, given, expected):
    from harness.spec.matrix import expand

    path = _matrix(tmp_path, f"fixed: {{{F}}}\naxes: {{adapter: [lora]}}\n", "base")
    cell = expand(path)[0].cell_id
    (tmp_path / "results" / "base").mkdir(parents=True)
    (tmp_path / "results" / "base" / ".matrix").write_text("/elsewhere/base.yaml\n" if not given else
                                                           f"{Path(path).resolve()}\n")
    args = [a.format(tmp=tmp_path, cell=cell) for a in given]
    before = _files(tmp_path)
    _one_line(_vramlab("run-cell", "--matrix", path, "--cell", cell, *args, cwd=tmp_path), expected)
    assert _files(tmp_path) == before


def _copies(tmp_path: Path, *folders: str) -> Path:
    """Copies of the committed folders (reports/, results/) to point a command at; it runs from this worktree."""
    import shutil

    for folder in folders:
        shutil.copytree(REPO / folder, tmp_path / folder)
    return tmp_path


# C36, C45: claims from a results folder that is missing, or holds none of the claims' results, replaces nothing
@pytest.mark.parametrize("given", ["nonexistent", "results/smoke"])
def test_claims_from_a_folder_without_their_results_is_refused(tmp_path, given):
    import shutil

    from harness.core.errors import UsageError
    from harness.report.claims.build import write

    shutil.copytree(REPO / "reports" / "claims", tmp_path / "reports" / "claims")
    shutil.copytree(REPO / "results" / "smoke", tmp_path / "results" / "smoke")
    before = _files(tmp_path / "reports")
    with pytest.raises(UsageError, match="does not exist" if given == "nonexistent" else "holds no result"):
        write(tmp_path / given, tmp_path / "reports")
    assert _files(tmp_path / "reports") == before


# the class: no report is replaced by one built from fewer measured results, here claims from half the results
# and a partial aggregate of a folder that lost a result
def test_a_report_is_not_replaced_by_one_that_measures_less(tmp_path):
    import shutil

    from harness.core.errors import UsageError
    from harness.report.aggregate import aggregate
    from harness.report.claims.build import write

    shutil.copytree(REPO / "reports" / "claims", tmp_path / "reports" / "claims")
    for matrix in ("ceiling-16gb", "seed-16gb"):
        shutil.copytree(REPO / "results" / matrix, tmp_path / "results" / matrix)
    shutil.rmtree(tmp_path / "results" / "ceiling-16gb")  # the seed's claim is read from a ceiling search
    before = _files(tmp_path / "reports")
    with pytest.raises(UsageError, match=r"readings measured that .* holds no result for"):
        write(tmp_path / "results", tmp_path / "reports")
    assert _files(tmp_path / "reports") == before

    shutil.copytree(REPO / "reports" / "smoke", tmp_path / "reports" / "smoke")
    shutil.copytree(REPO / "results" / "smoke", tmp_path / "results" / "smoke")
    next((tmp_path / "results" / "smoke").glob("*.json")).unlink()
    before = _files(tmp_path / "reports")
    with pytest.raises(UsageError, match="1 cells measured that"):
        aggregate("smoke", tmp_path / "results", tmp_path / "reports", partial=True)
    assert _files(tmp_path / "reports") == before


# Z01: report --all rebuilds every report it can, says in one line which it cannot, and exits non-zero
@pytest.mark.slow
def test_report_all_is_not_stopped_by_one_report(tmp_path):
    copy = _copies(tmp_path, "reports", "results")
    (copy / "reports" / "lost").mkdir()
    (copy / "reports" / "lost" / "cells.csv").write_text("order,cell_id,name,status\n")
    done = _vramlab("report", "--all", "--results-dir", str(copy / "results"), "--reports-dir", str(copy / "reports"),
                    "--out", str(tmp_path / "out"))
    assert done.returncode == 2, done.stderr[-2000:]
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("vramlab: reports/lost/: no matrix file"), done.stderr[-2000:]
    rebuilt, committed = tmp_path / "out" / "smoke" / "report.md", REPO / "reports" / "smoke" / "report.md"
    assert rebuilt.read_text() == committed.read_text()
    assert (tmp_path / "out" / "claims" / "claims.md").is_file()


# C19: report NAME --out (or --results-dir) without --all is refused, not ignored over the committed folder
@pytest.mark.slow
def test_report_options_of_all_are_refused_without_it(tmp_path):
    copy = _copies(tmp_path, "reports")
    before = _files(copy / "reports")
    _one_line(_vramlab("report", "smoke", "--reports-dir", str(copy / "reports"), "--out", str(tmp_path / "rep")),
              "--out go with --all")
    assert _files(copy / "reports") == before and not (tmp_path / "rep").exists()


# E04, E05, E10: a switch is 0 or 1 and VRAMLAB_DEVICES names GPUs, as the README documents; any other value is
# one line naming the variable and what it takes, before any command (and any Snakemake plan) starts
@pytest.mark.parametrize(("name", "value", "expected"), [
    ("VRAMLAB_EMULATE_CARD", "maybe", "write VRAMLAB_EMULATE_CARD=0 to turn it off, or VRAMLAB_EMULATE_CARD=1"),
    ("VRAMLAB_GC_FREEZE", "banana", "write VRAMLAB_GC_FREEZE=0"),
    ("VRAMLAB_BYTECODE_CACHE", "2", "write VRAMLAB_BYTECODE_CACHE=0"),
    ("VRAMLAB_DEVICES", "abc", "'abc' is no GPU; give indices or UUIDs")])
def test_an_environment_switch_outside_its_documented_values_is_refused(monkeypatch, name, value, expected):
    from harness.core.environment_variables import check_all
    from harness.core.errors import UsageError

    monkeypatch.setenv(name, value)
    with pytest.raises(UsageError, match=re.escape(expected)):
        check_all()
    for fine in (["0", "1"] if name != "VRAMLAB_DEVICES" else ["0,1", "", "GPU-6a1c-22f0,MIG-9f3e/1/0"]):
        monkeypatch.setenv(name, fine)
        check_all()


@pytest.mark.slow
def test_snakemake_refuses_a_bad_environment_switch_in_one_line(tmp_path):
    done = subprocess.run([sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile"), "--directory",
                           str(tmp_path), "-n", "--cores", "1", "--config", "matrix=smoke"], capture_output=True,
                          text=True, env={**os.environ, "PYTHONPATH": str(REPO), "VRAMLAB_DEVICES": "abc"}, timeout=300)
    said = done.stdout + done.stderr  # Snakemake prints a WorkflowError on stdout
    assert done.returncode != 0 and "vramlab: VRAMLAB_DEVICES='abc': 'abc' is no GPU" in said, said[-3000:]
    assert "Traceback" not in said and not (tmp_path / "results").exists()
