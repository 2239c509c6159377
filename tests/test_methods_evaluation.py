"""The methods file's evaluation, as the evaluation files record it: how many items each task scored, and whether
the evaluations were held to the cell's budget (a study whose evaluation runs under the 16 GiB cap says so with its
peaks; evaluations made before that say they were not)."""

from __future__ import annotations

import pandas as pd

from harness.report.methods import _evaluation, evaluation_budget

GIB = 2**30


def scores(budgets: list[float | None]) -> pd.DataFrame:
    rows = []
    for i, budget in enumerate(budgets):
        for metric in ("recall", "exact_match"):  # two rows of one evaluation: counted once
            rows.append({"cell_id": f"c{i}", "task": "workload_recall", "metric": metric,
                         "eval_budget_bytes": budget and budget * GIB,
                         "eval_peak_allocated_bytes": budget and (budget - 4) * GIB,
                         "eval_peak_device_bytes": budget and (budget - 1 + i * 0.5) * GIB})
    return pd.DataFrame(rows)


def test_evaluations_held_to_the_budget_say_so_with_their_highest_peaks():
    said = evaluation_budget(scores([16.0, 16.0]))
    assert said.startswith("; so was its evaluation")
    assert "highest allocated peak 12.00 GiB, device peak 15.50 GiB, budget 16.00 GiB" in said


def test_evaluations_that_record_no_budget_were_not_held_to_it():
    assert "was not held to it" in evaluation_budget(scores([None, None]))
    assert "was not held to it" in evaluation_budget(None)
    assert "was not held to it" in evaluation_budget(scores([16.0]).drop(columns=["eval_budget_bytes"]))


def test_a_mix_counts_the_evaluations_of_each_kind():
    said = evaluation_budget(scores([16.0, None, None]))
    assert "of its 3 evaluations" in said and "1 was held" in said
    assert "2, made before" in said and said.endswith("were not")


def test_each_task_is_said_with_the_items_it_scored_not_a_subsets_count():
    rows = [{"cell_id": cell, "task": "workload_recall", "status": "ok", "metric": metric, "n": n,
             "lm_eval_version": "0.4.13"}
            for cell, subset in (("a", 232), ("b", 228))
            for metric, n in (("recall", 360), ("exact_match", 360), ("exact_match_in_context", subset))]
    said = _evaluation(pd.DataFrame(rows))
    assert "workload_recall: 360 items" in said and "228" not in said
