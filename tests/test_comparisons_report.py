"""comparisons.csv and the report's verdicts: the comparisons of a matrix (declared, or derived where it declares
none) decided by one rule on synthetic item outcomes of known structure, and every verdict word report.md states
read back against its row of comparisons.csv (in the committed quality-smollm2 report, and in a small synthetic
matrix run through aggregate and report)."""

from __future__ import annotations

import math
import re

import numpy as np
import pandas as pd
import pytest

from harness import results
from harness.report.comparison_text import METRIC_WORDS, MIRRORED, effect_word, method, read_comparisons
from harness.report.comparisons import COLUMNS, RESAMPLED_ITEMS, RESAMPLED_SEEDS, compare
from harness.report.derived_comparisons import derive
from harness.report.recall_by_age import MIN_BIN, age_bins, recall_by_age, untrained_recall
from harness.spec.comparisons import Comparison, ComparisonPlan
from tests.conftest import REPO, write_matrix

FIRST_COLUMNS = ["family", "question", "metric", "a", "b", "value_a", "value_b", "effect", "low", "high", "seeds",
                 "items", "verdict", "rule"]
WORDS = {v: k for k, v in METRIC_WORDS.items()}
HEAD = re.compile(r"^\s*- \*\*(?P<family>[^*]+)\*\*: (?P<question>.+) \(`(?P<a>[^`]+)` against "
                  r"(?:`(?P<b>[^`]+)`|(?P<untrained>the same model untrained))"
                  r"(?P<did>, each against its own untrained model \(difference-in-differences\))?\):(?P<rest>.*)$")
CLAUSE = re.compile(r"`(?P<task>[^`]+)` (?P<metric>recall|exact match|bits per byte)(?: \((?:own|fixed) "
                    r"condition\))?[ :].*?\*\*(?P<word>[^*]+)\*\*")


def stated_verdicts(report: str) -> list[tuple[tuple[str, ...], str]]:
    """Every verdict report.md states in its comparisons (summary and quality section): ((family, question, a, b,
    did, task, metric), word)."""
    found, pair = [], None
    for line in report.splitlines():
        head = HEAD.match(line)
        if head:
            pair = (head["family"], head["question"], head["a"], head["b"] or "untrained", str(bool(head["did"])))
            clauses = head["rest"]
        elif pair and re.match(r"\s+- `", line):  # a sub-bullet of the pair above
            clauses = line
        else:
            pair = None
            continue
        found += [((*pair, c["task"], WORDS[c["metric"]]), c["word"]) for c in CLAUSE.finditer(clauses)]
    return found


def table_verdicts(report: str) -> list[tuple[tuple[str, ...], str, str]]:
    """The words of the table of changes against the baseline: ((a, baseline, task, metric), effect, word)."""
    section = re.search(r"### Each change against `(?P<baseline>[^`]+)`: quality and memory\n\n(?P<table>(\|.*\n)+)",
                        report)
    if section is None:
        return []
    baseline = section["baseline"]
    rows = [[c.strip() for c in line.strip("|").split("|")] for line in section["table"].splitlines()]
    header, body = rows[0], rows[2:]
    found = []
    for row in body:
        # each task is two columns, "<task> <metric>: Δ" and "verdict" (a word only where it is a comparison)
        for i, name in enumerate(header[:-1]):
            if not name.endswith(": Δ") or row[i + 1] == "–":
                continue
            label = name.removesuffix(": Δ")
            metric = next(m for m in TABLE_METRICS if label.endswith(" " + m.replace("_", " ")))
            task = label.removesuffix(" " + metric.replace("_", " ")).replace(" ", "_")
            found.append(((row[0], baseline, task, metric), row[i], row[i + 1]))
    return found


TABLE_METRICS = ("bits_per_byte", "exact_match", "recall", "acc_norm", "acc", "word_perplexity")


def assert_report_states_the_table(report: str, comparisons: pd.DataFrame) -> None:
    """Each verdict word in report.md is its comparisons.csv row's; every row is stated; no other rule's words."""
    rows = comparisons.assign(did=comparisons["did"].astype(bool).astype(str)).set_index(
        ["family", "question", "a", "b", "did", "task", "metric"])
    stated = stated_verdicts(report)
    assert stated
    for key, word in stated:
        assert key in rows.index, key
        assert rows.loc[key, "verdict"] == word, (key, word)
    assert {key for key, _ in stated} == set(rows.index)  # every comparison is stated in the quality section
    by_pair = comparisons[~comparisons["did"].astype(bool)].set_index(["a", "b", "task", "metric"])
    for key, effect, word in table_verdicts(report):
        # the table's change is the cell against the baseline; a comparison held the other way round is turned
        cell, baseline, task, metric = key
        turned = key not in by_pair.index
        row = by_pair.loc[(baseline, cell, task, metric) if turned else key]
        assert (MIRRORED.get(row["verdict"], row["verdict"]) if turned else row["verdict"]) == word, key
        rounding = 0.5 * 10 ** -len(effect.split(".")[1]) + 1e-12  # the effect as printed, to its digits
        assert float(effect) == pytest.approx(-row["effect"] if turned else row["effect"], abs=rounding), key
    for retired in ("better", "worse", "equal"):
        assert not re.search(rf"\*\*{retired}|\({retired}\)", report), retired
    assert report.count("**") // 2 >= len(stated)


def test_the_committed_quality_smollm2_report_states_its_comparisons_word_for_word():
    folder = REPO / "reports" / "quality-smollm2"
    comparisons = read_comparisons(folder)
    assert comparisons is not None and list(comparisons.columns[:14]) == FIRST_COLUMNS
    report = (folder / "report.md").read_text()
    assert_report_states_the_table(report, comparisons)
    assert len(table_verdicts(report)) > 10
    # no item outcomes in its evaluation files: the seeds alone are resampled, and each sentence says so
    assert set(comparisons["resampled"]) == {RESAMPLED_SEEDS}
    assert "cell scores, items not resampled" in report


# --- a small matrix, in memory ------------------------------------------------------------------------------

SETTINGS = {"context": 8192, "truncation": "exp_decay", "truncation_decay": 0.5, "vocabulary": "native",
            "vocabulary_source": "training", "quantization": "none"}
GROUPS = {"exp": ({}, 5), "tail": ({"truncation": "tail"}, 5), "nf4": ({"quantization": "nf4"}, 5),
          "single": ({"context": 4096}, 1)}
DOCUMENTS, PER_DOCUMENT = 12, 10


def _recall(group: str, seed: int, model: str) -> np.ndarray:
    """Recall 0/1 per item: exp trained recalls 80%, every other arm 30%, each seed its own draw; nf4's outcomes are
    exp's own (an arm identical to another in every seed)."""
    source = "exp" if group == "nf4" else group
    rng = np.random.default_rng([list(GROUPS).index(source), seed, model == "trained"])
    rate = 0.8 if (source, model) == ("exp", "trained") else 0.3
    return (rng.random(DOCUMENTS * PER_DOCUMENT) < rate).astype(float)


def _frames() -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    cells, quality, items = [], [], []
    for group, (change, seeds) in GROUPS.items():
        for seed in range(seeds):
            name, cell_id = f"{group}/seed={seed}", f"{group}{seed}"
            cells.append({"cell_id": cell_id, "name": name, "seed": seed, "status": "ok", **SETTINGS, **change})
            outcome = {model: _recall(group, seed, model) for model in ("trained", "untrained")}
            for model, values in outcome.items():
                for i, value in enumerate(values):
                    items.append({"name": name, "seed": seed, "task": "workload_recall", "model": model,
                                  "item": f"d{i // PER_DOCUMENT}/{i}", "doc_id": f"d{i // PER_DOCUMENT}",
                                  "recall": value, "exact_match": value, "sections_back": 1 + i % 40,
                                  "in_context": True})
                    # bits per byte: the same text costs the same in every arm and seed (no difference at all)
                    items.append({"name": name, "seed": seed, "task": "workload_bpb", "model": model,
                                  "item": f"d{i // PER_DOCUMENT}/{i}", "doc_id": f"d{i // PER_DOCUMENT}",
                                  "loglikelihood": -50.0 - i, "bytes": 100.0})
            for task, metric, value in (("workload_recall", "recall", outcome["trained"].mean()),
                                        ("workload_recall", "answer_in_context", 1.0),
                                        ("workload_bpb", "bits_per_byte", 1.0)):
                quality.append({"cell_id": cell_id, "name": name, "task": task, "status": "ok", "metric": metric,
                                "value": value, "baseline": 0.3, "n": DOCUMENTS * PER_DOCUMENT,
                                "outside_share": None})
    return pd.DataFrame(cells), pd.DataFrame(quality), pd.DataFrame(items)


def _plan(*comparisons: Comparison) -> ComparisonPlan:
    return ComparisonPlan({"recall": 0.05, "exact_match": 0.05, "bits_per_byte": 0.01}, comparisons)


def test_each_comparison_is_decided_by_the_one_rule():
    cells, quality, items = _frames()
    plan = _plan(Comparison("truncation", "exp against tail", "exp", "tail", "recall", "workload_recall", "own"),
                 Comparison("truncation", "exp against tail", "exp", "tail", "bits_per_byte", "workload_bpb", "own"),
                 Comparison("truncation", "exp against tail", "exp", "tail", "recall", "workload_recall", "own",
                            did=True),
                 Comparison("training", "what training changes", "exp", "untrained", "recall", "workload_recall",
                            "own"),
                 Comparison("context", "one seed", "single", "exp", "recall", "workload_recall", "own"),
                 Comparison("quantization", "nf4 against none", "nf4", "exp", "recall", "workload_recall", "own"))
    table = compare(plan, cells, quality, items, declared=True, draws=1000)
    assert list(table.columns) == COLUMNS and COLUMNS[:14] == FIRST_COLUMNS
    table = table.set_index(["family", "metric", "did", "b"])
    recall = table.loc[("truncation", "recall", False, "tail")]
    assert recall["verdict"] == "higher" and 0.4 < recall["effect"] < 0.6 and recall["low"] > 0
    assert (recall["seeds"], recall["items"], recall["documents"]) == (5, 120, 12)
    assert recall["resampled"] == RESAMPLED_ITEMS and recall["level"] == pytest.approx(1 - 0.05 / 3)
    assert recall["p_holm"] <= 0.05 and "excludes 0" in recall["rule"]
    # the same texts at the same cost in both arms: no spread at all, inside the margin
    bpb = table.loc[("truncation", "bits_per_byte", False, "tail")]
    assert bpb["effect"] == 0 and bpb["low"] == bpb["high"] == 0 and bpb["verdict"] == "no difference"
    # untrained, both arms recall 30%: the difference in differences is the trained difference
    did = table.loc[("truncation", "recall", True, "tail")]
    assert did["verdict"] == "higher" and did["value_a"] > did["value_b"]
    assert did["effect"] == pytest.approx(did["value_a"] - did["value_b"])
    assert table.loc[("training", "recall", False, "untrained"), "verdict"] == "higher"
    one = table.loc[("context", "recall", False, "exp")]
    assert one["verdict"] == "no verdict" and one["seeds"] == 1 and pd.isna(one["p"])
    same = table.loc[("quantization", "recall", False, "exp")]
    assert same["effect"] == 0 and same["verdict"] == "no difference"


def test_a_change_against_the_baseline_takes_the_word_of_its_comparison_either_way_round():
    table = pd.DataFrame([
        {"a": "exp", "b": "tail", "task": "workload_bpb", "metric": "bits_per_byte", "did": False, "effect": -0.012,
         "verdict": "lower"},
        {"a": "exp", "b": "tail", "task": "workload_recall", "metric": "recall", "did": False, "effect": 0.02,
         "verdict": "inconclusive"},
        {"a": "exp", "b": "tail", "task": "workload_recall_own", "metric": "recall", "did": True, "effect": 0.04,
         "verdict": "higher"}])
    assert effect_word(table, "exp", "tail", "workload_bpb", "bits_per_byte") == "-0.0120 (lower)"
    assert effect_word(table, "tail", "exp", "workload_bpb", "bits_per_byte") == "+0.0120 (higher)"
    assert effect_word(table, "tail", "exp", "workload_recall", "recall") == "-0.020 (inconclusive)"
    table.loc[1, "effect"] = 0.0
    assert effect_word(table, "tail", "exp", "workload_recall", "recall") == "+0.000 (inconclusive)"
    # a difference-in-differences answers for no plain difference, either way round
    assert effect_word(table, "tail", "exp", "workload_recall_own", "recall") is None
    assert effect_word(table, "exp", "tail", "workload_recall_own", "recall") is None
    assert effect_word(table, "nf4", "exp", "workload_bpb", "bits_per_byte") is None


def test_no_comparison_gets_a_verdict_before_the_seeds_the_matrix_decided():
    cells, quality, items = _frames()
    comparison = Comparison("truncation", "exp against tail", "exp", "tail", "recall", "workload_recall", "own")
    decided = {"recall": 0.05, "exact_match": 0.05, "bits_per_byte": 0.01}
    waiting = compare(ComparisonPlan(decided, (comparison,), min_seeds=6), cells, quality, items, declared=True,
                      draws=200).iloc[0]
    assert (waiting["verdict"], waiting["seeds"], waiting["min_seeds"]) == ("no verdict", 5, 6)
    assert waiting["rule"] == "a verdict needs 6 paired seeds or more" and pd.isna(waiting["low"])
    assert "**no verdict** with fewer than 6 paired seeds" in method(pd.DataFrame([waiting]))
    given = compare(ComparisonPlan(decided, (comparison,), min_seeds=5), cells, quality, items, declared=True,
                    draws=200).iloc[0]
    assert given["verdict"] == "higher"


def test_without_item_outcomes_the_cell_scores_are_compared_over_seeds_alone():
    cells, quality, _ = _frames()
    plan = _plan(Comparison("truncation", "exp against tail", "exp", "tail", "recall", "workload_recall", "own"))
    row = compare(plan, cells, quality, None, declared=True).iloc[0]
    assert row["resampled"] == RESAMPLED_SEEDS and pd.isna(row["documents"]) and row["items"] == 120
    assert row["effect"] == pytest.approx(row["value_a"] - row["value_b"]) and row["verdict"] == "higher"


def test_derived_comparisons_pair_groups_that_differ_in_one_setting():
    cells, quality, items = _frames()
    plan = derive(cells, quality, items, "exp")
    pairs = {(c.family, c.a, c.b, c.task, c.metric) for c in plan.comparisons}
    assert ("training", "exp", "untrained", "workload_recall", "recall") in pairs
    # b is the group at the baseline's level; the data's share of answers kept is never compared
    assert ("truncation", "tail", "exp", "workload_bpb", "bits_per_byte") in pairs
    assert ("quantization", "nf4", "exp", "workload_recall", "recall") in pairs
    assert not any(c.metric == "answer_in_context" or "single" in (c.a, c.b) for c in plan.comparisons)
    assert ("truncation", "tail", "nf4") not in {(c.family, c.a, c.b) for c in plan.comparisons}  # two settings


def test_recall_by_age_is_binned_from_the_data_with_enough_items_in_each_bin():
    cells, _, items = _frames()
    recall_items = items[items["task"] == "workload_recall"].assign(group=lambda f: f["name"].str.split("/").str[0])
    bins = age_bins(recall_items)
    assert len(bins) == 4 and bins[0] == (1.0, 10.0) and bins[-1][1] == 40.0  # 120 items over ages 1-40: 30 a bin
    by_age = recall_by_age(cells, items)
    assert (by_age["items"] >= MIN_BIN).all()
    assert (by_age["untrained_low"] < by_age["untrained"]).all()
    assert (by_age["untrained"] < by_age["untrained_high"]).all()
    few = recall_items[recall_items["sections_back"] <= 5]  # 15 items a group: one bin of all
    assert age_bins(few) == [(1.0, 5.0)]
    bits = items[items["task"] == "workload_bpb"].dropna(axis=1)  # no recall task: nothing to bin, no table
    assert recall_by_age(cells, bits).empty and untrained_recall(cells, bits) == []


# --- the same matrix through aggregate and report ----------------------------------------------------------

MATRIX = """
fixed: {model: "arch:tiny-llama", budget: 16GiB, data: grant-reports, context: 1024, steps: 3, warmup_steps: 1}
seeds: [0, 1, 2, 3, 4]
design: list
cells:
  - {name: exp, truncation: exp_decay}
  - {name: tail, truncation: tail}
  - {name: nf4, truncation: exp_decay, quantization: nf4}
evaluation: {tasks: [workload_recall, workload_bpb]}
comparisons:
  margins: {recall: 0.05, bits_per_byte: 0.01}
  compare:
    - {family: training, question: does training change the model, a: exp, b: untrained, metric: recall,
       task: workload_recall}
    - {family: truncation, question: exp_decay against tail, a: exp, b: tail, metric: recall, task: workload_recall}
    - {family: truncation, question: exp_decay against tail, a: exp, b: tail, metric: recall, task: workload_recall,
       did: true}
    - {family: truncation, question: exp_decay against tail, a: exp, b: tail, metric: bits_per_byte,
       task: workload_bpb}
    - {family: quantization, question: nf4 against bf16, a: nf4, b: exp, metric: recall, task: workload_recall}
"""


@pytest.mark.slow
def test_a_small_matrix_reports_every_verdict_as_its_comparisons_csv_row(tmp_path):
    from harness.report.aggregate import aggregate
    from harness.report.build import build_report
    from harness.spec.matrix import expand
    from tests.test_report import write_result

    matrix = write_matrix(tmp_path, MATRIX)
    _, _, items = _frames()
    for cell in expand(str(matrix), check_model=False):
        group, seed = cell.name.split("/seed=")[0], cell.settings["seed"]
        write_result(tmp_path / "results", cell, "ok", {"peak_device_bytes": 3 * 2**30, "loss": [2.0, 1.5, 1.0],
                                                       "step_seconds": [1.0, 1.0, 1.0]})
        for task in ("workload_recall", "workload_bpb"):
            mine = items[(items["name"] == f"{group}/seed={seed}") & (items["task"] == task)].dropna(axis=1)
            trained, untrained = (mine[mine["model"] == model].drop(columns=["name", "seed", "task", "model"])
                                  .to_dict("records") for model in ("trained", "untrained"))
            metric = "recall" if task == "workload_recall" else "bits_per_byte"
            value = float(np.mean([i["recall"] for i in trained])) if metric == "recall" else 1.0
            score = [results.Score(metric=metric, value=value, n=len(trained), higher_is_better=metric == "recall")]
            evaluation = results.EvaluationResult(
                cell_id=cell.cell_id, name=cell.name, matrix=cell.matrix, task=task, status="ok", scores=score,
                baseline=score, items=trained, baseline_items=untrained)
            results.write_atomic(results.evaluation_path(tmp_path / "results", cell.matrix, cell.cell_id, task),
                                 evaluation)
    aggregate(str(matrix), tmp_path / "results", tmp_path / "reports")
    build_report(tmp_path / "reports" / "m")
    comparisons = read_comparisons(tmp_path / "reports" / "m")
    report = (tmp_path / "reports" / "m" / "report.md").read_text()
    assert_report_states_the_table(report, comparisons)
    assert len(comparisons) == 5 and set(comparisons["declared"]) == {True}
    # the summary states every declared comparison, each with its effect, interval, n and word
    summary = report.split("## Setup")[0]
    assert len(stated_verdicts(summary)) == 5
    assert "`workload_recall` recall (own condition) +0." in summary and "n = 5 × 120: **higher**" in summary
    assert "no spread: the same difference in every seed and item" in report  # never printed as [0, 0]
    assert "95% Wilson interval" in report and "### Recall by fact age" in report
    # exp against tail is declared; the table's tail against exp is the same comparison turned round
    turned = [(effect, word) for (cell, _, task, _), effect, word in table_verdicts(report)
              if (cell, task) == ("tail", "workload_recall")]
    assert turned and turned[0][1] == "lower" and float(turned[0][0]) < 0
    assert not math.isnan(comparisons.loc[comparisons["did"], "effect"].iloc[0])
