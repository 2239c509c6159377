"""The methods file's evaluation, as the evaluation files record it: how many items each task scored, and whether
the evaluations were held to the cell's budget (a study whose evaluation runs under the 16 GiB cap says so with its
peaks; evaluations made before that say they were not), and where the evaluations ran."""

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


def ran_on(devices: list[str | None], status: str = "ok") -> pd.DataFrame:
    return pd.DataFrame([{"cell_id": f"c{i}", "task": task, "status": status, "metric": metric, "n": 96,
                          "lm_eval_version": "0.4.13", "eval_device": device}
                         for i, device in enumerate(devices) for task in ("workload_bpb", "workload_bpb_fixed")
                         for metric in ("bits_per_byte", "word_perplexity")])


def test_evaluations_on_one_gpu_name_it():
    said = _evaluation(ran_on(["NVIDIA H100 80GB HBM3", "NVIDIA H100 80GB HBM3"]))
    assert said.endswith(" The evaluations ran on one NVIDIA H100 80GB HBM3.")


def test_evaluations_on_two_gpus_count_the_task_files_of_each():
    said = _evaluation(ran_on(["NVIDIA H100 80GB HBM3", "NVIDIA H100 80GB HBM3", "NVIDIA H200"]))
    assert "ran on one NVIDIA H100 80GB HBM3 (4 task files), one NVIDIA H200 (2 task files)." in said


def test_evaluations_that_record_no_device_or_did_not_run_say_nothing_of_one():
    assert "ran on" not in _evaluation(ran_on([None, None]))
    assert "ran on" not in _evaluation(ran_on(["NVIDIA H200"]).drop(columns=["eval_device"]))
    skipped = pd.concat([ran_on(["NVIDIA H200"]), ran_on(["CPU"], status="skipped").assign(cell_id="s")])
    assert _evaluation(skipped).endswith(" The evaluations ran on one NVIDIA H200.")
    assert _evaluation(ran_on(["CPU"])).endswith(" The evaluations ran on the CPU.")
