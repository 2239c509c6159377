"""The seed's quality claims from item outcomes: paired differences, their two intervals, the words they allow,
recall by fact age; on synthetic items whose answer is known."""

from __future__ import annotations

import math
import random

import pandas as pd
import pytest

from harness.report.paired_stats import bits_per_byte, paired, read, recall, t_quantile
from harness.report.quality_claims import (
    age_bucket,
    age_table,
    recall_by_age,
    technique_claims,
    truncation_claims,
    untrained_recall,
    vocabulary_claims,
)

SETTINGS = {"model": "m", "context": 8192, "truncation": "exp_decay", "truncation_decay": 0.5,
            "vocabulary": "native", "vocabulary_source": "training", "adapter": "rslora", "lora_rank": 16,
            "quantization": "none"}


def _recall_items(rate: float, seed: int, count: int = 120, name: str = "a", rng_seed: int = 0,
                  model: str = "trained", ages: tuple[int, ...] = (2, 8, 20, 40, 70)) -> list[dict]:
    rng = random.Random(rng_seed * 1000 + seed)
    return [{"name": f"{name}/seed={seed}", "seed": seed, "task": "workload_recall", "model": model,
             "item": f"i{i}", "exact_match": float(rng.random() < rate), "sections_back": ages[i % len(ages)],
             "in_context": True} for i in range(count)]


def _frame(rows: list[dict]) -> pd.DataFrame:
    return pd.DataFrame(rows).assign(group=lambda f: f["name"].str.split("/").str[0])


def test_identical_groups_differ_by_nothing_and_read_as_no_difference() -> None:
    a = _frame([r for s in range(3) for r in _recall_items(0.5, s)])
    result = paired(a, a.copy(), recall)
    assert result is not None and result.difference == 0
    assert result.item_interval == (0.0, 0.0)
    assert read(result, 0.05).word == "no difference"


def test_a_large_consistent_difference_is_higher_with_both_intervals_above_zero() -> None:
    a = _frame([r for s in range(3) for r in _recall_items(0.8, s, name="a", rng_seed=1)])
    b = _frame([r for s in range(3) for r in _recall_items(0.3, s, name="b", rng_seed=2)])
    result = paired(a, b, recall)
    assert result.seeds == 3 and result.items == 120
    assert 0.4 < result.difference < 0.6
    assert result.item_interval[0] > 0.3 and result.seed_interval is not None and result.seed_interval[0] > 0
    assert read(result, 0.05).word == "higher"
    assert read(paired(b, a, recall), 0.05).word == "lower"


def test_seeds_that_disagree_in_sign_allow_no_word_with_few_seeds() -> None:
    a = _frame([*_recall_items(0.9, 0, name="a"), *_recall_items(0.2, 1, name="a"), *_recall_items(0.9, 2, name="a")])
    b = _frame([*_recall_items(0.5, 0, name="b"), *_recall_items(0.5, 1, name="b"), *_recall_items(0.5, 2, name="b")])
    result = paired(a, b, recall)
    assert not result.consistent_sign
    assert read(result, 0.05).word == "inconclusive"


def test_a_small_noisy_difference_is_inconclusive_not_no_difference() -> None:
    a = _frame(_recall_items(0.5, 0, count=20, name="a", rng_seed=3))
    b = _frame(_recall_items(0.5, 0, count=20, name="b", rng_seed=4))
    result = paired(a, b, recall)
    assert result.seed_interval is None  # one seed
    assert result.item_interval[1] - result.item_interval[0] > 0.1
    assert read(result, 0.05).word == "inconclusive"


def test_pairs_only_items_of_the_same_seed_held_by_both() -> None:
    a = _frame([*_recall_items(1.0, 0, count=10, name="a"), *_recall_items(1.0, 1, count=10, name="a")])
    b = _frame(_recall_items(0.0, 0, count=5, name="b"))  # seed 0 only, and only half the items
    result = paired(a, b, recall)
    assert result.seeds == 1 and result.items == 5 and result.difference == 1.0


def test_bits_per_byte_is_a_ratio_of_sums() -> None:
    items = pd.DataFrame({"loglikelihood": [-10.0, -30.0], "bytes": [10.0, 10.0]})
    assert bits_per_byte(items) == pytest.approx(40 / 20 / math.log(2))


def test_t_quantiles() -> None:
    assert t_quantile(2) == pytest.approx(4.303)
    assert t_quantile(100) == pytest.approx(1.96)


def test_age_buckets() -> None:
    assert [age_bucket(s) for s in (1, 4, 5, 14, 15, 29, 30, 59, 60, 90)] == \
        ["1–4", "1–4", "5–14", "5–14", "15–29", "15–29", "30–59", "30–59", "60+", "60+"]


def _cells(groups: dict[str, dict]) -> pd.DataFrame:
    rows = []
    for group, changes in groups.items():
        for seed in range(3):
            rows.append({"cell_id": f"{group}{seed}", "name": f"{group}/seed={seed}", "seed": seed, "status": "ok",
                         **SETTINGS, **changes})
    return pd.DataFrame(rows)


def test_exp_decay_against_tail_is_stated_with_intervals_and_n() -> None:
    cells = _cells({"exp": {}, "tail": {"truncation": "tail"}})
    items = pd.DataFrame([r for s in range(3) for r in (*_recall_items(0.7, s, name="exp", rng_seed=5),
                                                        *_recall_items(0.4, s, name="tail", rng_seed=6))])
    lines = truncation_claims(cells, items)
    assert lines[0].startswith("At 8,192 tokens, exp_decay (ρ = 0.5) (`exp`) against tail (`tail`), exact recall")
    assert "95% CI over items [+" in lines[0] and "over seeds [+" in lines[0]
    assert "n = 3 seeds × 120 paired items: **better**" in lines[0]
    old = [line for line in lines if "15 or more sections" in line]
    assert old and "× 72 paired items" in old[0]  # ages 20, 40, 70 of every 5


def test_the_larger_decay_ratio_is_held_against_the_smaller() -> None:
    cells = _cells({"rho05": {}, "rho09": {"truncation_decay": 0.9}})
    items = pd.DataFrame([r for s in range(3) for r in (*_recall_items(0.5, s, name="rho05"),
                                                        *_recall_items(0.5, s, name="rho09"))])
    line = truncation_claims(cells, items)[0]
    assert line.startswith("At 8,192 tokens, exp_decay (ρ = 0.9) (`rho09`) against exp_decay (ρ = 0.5) (`rho05`)")
    assert "**no difference**" in line


def _text_items(group: str, task: str, bits: float, seed: int) -> list[dict]:
    # the same noise for every group (a str seed is hashed the same in every process): groups given the same
    # bits per byte differ by exactly nothing, whatever PYTHONHASHSEED is
    rng = random.Random(f"{task}/{seed}")
    return [{"name": f"{group}/seed={seed}", "seed": seed, "task": task, "model": "trained", "item": f"d{i}",
             "loglikelihood": -bits * math.log(2) * 1000 * (1 + 0.01 * rng.random()), "bytes": 1000.0}
            for i in range(40)]


def test_slicing_is_judged_inside_and_outside_the_kept_languages() -> None:
    cells = _cells({"native": {}, "sliced": {"vocabulary": 32000, "vocabulary_source": "corpus:help:es,ca,en"}})
    rows = []
    for seed in range(3):
        for lang, cost in (("es", 0.0), ("ca", 0.0), ("de", 0.3)):
            rows += _text_items("native", f"help_{lang}", 1.0, seed)
            rows += _text_items("sliced", f"help_{lang}", 1.0 + cost, seed)
    lines = vocabulary_claims(cells, pd.DataFrame(rows))
    catalan = next(line for line in lines if "Catalan" in line)
    german = next(line for line in lines if "German" in line)
    assert "(inside the kept set, `help_ca`)" in catalan and "**no difference**" in catalan
    assert "(outside the kept set, `help_de`)" in german and "**worse (more bits per byte)**" in german
    assert "kept for es, ca, en" in german


def test_recall_by_age_and_the_untrained_floor() -> None:
    cells = _cells({"exp": {}})
    items = pd.DataFrame([r for s in range(3) for r in (*_recall_items(1.0, s, name="exp"),
                                                        *_recall_items(0.0, s, name="exp", model="untrained"))])
    by_age = recall_by_age(cells, items)
    assert list(by_age["age"]) == ["1–4", "5–14", "15–29", "30–59", "60+"]
    assert (by_age["recall"] == 1.0).all() and (by_age["untrained"] == 0.0).all() and (by_age["items"] == 24).all()
    assert "1.00 ± 0.00 (0.00; 100% kept; n=24)" in age_table(by_age).iloc[0]["1–4 back"]
    assert untrained_recall(cells, items)[0].startswith("Exact recall of the model untrained")
    assert "0.000 ± 0.000 (n = 120 items; 100% of the answers survive truncation, 0.000 of the 120 whose answer " \
        "the context holds)" in untrained_recall(cells, items)[0]


def test_each_technique_is_held_against_the_cell_that_differs_only_in_it() -> None:
    cells = _cells({"base": {}, "nf4": {"quantization": "nf4"}, "lora": {"adapter": "lora"},
                    "r64": {"lora_rank": 64}})
    rows = []
    for seed in range(3):
        for group, bits in (("base", 1.0), ("nf4", 1.0), ("lora", 1.2), ("r64", 1.0)):
            rows += _text_items(group, "workload_bpb", bits, seed)
    lines = technique_claims(cells, pd.DataFrame(rows))
    assert len(lines) == 3  # nf4, rslora and the rank against base; lora and r64 differ in two settings
    nf4, adapter, rank = (next(line for line in lines if line.startswith(head))
                          for head in ("quantization nf4 (`nf4`) against none (`base`)",
                                       "adapter rslora (`base`) against lora (`lora`)",
                                       "lora_rank 64 (`r64`) against 16 (`base`)"))
    assert "bits per byte of the target sections" in nf4 and "**no difference**" in nf4
    assert "difference -0.2" in adapter and "**better (fewer bits per byte)**" in adapter
    assert "n = 3 seeds × 40 paired items" in rank


def test_untrained_recall_at_the_floor_says_whether_truncation_or_the_model_holds_it_there() -> None:
    cells = _cells({"short": {}, "long": {"context": 16384}})
    cut = [dict(r, in_context=i % 5 == 0) for i, r in enumerate(_recall_items(0.0, 0, name="short", model="untrained"))]
    for r in cut:
        r["exact_match"] = float(r["in_context"])  # every answer the context holds is recalled, none other
    items = pd.DataFrame(cut + _recall_items(0.6, 0, name="long", model="untrained"))
    line = untrained_recall(cells, items)[0]
    assert "At or under 20%: 8,192 tokens exp_decay (ρ = 0.5), where the context holds only 20% of the answers " \
        "and the model recalls 1.00 of those it holds: the truncation holds recall down, not the model; a " \
        "context of 16,384 tokens lifts every policy above 20%." in line
    high = pd.DataFrame(_recall_items(0.6, 0, name="short", model="untrained"))
    assert untrained_recall(cells, high)[0].endswith("Every setting recalls more than 20% untrained.")
