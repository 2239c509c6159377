"""The `evaluation:` section of a matrix file: which tasks the evaluate stage runs on every trained cell.

    evaluation:
      tasks: [workload_recall, workload_bpb, niah_single, text_en, text_de, hellaswag]
      documents: 8       held-out documents of the document workload
      examples: 40       generated examples per long-context retrieval task
      limit: null        at most this many documents per task (the score is then marked partial)
      seed: 1000         seed of the held-out data (never one of the training documents' seeds)
      baseline: true     also score the untrained base model, so the gain from fine-tuning shows
      recall_targets: [0.25, 0.5, 0.75, 1.0]   where recall questions are asked, as fractions of the way
                         through a document's sections (earlier targets ask about younger facts)

A task is either one of this project's (harness/tasks/catalog.py: task YAML under
harness/tasks/configs/, data generated or committed locally) or the name of any task installed with
lm-eval; the latter runs where its data is available offline and is recorded as skipped, with the reason,
where it is not. The section is not part of any cell's id: adding a task evaluates the trained cells again
without training them again.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from harness.data.workload.examples import DEFAULT_TARGETS

TASK_NAME = re.compile(r"^[A-Za-z0-9_.-]+$")
_INT_OPTIONS = {"documents": 1, "examples": 1, "seed": 0, "batch_size": 1}


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
    extra: dict[str, Any] = field(default_factory=dict)

    def task_names(self) -> list[str]:
        return list(self.tasks)

    @classmethod
    def parse(cls, section: Any) -> EvaluationPlan:
        if section is None:
            return cls()
        if not isinstance(section, dict):
            raise EvaluationSpecError(f"expected a mapping with 'tasks', got {type(section).__name__}")
        known = {"tasks", "limit", "baseline", "recall_targets", *_INT_OPTIONS}
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
        return cls(tasks=tuple(tasks), limit=limit, baseline=baseline, recall_targets=tuple(float(t) for t in targets),
                   **options)
