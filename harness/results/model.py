"""The result of a cell, and of an evaluation of it: one typed model that owns the schema, the statuses,
the validation and the columns of the tables.

Everything a report shows is read from files that validate against these models. Units are raw: bytes,
seconds, tokens. A field's `unit` and, for table columns, `column` metadata live beside its type, so the
aggregate (harness/report/aggregate.py) and the report (harness/report/build.py) take their columns from here.
`harness/results/schema/*.json` are the JSON Schemas generated from these models (`vramlab schema`).
"""

from __future__ import annotations

import datetime as dt
import math
import re
from enum import StrEnum
from typing import Annotated, Any, Literal, NamedTuple

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, field_validator, model_validator

from harness.core.hidden_characters import hidden_character
from harness.results.contradictions import contradictions, time_order_contradiction
from harness.spec.cell_checks import name_contradiction
from harness.spec.cells import Cell, cell_id_of
from harness.spec.settings import SETTINGS, defaults
from harness.tasks.catalog import recorded_metrics

CELL_SCHEMA_VERSION: Literal[3] = 3
EVALUATION_SCHEMA_VERSION = 1
GIB = 2**30


def now() -> str:
    """A result's time stamps (started_at, finished_at): UTC, to the second."""
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")


class Status(StrEnum):
    """What happened to a cell. Every outcome is a result; only `ok` cells have throughput."""

    ok = "ok"  # trained; the whole process stayed within the budget
    oom = "oom"  # an allocation failed, or the process's device memory went over the budget
    skipped = "skipped"  # a declared conflict, a technique this machine cannot run, or predicted not to fit
    error = "error"  # anything else; the traceback is kept
    timeout = "timeout"  # passed its wall-clock limit; the phase it was in is kept


class EvaluationStatus(StrEnum):
    ok = "ok"
    skipped = "skipped"  # the task's data is not available here, or the cell has no trained adapter
    not_applicable = "not_applicable"  # random weights: no quality number is ever reported for them
    oom = "oom"  # ran out of memory under the cell's own budget (the evaluate stage is held to it as training is)
    error = "error"


def column(label: str | None = None, unit: str | None = None, scale: float = 1.0, digits: int = 2,
           description: str = "") -> Any:
    """A metric that becomes a column of cells.csv (raw) and, with a label, of the report (scaled)."""
    extra: dict[str, Any] = {"column": True, "scale": scale, "digits": digits}
    if label:
        extra["label"] = label
    if unit:
        extra["unit"] = unit
    return Field(None, description=description, json_schema_extra=extra)


def raw(unit: str | None = None, description: str = "") -> Any:
    return Field(None, description=description, json_schema_extra={"unit": unit} if unit else None)


Bytes = Annotated[int, Field(ge=0)]
Seconds = Annotated[float, Field(ge=0)]


def _time_stamp(text: str) -> str:
    """A moment as now() writes it (ISO 8601): a word in its place ('yesterday') orders nothing and dates nothing."""
    try:
        moment = dt.datetime.fromisoformat(text)
    except ValueError:
        raise ValueError(f"{text!r} is not a time stamp; vramlab writes one as ISO 8601, such as "
                         "2026-12-05T13:15:55+00:00") from None
    if moment.tzinfo is None:  # a time without its zone cannot be ordered against one with it, nor dated
        raise ValueError(f"{text!r} has no time zone; vramlab writes every time stamp with its zone, such as "
                         "2026-12-05T13:15:55+00:00")
    return text


TimeStamp = Annotated[str, AfterValidator(_time_stamp)]


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)


def _one_line(text: str) -> str:
    """A name or a matrix as vramlab writes it: one line of text a report shows; a control character (NUL) in it
    was edited in, and makes the name no longer the cell's."""
    hidden = hidden_character(text, allowed="")
    if hidden:
        raise ValueError(f"{text!r} holds {hidden}, which no name vramlab writes has; the file was edited after "
                         "vramlab wrote it")
    return text


OneLine = Annotated[str, AfterValidator(_one_line)]


class PhaseMetrics(Strict):
    peak_device_bytes: Bytes | None = None
    peak_host_bytes: Bytes | None = None
    peak_host_unmapped_bytes: Bytes | None = None
    peak_host_pinned_bytes: Bytes | None = None
    peak_allocated_bytes: Bytes | None = None
    peak_reserved_bytes: Bytes | None = None
    seconds: Seconds | None = None


class TimeByPhase(Strict):
    """Where the measuring process's wall time went, in seconds; the parts add up to `total`. Most of a cell's
    time is not its measured steps, and this says which part to make cheaper."""

    start_and_imports: Seconds = Field(description="process start to the measurement: interpreter, imports")
    device_setup: Seconds | None = Field(None, description="CUDA initialized, the budget applied, the environment "
                                                           "collected")
    prepare: Seconds | None = Field(None, description="the model path's imports (Unsloth's patches) and the "
                                                      "techniques' load requests")
    build: Seconds | None = Field(None, description="the model found in the cache or built (random weights)")
    load: Seconds = Field(description="the loader: weights read, quantized and placed")
    adapt: Seconds | None = Field(None, description="the training data, the techniques applied: slicing, "
                                                    "checkpointing, adapters")
    trainer_init: Seconds | None = Field(None, description="the trainer made over the data")
    train_setup: Seconds = Field(description="inside training but outside optimizer steps")
    compile_and_first_steps: Seconds = Field(description="the warm-up steps: compilation, autotuning, first "
                                                         "allocations")
    measured_steps: Seconds = Field(description="the steps tokens/s is measured on")
    setup_and_teardown: Seconds = Field(description="the rest: device and budget set-up, environment, reports")
    total: Seconds


class Metrics(Strict):
    peak_device_bytes: Bytes | None = column(
        "peak device GiB", "bytes", GIB, description="whole process on the device (NVML); the CPU's resident set")
    peak_allocated_bytes: Bytes | None = column("peak alloc GiB", "bytes", GIB,
                                                description="PyTorch allocator, allocated")
    peak_reserved_bytes: Bytes | None = column("peak reserved GiB", "bytes", GIB,
                                               description="PyTorch allocator, reserved")
    peak_host_bytes: Bytes | None = column(unit="bytes", description="resident set, mapped files included")
    peak_host_unmapped_bytes: Bytes | None = column(
        "host unmapped GiB", "bytes", GIB, description="resident memory not backed by a file")
    peak_host_pinned_bytes: Bytes | None = column("pinned GiB", "bytes", GIB,
                                                  description="PyTorch's pinned host memory")
    tokens_per_second: Annotated[float, Field(gt=0)] | None = column(
        "tokens/s", "tokens/s", digits=0, description="tokens per optimizer step over the median step time")
    tokens_per_second_mean: Annotated[float, Field(gt=0)] | None = column(unit="tokens/s")
    median_step_seconds: Seconds | None = column("step s (median)", "s")
    step_seconds_iqr: Seconds | None = column(unit="s")
    min_step_seconds: Seconds | None = raw("s")
    max_step_seconds: Seconds | None = raw("s")
    measured_steps: Annotated[int, Field(ge=0)] | None = column()
    tokens_per_step: Annotated[int, Field(ge=0)] | None = column(unit="tokens")
    load_seconds: Seconds | None = column(unit="s")
    train_seconds: Seconds | None = column(unit="s")
    flops_per_token: Annotated[float, Field(ge=0)] | None = column(unit="FLOP")
    achieved_flops_per_second: Annotated[float, Field(ge=0)] | None = raw("FLOP/s")
    peak_flops_per_second: Annotated[float, Field(gt=0)] | None = raw("FLOP/s")
    mfu: Annotated[float, Field(ge=0)] | None = column("MFU", digits=3)
    step_seconds: list[Seconds] = Field(default_factory=list, json_schema_extra={"unit": "s"})
    step_tokens: list[Annotated[int, Field(ge=0)]] | None = None
    loss: list[float | None] = Field(default_factory=list,
                                     description="training loss per optimizer step; null where it diverged")
    memory_samples: Annotated[int, Field(ge=0)] | None = None
    phases: dict[str, PhaseMetrics] = Field(default_factory=dict)
    time_by_phase: TimeByPhase | None = None
    throughput_measured: bool = Field(True, description="false when cells shared the device: speed is no "
                                                        "measurement then, memory still is")

    @field_validator("loss")
    @classmethod
    def _not_negative(cls, values: list[float | None]) -> list[float | None]:
        """Every loss vramlab trains with (nll, dft) is a cross-entropy, never below 0."""
        below = next(((i, v) for i, v in enumerate(values) if v is not None and v < 0), None)
        if below:
            raise ValueError(f"{below[1]:g} at step {below[0] + 1} cannot be: a training loss (a cross-entropy) is "
                             "never negative")
        return values

    @classmethod
    def columns(cls) -> list[str]:
        return [name for name, f in cls.model_fields.items() if (f.json_schema_extra or {}).get("column")]

    @classmethod
    def display(cls) -> dict[str, dict[str, Any]]:
        """The report's columns: field -> label, scale and digits."""
        return {name: dict(f.json_schema_extra) for name, f in cls.model_fields.items()
                if isinstance(f.json_schema_extra, dict) and f.json_schema_extra.get("label")}


class CardEmulationRecord(Strict):
    """Whether torch.cuda answered as the emulated card while the cell ran (harness/core/card_emulation.py)."""

    on: bool
    why_not: str | None = None
    total_bytes: Bytes | None = Field(None, description="the total memory the emulated card reported")
    calls: dict[str, Annotated[int, Field(ge=0)]] = Field(
        default_factory=dict, description="how often each answer was asked for (mem_get_info, ...)")
    lowest_free_bytes: Bytes | None = Field(None, description="the least free memory mem_get_info answered")


class BudgetRecord(Strict):
    limit_bytes: Bytes
    allocator_cap_bytes: Bytes | None = None
    outside_allocator_bytes: Bytes = 0
    paged_optimizer_bytes: Bytes = 0  # taken off the cap: in unified memory, outside the allocator
    # the paged optimizer's state that bitsandbytes keeps in the allocator (parameters under 100,000 elements, block
    # absmax); results from before it was recorded took it off the cap too (their paged_optimizer_bytes hold it)
    unpaged_optimizer_bytes: Bytes = 0
    recaps: int = 0
    device_total_bytes: Bytes | None = None
    judged_on: str
    host_limit_bytes: Bytes | None = None  # judged on the peak of host memory no file backs
    # None: a CPU cell, or a result from before torch answered as the emulated card (it answered as the device)
    card_emulation: CardEmulationRecord | None = None
    notes: list[str] = Field(default_factory=list)


class DeviceLeaseRecord(Strict):
    """The device the cell was given, out of the machine's (harness/process/device_lease.py)."""

    device: str = Field(description="the CUDA_VISIBLE_DEVICES entry the cell ran under: an index or a UUID")
    index: Annotated[int, Field(ge=0)] | None = Field(None, description="the device's index as nvidia-smi gives it")
    slot: Annotated[int, Field(ge=0)]
    slots: Annotated[int, Field(ge=1)] = Field(description="cells that could hold this device at once; 1: the "
                                                           "device was the cell's alone")
    devices: list[str] = Field(description="the devices the lease was taken from")
    waited_seconds: Seconds = 0.0


class GitRecord(Strict):
    commit: str | None = None
    dirty: bool | None = None
    source: str | None = None


class Environment(Strict):
    host: str
    platform: str
    cpu: str
    cpu_count: int | None = None
    host_memory_bytes: Bytes | None = None
    python: str
    versions: dict[str, str | None]
    git: GitRecord
    cuda_available: bool
    cuda: str | None = None
    gpu: str | None = None
    gpu_memory_bytes: Bytes | None = None
    gpu_capability: str | None = None
    gpu_count: int | None = None
    driver: str | None = None
    device_memory_source: str | None = None

    @property
    def machine(self) -> str:
        """The device the work ran on, by name: the GPU where there was one, else the CPU."""
        return self.gpu or self.cpu


_LOCAL_PATH = re.compile(r"^(/|~|[A-Za-z]:\\)")


class ModelSource(Strict):
    """A model named by where it comes from, never by where it sat on one disk."""

    source: str
    random_weights: bool
    kind: Literal["arch", "package", "package parts", "gguf", "folder", "hub id"] | None = None
    preset: str | None = None
    seed: int | None = None
    package: str | None = None
    package_version: str | None = None
    # package parts: the model's name (harness/stack/models/parts.py), and each part package in order with its
    # installed version, or "cache" where the assembled GGUF file was found in the cache
    model: str | None = None
    parts: dict[str, str | None] | None = None
    gguf_file: str | None = None
    gguf_bytes: Bytes | None = None
    gguf_sha256: str | None = None
    # hub id: the commit whose files the cell loaded (the one its `revision` setting pins, or main's when unpinned)
    commit: str | None = Field(None, pattern=r"^[0-9a-f]{40}$")

    @field_validator("gguf_file")
    @classmethod
    def _file_name_only(cls, value: str | None) -> str | None:
        if value is not None and ("/" in value or "\\" in value):
            raise ValueError(f"a file name, not a local path: {value!r}")
        return value


class AdapterRecord(Strict):
    folder: str  # relative to results/<matrix>/adapters/
    sha256: str
    bytes: Bytes
    sliced_vocabulary: bool = False

    @field_validator("folder")
    @classmethod
    def _relative(cls, value: str) -> str:
        if _LOCAL_PATH.match(value) or ".." in value.split("/"):
            raise ValueError(f"the adapter folder must be a name under adapters/, not {value!r}")
        return value


def _vocabulary_columns(record: dict[str, Any]) -> dict[str, Any]:
    """A vocabulary record as cells.csv's columns. Records from before targets were counted after spelling said
    only how many tokens were cut: none cut means no target cut; some cut, an unknown number of targets."""
    cut_tokens = record.get("tokens_cut_after_spelling")
    return {"vocabulary_size": record.get("size"), "vocabulary_outside_share": record.get("outside_share"),
            "vocabulary_counted": record.get("counted_tokens"), "vocabulary_filled": record.get("filled_ids"),
            "vocabulary_targets_cut": record.get("targets_cut_after_spelling", 0 if cut_tokens == 0 else None),
            "vocabulary_tokens_cut": cut_tokens, "vocabulary_targets_skipped": record.get("targets_skipped")}


class Fingerprint(Strict):
    """What the cell's behaviour depends on beyond its settings, as digests (harness/stack/fingerprint.py), so that
    `vramlab check --fresh` can tell a result the current code would no longer reproduce under the same cell id
    (stale). None in a component: the cell did not get that far, or the component does not apply."""

    version: Annotated[int, Field(ge=1)] = Field(description="how the digests are computed; a check compares only "
                                                             "digests of its own version")
    model: str | None = Field(None, description="sha256 of the GGUF file; of a model folder's config and file "
                                                "list; of an arch: preset's fields and seed. None: a hub id")
    tokenizer: str | None = Field(None, description="sha256 of the tokenizer the model source gives: vocabulary, "
                                                    "merges, added tokens with their ids and flags, bos/eos/unk ids")
    tokenizer_tokens: Annotated[int, Field(ge=0)] | None = Field(None, description="its size, added tokens included")
    added_tokens: Annotated[int, Field(ge=0)] | None = Field(None, description="its added (special and marked) tokens")
    kept_tokens: str | None = Field(None, description="sha256 of the ids a sliced vocabulary keeps; None: native")
    training_data: str | None = Field(None, description="the training sequences' token ids as built "
                                                        "(= data.fingerprint)")


class CellResult(Strict):
    """results/<matrix>/<cell_id>.json"""

    schema_version: Literal[3] = CELL_SCHEMA_VERSION
    cell_id: str = Field(pattern=r"^[0-9a-f]{12}$")
    name: OneLine = Field(min_length=1)
    matrix: OneLine = Field(min_length=1)
    status: Status
    reason: str | None = None
    config: dict[str, Any]
    varied: dict[str, Any] = Field(default_factory=dict)
    environment: Environment | None = None
    metrics: Metrics = Field(default_factory=Metrics)
    budget: BudgetRecord | None = None
    # None: a CPU cell, a machine without GPUs, or a result from before devices were leased (they ran on device 0)
    device_lease: DeviceLeaseRecord | None = None
    records: dict[str, dict[str, Any]] = Field(default_factory=dict)
    model: ModelSource | None = None
    data: dict[str, Any] | None = None
    trainer: dict[str, Any] | None = None
    adapter: AdapterRecord | None = None
    # None: a result of schema 2 or older ("no fingerprint recorded"), or a cell that ended before its model loaded
    fingerprint: Fingerprint | None = None
    phase: str | None = Field(None, description="the phase a timeout or crash happened in")
    traceback: str | None = None
    started_at: TimeStamp | None = None
    finished_at: TimeStamp | None = None

    @model_validator(mode="after")
    def _consistent(self) -> CellResult:
        expected = cell_id_of({**defaults(), **self.config})
        if expected != self.cell_id:
            raise ValueError(f"config does not match cell_id {self.cell_id} (its settings hash to {expected})")
        # a seeded cell is named `<label>/seed=<n>`: each part is checked as the matrix checks a given name
        said = next(filter(None, (name_contradiction(part, {**defaults(), **self.config})
                                  for part in self.name.split("/"))), None)
        if said:
            raise ValueError(f"name {self.name!r} contradicts config: {said}")
        if self.status is not Status.ok and not self.reason:
            raise ValueError(f"status {self.status.value!r} needs a reason")
        if self.status is Status.ok and self.metrics.peak_device_bytes is None:
            raise ValueError("an ok cell needs metrics.peak_device_bytes")
        found = contradictions(self)
        if found:
            raise ValueError("damaged, its values contradict each other: " + "; ".join(found))
        return self

    @property
    def failed_phase(self) -> str | None:
        """Phases are recorded in the order they ran; a failed cell failed in its last one."""
        if self.status not in (Status.oom, Status.error, Status.timeout):
            return None
        return self.phase or (list(self.metrics.phases)[-1] if self.metrics.phases else None)

    def row(self, order: int) -> dict[str, Any]:
        """This cell as one row of cells.csv: settings, scalar metrics, and what the records tell."""
        records = self.records
        row: dict[str, Any] = {"order": order, "cell_id": self.cell_id, "name": self.name,
                               "status": self.status.value, "reason": self.reason}
        for name in SETTINGS:
            value = self.config.get(name, SETTINGS[name].default)
            row[name] = ",".join(value) if isinstance(value, list) else value
        for name in Metrics.columns():
            row[name] = getattr(self.metrics, name)
        losses = [x for x in self.metrics.loss if x is not None]
        row["first_loss"] = losses[0] if losses else None
        row["final_loss"] = losses[-1] if losses else None
        row["failed_phase"] = self.failed_phase
        row["budget_bytes"] = self.budget.limit_bytes if self.budget else None
        row["attention_kernel"] = records.get("attention", {}).get("kernel")
        row["attention_fallback"] = records.get("attention", {}).get("fallback")
        row |= _vocabulary_columns(records.get("vocabulary", {}))
        row["trainable_parameters"] = records.get("adapter", {}).get("trainable_parameters")
        row["random_weights"] = self.model.random_weights if self.model else None
        row["throughput_measured"] = self.metrics.throughput_measured
        env = self.environment
        # not 'device': that is a setting (cuda, cpu, auto); this is the machine it ran on
        row["device_name"] = env.machine if env else None
        row["torch"] = env.versions.get("torch") if env else None
        row["code_commit"] = (env.git.commit[:7] + ("+dirty" if env.git.dirty else "")) \
            if env and env.git.commit else None
        return row

    def steps(self) -> list[dict[str, Any]]:
        """This cell's optimizer steps as rows of steps.csv."""
        seconds, losses = self.metrics.step_seconds, self.metrics.loss
        warmup = self.config.get("warmup_steps", 0)
        return [{"cell_id": self.cell_id, "name": self.name, "step": i + 1,
                 "seconds": seconds[i] if i < len(seconds) else None,
                 "loss": losses[i] if i < len(losses) else None, "warmup": i < warmup}
                for i in range(max(len(seconds), len(losses)))]


def new_result(cell: Cell, status: Status, reason: str | None = None, **fields: Any) -> CellResult:
    """A cell's result as every writer starts it: its id, name, matrix, settings and the time it started."""
    return CellResult(cell_id=cell.cell_id, name=cell.name, matrix=cell.matrix, status=status, reason=reason,
                      config=cell.settings, varied=cell.varied, started_at=now(), **fields)


STEP_COLUMNS = ["cell_id", "name", "step", "seconds", "loss", "warmup"]


class MetricKind(NamedTuple):
    low: float
    high: float
    higher_is_better: bool


# each known metric's values and direction: a share of items lies in 0..1, bits are never negative, a perplexity is at
# least 1; a score outside them, or turned the other way, was edited or damaged and would be published as measured
_SHARE = MetricKind(0.0, 1.0, True)
_PERPLEXITY = MetricKind(1.0, math.inf, False)
METRICS: dict[str, MetricKind] = {
    **dict.fromkeys(("exact_match", "exact_match_in_context", "answer_in_context", "recall", "acc", "acc_norm"),
                    _SHARE),
    "bits_per_byte": MetricKind(0.0, math.inf, False),
    **dict.fromkeys(("perplexity", "word_perplexity", "byte_perplexity"), _PERPLEXITY),
}


def higher_is_better(metric: str) -> bool:
    """A metric's direction; one not listed in METRICS is taken as a score (higher is better)."""
    kind = METRICS.get(metric)
    return kind.higher_is_better if kind else True


class Score(Strict):
    metric: str
    value: Annotated[float, Field(strict=True)] | None  # None only where the metric could not be computed (`note`)
    stderr: Annotated[float, Field(ge=0)] | None = None
    stderr_method: str | None = None  # "lm-eval", "bootstrap over documents", ...
    n: Annotated[int, Field(ge=0)]
    higher_is_better: bool
    note: str | None = None

    @field_validator("value")
    @classmethod
    def _finite(cls, value: float | None) -> float | None:
        if value is not None and not math.isfinite(value):
            raise ValueError("a score must be a finite number")
        return value

    @model_validator(mode="after")
    def _in_range(self) -> Score:
        kind = METRICS.get(self.metric, MetricKind(-math.inf, math.inf, self.higher_is_better))
        if self.value is not None and not kind.low <= self.value <= kind.high:
            span = f"{kind.low:g} to {kind.high:g}" if math.isfinite(kind.high) else f"at least {kind.low:g}"
            raise ValueError(f"{self.metric} {self.value:g} cannot be: its values are {span}")
        if self.value is not None and self.n == 0:
            raise ValueError(f"{self.metric} {self.value:g} is a score over no items (n 0); a score needs n of at "
                             "least 1, or no value")
        if self.value is None and self.n > 0 and not self.note:
            raise ValueError(f"{self.metric} has no value over n {self.n} items and no note saying why it could not "
                             "be computed; the file was edited after vramlab wrote it")
        if self.higher_is_better is not kind.higher_is_better:
            raise ValueError(f"{self.metric}: higher_is_better {str(self.higher_is_better).lower()}, but "
                             f"{'higher' if kind.higher_is_better else 'lower'} is better for {self.metric}")
        return self


def _listed_once(scores: list[Score] | None, field: str) -> None:
    """One value per metric: a metric listed twice leaves which of its values is reported to the reader."""
    metrics = [s.metric for s in scores or []]
    twice = sorted({m for m in metrics if metrics.count(m) > 1})
    if twice:
        raise ValueError(f"{field}: the metric {twice[0]} is listed {metrics.count(twice[0])} times; keep one score "
                         "per metric")


def _recorded_by_task(scores: list[Score] | None, field: str, task: str) -> None:
    """A project task's scores carry its own metrics only: another name ('bleu') was edited in, and no report has a
    column or a direction for it."""
    known = recorded_metrics(task)
    if known is None:  # a task of lm-eval's own
        return
    for i, score in enumerate(scores or []):
        if score.metric not in known:
            raise ValueError(f"{field}.{i}.metric: {score.metric!r} is not a metric task {task} records; its metrics "
                             f"are {', '.join(sorted(known))}")


class EvaluationResult(Strict):
    """results/<matrix>/evaluations/<cell_id>/<task>.json: one task on one trained cell."""

    schema_version: Literal[1] = EVALUATION_SCHEMA_VERSION
    kind: Literal["evaluation"] = "evaluation"
    cell_id: str = Field(pattern=r"^[0-9a-f]{12}$")
    name: OneLine
    matrix: OneLine
    task: str = Field(pattern=r"^[A-Za-z0-9_.-]+$")
    status: EvaluationStatus
    reason: str | None = None
    task_config: dict[str, Any] = Field(default_factory=dict)
    scores: list[Score] = Field(default_factory=list, description="the trained cell (base model + adapter)")
    baseline: list[Score] | None = Field(None, description="the same base model untrained (adapter disabled)")
    items: list[dict[str, Any]] | None = Field(None, description="each item's outcome with the trained cell, for "
                                                "the tasks that record items (harness.tasks.catalog.ITEM_FIELDS)")
    baseline_items: list[dict[str, Any]] | None = Field(None, description="the same items untrained")
    adapter_sha256: str | None = None
    limit: Annotated[int, Field(ge=1)] | None = Field(None, description="documents per task when capped; scores are "
                                                                       "then partial")
    seconds: Seconds | None = None
    memory: dict[str, int | None] | None = Field(
        None, description="the task's peaks on the device under the cell's budget (bytes): allocated, reserved, "
                          "outside the allocator, the allocator's cap and the budget")
    lm_eval_version: str | None = None
    environment: Environment | None = None
    started_at: TimeStamp | None = None
    finished_at: TimeStamp | None = None
    traceback: str | None = None

    @model_validator(mode="after")
    def _consistent(self) -> EvaluationResult:
        if self.status is not EvaluationStatus.ok and not self.reason:
            raise ValueError(f"status {self.status.value!r} needs a reason")
        if self.status is EvaluationStatus.ok and not self.scores:
            raise ValueError("an ok evaluation needs scores")
        _listed_once(self.scores, "scores")
        _listed_once(self.baseline, "baseline")
        _recorded_by_task(self.scores, "scores", self.task)
        _recorded_by_task(self.baseline, "baseline", self.task)
        order = time_order_contradiction(self.started_at, self.finished_at)
        if order:
            raise ValueError(f"damaged, its values contradict each other: {order}")
        return self

    @property
    def partial(self) -> bool:
        return self.limit is not None
