"""The `comparisons:` section of a matrix file: the comparisons its report decides, written before any cell runs,
and the margins inside which a difference reads as "no difference". Why it is so: docs/quality.md."""

from __future__ import annotations

import math
import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any

from harness.core.suggest import did_you_mean
from harness.spec.groups import group_name

# each metric a comparison may read, and the task families (harness/tasks/catalog.py) whose items carry it
METRIC_FAMILIES = {"recall": ("recall",), "exact_match": ("recall",), "bits_per_byte": ("section_bpb", "text")}
DEFAULT_MARGINS = {"recall": 0.05, "exact_match": 0.05, "bits_per_byte": 0.01}
# a share cannot differ by a whole; a bits-per-byte margin of 1 would call anything "no difference"
MARGIN_LIMITS = {"recall": 1.0, "exact_match": 1.0, "bits_per_byte": 1.0}
UNTRAINED = "untrained"  # as `b`: the same cells with their adapter disabled
FIXED_SUFFIX = "_fixed"  # a workload task scored under the one evaluation condition every cell shares
KEYS = ("margins", "min_seeds", "compare")
ENTRY_KEYS = ("family", "question", "a", "b", "metric", "task", "condition", "did")
REQUIRED = ("family", "question", "a", "b", "metric", "task")
FAMILY_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.+-]{0,39}\Z")
MAX_QUESTION = 200
DEFAULT_MIN_SEEDS = 2  # fewer paired seeds than this: "no verdict" (a bootstrap over one seed has no seed variance)
MAX_MIN_SEEDS = 1000


class ComparisonSpecError(ValueError):
    """A problem in the `comparisons:` section; the message says where and how to fix it."""


@dataclass(frozen=True)
class Comparison:
    family: str  # one Holm correction over each family
    question: str
    a: str  # a group (cells repeated over seeds, by their name without /seed=N)
    b: str  # a group, or UNTRAINED
    metric: str
    task: str
    condition: str = ""  # "own" or "fixed" for the workload, "" for held-out text
    did: bool = False  # (a trained - a untrained) - (b trained - b untrained)


@dataclass(frozen=True)
class ComparisonPlan:
    margins: dict[str, float]
    comparisons: tuple[Comparison, ...]
    min_seeds: int = DEFAULT_MIN_SEEDS  # paired seeds a comparison needs before it gets a verdict (decided in advance)


def condition_of(task: str, family: str | None) -> str:
    """The evaluation condition a task scores under: the cell's own context and truncation, or the fixed one."""
    if family not in ("recall", "section_bpb"):
        return ""
    return "fixed" if task.endswith(FIXED_SUFFIX) else "own"


def _margins(given: Any) -> dict[str, float]:
    if given is None:
        return dict(DEFAULT_MARGINS)
    if not isinstance(given, dict) or not given:
        raise ComparisonSpecError(f"margins: expected a mapping of metric: margin (such as {{recall: 0.05, "
                                  f"bits_per_byte: 0.01}}), got {str(given)[:60]!r}")
    margins = dict(DEFAULT_MARGINS)
    for metric, margin in given.items():
        if metric not in METRIC_FAMILIES:
            raise ComparisonSpecError(f"margins: unknown metric {metric!r}{did_you_mean(metric, METRIC_FAMILIES)}; "
                                      f"known: {', '.join(METRIC_FAMILIES)}")
        if isinstance(margin, bool) or not isinstance(margin, int | float) or not math.isfinite(margin) \
                or not 0 < margin < MARGIN_LIMITS[metric]:
            raise ComparisonSpecError(f"margins.{metric}: {margin!r} is not a margin: a number above 0 and below "
                                      f"{MARGIN_LIMITS[metric]:g} (the largest difference still read as no difference)")
        margins[metric] = float(margin)
    return margins


def _min_seeds(given: Any) -> int:
    if given is None:
        return DEFAULT_MIN_SEEDS
    if isinstance(given, bool) or not isinstance(given, int) or not DEFAULT_MIN_SEEDS <= given <= MAX_MIN_SEEDS:
        raise ComparisonSpecError(f"min_seeds: {repr(given)[:60]} is not a number of seeds: a whole number from "
                                  f"{DEFAULT_MIN_SEEDS} to {MAX_MIN_SEEDS} (the paired seeds a comparison needs before "
                                  "it gets a verdict)")
    return given


def _text(where: str, key: str, value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ComparisonSpecError(f"{where}.{key}: expected text, got {str(value)[:60]!r}")
    if key == "family" and not FAMILY_NAME.match(value):
        raise ComparisonSpecError(f"{where}.family: {value[:60]!r} is not a family name: up to 40 letters, digits "
                                  "and . _ + - (it names a group of comparisons in tables)")
    if key == "question" and (len(value) > MAX_QUESTION or any(c in value for c in "\n\r|")):
        raise ComparisonSpecError(f"{where}.question: at most {MAX_QUESTION} characters on one line, without '|' "
                                  "(it is a table cell)")
    return value.strip()


def _entry(where: str, entry: Any, groups: Collection[str], tasks: Mapping[str, str | None]) -> Comparison:
    if not isinstance(entry, dict):
        raise ComparisonSpecError(f"{where}: expected a mapping {{family, question, a, b, metric, task}}, got "
                                  f"{str(entry)[:60]!r}")
    for key in entry:
        if key not in ENTRY_KEYS:
            raise ComparisonSpecError(f"{where}: unknown key {key!r}{did_you_mean(key, ENTRY_KEYS)}; known: "
                                      f"{', '.join(ENTRY_KEYS)}")
    missing = [key for key in REQUIRED if key not in entry]
    if missing:
        raise ComparisonSpecError(f"{where}: {', '.join(missing)} missing; a comparison names "
                                  f"{', '.join(REQUIRED)} (condition and did are optional)")
    family, question, a, b, metric, task = (_text(where, key, entry[key]) for key in REQUIRED)
    for side, group in (("a", a), ("b", b)):
        if group not in groups and not (side == "b" and group == UNTRAINED):
            allowed = [*groups, UNTRAINED] if side == "b" else list(groups)
            also = f"; b may also be {UNTRAINED}" if side == "b" else ""
            hint = did_you_mean(group_name(group), allowed)  # a cell's own name: its group is meant
            raise ComparisonSpecError(f"{where}.{side}: no cell is named {group!r}{hint} (a "
                                      f"cell repeated over seeds goes by its name without /seed=N{also})")
    if a == b:
        raise ComparisonSpecError(f"{where}: a and b are both {a!r}; a comparison holds two different arms")
    if metric not in METRIC_FAMILIES:
        raise ComparisonSpecError(f"{where}.metric: unknown metric {metric!r}{did_you_mean(metric, METRIC_FAMILIES)}"
                                  f"; known: {', '.join(METRIC_FAMILIES)}")
    if task not in tasks:
        raise ComparisonSpecError(f"{where}.task: {task!r} is not among evaluation.tasks "
                                  f"({', '.join(tasks)}){did_you_mean(task, tasks)}")
    family_of_task = tasks[task]
    if family_of_task not in METRIC_FAMILIES[metric]:
        readers = ", ".join(t for t, f in tasks.items() if f in METRIC_FAMILIES[metric]) or "none listed"
        raise ComparisonSpecError(f"{where}: task {task!r} has no item outcomes of {metric} (tasks that do: "
                                  f"{readers})")
    condition = condition_of(task, family_of_task)
    given = entry.get("condition", condition)
    if given != condition:
        said = f"scores under {condition!r}" if condition else "is held-out text, which has no evaluation condition"
        raise ComparisonSpecError(f"{where}.condition: {given!r}, but task {task!r} {said} (a task named *"
                                  f"{FIXED_SUFFIX} scores under the fixed one); give the task of the condition meant")
    did = entry.get("did", False)
    if not isinstance(did, bool):
        raise ComparisonSpecError(f"{where}.did: {did!r} is not true or false")
    if did and b == UNTRAINED:
        raise ComparisonSpecError(f"{where}.did: a difference-in-differences holds two trained arms, each against its "
                                  f"own untrained model; with b: {UNTRAINED} write did: false")
    return Comparison(family, question, a, b, metric, task, condition, did)


def parse(section: Any, groups: Collection[str], tasks: Mapping[str, str | None]) -> ComparisonPlan:
    """The section checked against the matrix's groups and its evaluation tasks (name -> task family, None for
    an lm-eval task, whose items are not recorded)."""
    if not tasks:
        raise ComparisonSpecError("the matrix evaluates nothing (no evaluation.tasks), so there is nothing to compare")
    if not isinstance(section, dict):
        raise ComparisonSpecError(f"expected a mapping with compare (and margins, min_seeds), got "
                                  f"{str(section)[:60]!r}")
    for key in section:
        if key not in KEYS:
            raise ComparisonSpecError(f"unknown key {key!r}{did_you_mean(key, KEYS)}; known: {', '.join(KEYS)}")
    if UNTRAINED in groups:  # b: untrained would name both that cell and the base model of every arm
        raise ComparisonSpecError(f"a cell is named {UNTRAINED!r}, the word comparisons use for the base model "
                                  f"(b: {UNTRAINED}: the same cells with their adapter disabled); rename the cell")
    margins, min_seeds = _margins(section.get("margins")), _min_seeds(section.get("min_seeds"))
    entries = section.get("compare")
    if not isinstance(entries, list) or not entries:
        raise ComparisonSpecError("compare: expected a non-empty list of comparisons (- {family, question, a, b, "
                                  "metric, task})")
    found: list[Comparison] = []
    for i, entry in enumerate(entries):
        comparison = _entry(f"compare[{i}]", entry, groups, tasks)
        same = next((j for j, c in enumerate(found) if (c.a, c.b, c.metric, c.task, c.did)
                     == (comparison.a, comparison.b, comparison.metric, comparison.task, comparison.did)), None)
        if same is not None:
            raise ComparisonSpecError(f"compare[{i}]: the same comparison as compare[{same}] (a, b, metric, task and "
                                      "did); it would count twice in its family's correction")
        found.append(comparison)
    return ComparisonPlan(margins, tuple(found), min_seeds)
