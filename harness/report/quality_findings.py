"""What a quality matrix says, in numbers, from reports/<matrix>/quality.csv and cells.csv: each change against
the reference cell (its effect on memory and on every task), and the questions the matrix was built to answer
(exp_decay against tail at the same budget, what slicing costs inside and outside the kept languages, LoRA
against RS-LoRA, rank, 4-bit). Why it is so: docs/quality.md."""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from harness.report.cell_groups import GIB, reference_cells
from harness.report.vocabulary_cells import kept_size
from harness.spec.groups import NOT_A_DIFFERENCE, describe, group_name
from harness.spec.groups import differences as _differences
from harness.spec.settings import SETTINGS

# the metric that stands for each task in tables: the first of these that the task reports
MAIN_METRICS = ("bits_per_byte", "exact_match", "acc_norm", "acc", "word_perplexity")
LANGUAGES = {"en": "English", "es": "Spanish", "fr": "French", "de": "German"}
SIGMAS = 2.0
# settings compared pairwise in the findings (truncation and vocabulary have findings of their own)
PAIRWISE = ("adapter", "lora_rank", "quantization")
# metrics that describe the evaluation data, not the model (the share of answers the truncated context still
# holds: the same for every seed): reported beside the scores, never called better or worse
DATA_METRICS = ("answer_in_context",)


def main_metric(quality: pd.DataFrame, task: str) -> str | None:
    metrics = set(quality.loc[(quality["task"] == task) & quality["metric"].notna(), "metric"])
    return next((m for m in MAIN_METRICS if m in metrics), min(metrics) if metrics else None)


def summarize(scored: pd.DataFrame) -> pd.DataFrame:
    """One row per (group, task, metric) of ok scores: mean over seeds, spread, n, the untrained score and
    the gain from training."""
    columns = ["group", "task", "metric", "mean", "sd", "n", "stderr", "baseline", "delta", "partial",
               "higher_is_better"]
    scored = scored[scored["status"] == "ok"].copy()
    if scored.empty:
        return pd.DataFrame(columns=columns)
    scored["group"] = scored["name"].map(group_name)
    rows = []
    for (group, task, metric), part in scored.groupby(["group", "task", "metric"], sort=False):
        values = part["value"].astype(float)
        rows.append({"group": group, "task": task, "metric": metric, "mean": values.mean(),
                     "sd": values.std(ddof=1) if len(values) > 1 else math.nan, "n": len(values),
                     "stderr": part["stderr"].astype(float).mean(), "baseline": part["baseline"].astype(float).mean(),
                     "delta": part["delta"].astype(float).mean(), "partial": bool(part["partial"].any()),
                     "higher_is_better": bool(part["higher_is_better"].iloc[0])})
    return pd.DataFrame(rows, columns=columns)


def standard_error(row: pd.Series) -> float:
    if row["n"] > 1 and not math.isnan(row["sd"]):
        return row["sd"] / math.sqrt(row["n"])
    return 0.0 if math.isnan(row["stderr"]) else row["stderr"]


def verdict(x: pd.Series, y: pd.Series) -> str:
    """x against y: better, worse, equal, or within the spread."""
    difference = x["mean"] - y["mean"]
    if abs(difference) <= 1e-12 * max(1.0, abs(y["mean"])):
        return "equal"
    if abs(difference) <= SIGMAS * math.hypot(standard_error(x), standard_error(y)):
        return "within the spread"
    return "better" if (difference > 0) == bool(x["higher_is_better"]) else "worse"


def group_rows(cells: pd.DataFrame) -> pd.DataFrame:
    """One row per group of seeds (its first cell's settings stand for the group), in matrix order."""
    return cells.assign(group=cells["name"].map(group_name)).drop_duplicates("group").set_index("group")


def _row(table: pd.DataFrame, group: str, task: str, metric: str) -> pd.Series | None:
    match = table[(table["group"] == group) & (table["task"] == task) & (table["metric"] == metric)]
    return None if match.empty else match.iloc[0]


def _settings(cells: pd.DataFrame) -> list[str]:
    return [s for s in SETTINGS if s in cells.columns and s not in NOT_A_DIFFERENCE]


def differences(cells: pd.DataFrame, group: str, reference: str) -> dict[str, Any]:
    groups = group_rows(cells)[_settings(cells)]
    return _differences(groups.loc[group].to_dict(), groups.loc[reference].to_dict())


def pairs_differing_in(cells: pd.DataFrame, setting: str, ignore: tuple[str, ...] = ()) -> list[tuple[str, str]]:
    """(group, group) pairs whose settings are equal but for `setting` (and the seed, and `ignore`)."""
    groups = group_rows(cells)
    same = [s for s in _settings(cells) if s not in {setting, *ignore}]
    keys = groups[same].astype(str).apply(tuple, axis=1)
    return [(a, b) for i, a in enumerate(groups.index) for b in groups.index[i + 1:]
            if keys[a] == keys[b] and str(groups.at[a, setting]) != str(groups.at[b, setting])]


def _against_reference(cells: pd.DataFrame, quality: pd.DataFrame, group: str, reference: str) -> pd.DataFrame:
    """The reference's scores to hold `group` against: its mean over seeds, or, for a group of one cell,
    the reference's cell of the same seed where it has one (harness.report.cell_groups.reference_cells)."""
    return summarize(quality[quality["cell_id"].isin(reference_cells(cells, group, reference)["cell_id"])])


def _memory(cells: pd.DataFrame) -> float:
    ok = cells[cells["status"] == "ok"]
    return float(ok["peak_device_bytes"].mean()) if len(ok) else math.nan


def effects(cells: pd.DataFrame, quality: pd.DataFrame, reference: str | None = None) -> pd.DataFrame:
    """Each group against the reference (the report's baseline; the matrix's first cell unless its `report:`
    section names another): what differs, n, the change in peak device memory, and the change in each task's
    main metric with its verdict."""
    table = summarize(quality)
    groups = group_rows(cells)
    if table.empty or groups.empty:
        return pd.DataFrame()
    reference = reference or groups.index[0]
    tasks = list(dict.fromkeys(table["task"]))
    rows = []
    for group in groups.index:
        if group == reference or group not in set(table["group"]):
            continue
        theirs = _against_reference(cells, quality, group, reference)
        change = differences(cells, group, reference)
        row: dict[str, Any] = {
            "cell": group, "what differs": describe(change) or "the seed",
            "n": int(table.loc[table["group"] == group, "n"].max()),
            "Δ peak GiB": (_memory(cells[cells["name"].map(group_name) == group])
                           - _memory(reference_cells(cells, group, reference))) / GIB}
        for task in tasks:
            metric = main_metric(quality, task)
            x, y = _row(table, group, task, metric), _row(theirs, reference, task, metric)
            row[f"Δ {task} {metric}"] = "–" if x is None or y is None else \
                f"{x['mean'] - y['mean']:+.3f} ({verdict(x, y)})"
        rows.append(row)
    return pd.DataFrame(rows)


def findings(cells: pd.DataFrame, quality: pd.DataFrame, reference: str | None = None) -> list[str]:
    """The questions the quality matrix was built to answer, answered from its numbers."""
    table = summarize(quality)
    if table.empty:
        return []
    groups = group_rows(cells)
    return [*_headline(cells, quality, table, groups, reference), *_pairwise(cells, table, groups),
            *_recall_floor(quality, table)]


def headline_findings(cells: pd.DataFrame, quality: pd.DataFrame, reference: str | None = None) -> list[str]:
    """The seed's own questions, for the top of a report: what training gains, whether exp_decay beats tail
    at the same budget, and what slicing costs inside and outside the kept languages."""
    table = summarize(quality)
    return [] if table.empty else _headline(cells, quality, table, group_rows(cells), reference)


def _headline(cells: pd.DataFrame, quality: pd.DataFrame, table: pd.DataFrame, groups: pd.DataFrame,
              reference: str | None) -> list[str]:
    scored = set(table["group"])
    lines = _training_gain(table, reference or groups.index[0])
    if "truncation" in groups.columns:
        for a, b in pairs_differing_in(cells, "truncation", ignore=("truncation_decay",)):
            policies = {groups.at[a, "truncation"]: a, groups.at[b, "truncation"]: b}
            if {"exp_decay", "tail"} <= set(policies) and {a, b} <= scored:
                context = int(groups.at[a, "context"])
                lines.append(compare(table, policies["exp_decay"], policies["tail"],
                                     f"At {context:,} tokens of context, exp_decay (`{policies['exp_decay']}`) "
                                     f"against tail (`{policies['tail']}`)", _WORKLOAD))
    if "vocabulary" in groups.columns:
        lines += _slicing(cells, quality, table, groups, scored)
    return lines


def _pairwise(cells: pd.DataFrame, table: pd.DataFrame, groups: pd.DataFrame) -> list[str]:
    """Groups of several seeds that differ in one of PAIRWISE only, compared on every bits-per-byte task."""
    scored = set(table["group"])
    lines = []
    for setting in PAIRWISE:
        if setting not in groups.columns:
            continue
        for a, b in pairs_differing_in(cells, setting):
            if {a, b} <= scored and min(_n(table, a), _n(table, b)) > 1:
                lines.append(compare(table, b, a, f"{setting} {groups.at[b, setting]} (`{b}`) against "
                                                  f"{groups.at[a, setting]} (`{a}`)", _EVERY_BPB))
    return lines


_WORKLOAD = (("workload_bpb", "bits_per_byte"), ("workload_recall", "exact_match"),
             ("workload_recall", "answer_in_context"))
_EVERY_BPB = (("workload_bpb", "bits_per_byte"), *((f"text_{lang}", "bits_per_byte") for lang in LANGUAGES))


def compare(table: pd.DataFrame, a: str, b: str, label: str,
            metrics: tuple[tuple[str, str], ...]) -> str:
    parts = []
    for task, metric in metrics:
        x, y = _row(table, a, task, metric), _row(table, b, task, metric)
        if x is not None and y is not None:
            judged = "of the data, not the model: no verdict" if metric in DATA_METRICS else verdict(x, y)
            parts.append(f"{task} {metric} {x['mean']:.3f} vs {y['mean']:.3f} ({judged}, "
                         f"n={x['n']} and {y['n']})")
    return f"{label}: " + ("; ".join(parts) if parts else "no scores to compare") + "."


def _n(table: pd.DataFrame, group: str) -> int:
    return int(table.loc[table["group"] == group, "n"].max())


def _training_gain(table: pd.DataFrame, reference: str) -> list[str]:
    parts = []
    for task, metric in _EVERY_BPB:
        row = _row(table, reference, task, metric)
        if row is not None and not math.isnan(row["baseline"]):
            parts.append(f"{task} {row['baseline']:.3f} → {row['mean']:.3f}")
    if not parts:
        return []
    return [f"Training `{reference}` (n={_n(table, reference)}), bits per byte untrained → trained: "
            + "; ".join(parts) + "."]


def _slicing(cells: pd.DataFrame, quality: pd.DataFrame, table: pd.DataFrame, groups: pd.DataFrame,
             scored: set[str]) -> list[str]:
    lines = []
    for a, b in pairs_differing_in(cells, "vocabulary", ignore=("vocabulary_source",)):
        base, group = (a, b) if str(groups.at[a, "vocabulary"]) == "native" else (b, a)
        if str(groups.at[base, "vocabulary"]) != "native" or not {a, b} <= scored:
            continue
        parts = []
        for lang, language in LANGUAGES.items():
            x, y = _row(table, group, f"text_{lang}", "bits_per_byte"), _row(table, base, f"text_{lang}",
                                                                             "bits_per_byte")
            if x is not None and y is not None:
                share = _outside_share(quality, group, f"text_{lang}")
                parts.append(f"{language} {x['mean'] - y['mean']:+.3f} bits/byte ({verdict(x, y)}"
                             + (f"; {share:.1%} of its tokens spelled out" if share is not None else "") + ")")
        x, y = _row(table, group, "workload_bpb", "bits_per_byte"), _row(table, base, "workload_bpb", "bits_per_byte")
        if x is not None and y is not None:
            parts.append(f"the documents {x['mean'] - y['mean']:+.3f} bits/byte ({verdict(x, y)})")
        if parts:
            row = groups.loc[group]
            lines.append(f"Slicing to {kept_size(cells[cells['name'].map(group_name) == group])} "
                         f"({row['vocabulary_source']}), against "
                         f"`{base}` after the same training (n={_n(table, group)} and {_n(table, base)}): "
                         + "; ".join(parts) + ".")
    return lines


def _outside_share(quality: pd.DataFrame, group: str, task: str) -> float | None:
    if "outside_share" not in quality.columns:
        return None
    rows = quality[(quality["name"].map(group_name) == group) & (quality["task"] == task)]["outside_share"].dropna()
    return float(rows.mean()) if len(rows) else None


def _recall_floor(quality: pd.DataFrame, table: pd.DataFrame) -> list[str]:
    """Say so when exact recall separates nothing: every cell, trained or not, at one item right or fewer."""
    recall = table[(table["task"] == "workload_recall") & (table["metric"] == "exact_match")]
    if recall.empty:
        return []
    items = quality.loc[(quality["task"] == "workload_recall") & (quality["metric"] == "exact_match"), "n"].max()
    highest = max(recall["mean"].max(), recall["baseline"].fillna(0).max())
    if not items or highest > 1.0 / float(items) + 1e-9:
        return []
    return [f"Exact recall of planted facts is at its floor: at most {recall['mean'].max():.3f} for any cell "
            f"trained and {recall['baseline'].max():.3f} untrained, so it separates none of the cells here."]
