"""The evaluate stage: one trained cell, the matrix's tasks, one result file per task.
Why it is so: docs/quality.md."""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import tempfile
import time
import traceback
from pathlib import Path
from typing import Any

from harness import results
from harness.core import environment
from harness.core.atomic_files import write_text_atomic
from harness.core.budget import Budget
from harness.core.device_cap import start_capped
from harness.core.errors import UsageError
from harness.core.file_locks import held
from harness.core.runtime import Runtime
from harness.core.suggest import did_you_mean
from harness.data.workload import DoesNotFit
from harness.evaluation.lm import cell_lm
from harness.evaluation.spread import items_from, scores_from
from harness.evaluation.task_metadata import task_metadata
from harness.results import EvaluationResult, EvaluationStatus, Score, Status
from harness.results.adapter_files import adapter_problem
from harness.results.existing import review_evaluation
from harness.spec.matrix import evaluation_plan, find_cell
from harness.stack.backends.huggingface import HuggingFaceBackend
from harness.stack.contract import LoadRequest, Plan
from harness.stack.models import sources
from harness.stack.techniques.vocabulary import Vocabulary
from harness.stack.token_map import TokenMap
from harness.tasks.catalog import PROJECT_TASKS, task_parameters, write_records
from harness.tasks.plan import EvaluationPlan

log = logging.getLogger("vramlab")
ItemFields = tuple[tuple[str, ...], tuple[str, ...]]
Scored = tuple[list[Score], list[dict[str, Any]] | None]  # scores, and each item's outcome where recorded


def task_identity(config: Any) -> str:
    """A task's config as text that is the same in every process that loads it."""
    return json.dumps(config, sort_keys=True, default=_named)


def _named(value: Any) -> str:
    # a task's functions (process_results) by module and name: str() adds the address, which differs between
    # processes, so sibling cells of 4 December keyed the same untrained model three ways and scored it three times
    if callable(value):
        return f"{getattr(value, '__module__', '?')}.{getattr(value, '__qualname__', type(value).__name__)}"
    return str(value)


def _result(cell: Any, task: str, status: EvaluationStatus, reason: str | None = None,
            **fields: Any) -> EvaluationResult:
    return EvaluationResult(cell_id=cell.cell_id, name=cell.name, matrix=cell.matrix, task=task, status=status,
                            reason=reason, started_at=results.now(), **fields)


def _write(result: EvaluationResult, results_dir: Path, adapter_sha256: str | None = None) -> None:
    """Write one task's outcome, except over a score of this very adapter: an `ok` evaluation is replaced only by
    another `ok` one, never by what a machine that cannot evaluate the cell (no adapter here, no GPU, no task
    data offline) or a failing run records. A damaged file is set aside first, as a damaged cell result is."""
    path = results.evaluation_path(results_dir, result.matrix, result.cell_id, result.task)

    redo = review_evaluation(path, result.cell_id, result.task)
    if redo is not None:
        log.warning("%s; moved to %s, and the task is evaluated again", redo.reason, redo.set_aside())
    elif result.status is not EvaluationStatus.ok and path.is_file() and adapter_sha256 is not None:
        existing = results.read_evaluation(path)
        if existing.status is EvaluationStatus.ok and existing.adapter_sha256 == adapter_sha256:
            log.warning("evaluate %s (%s) %s: its ok score of this adapter is kept; this run could only record "
                        "%s - %s", result.cell_id, result.name, result.task, result.status.value, result.reason)
            return
    result.finished_at = results.now()
    results.write_atomic(path, result)
    log.info("evaluate %s (%s) %s: %s%s", result.cell_id, result.name, result.task, result.status.value,
             f" - {result.reason}" if result.reason else "")


def _current(path: Path, adapter_sha256: str | None, parameters: dict[str, Any] | None) -> bool:
    """Whether a task's file already holds the evaluation of this adapter with these task parameters."""
    if not path.is_file():
        return False
    try:
        existing = results.read_evaluation(path)
    except results.ResultFileError:
        return False
    return (existing.status is EvaluationStatus.ok and existing.adapter_sha256 == adapter_sha256
            and (parameters is None or existing.task_config.get("parameters") == parameters))


# Nothing is fetched from a hub while evaluating: a task whose data is not here is skipped with the reason.
OFFLINE = {"HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}


def evaluate_cell(matrix: str, cell_id: str, results_dir: Path, tasks: list[str] | None = None) -> None:
    for name, value in OFFLINE.items():
        os.environ.setdefault(name, value)
    cell = find_cell(matrix, cell_id)
    plan = evaluation_plan(matrix)
    names = tasks or plan.task_names()
    trained = results.read(results.result_path(results_dir, cell.matrix, cell.cell_id))
    adapter = trained.adapter.sha256 if trained.adapter else None
    reason = _no_model_reason(trained, results_dir)
    if reason is not None:
        status = EvaluationStatus.not_applicable if trained.model and trained.model.random_weights \
            else EvaluationStatus.skipped
        for task in names:
            _write(_result(cell, task, status, reason), results_dir, adapter)
        return
    pending = [t for t in names if not _current(results.evaluation_path(results_dir, cell.matrix, cell.cell_id, t),
                                                trained.adapter.sha256, task_parameters(t, cell.settings, plan))]
    if not pending:
        return
    damaged = adapter_problem(results.adapter_folder(results_dir, trained.matrix, trained.cell_id),
                              trained.adapter.sha256)
    if damaged:  # no score of another adapter is recorded as this cell's, nor an error of a file it never had
        raise UsageError(f"the kept adapter of {cell.name} is damaged: {damaged}; delete the cell's result file to "
                         "train it again")
    try:
        session = Session(cell, trained, plan, results_dir)
    except Exception as err:  # the model itself could not be rebuilt: every pending task says why
        for task in pending:
            _write(_result(cell, task, EvaluationStatus.error, f"{type(err).__name__}: {err}"[:500],
                           traceback=traceback.format_exc()), results_dir, adapter)
        return
    with session:
        for task in pending:
            _write(session.evaluate(task), results_dir, adapter)


def _no_model_reason(trained: Any, results_dir: Path) -> str | None:
    if trained.model is not None and trained.model.random_weights:
        return "n/a (random weights): quality is never reported for a model with random weights"
    if trained.status is not Status.ok:
        return f"the cell did not train to the end ({trained.status.value}), so there is nothing to evaluate"
    if trained.adapter is None:
        return "the cell kept no adapter (it ran without --keep-adapter); delete its result to train it again"
    folder = results.adapter_folder(results_dir, trained.matrix, trained.cell_id)
    if not (folder / "adapter_config.json").is_file():
        return (f"the trained adapter is not on this machine ({folder} is missing; adapters are not committed): "
                "delete the cell's result file to train it again here")
    return None


class Session:
    """One cell's model, loaded once, evaluated on several tasks."""

    def __init__(self, cell: Any, trained: Any, plan: EvaluationPlan, results_dir: Path) -> None:
        self.cell, self.trained, self.plan, self.results_dir = cell, trained, plan, results_dir
        self.settings = cell.settings
        self.scratch = tempfile.TemporaryDirectory(prefix="vramlab-eval-")
        self.budget = _held_to_budget(trained.config)
        self.model, self.tokenizer, self.token_map, self.runtime = _load(trained, results_dir)
        self.env = environment.collect()
        from lm_eval import __version__ as lm_eval_version

        self.lm_eval_version = lm_eval_version
        # the longest prompt any task builds: the cell's own context, or the shared condition's
        longest = max(self.settings["context"], plan.fixed.get("context", 0))
        self.lm = cell_lm(self.model, self.tokenizer, max_length=longest, batch_size=plan.batch_size,
                          token_map=self.token_map)

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: object) -> None:
        self.scratch.cleanup()
        if self.budget is not None:
            self.budget.release()

    def evaluate(self, task: str) -> EvaluationResult:
        started = time.perf_counter()
        _reset_peaks(self.budget)
        try:
            outcome = self._project_task(task) if task in PROJECT_TASKS else self._lm_eval_task(task)
        except Exception as err:
            if isinstance(err, DoesNotFit):
                return _result(self.cell, task, EvaluationStatus.skipped, f"does not fit: {err}")
            if _is_oom(err):  # a result to record: the task does not fit the cell's budget
                return _result(self.cell, task, EvaluationStatus.oom, str(err).strip().splitlines()[0][:500],
                               memory=_peaks(self.budget), environment=self.env)
            return _result(self.cell, task, EvaluationStatus.error, f"{type(err).__name__}: {err}"[:500],
                           traceback=traceback.format_exc(), environment=self.env)
        if isinstance(outcome, EvaluationResult):
            return outcome
        (scores, items), (baseline, baseline_items), task_config = outcome
        return _result(self.cell, task, EvaluationStatus.ok, scores=scores, baseline=baseline, items=items,
                       baseline_items=baseline_items,
                       task_config=task_config, adapter_sha256=self.trained.adapter.sha256, limit=self.plan.limit,
                       seconds=time.perf_counter() - started, memory=_peaks(self.budget),
                       lm_eval_version=self.lm_eval_version, environment=self.env)

    def _run(self, config: Any, item_fields: ItemFields = ((), ())) -> tuple[Scored, Scored | tuple[None, None]]:
        """Scores (and items) with the adapter, and with it disabled (from the baseline cache when it is there)."""
        scored = self._scores(config, item_fields)
        if not self.plan.baseline:
            return scored, (None, None)
        return scored, self._baseline(config, item_fields)

    def _scores(self, config: Any, item_fields: ItemFields) -> Scored:
        from lm_eval import simple_evaluate

        output = simple_evaluate(model=self.lm, tasks=[config], limit=self.plan.limit, log_samples=True,
                                 bootstrap_iters=0, random_seed=0, numpy_random_seed=0, torch_random_seed=0,
                                 metadata=task_metadata(self.settings["context"], self.tokenizer))
        name = config["task"] if isinstance(config, dict) else config
        key, fields = item_fields
        return scores_from(output, name), (items_from(output, name, fields, key) if key else None)

    def _baseline(self, config: Any, item_fields: ItemFields) -> Scored:
        key = self._baseline_key(config)
        path = self.results_dir / self.cell.matrix / "evaluations" / "baselines" / f"{key}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        # sibling cells evaluated at once share a key: the first scores the untrained model while the others wait
        # for its file, rather than each scoring it again on the same device
        with held(path.with_name(f"{key}.lock")):
            return self._baseline_under_lock(config, item_fields, key, path)

    def _baseline_under_lock(self, config: Any, item_fields: ItemFields, key: str, path: Path) -> Scored:
        wants_items = bool(item_fields[0])
        if path.is_file():
            cached = json.loads(path.read_text())
            if not wants_items or "items" in cached:  # a cache from before items were kept is made again
                return [Score.model_validate(s) for s in cached["scores"]], cached.get("items")
        with self.model.disable_adapter():
            scores, items = self._scores(config, item_fields)
        cache = {"key": key, "scores": [s.model_dump(mode="json") for s in scores]}
        if items is not None:
            cache["items"] = items
        write_text_atomic(path, json.dumps(cache, indent=1))
        return scores, items

    def _baseline_key(self, config: Any) -> str:
        """Everything the untrained model's score depends on: the base model, how it was loaded and sliced,
        the device and precision, the task and its data, lm-eval's version."""
        model = self.trained.model.model_dump(mode="json")
        data = config if isinstance(config, str) else {k: v for k, v in config.items() if k != "dataset_kwargs"}
        data_file = None if isinstance(config, str) else config["dataset_kwargs"]["data_files"]["test"]
        digest = hashlib.sha256(Path(data_file).read_bytes()).hexdigest() if data_file else None
        recorded = self.trained.fingerprint  # the tokenizer and kept set as built, where the cell recorded them
        behaviour = None if recorded is None else \
            {k: getattr(recorded, k) for k in ("model", "tokenizer", "kept_tokens")}
        key = {"model": model, "fingerprint": behaviour, "quantization": self.settings["quantization"],
               "vocabulary": self.token_map.to_json() if self.token_map else None,
               "runtime": [self.runtime.device, self.runtime.dtype_name], "task": task_identity(data),
               "data": digest, "limit": self.plan.limit, "context": self.lm.max_length,
               "lm_eval": self.lm_eval_version}
        return hashlib.sha256(json.dumps(key, sort_keys=True, default=_named).encode()).hexdigest()[:16]

    def _project_task(self, task: str) -> Any:
        definition = PROJECT_TASKS[task]
        ctx = definition.context(self.settings, self.plan, self.tokenizer)
        records = definition.records(ctx)
        if not records:
            return _result(self.cell, task, EvaluationStatus.skipped, "the task produced no examples here")
        data_file = write_records(records, Path(self.scratch.name) / f"{task}.jsonl")
        scored = self._run(definition.config(data_file), definition.items)
        config = {"source": "vramlab", "family": definition.family, "description": definition.description,
                  "parameters": definition.parameters(ctx), "records": len(records),
                  "data_sha256": hashlib.sha256(data_file.read_bytes()).hexdigest(),
                  "evaluated_through": "transformers + peft (the training kernels are not used to evaluate)"}
        if self.token_map is not None:
            config["vocabulary"] = "sliced: text tokenized as the model's tokenizer does, then mapped; " \
                                   "sliced-away tokens spelled with their bytes"
            config["vocabulary_outside_share"] = self._outside_share(records)
        return *scored, config

    def _outside_share(self, records: list[dict[str, Any]]) -> float:
        """The share of the task's text tokens that fall outside the sliced vocabulary."""
        total = outside = 0
        for record in records:
            text = " ".join(str(record.get(k, "")) for k in ("text", "context", "continuation", "prompt", "input"))
            ids = self.tokenizer(text, add_special_tokens=False)["input_ids"]
            total += len(ids)
            outside += self.token_map.encode(ids)[1]
        return outside / total if total else 0.0

    def _lm_eval_task(self, task: str) -> Any:
        from lm_eval.tasks import TaskManager

        manager = TaskManager()
        if task not in manager.all_tasks:
            hint = did_you_mean(task, manager.all_tasks)
            return _result(self.cell, task, EvaluationStatus.skipped,
                           f"no vramlab task and no installed lm-eval task is named {task!r}{hint}")
        try:
            scored = self._run(task)
        except Exception as err:
            if _is_missing_data(err):
                return _result(self.cell, task, EvaluationStatus.skipped,
                               f"the data of lm-eval task {task!r} is not available offline here "
                               f"({type(err).__name__}: {str(err)[:300]})")
            raise
        return *scored, {"source": "lm-eval", "task": task}


def _is_missing_data(err: BaseException) -> bool:
    text = f"{type(err).__name__} {err}".lower()
    markers = ("offline", "connection", "couldn't reach", "not found on the hub", "does not exist on the hub",
               "no such file", "couldn't find", "filenotfound", "hf_hub_offline", "localentrynotfound")
    return isinstance(err, FileNotFoundError | ConnectionError) or any(m in text for m in markers)


def _held_to_budget(settings: dict[str, Any]) -> Budget | None:
    """On a GPU, the cell's own budget applied to this process, as training applied it (None on a CPU)."""
    if not Runtime.resolve(settings).cuda:
        return None
    _, budget, outside = start_capped(settings)
    budget.apply(outside_bytes=outside)
    return budget


def _reset_peaks(budget: Budget | None) -> None:
    if budget is not None:
        import torch

        torch.cuda.reset_peak_memory_stats()


def _peaks(budget: Budget | None) -> dict[str, int | None] | None:
    """The task's allocator peaks; its device peak is the reserved peak plus what lies outside the allocator."""
    if budget is None:
        return None
    import torch

    reserved = torch.cuda.max_memory_reserved()
    return {"peak_allocated_bytes": torch.cuda.max_memory_allocated(), "peak_reserved_bytes": reserved,
            "outside_allocator_bytes": budget.outside_allocator_bytes,
            "peak_device_bytes": reserved + budget.outside_allocator_bytes,
            "allocator_cap_bytes": budget.allocator_cap_bytes, "budget_bytes": budget.limit_bytes}


def _is_oom(err: BaseException) -> bool:
    import torch

    return isinstance(err, torch.OutOfMemoryError)


def _load(trained: Any, results_dir: Path) -> tuple[Any, Any, Any, Any]:
    """The base model as the cell trained it, its tokenizer, the cell's vocabulary map, with the adapter."""
    settings = trained.config
    runtime = Runtime.resolve(settings)
    backend = HuggingFaceBackend()
    # flash_attention_2 without the flash-attn package is SDPA restricted to one kernel: the same function
    attention = "eager" if settings["attention"] == "eager" else "sdpa"
    plan = Plan(settings=settings, runtime=runtime, backend=backend,
                load=LoadRequest(quantization=settings["quantization"], attention=attention,
                                 max_seq_length=settings["context"]))
    resolved = sources.resolve_outside(settings["model"], seed=settings["seed"],
                                       revision=settings.get("revision", sources.UNPINNED))
    model, tokenizer = backend.load(resolved.path, plan)
    folder = results.adapter_folder(results_dir, trained.matrix, trained.cell_id)
    token_map = None
    if (folder / "vocabulary.json").is_file():
        token_map = TokenMap.from_json(json.loads((folder / "vocabulary.json").read_text()), tokenizer)
        Vocabulary._slice(model, token_map.kept)
    model = backend.load_adapter(model, folder)
    model.eval()
    with contextlib.suppress(AttributeError):
        model.config.use_cache = True
    return model, tokenizer, token_map, runtime
