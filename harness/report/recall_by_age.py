"""Recall of planted facts by their age (how many sections before the question a fact was introduced), in bins
chosen from the data, and the recall of the model untrained with Wilson intervals: descriptions beside the
comparisons, never a verdict (those are harness/report/comparisons.py's). Why it is so: docs/quality.md."""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from harness.report.quality_findings import group_rows
from harness.report.wilson import wilson
from harness.spec.groups import group_name

RECALL_TASK = "workload_recall"
# the fewest distinct items of every group a bin of fact age holds
MIN_BIN = 30
# untrained recall at or under a fifth of the facts is "at the floor": too little for policies to differ
FLOOR = 0.2


def recall_column(items: pd.DataFrame) -> str:
    """The normalised recall where the evaluation recorded it, else exact match (files from before it)."""
    return "recall" if "recall" in items and items["recall"].notna().any() else "exact_match"


def _policy(groups: pd.DataFrame, group: str) -> str:
    policy = str(groups.at[group, "truncation"])
    return f"exp_decay (ρ = {float(groups.at[group, 'truncation_decay']):g})" if policy == "exp_decay" else policy


def _recall_items(items: pd.DataFrame) -> pd.DataFrame:
    found = items[items["task"] == RECALL_TASK]
    return found.assign(group=found["name"].map(group_name))


def age_bins(items: pd.DataFrame) -> list[tuple[float, float]]:
    """Bins of fact age, (lowest, highest) age in each, from the youngest: a bin closes at the first age where every
    group holds MIN_BIN distinct items in it; a last bin short of that joins the one before. A group with fewer
    than MIN_BIN items in all makes one bin of everything."""
    if items.empty or "sections_back" not in items:
        return []
    distinct = items.drop_duplicates(["group", "item"])[["group", "sections_back"]].dropna()
    if distinct.empty:
        return []
    counts = distinct.groupby(["sections_back", "group"]).size().unstack(fill_value=0).sort_index()
    bins: list[tuple[float, float]] = []
    start, held = None, pd.Series(0, index=counts.columns)
    for age, row in counts.iterrows():
        start = age if start is None else start
        held = held + row
        if (held >= MIN_BIN).all():
            bins.append((float(start), float(age)))
            start, held = None, pd.Series(0, index=counts.columns)
    if start is not None:
        last = float(counts.index[-1])
        bins = [*bins[:-1], (bins[-1][0], last)] if bins else [(float(start), last)]
    return bins


def _label(low: float, high: float) -> str:
    return f"{low:g}" if low == high else f"{low:g}–{high:g}"


def recall_by_age(cells: pd.DataFrame, items: pd.DataFrame) -> pd.DataFrame:
    """Recall per group and bin of fact age, trained (mean over seeds of each seed's rate, and their standard
    deviation) and untrained (with its Wilson interval), with the share of facts whose answer survived truncation:
    one row a (group, bin)."""
    columns = ["group", "context", "truncation", "age", "age_order", "items", "recall", "recall_sd", "seeds",
               "untrained", "untrained_low", "untrained_high", "in_context"]
    found = _recall_items(items)
    bins = age_bins(found)
    if not bins:  # no recall task among the items, or none of its items with an age
        return pd.DataFrame(columns=columns)
    metric = recall_column(found)
    groups = group_rows(cells)
    rows = []
    for group, part in found.groupby("group", sort=False):
        for order, (low, high) in enumerate(bins):
            inside = part[part["sections_back"].between(low, high)]
            trained = inside[inside["model"] == "trained"]
            per_seed = trained.groupby("seed")[metric].mean()
            untrained = inside[inside["model"] == "untrained"].drop_duplicates("item")[metric].dropna()
            low_u, high_u = wilson(float(untrained.sum()), len(untrained))
            rows.append({"group": group, "context": int(groups.at[group, "context"]),
                         "truncation": _policy(groups, group), "age": _label(low, high), "age_order": order,
                         "items": int(trained.groupby("seed").size().min()) if len(trained) else 0,
                         "recall": float(per_seed.mean()) if len(per_seed) else math.nan,
                         "recall_sd": float(per_seed.std(ddof=1)) if len(per_seed) > 1 else math.nan,
                         "seeds": len(per_seed), "untrained": float(untrained.mean()) if len(untrained) else math.nan,
                         "untrained_low": low_u, "untrained_high": high_u,
                         "in_context": float(inside["in_context"].astype(float).mean()) if len(inside) else math.nan})
    return pd.DataFrame(rows, columns=columns).sort_values(["context", "truncation"], kind="stable")


def age_table(by_age: pd.DataFrame) -> pd.DataFrame:
    """recall_by_age as a wide table for a report: one row a group, a column a bin of fact age."""
    if by_age.empty:
        return by_age
    labels = by_age.drop_duplicates("age_order").set_index("age_order")["age"].sort_index()
    rows = []
    for group, part in by_age.groupby("group", sort=False):
        row: dict[str, Any] = {"cell": group, "context": f"{int(part['context'].iloc[0]):,}",
                               "truncation": part["truncation"].iloc[0]}
        for order, label in labels.items():
            r = part[part["age_order"] == order].iloc[0]
            spread = f" ± {r['recall_sd']:.2f}" if not math.isnan(r["recall_sd"]) else ""
            untrained = "–" if math.isnan(r["untrained"]) else \
                f"{r['untrained']:.2f} [{r['untrained_low']:.2f}, {r['untrained_high']:.2f}]"
            row[f"{label} back"] = "–" if not r["items"] else \
                f"{r['recall']:.2f}{spread} ({untrained}; {r['in_context']:.0%} kept; n={r['items']})"
        rows.append(row)
    return pd.DataFrame(rows)


def untrained_recall(cells: pd.DataFrame, items: pd.DataFrame) -> list[str]:
    """Recall of the model before training, at each context and truncation, with Wilson intervals: whether the
    task is off its floor at all."""
    found = _recall_items(items)
    untrained = found[found["model"] == "untrained"]
    if untrained.empty:
        return []
    metric = recall_column(found)
    groups = group_rows(cells)
    seen: dict[tuple[Any, ...], pd.DataFrame] = {}
    for group, part in untrained.groupby("group", sort=False):
        seen.setdefault((int(groups.at[group, "context"]), _policy(groups, group)), part.drop_duplicates("item"))
    parts = []
    rates: dict[tuple[int, str], tuple[float, float, float]] = {}  # (recall, share kept, recall of the kept)
    for (context, policy), part in sorted(seen.items(), key=lambda kv: (kv[0][0], kv[0][1])):
        right = float(part[metric].sum())
        rate = right / len(part)
        low, high = wilson(right, len(part))
        kept = part[part["in_context"].astype(bool)]
        kept_rate = float(kept[metric].mean()) if len(kept) else math.nan
        within = f", {kept_rate:.3f} of the {len(kept)} whose answer the context holds" if len(kept) else ""
        parts.append(f"{context:,} tokens {policy}: {rate:.3f} [{low:.3f}, {high:.3f}] (n = {len(part)} items; "
                     f"{len(kept) / len(part):.0%} of the answers survive truncation{within})")
        rates[(context, policy)] = (rate, len(kept) / len(part), kept_rate)
    what = "Recall" if metric == "recall" else "Exact recall"
    return [f"{what} of the model untrained (the adapter disabled), 95% Wilson interval over items: "
            + "; ".join(parts) + ". Recall is bounded by what truncation keeps: a fact whose answer is cut away "
            "cannot be recalled but by chance." + _off_the_floor(rates)]


def _span(values: list[float], spec: str) -> str:
    low, high = format(min(values), spec), format(max(values), spec)
    return low if low == high else f"{low}-{high}"


def _off_the_floor(rates: dict[tuple[int, str], tuple[float, float, float]]) -> str:
    """Where untrained recall is at or under FLOOR: whether the model or the truncation holds it there, and
    the shortest context that lifts every policy above it."""
    low = {key: value for key, value in rates.items() if value[0] <= FLOOR}
    if not low:
        return f" Every setting recalls more than {FLOOR:.0%} untrained."
    kept = [value[1] for value in low.values()]
    within = [value[2] for value in low.values() if not math.isnan(value[2])]
    where = ", ".join(f"{context:,} tokens {policy}" for context, policy in sorted(low))
    text = f" At or under {FLOOR:.0%}: {where}, where the context holds only {_span(kept, '.0%')} of the answers"
    text += f" and the model recalls {_span(within, '.2f')} of those it holds" if within else ""
    # the contexts past every one at the floor where no policy is at it
    longer = sorted({c for c, _ in rates} - {c for c, _ in low})
    longer = [c for c in longer if c > max(context for context, _ in low)]
    text += (f": the truncation holds recall down, not the model; a context of {longer[0]:,} tokens lifts every "
             f"policy above {FLOOR:.0%}." if longer else
             f": no context measured lifts every policy above {FLOOR:.0%} untrained.")
    return text
