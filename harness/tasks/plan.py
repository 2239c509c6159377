"""The `evaluation:` section of a matrix file: which tasks the evaluate stage runs on every trained cell.
Why it is so: docs/matrix-files.md."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from harness.data.workload.examples import DEFAULT_TARGETS
from harness.data.workload.truncation import POLICIES

TASK_NAME = re.compile(r"^[A-Za-z0-9_.-]+\Z")
_INT_OPTIONS = {"documents": 1, "examples": 1, "seed": 0, "batch_size": 1}
# past these an evaluation would only run out of time or memory: every document and example is built and scored
_INT_MAXIMA = {"documents": 10_000, "examples": 100_000, "seed": 2**32 - 1, "batch_size": 4096}


class EvaluationSpecError(ValueError):
    """A problem in the `evaluation:` section; the message says where and how to fix it."""


@dataclass(frozen=True)
class EvaluationPlan:
    tasks: tuple[str, ...] = ()
    documents: int = 8
    examples: int = 40
    limit: int | None = None
    seed: int = 1000
    baseline: bool = True
    batch_size: int = 1
    recall_targets: tuple[float, ...] = DEFAULT_TARGETS
    # the one evaluation condition every cell shares (context, truncation, truncation_decay), read by the
    # `*_fixed` tasks: it separates what a cell's training did from what its own evaluation prompt does
    fixed: dict[str, Any] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)

    def task_names(self) -> list[str]:
        return list(self.tasks)

    @classmethod
    def parse(cls, section: Any) -> EvaluationPlan:
        if section is None:
            return cls()
        if not isinstance(section, dict):
            raise EvaluationSpecError(f"expected a mapping with 'tasks', got {type(section).__name__}")
        known = {"tasks", "limit", "baseline", "recall_targets", "fixed", *_INT_OPTIONS}
        for key in section:
            if key not in known:
                raise EvaluationSpecError(f"unknown key {key!r}; known: {', '.join(sorted(known))}")
        tasks = section.get("tasks")
        if not isinstance(tasks, list) or not tasks:
            raise EvaluationSpecError("tasks: expected a non-empty list of task names")
        for task in tasks:
            if not isinstance(task, str) or not TASK_NAME.match(task):
                raise EvaluationSpecError(f"tasks: {task!r} is not a task name (letters, digits, '_', '.', '-')")
        if len(set(tasks)) != len(tasks):
            raise EvaluationSpecError("tasks: a task is listed twice")
        options: dict[str, Any] = {}
        for key, minimum in _INT_OPTIONS.items():
            if key in section:
                value = section[key]
                if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
                    raise EvaluationSpecError(f"{key}: {value!r} is not an integer of at least {minimum}")
                if value > _INT_MAXIMA[key]:
                    raise EvaluationSpecError(f"{key}: {value:,} is above the maximum {_INT_MAXIMA[key]:,}")
                options[key] = value
        limit = section.get("limit")
        if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
            raise EvaluationSpecError(f"limit: {limit!r} is not a positive integer (or null for every document)")
        baseline = section.get("baseline", True)
        if not isinstance(baseline, bool):
            raise EvaluationSpecError(f"baseline: {baseline!r} is not true or false")
        targets = section.get("recall_targets", list(DEFAULT_TARGETS))
        if not isinstance(targets, list) or not targets or not all(
                isinstance(t, int | float) and not isinstance(t, bool) and 0 < t <= 1 for t in targets):
            raise EvaluationSpecError(f"recall_targets: {str(targets)[:80]} is not a non-empty list of fractions "
                                      "in (0, 1]")
        if len(set(targets)) != len(targets):  # the same questions asked twice would count twice in the score
            raise EvaluationSpecError(f"recall_targets: a target is listed twice in {str(targets)[:80]}")
        fixed = _fixed(section.get("fixed"))
        needing = [t for t in tasks if t.endswith("_fixed")]
        if needing and not fixed:
            raise EvaluationSpecError(f"tasks: {needing[0]} is evaluated under the shared condition 'fixed:' "
                                      "(context, truncation), which this section does not set")
        return cls(tasks=tuple(tasks), limit=limit, baseline=baseline, recall_targets=tuple(float(t) for t in targets),
                   fixed=fixed, **options)


_FIXED_KEYS = ("context", "truncation", "truncation_decay")


def _fixed(value: Any) -> dict[str, Any]:
    """The `fixed:` condition, with truncation_decay filled in (0.5) where the policy reads it."""
    if value is None:
        return {}
    if not isinstance(value, dict) or "context" not in value or "truncation" not in value:
        raise EvaluationSpecError(f"fixed: {str(value)[:80]} is not a mapping with context and truncation "
                                  "(and truncation_decay for exp_decay)")
    unknown = sorted(set(value) - set(_FIXED_KEYS))
    if unknown:
        raise EvaluationSpecError(f"fixed: unknown key {unknown[0]!r}; known: {', '.join(_FIXED_KEYS)}")
    context, policy, decay = value["context"], value["truncation"], value.get("truncation_decay", 0.5)
    if isinstance(context, bool) or not isinstance(context, int) or not 64 <= context <= 2**20:
        raise EvaluationSpecError(f"fixed: context {context!r} is not a whole number of tokens from 64 to 1,048,576")
    if policy not in POLICIES:
        raise EvaluationSpecError(f"fixed: truncation {policy!r} is not one of {', '.join(POLICIES)}")
    if isinstance(decay, bool) or not isinstance(decay, int | float) or not 0 < decay < 1:
        raise EvaluationSpecError(f"fixed: truncation_decay {decay!r} is not a number strictly between 0 and 1")
    return {"context": context, "truncation": policy, "truncation_decay": float(decay)}
