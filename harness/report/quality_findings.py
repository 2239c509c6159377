"""A quality matrix's scores by group, from reports/<matrix>/quality.csv and cells.csv: each group's mean over seeds,
and each change against the reference cell (its effect on memory and the difference of every task's mean). The
verdicts on these differences are comparisons.csv's (harness/report/comparisons.py), never made here. Why it is so:
docs/quality.md."""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from harness.report.cell_groups import GIB, reference_cells
from harness.spec.groups import NOT_A_DIFFERENCE, describe, group_name
from harness.spec.groups import differences as _differences
from harness.spec.settings import SETTINGS

# the metric that stands for each task in tables: the first of these that the task reports
MAIN_METRICS = ("bits_per_byte", "recall", "exact_match", "acc_norm", "acc", "word_perplexity")


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
    section names another): what differs, n, the change in peak device memory, and the difference of each task's
    main metric (the means' difference: a number, with no word)."""
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
            row[f"Δ {task} {metric}"] = math.nan if x is None or y is None else x["mean"] - y["mean"]
        rows.append(row)
    return pd.DataFrame(rows)
