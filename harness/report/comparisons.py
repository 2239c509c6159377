"""reports/<matrix>/comparisons.csv: every comparison of the matrix (declared in its `comparisons:` section, or derived
from its cells), decided by one rule from the item outcomes (items.csv) and the scores (quality.csv). Every verdict
the report states is read from this table. Why it is so: docs/quality.md."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from harness.report.crossed_bootstrap import DRAWS, Arm, crossed
from harness.report.decision_rule import NO_VERDICT, holm, interval, p_value, rule, word
from harness.report.derived_comparisons import derive
from harness.spec.comparisons import UNTRAINED, Comparison, ComparisonPlan
from harness.spec.groups import group_name

# the first fourteen are read by the forest plot and the comparisons table: their names and order stay
COLUMNS = ["family", "question", "metric", "a", "b", "value_a", "value_b", "effect", "low", "high", "seeds", "items",
           "verdict", "rule", "condition", "documents", "p", "p_holm", "level", "margin", "did", "outside_share",
           "task", "resampled", "declared", "min_seeds"]
RESAMPLED_ITEMS = "seeds, documents and items"
RESAMPLED_SEEDS = "seeds only: the evaluation files hold no item outcomes"


@dataclass(frozen=True)
class Paired:
    """The arms of one comparison on their shared seeds and items, with each item's document."""

    terms: list[tuple[float, Arm]]
    documents: np.ndarray
    seeds: int
    items: int | None  # None where no cell recorded how many items its score stands on
    distinct_documents: int | None  # None where the items are not recorded one by one
    resampled: str


def _terms(comparison: Comparison, arm: Any) -> list[tuple[float, Any]] | None:
    """The signed arms of the effect, each found by arm(group, model); None where one is missing."""
    a, a_untrained = arm(comparison.a, "trained"), arm(comparison.a, "untrained")
    if comparison.b == UNTRAINED:
        found = [(1.0, a), (-1.0, a_untrained)]
    elif comparison.did:
        found = [(1.0, a), (-1.0, a_untrained), (-1.0, arm(comparison.b, "trained")),
                 (1.0, arm(comparison.b, "untrained"))]
    else:
        found = [(1.0, a), (-1.0, arm(comparison.b, "trained"))]
    return None if any(side is None for _, side in found) else found


class Outcomes:
    """items.csv and quality.csv, indexed once for the arms of many comparisons."""

    def __init__(self, cells: pd.DataFrame, quality: pd.DataFrame, items: pd.DataFrame | None) -> None:
        self.seed_of = dict(zip(cells["cell_id"].astype(str), cells["seed"], strict=True))
        scored = quality[quality["status"] == "ok"]
        self.scores = {key: part for key, part in scored.groupby([scored["name"].map(group_name), "task", "metric"])}
        self.items: dict[tuple[str, str, str], pd.DataFrame] = {}
        if items is not None and len(items):
            self.items = {key: part for key, part in items.groupby([items["name"].map(group_name), "task", "model"])}
        self.outside = quality.dropna(subset=["outside_share"]) if "outside_share" in quality else quality.iloc[:0]

    def _item_table(self, group: str, task: str, model: str, metric: str) -> tuple[pd.DataFrame, ...] | None:
        rows = self.items.get((group, task, model))
        columns = ("loglikelihood", "bytes") if metric == "bits_per_byte" else (metric,)
        if rows is None or not set(columns) <= set(rows.columns):
            return None
        rows = rows.drop_duplicates(["seed", "item"]).dropna(subset=list(columns))
        if rows.empty:
            return None
        return tuple(rows.pivot(index="seed", columns="item", values=c) for c in columns)

    def from_items(self, comparison: Comparison) -> Paired | None:
        """The arms on the seeds they share and the items every one of them holds in every such seed."""
        terms = _terms(comparison, lambda group, model: self._item_table(group, comparison.task, model,
                                                                          comparison.metric))
        if terms is None:
            return None
        seeds = sorted(set.intersection(*(set(t.index) for _, side in terms for t in side)))
        if not seeds:
            return None
        items = sorted(pd.concat([t.loc[seeds] for _, side in terms for t in side]).dropna(axis=1).columns)
        if not items:
            return None
        rows = self.items[comparison.a, comparison.task, "trained"].drop_duplicates("item").set_index("item")
        documents = rows["doc_id"].reindex(items) if "doc_id" in rows else pd.Series(np.nan, index=items)
        documents = documents.astype(object).where(documents.notna(), pd.Series(items, index=items))
        arms = [(sign, Arm(side[0].loc[seeds, items].to_numpy(float),
                           side[1].loc[seeds, items].to_numpy(float) if len(side) > 1 else None))
                for sign, side in terms]
        labels = documents.astype(str).to_numpy()
        return Paired(arms, labels, len(seeds), len(items), len(set(labels)), RESAMPLED_ITEMS)

    def from_scores(self, comparison: Comparison) -> Paired | None:
        """Each cell's score as one outcome: where no item outcome is recorded, only the seeds are resampled."""
        counts: list[float] = []

        def arm(group: str, model: str) -> Any:
            rows = self.scores.get((group, comparison.task, comparison.metric))
            if rows is None:
                return None
            counts.extend(rows["n"].dropna())
            column = "value" if model == "trained" else "baseline"
            values = rows.set_index(rows["cell_id"].astype(str).map(self.seed_of))[column].astype(float).dropna()
            return values[~values.index.duplicated()]

        terms = _terms(comparison, arm)
        if terms is None:
            return None
        seeds = sorted(set.intersection(*(set(side.index) for _, side in terms)))
        if not seeds:
            return None

        def as_arm(values: pd.Series) -> Arm:
            column = values.loc[seeds].to_numpy(float)[:, None]
            if comparison.metric == "bits_per_byte":  # -loglikelihood / bytes / ln 2 of one text of one byte
                return Arm(-column * math.log(2), np.ones_like(column))
            return Arm(column)

        items = int(min(counts)) if counts else None
        return Paired([(sign, as_arm(side)) for sign, side in terms], np.zeros(1), len(seeds), items, None,
                      RESAMPLED_SEEDS)

    def outside_share(self, comparison: Comparison) -> float:
        rows = self.outside[(self.outside["name"].map(group_name) == comparison.a)
                            & (self.outside["task"] == comparison.task)]
        return float(rows["outside_share"].astype(float).mean()) if len(rows) else math.nan


def _values(paired: Paired, did: bool) -> tuple[float, float]:
    """Each side's metric on every item, mean over seeds: for a difference-in-differences, each side's gain over
    its untrained model."""
    ones = np.ones((1, paired.terms[0][1].values.shape[1]))
    means = [sign * float(arm.metric(ones).mean()) for sign, arm in paired.terms]
    if did:
        return means[0] + means[1], -(means[2] + means[3])
    return means[0], -means[1]


def compare(plan: ComparisonPlan, cells: pd.DataFrame, quality: pd.DataFrame, items: pd.DataFrame | None,
            declared: bool, draws: int = DRAWS) -> pd.DataFrame:
    """One row a comparison, in the plan's order, decided family by family."""
    outcomes = Outcomes(cells, quality, items)
    rows: list[dict[str, Any]] = []
    draws_of: dict[int, np.ndarray] = {}
    for comparison in plan.comparisons:
        paired = outcomes.from_items(comparison) or outcomes.from_scores(comparison)
        row: dict[str, Any] = {"family": comparison.family, "question": comparison.question,
                               "metric": comparison.metric, "a": comparison.a, "b": comparison.b,
                               "condition": comparison.condition, "margin": plan.margins[comparison.metric],
                               "did": comparison.did, "outside_share": outcomes.outside_share(comparison),
                               "task": comparison.task, "declared": declared, "min_seeds": plan.min_seeds}
        if paired is None:
            rows.append({**row, "seeds": 0, "verdict": NO_VERDICT,
                         "rule": f"no paired outcomes of {comparison.metric} on {comparison.task} for both arms yet"})
            continue
        value_a, value_b = _values(paired, comparison.did)
        row |= {"value_a": value_a, "value_b": value_b, "effect": value_a - value_b, "seeds": paired.seeds,
                "items": paired.items, "documents": paired.distinct_documents, "resampled": paired.resampled}
        if paired.seeds < plan.min_seeds:
            rows.append({**row, "verdict": NO_VERDICT,
                         "rule": f"a verdict needs {plan.min_seeds} paired seeds or more"})
            continue
        boot = crossed(paired.terms, paired.documents, draws)
        draws_of[len(rows)] = boot.draws
        rows.append({**row, "p": p_value(boot.draws)})
    for family in dict.fromkeys(row["family"] for row in rows):
        tested = [i for i, row in enumerate(rows) if row["family"] == family and i in draws_of]
        for i, step in zip(tested, holm([rows[i]["p"] for i in tested]), strict=True):
            low, high = interval(draws_of[i], step.level)
            verdict = word(low, high, step.rejected, rows[i]["margin"])
            rows[i] |= {"low": low, "high": high, "p_holm": step.p_holm, "level": step.level, "verdict": verdict,
                        "rule": rule(verdict, step.level, step.p_holm, rows[i]["margin"])}
    return pd.DataFrame(rows, columns=COLUMNS)


def comparisons_table(plan: ComparisonPlan | None, cells: pd.DataFrame, quality: pd.DataFrame,
                      items: pd.DataFrame | None, baseline: str) -> pd.DataFrame:
    """The matrix's comparisons: those its `comparisons:` section declares, or else those derived from its cells."""
    if plan is not None:
        return compare(plan, cells, quality, items, declared=True)
    return compare(derive(cells, quality, items, baseline), cells, quality, items, declared=False)
