"""The quality pipeline: evaluation plans, the vocabulary token map, scores with their spread, and the whole
train -> evaluate -> aggregate -> report path on real SmolLM2 weights on the CPU (quality-smoke)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pandas as pd
import pytest

from harness.evaluation.spread import bootstrap, scores_from
from harness.spec.matrix import MatrixError, expand_spec
from harness.tasks.plan import EvaluationPlan, EvaluationSpecError
from tests.conftest import REPO


@pytest.mark.parametrize(("section", "message"), [
    ("not a mapping", "expected a mapping"),
    ({"tasks": []}, "non-empty list"),
    ({"tasks": ["text_en", "text_en"]}, "listed twice"),
    ({"tasks": ["bad name!"]}, "is not a task name"),
    ({"tasks": ["text_en"], "limit": 0}, "limit: 0 is not a positive integer"),
    ({"tasks": ["text_en"], "documents": "8"}, "documents: '8' is not an integer"),
    ({"tasks": ["text_en"], "taks": 1}, "unknown key 'taks'"),
])
def test_evaluation_section_errors_are_clear(section, message):
    with pytest.raises(EvaluationSpecError, match=message):
        EvaluationPlan.parse(section)


def test_an_evaluation_typo_stops_the_matrix_with_its_place():
    with pytest.raises(MatrixError, match=r"m\.yaml: evaluation: tasks: expected"):
        expand_spec("m", {"axes": {"adapter": ["lora"]}, "evaluation": {"tasks": "text_en"}}, source="m.yaml")


def test_seeds_repeat_cells_that_do_not_set_their_own():
    cells = expand_spec("m", {"design": "list", "seeds": [0, 1, 2],
                              "cells": [{"name": "a"}, {"name": "check", "seed": 0, "adapter": "rslora"}]})
    assert [c.name for c in cells] == ["a/seed=0", "a/seed=1", "a/seed=2", "check"]
    assert [c.settings["seed"] for c in cells] == [0, 1, 2, 0]
    with pytest.raises(MatrixError, match="seeds: `seed` is also fixed"):
        expand_spec("m", {"design": "list", "seeds": [0, 1], "fixed": {"seed": 3}, "cells": [{"name": "a"}]})


def _byte_level_tokenizer():
    """A small byte-level BPE (as GPT-2, Llama 3, Qwen and SmolLM2 use), trained in a second."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    core = Tokenizer(models.BPE())
    core.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    core.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=600, special_tokens=["<eos>"],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    text = ["the quick brown fox jumps over the lazy dog " * 20, "der schnelle braune Fuchs springt " * 20]
    core.train_from_iterator(text, trainer)
    return PreTrainedTokenizerFast(tokenizer_object=core, eos_token="<eos>")


def test_a_sliced_away_token_is_spelled_with_its_bytes_and_decodes_back():
    from harness.stack.token_map import TokenMap, byte_level_symbols

    tok = _byte_level_tokenizer()
    text = "the quick brown Fuchs"
    ids = tok(text)["input_ids"]
    byte_ids = {tok.get_vocab()[s] for s in byte_level_symbols()}
    dropped = max(ids)  # a merged token of this text, not a byte
    assert dropped not in byte_ids
    kept = sorted((set(range(len(tok))) - {dropped}) | byte_ids)
    token_map = TokenMap.build(tok, kept, len(tok))
    new_ids, outside = token_map.encode(ids)
    assert outside == ids.count(dropped) and len(new_ids) > len(ids)
    assert tok.decode(token_map.decode_ids(new_ids)) == text
    assert all(0 <= i < len(kept) for i in new_ids)
    restored = TokenMap.from_json(json.loads(json.dumps(token_map.to_json())), tok)
    assert restored.encode(ids) == (new_ids, outside)


def test_without_byte_tokens_a_sliced_away_token_becomes_the_fallback():
    from harness.stack.models.presets import PRESETS
    from harness.stack.models.sources import make_placeholder_tokenizer
    from harness.stack.token_map import TokenMap

    tok = make_placeholder_tokenizer(100, PRESETS["tiny-llama"])
    token_map = TokenMap.build(tok, [0, 1, 5, 99], 100)
    assert token_map.encode([5, 7, 0]) == ([2, token_map.new_id(tok.unk_token_id), 0], 1)


def test_bootstrap_spread_is_seeded_and_shrinks_with_more_documents():
    ratio = lambda ll, units: -ll / units  # noqa: E731
    few = [(-10.0, 5.0), (-30.0, 10.0), (-5.0, 5.0)]
    assert bootstrap(few, ratio) == bootstrap(few, ratio)
    assert bootstrap(few * 20, ratio) < bootstrap(few, ratio)


def test_scores_get_a_spread_where_lm_eval_reports_none():
    output = {"results": {"t": {"bits_per_byte,none": 1.5, "bits_per_byte_stderr,none": "N/A",
                                "exact_match,none": 0.5, "exact_match_stderr,none": 0.25}},
              "samples": {"t": [{"doc": {"in_context": True}, "bits_per_byte": [-10.0, 8], "exact_match": 1.0},
                                {"doc": {"in_context": False}, "bits_per_byte": [-12.0, 9], "exact_match": 0.0}]},
              "n-samples": {"t": {"effective": 2}}}
    scores = {s.metric: s for s in scores_from(output, "t")}
    assert scores["bits_per_byte"].stderr is not None and "bootstrap" in scores["bits_per_byte"].stderr_method
    assert scores["bits_per_byte"].higher_is_better is False
    assert scores["exact_match"].stderr == 0.25 and scores["exact_match"].n == 2
    assert scores["exact_match_in_context"].value == 1.0 and scores["exact_match_in_context"].n == 1


def test_random_weights_get_no_quality_number(tmp_path):
    from harness.evaluation.stage import evaluate_cell
    from harness.results import CellResult, read_evaluation, result_path, write_atomic
    from harness.spec.matrix import expand

    matrix = tmp_path / "m.yaml"
    matrix.write_text('fixed: {model: "arch:tiny-llama", device: cpu}\naxes: {adapter: [lora]}\n'
                      "evaluation: {tasks: [text_en, workload_bpb]}\n")
    cell = expand(str(matrix))[0]
    write_atomic(result_path(tmp_path / "results", "m", cell.cell_id), CellResult(
        cell_id=cell.cell_id, name=cell.name, matrix="m", status="ok", config=cell.settings,
        model={"source": "arch:tiny-llama", "random_weights": True}, metrics={"peak_device_bytes": 1}))
    evaluate_cell(str(matrix), cell.cell_id, tmp_path / "results")
    for task in ("text_en", "workload_bpb"):
        result = read_evaluation(tmp_path / "results" / "m" / "evaluations" / cell.cell_id / f"{task}.json")
        assert result.status.value == "not_applicable" and not result.scores
        assert "random weights" in result.reason


@pytest.mark.slow
def test_quality_smoke_trains_evaluates_and_reports_on_the_cpu(tmp_path, cache_dir):
    env = {**os.environ, "VRAMLAB_CACHE": str(cache_dir), "PYTHONPATH": str(REPO)}
    command = [sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile"), "--directory", str(tmp_path),
               "--cores", "2", "--config", f"matrix={REPO / 'ablations' / 'quality-smoke.yaml'}"]
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=1800)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    quality = pd.read_csv(tmp_path / "reports" / "quality-smoke" / "quality.csv", dtype={"cell_id": str})
    scored = quality[quality["status"] == "ok"]
    assert set(scored["task"]) == {"workload_bpb", "workload_recall_fixed", "text_en"}
    assert len(scored["cell_id"].unique()) == 2
    items = pd.read_csv(tmp_path / "reports" / "quality-smoke" / "items.csv", dtype={"cell_id": str})
    recall = items[items["task"] == "workload_recall_fixed"]
    # every item of the shared condition keeps its whole preceding text, its first line and both scores
    assert len(recall) and recall["in_context"].all() and "answer" in recall.columns
    assert set(recall["recall"].dropna()) <= {0.0, 1.0} and set(recall["exact_match"].dropna()) <= {0.0, 1.0}
    assert (recall["recall"] >= recall["exact_match"]).all()  # an exact answer also holds the answer
    assert scored["partial"].all() and scored["baseline"].notna().all() and scored["stderr"].notna().all()
    assert (scored["eval_device"] == "CPU").all()  # where each evaluation ran, from its file's environment
    skipped = quality[quality["status"] == "skipped"]
    assert len(skipped) == 2  # hellaswag, for both cells (a misspelled task is refused at validation)
    for _, row in skipped.iterrows():
        assert "the data of lm-eval task 'hellaswag' is not available offline" in row["reason"]
    report = (tmp_path / "reports" / "quality-smoke" / "report.md").read_text()
    assert "## Quality (lm-eval)" in report and "Policy 'exp_decay' (rho = 0.5)" in report
    check = subprocess.run([sys.executable, "-m", "harness", "check", str(tmp_path / "results")], env=env,
                           capture_output=True, text=True)
    assert check.returncode == 0, check.stderr
    # a second run has nothing to do
    again = subprocess.run([*command, "-n"], env=env, capture_output=True, text=True, timeout=300)
    assert "Nothing to be done" in again.stdout + again.stderr
