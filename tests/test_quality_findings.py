"""Findings and the change-against-reference table, on a small fixture matrix with repeats."""

from __future__ import annotations

import pandas as pd
import pytest

from harness.report.quality_findings import effects, findings, summarize, verdict
from tests.conftest import REPO

GIB = 2**30
SETTINGS = {"context": 2048, "truncation": "exp_decay", "truncation_decay": 0.5, "adapter": "rslora", "lora_rank": 16,
            "quantization": "none", "vocabulary": "native", "vocabulary_source": "training", "checkpointing": "off"}
# group -> (what differs from the reference, workload bits per byte per seed, peak GiB)
GROUPS = {
    "baseline": ({}, [0.30, 0.31, 0.29], 3.0),
    "tail": ({"truncation": "tail"}, [0.305, 0.295, 0.30], 3.0),
    "lora": ({"adapter": "lora"}, [0.40, 0.41, 0.39], 3.0),
    "nf4": ({"quantization": "nf4"}, [0.50, 0.52, 0.51], 2.5),
}


def _fixture() -> tuple[pd.DataFrame, pd.DataFrame]:
    cells, quality = [], []
    for group, (change, values, peak) in GROUPS.items():
        for seed, value in enumerate(values):
            name, cell_id = f"{group}/seed={seed}", f"{group}{seed}"
            cells.append({"cell_id": cell_id, "name": name, "status": "ok", "seed": seed,
                          "peak_device_bytes": peak * GIB, **SETTINGS, **change})
            quality.append(_score(cell_id, name, "workload_bpb", "bits_per_byte", value, 0.01, False, 0.6))
            quality.append(_score(cell_id, name, "workload_recall", "exact_match", 0.0, None, True, 0.0))
    # one equivalence cell at seed 1: held against baseline/seed=1 (0.31), not the mean over seeds (0.30)
    cells.append({"cell_id": "ckpt", "name": "checkpointing-on", "status": "ok", "seed": 1,
                  "peak_device_bytes": 1.5 * GIB, **SETTINGS, "checkpointing": "on"})
    quality.append(_score("ckpt", "checkpointing-on", "workload_bpb", "bits_per_byte", 0.31, 0.01, False, 0.6))
    quality.append(_score("ckpt", "checkpointing-on", "workload_recall", "exact_match", 0.0, None, True, 0.0))
    return pd.DataFrame(cells), pd.DataFrame(quality)


def _score(cell_id, name, task, metric, value, stderr, higher, baseline):
    return {"cell_id": cell_id, "name": name, "task": task, "status": "ok", "metric": metric, "value": value,
            "stderr": stderr, "n": 30, "higher_is_better": higher, "baseline": baseline, "delta": value - baseline,
            "partial": False, "outside_share": None}


def _row(mean, sd, n, higher=False, stderr=float("nan")):
    return pd.Series({"mean": mean, "sd": sd, "n": n, "stderr": stderr, "higher_is_better": higher})


@pytest.mark.parametrize(("x", "y", "expected"), [
    (_row(0.30, 0.01, 3), _row(0.30, 0.01, 3), "equal"),
    (_row(0.305, 0.01, 3), _row(0.30, 0.01, 3), "within the spread"),
    (_row(0.40, 0.01, 3), _row(0.30, 0.01, 3), "worse"),  # lower is better
    (_row(0.40, 0.01, 3, higher=True), _row(0.30, 0.01, 3, higher=True), "better"),
    # a single cell: its own standard error stands in for the seeds' spread
    (_row(0.32, float("nan"), 1, stderr=0.02), _row(0.30, float("nan"), 1, stderr=0.02), "within the spread"),
])
def test_a_difference_is_named_only_beyond_the_spread(x, y, expected):
    assert verdict(x, y) == expected


def test_each_change_is_held_against_the_reference():
    cells, quality = _fixture()
    table = effects(cells, quality).set_index("cell")
    assert list(table.index) == ["tail", "lora", "nf4", "checkpointing-on"]
    assert table.at["nf4", "what differs"] == "quantization nf4" and table.at["nf4", "n"] == 3
    assert table.at["nf4", "Δ peak GiB"] == pytest.approx(-0.5)
    assert table.at["nf4", "Δ workload_bpb bits_per_byte"] == "+0.210 (worse)"
    assert table.at["tail", "Δ workload_bpb bits_per_byte"] == "+0.000 (equal)"
    assert table.at["lora", "Δ workload_recall exact_match"] == "+0.000 (equal)"
    # the single cell against the reference's cell of its own seed
    assert table.at["checkpointing-on", "Δ workload_bpb bits_per_byte"] == "+0.000 (equal)"
    assert table.at["checkpointing-on", "what differs"] == "checkpointing on"


def test_findings_answer_the_matrix_questions():
    cells, quality = _fixture()
    lines = findings(cells, quality)
    assert lines[0].startswith("Training `baseline` (n=3), bits per byte untrained → trained: "
                               "workload_bpb 0.600 → 0.300")
    truncation = next(line for line in lines if line.startswith("At 2,048 tokens"))
    assert "exp_decay (`baseline`) against tail (`tail`)" in truncation and "(equal, n=3 and 3)" in truncation
    adapter = next(line for line in lines if line.startswith("adapter lora"))
    assert "0.400 vs 0.300 (worse, n=3 and 3)" in adapter
    # the single cell is no pairwise finding: one seed says nothing about a technique's effect
    assert not any("checkpointing" in line for line in lines)
    assert lines[-1].startswith("Exact recall of planted facts is at its floor")


def test_recall_that_moves_is_not_called_a_floor():
    cells, quality = _fixture()
    quality.loc[quality["metric"] == "exact_match", "value"] = 0.5
    assert not any("floor" in line for line in findings(cells, quality))
    assert set(summarize(quality)["n"]) == {1, 3}


def test_the_summary_gets_the_matrix_questions_only():
    from harness.report.quality_findings import headline_findings

    cells, quality = _fixture()
    headline = headline_findings(cells, quality)
    assert headline == findings(cells, quality)[:len(headline)] and len(headline) == 2  # training gain, truncation
    assert not any(line.startswith(("adapter", "Exact recall")) for line in headline)


def test_a_single_cell_is_held_against_the_reference_of_its_own_seed_for_memory_too():
    cells, quality = _fixture()
    # the reference's peaks differ by seed: 2.9, 3.0, 3.1 GiB; the single cell ran at seed 1
    for seed, peak in enumerate((2.9, 3.0, 3.1)):
        cells.loc[cells["name"] == f"baseline/seed={seed}", "peak_device_bytes"] = peak * GIB
    cells.loc[cells["name"] == "checkpointing-on", "seed"] = 0
    table = effects(cells, quality).set_index("cell")
    assert table.at["checkpointing-on", "Δ peak GiB"] == pytest.approx(1.5 - 2.9)  # not 1.5 - 3.0, the mean
    assert table.at["nf4", "Δ peak GiB"] == pytest.approx(2.5 - 3.0)  # a group of seeds against the mean


def test_answer_in_context_is_a_property_of_the_data_and_gets_no_verdict():
    from harness.report.quality_findings import compare

    _, quality = _fixture()
    # the share of answers the truncated context holds: the same for every seed, different between policies
    for group, share in (("baseline", 0.400), ("tail", 0.433)):
        for seed in range(3):
            quality.loc[len(quality)] = _score(f"{group}{seed}", f"{group}/seed={seed}", "workload_recall",
                                               "answer_in_context", share, None, True, share)
    line = compare(summarize(quality), "baseline", "tail", "x",
                   (("workload_recall", "answer_in_context"),))
    assert "0.400 vs 0.433" in line and "worse" not in line and "better" not in line
    assert "no verdict" in line


def test_the_quality_table_says_pending_only_for_cells_that_can_still_be_evaluated():
    """From the committed quality-qwen report, with three cells put back as they stood before their last session:
    none-32k skipped and unsloth failed have no scores to wait for; flash-attention-2 trained and waits."""
    from harness.report.quality import quality_table

    folder = REPO / "reports" / "quality-qwen"
    cells, scores = pd.read_csv(folder / "cells.csv"), pd.read_csv(folder / "quality.csv")
    cells.loc[cells["name"] == "unsloth", "status"] = "error"
    scores = scores[~scores["name"].isin(["none-32k", "unsloth", "flash-attention-2"])]
    shown = quality_table(cells, scores)
    table = pd.DataFrame(shown.rows, columns=shown.headers()).set_index("cell")
    column = "workload_recall exact match: mean"
    assert table.loc["none-32k", column] == "– (cell skipped)"
    assert table.loc["unsloth", column] == "– (cell error)"
    assert table.loc["flash-attention-2", column] == "pending"
    assert table.loc["exp-decay-32k", column].startswith("0.292")
    assert "pending" not in str(quality_table(*(pd.read_csv(folder / n) for n in ("cells.csv", "quality.csv"))).rows)
