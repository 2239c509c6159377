"""The comparisons of a matrix that declares none (no `comparisons:` section): each trained group against the same
model untrained for the report's baseline, and every pair of groups that differ in one setting, on each task's main
metric; one family per setting. They go through the same statistics and the same rule as declared ones
(harness/report/comparisons.py)."""

from __future__ import annotations

import pandas as pd

from harness.report.quality_findings import group_rows, pairs_differing_in
from harness.spec.comparisons import DEFAULT_MARGINS, UNTRAINED, Comparison, ComparisonPlan, condition_of
from harness.spec.groups import NOT_A_DIFFERENCE, group_name
from harness.spec.settings import SETTINGS
from harness.tasks.catalog import PROJECT_TASKS

# the metric that stands for a task in a derived comparison: the first of these it has
MAIN_METRICS = ("bits_per_byte", "recall", "exact_match")
# settings that change with another and are no difference of their own beside it
COMPANIONS = {"vocabulary": ("vocabulary_source",), "truncation": ("truncation_decay",)}
# the families of the seed's questions: the report's summary states these
HEADLINE = ("training", "truncation", "truncation_decay", "vocabulary")
MIN_SEEDS = 2


def main_metric(quality: pd.DataFrame, items: pd.DataFrame | None, task: str) -> str | None:
    """The task's metric for comparisons: bits per byte, else the normalised recall where the evaluation recorded
    it, else exact match; None for a task with none of them (an lm-eval task's accuracy)."""
    found = set(quality.loc[(quality["task"] == task) & (quality["status"] == "ok"), "metric"].dropna())
    if items is not None and len(items) and "task" in items:
        recorded = items[items["task"] == task]
        found |= {m for m in MAIN_METRICS if m in recorded and recorded[m].notna().any()}
        if {"loglikelihood", "bytes"} <= set(recorded.columns) and recorded["loglikelihood"].notna().any():
            found.add("bits_per_byte")
    return next((m for m in MAIN_METRICS if m in found), None)


def _orient(groups: pd.DataFrame, setting: str, x: str, y: str, baseline: str) -> tuple[str, str]:
    """(a, b): b the group at the baseline's level of the setting (the change reads as what leaving it did), else
    the earlier group in the matrix."""
    if baseline in groups.index and str(groups.at[x, setting]) == str(groups.at[baseline, setting]):
        return y, x
    if baseline in groups.index and str(groups.at[y, setting]) == str(groups.at[baseline, setting]):
        return x, y
    return y, x


def derive(cells: pd.DataFrame, quality: pd.DataFrame, items: pd.DataFrame | None, baseline: str) -> ComparisonPlan:
    scored = quality[quality["status"] == "ok"]
    seeds = scored.groupby(scored["name"].map(group_name))["cell_id"].nunique()
    eligible = set(seeds[seeds >= MIN_SEEDS].index)
    tasks = {task: metric for task in dict.fromkeys(scored["task"])
             if (metric := main_metric(quality, items, task)) is not None}
    family = {task: PROJECT_TASKS[task].family if task in PROJECT_TASKS else None for task in tasks}

    def each_task(family_name: str, question: str, a: str, b: str) -> list[Comparison]:
        have = set(scored.loc[scored["name"].map(group_name).isin({a, b} - {UNTRAINED}), "task"])
        return [Comparison(family_name, question, a, b, metric, task, condition_of(task, family[task]))
                for task, metric in tasks.items() if task in have]

    found: list[Comparison] = []
    if baseline in eligible:
        found += each_task("training", "what training changes", baseline, UNTRAINED)
    groups = group_rows(cells)
    for setting in (s for s in SETTINGS if s in cells.columns and s not in NOT_A_DIFFERENCE):
        for x, y in pairs_differing_in(cells, setting, ignore=COMPANIONS.get(setting, ())):
            if {x, y} <= eligible:
                a, b = _orient(groups, setting, x, y, baseline)
                question = f"{setting} {groups.at[a, setting]} against {groups.at[b, setting]}"
                found += each_task(setting, question, a, b)
    return ComparisonPlan(dict(DEFAULT_MARGINS), tuple(found))
