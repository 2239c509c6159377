"""The project's evaluation tasks: lm-eval task YAML under harness/tasks/configs/, data made locally.

Each task names its YAML family and how its records are made for one trained cell: the long-document
workload at the cell's context and truncation (held-out documents, never the training ones), long-context
retrieval generated at the cell's context, and held-out real text: Debian manual pages in four languages
(text_en, text_es, text_fr, text_de) and the GIMP User Manual in five (help_en, help_es, help_ca, help_de,
help_fr), the same pages in every language of each. Any other name is
taken as an lm-eval task installed with lm-eval (harness/evaluation/stage.py).
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.data.corpora import documents
from harness.data.training import TRAINING_CORPUS_SEED
from harness.data.workload import generate_corpus, recall_items, section_items
from harness.data.workload.examples import DEFAULT_TARGETS
from harness.tasks.plan import EvaluationPlan
from harness.tasks.ruler import generate

TASK_DIR = Path(__file__).resolve().parent / "configs"  # lm-eval task YAML and the scoring functions they name


@dataclass(frozen=True)
class TaskContext:
    """What a task's data depends on: the cell's settings, its tokenizer and the evaluation plan."""

    settings: dict[str, Any]
    tokenizer: Any
    plan: EvaluationPlan
    condition: str = "own"  # "own": the cell's context and truncation; "fixed": the plan's shared condition

    def __post_init__(self) -> None:
        if self.condition == "fixed":  # the workload as every cell of the matrix is evaluated on it
            object.__setattr__(self, "settings", {**self.settings, **self.plan.fixed})

    @property
    def context(self) -> int:
        return self.settings["context"]

    def encode(self, text: str) -> list[int]:
        return self.tokenizer(text, add_special_tokens=False)["input_ids"]

    def decode(self, ids: list[int]) -> str:
        return self.tokenizer.decode(list(ids))

    def count(self, text: str) -> int:
        return len(self.encode(text))

    def held_out_documents(self) -> list[Any]:  # scores_training_documents says when these are the training ones
        words = self.settings["document_words"]
        return generate_corpus(self.plan.seed, self.plan.documents, words // 2, words * 3 // 2)


# per family: the fields that name an item (the same item in every cell that shares the held-out data), and
# what is kept of it beside its outcome, so that reports can pair cells item by item and read recall by age
ITEM_FIELDS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "recall": (("doc_id", "target_section", "key"),
               ("doc_id", "key", "target_section", "introduced_in", "sections_back", "in_context", "intro_kept",
                "referred_back", "mentions_before", "last_mentioned_in", "prompt_tokens")),
    "section_bpb": (("doc_id", "target_section"), ("doc_id", "target_section", "sections_kept", "sections_dropped",
                                                   "target_cut")),
    "text": (("id",), ("id",)),
}


# per family: the metrics its scores carry, its YAML's metric_list and, for recall, the exact match over the items
# whose answer survived truncation (harness/evaluation/spread.py)
FAMILY_METRICS: dict[str, frozenset[str]] = {
    "recall": frozenset({"exact_match", "recall", "answer_in_context", "exact_match_in_context"}),
    "ruler": frozenset({"exact_match", "recall"}),
    "section_bpb": frozenset({"bits_per_byte"}),
    "text": frozenset({"bits_per_byte", "word_perplexity", "byte_perplexity"}),
}


@dataclass(frozen=True)
class ProjectTask:
    name: str
    family: str  # the YAML file under harness/tasks/configs/
    records: Callable[[TaskContext], list[dict[str, Any]]]
    description: str
    max_gen_toks: int | None = None
    condition: str = "own"  # "fixed": scored under the evaluation plan's shared condition, not the cell's own

    def context(self, settings: dict[str, Any], plan: EvaluationPlan, tokenizer: Any = None) -> TaskContext:
        return TaskContext(settings, tokenizer, plan, self.condition)

    def parameters(self, ctx: TaskContext) -> dict[str, Any]:
        """What the scores depend on besides the model: recorded with them, and part of a baseline's key."""
        params: dict[str, Any] = {"family": self.family, "context": ctx.context, "seed": ctx.plan.seed}
        if self.condition != "own":
            params["condition"] = self.condition
        if self.family in ("recall", "section_bpb"):
            params.update(truncation=ctx.settings["truncation"], truncation_decay=ctx.settings["truncation_decay"],
                          documents=ctx.plan.documents, document_words=ctx.settings["document_words"])
        if self.family in ("recall", "ruler"):
            params["examples"] = ctx.plan.examples
        if self.family == "recall" and ctx.plan.recall_targets != DEFAULT_TARGETS:
            params["recall_targets"] = list(ctx.plan.recall_targets)  # absent at the default: older files stay current
        return params

    @property
    def items(self) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """(the fields that identify an item across cells, the fields kept with its outcome), empty where the
        task's items are not recorded one by one."""
        return ITEM_FIELDS.get(self.family, ((), ()))

    def config(self, data_file: Path) -> dict[str, Any]:
        """The task's lm-eval config: its YAML, loaded as lm-eval loads it, with the data and name filled in."""
        from lm_eval.tasks._yaml_loader import load_yaml

        config = load_yaml(TASK_DIR / f"{self.family}.yaml")
        config["task"] = self.name
        config["dataset_kwargs"] = {"data_files": {"test": str(data_file)}}
        if self.max_gen_toks is not None:
            config["generation_kwargs"] = {**config["generation_kwargs"], "max_gen_toks": self.max_gen_toks}
        return config


def _sample_positions(total: int, count: int, seed: int) -> list[int]:
    """A seeded subset of positions, in the original order, so that a few items stand for many without
    favouring any."""
    return list(range(total)) if total <= count else sorted(random.Random(seed).sample(range(total), count))


def _recall(ctx: TaskContext) -> list[dict[str, Any]]:
    # the items are chosen before their prompts are built, since building a long prompt is the cost
    return recall_items(ctx.held_out_documents(), ctx.encode, ctx.decode, ctx.context, ctx.settings["truncation"],
                        ctx.settings["truncation_decay"], answer_tokens=24, targets=ctx.plan.recall_targets,
                        choose=lambda total: _sample_positions(total, ctx.plan.examples, ctx.plan.seed))


def _sections(ctx: TaskContext) -> list[dict[str, Any]]:
    return section_items(ctx.held_out_documents(), ctx.encode, ctx.decode, ctx.context, ctx.settings["truncation"],
                         ctx.settings["truncation_decay"])


def _ruler(name: str, answer_tokens: int) -> Callable[[TaskContext], list[dict[str, Any]]]:
    def records(ctx: TaskContext) -> list[dict[str, Any]]:
        return generate(name, ctx.count, ctx.context, ctx.plan.examples, ctx.plan.seed, answer_tokens=answer_tokens)

    return records


def _text(lang: str, corpus: str = "manpages") -> Callable[[TaskContext], list[dict[str, Any]]]:
    def records(ctx: TaskContext) -> list[dict[str, Any]]:
        return [{"id": d.id, "text": d.text} for d in documents(lang, "heldout", corpus=corpus)]

    return records


_LANGUAGE_NAMES = {"en": "English", "es": "Spanish", "fr": "French", "de": "German"}
_HELP_LANGUAGE_NAMES = {"en": "English", "es": "Spanish", "ca": "Catalan", "de": "German", "fr": "French"}

PROJECT_TASKS: dict[str, ProjectTask] = {t.name: t for t in (
    ProjectTask("workload_recall", "recall", _recall,
                "exact recall of facts planted in held-out documents, at the cell's context and truncation",
                max_gen_toks=24),
    ProjectTask("workload_bpb", "section_bpb", _sections,
                "bits per byte of held-out target sections given their truncated preceding text"),
    ProjectTask("workload_recall_fixed", "recall", _recall,
                "exact recall of facts planted in held-out documents, under the evaluation's shared condition "
                "(evaluation.fixed) instead of the cell's own", max_gen_toks=24, condition="fixed"),
    ProjectTask("workload_bpb_fixed", "section_bpb", _sections,
                "bits per byte of held-out target sections under the evaluation's shared condition "
                "(evaluation.fixed) instead of the cell's own", condition="fixed"),
    ProjectTask("niah_single", "ruler", _ruler("niah_single", 16), "one needle in a haystack", max_gen_toks=16),
    ProjectTask("niah_multikey", "ruler", _ruler("niah_multikey", 16), "one needle among distractor keys",
                max_gen_toks=16),
    ProjectTask("niah_multivalue", "ruler", _ruler("niah_multivalue", 48), "every value of one key",
                max_gen_toks=48),
    ProjectTask("kv_retrieval", "ruler", _ruler("kv_retrieval", 64), "one value from a large JSON object",
                max_gen_toks=64),
    ProjectTask("variable_tracking", "ruler", _ruler("variable_tracking", 32), "every variable bound to a value",
                max_gen_toks=32),
    *(ProjectTask(f"text_{lang}", "text", _text(lang), f"held-out {name} text (Debian manual pages)")
      for lang, name in _LANGUAGE_NAMES.items()),
    *(ProjectTask(f"help_{lang}", "text", _text(lang, "help"),
                  f"held-out {name} text (GIMP User Manual, Debian gimp-help 2.10.34)")
      for lang, name in _HELP_LANGUAGE_NAMES.items()),
)}


def task_parameters(task: str, settings: dict[str, Any], plan: EvaluationPlan) -> dict[str, Any] | None:
    """A project task's parameters (what its data depends on) under the task's own condition (a `_fixed` task: the
    plan's shared context and truncation), known without loading the model; None for an lm-eval task, whose data
    lm-eval owns. The evaluate stage and `check --fresh` both take them from here."""
    definition = PROJECT_TASKS.get(task)
    return definition.parameters(definition.context(settings, plan)) if definition else None


def recorded_metrics(task: str) -> frozenset[str] | None:
    """The metrics a project task's scores carry, or None for a task of lm-eval's own, whose metrics vary."""
    found = PROJECT_TASKS.get(task)
    return FAMILY_METRICS[found.family] if found else None


def write_records(records: list[dict[str, Any]], path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as handle:
        for record in records:
            handle.write(json.dumps(record, ensure_ascii=False) + "\n")
    return path


def scores_training_documents(task: str, seed: int, settings: dict[str, Any]) -> bool:
    """Whether `task`, at the evaluation's `seed`, scores the documents a cell of these settings trained on: a
    grant-reports cell trains on generate_corpus(TRAINING_CORPUS_SEED, ...) whatever its own seed, and the held-out
    documents are generate_corpus(seed, ...) at the same lengths, so that seed gives the same documents, first to
    last (a longer corpus only adds documents after them)."""
    held_out = task in PROJECT_TASKS and PROJECT_TASKS[task].records in (_recall, _sections)
    return held_out and settings.get("data") == "grant-reports" and seed == TRAINING_CORPUS_SEED
