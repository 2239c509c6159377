"""The change-against-reference table, on a small fixture matrix with repeats (its verdicts are comparisons.csv's:
tests/test_comparisons_report.py)."""

from __future__ import annotations

import pandas as pd
import pytest

from harness.report.freshness import read_freshness_table, stale_ids, without
from harness.report.quality import quality_table
from harness.report.quality_findings import effects, summarize
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


def test_each_change_is_held_against_the_reference():
    cells, quality = _fixture()
    table = effects(cells, quality).set_index("cell")
    assert list(table.index) == ["tail", "lora", "nf4", "checkpointing-on"]
    assert table.at["nf4", "what differs"] == "quantization nf4" and table.at["nf4", "n"] == 3
    assert table.at["nf4", "Δ peak GiB"] == pytest.approx(-0.5)
    assert table.at["nf4", "Δ workload_bpb bits_per_byte"] == pytest.approx(0.21)
    assert table.at["tail", "Δ workload_bpb bits_per_byte"] == pytest.approx(0)
    assert table.at["lora", "Δ workload_recall exact_match"] == 0
    # the single cell against the reference's cell of its own seed
    assert table.at["checkpointing-on", "Δ workload_bpb bits_per_byte"] == pytest.approx(0)
    assert set(summarize(quality)["n"]) == {1, 3}
    assert table.at["checkpointing-on", "what differs"] == "checkpointing on"


def test_a_single_cell_is_held_against_the_reference_of_its_own_seed_for_memory_too():
    cells, quality = _fixture()
    # the reference's peaks differ by seed: 2.9, 3.0, 3.1 GiB; the single cell ran at seed 1
    for seed, peak in enumerate((2.9, 3.0, 3.1)):
        cells.loc[cells["name"] == f"baseline/seed={seed}", "peak_device_bytes"] = peak * GIB
    cells.loc[cells["name"] == "checkpointing-on", "seed"] = 0
    table = effects(cells, quality).set_index("cell")
    assert table.at["checkpointing-on", "Δ peak GiB"] == pytest.approx(1.5 - 2.9)  # not 1.5 - 3.0, the mean
    assert table.at["nf4", "Δ peak GiB"] == pytest.approx(2.5 - 3.0)  # a group of seeds against the mean


def test_the_quality_table_says_pending_only_for_cells_that_can_still_be_evaluated():
    """From the committed quality-qwen report, with three cells put back as they stood before their last session:
    none-32k skipped and unsloth failed have no scores to wait for; flash-attention-2 trained and waits."""

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
    # as the report reads them: a stale cell (freshness.csv) is in no table, so it is not pending either
    stale = stale_ids(read_freshness_table(folder))
    committed = [without(pd.read_csv(folder / n, dtype={"cell_id": str}), stale) for n in ("cells.csv", "quality.csv")]
    assert stale and "pending" not in str(quality_table(*committed).rows)
