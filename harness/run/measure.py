"""One cell in this (fresh) process: resolve the device once, set the budget, start the trackers, run the
recipe, write the result file.

Whatever happens inside the recipe becomes a result: `ok`, `oom` (an allocation failed, or the whole
process went over the budget), `skipped` (a declared conflict, a technique this machine cannot run, or a
cell the memory estimate says cannot fit where the matrix asks so) or `error` (anything else, with the
traceback). The process exits 0 for all of them, so the matrix goes on; only a failure to write the result
itself is fatal. What this process cannot record itself (a hang, a SIGKILL, a crash in its own error
handling) its supervisor records (harness/process/supervisor.py).
"""

from __future__ import annotations

import logging
import tempfile
import time
import traceback
from pathlib import Path
from typing import Any

from harness.core import environment
from harness.core.budget import Budget
from harness.core.cache import cache_root
from harness.core.device_cap import start_capped
from harness.core.runtime import NoDevice, Runtime
from harness.data import training as data_module
from harness.data.workload import DoesNotFit
from harness.estimate import predicted_not_to_fit
from harness.results import CellResult, Status, new_result, now, write_atomic
from harness.results.existing import error_record, record_input
from harness.results.model import DeviceLeaseRecord
from harness.run import worker_status
from harness.run.memory_history import recording, requested
from harness.run.trackers import (
    ComputeTracker,
    DeviceMemoryTracker,
    HostMemoryTracker,
    TimeTracker,
    TrackerSet,
)
from harness.run.train import train_cell
from harness.spec.cells import Cell
from harness.stack.contract import Unavailable

log = logging.getLogger("vramlab")

_OOM_MARKERS = ("out of memory", "can't allocate memory", "cannot allocate memory", "CUBLAS_STATUS_ALLOC_FAILED")


def is_oom(error: BaseException) -> bool:
    import torch

    if isinstance(error, torch.OutOfMemoryError | MemoryError):
        return True
    return isinstance(error, RuntimeError) and any(m in str(error) for m in _OOM_MARKERS)


def run(cell: Cell, out: Path, adapter_dir: Path | None = None, shared_device: bool = False,
        predicted_oom: str = "run") -> CellResult:
    """`predicted_oom` 'skip': a GPU cell the memory estimate says cannot fit is skipped before anything loads
    (the estimate is of device memory, so a CPU cell always runs)."""
    conflict = cell.conflict
    if conflict is not None:
        reason = f"declared conflict '{conflict.name}': {conflict.why(cell.settings)}"
        result = new_result(cell, Status.skipped, reason, environment=environment.collect())
        return _finish(result, out)
    try:
        runtime = Runtime.resolve(cell.settings)
    except NoDevice as err:
        return _finish(new_result(cell, Status.skipped, str(err), environment=environment.collect()), out)
    if predicted_oom == "skip" and runtime.cuda:
        reason = predicted_not_to_fit(cell.settings)
        if reason:
            return _finish(new_result(cell, Status.skipped, reason, environment=environment.collect()), out)
    return _measure(cell, runtime, out, adapter_dir, shared_device)


def _measure(cell: Cell, runtime: Runtime, out: Path, adapter_dir: Path | None, shared_device: bool) -> CellResult:
    started, measure_start = now(), time.time()
    settings = cell.settings
    probe, budget, outside = start_capped(settings) if runtime.cuda else \
        (None, Budget.from_settings(settings, cuda=False), 0)
    # read before the budget is applied: from then on torch answers as the emulated card, the record is the device's
    env = environment.collect(driver=probe.driver() if probe else None)
    if probe:
        env["device_memory_source"] = probe.method
    if runtime.cuda:
        budget.apply(outside_bytes=outside)
    worker_status.tell(environment=env)  # a process that dies from here on is still recorded on its machine
    device_ready = time.time()

    steps_total = settings["warmup_steps"] + settings["steps"]
    tokens_per_step = settings["batch_size"] * settings["grad_accum"] * settings["context"] \
        if data_module.fixed_length(settings) else None
    trackers = TrackerSet([
        DeviceMemoryTracker(probe, cuda=runtime.cuda, observer=budget.observe if runtime.cuda else None),
        HostMemoryTracker(cuda=runtime.cuda),
        TimeTracker(runtime.cuda, settings["warmup_steps"], steps_total, tokens_per_step),
        ComputeTracker(runtime, env["gpu"] if runtime.cuda else env["cpu"], cache_root()),
    ])
    metrics: dict[str, Any] = {"loss": []}
    outputs: dict[str, Any] = {"metrics": metrics}
    status, reason, trace, cause = Status.ok, None, None, None
    with tempfile.TemporaryDirectory(prefix="vramlab-") as scratch, trackers:
        outputs["scratch_dir"] = scratch
        try:
            with recording(requested()):
                train_cell(settings, runtime, trackers, budget, outputs, adapter_dir)
        except (Unavailable, DoesNotFit) as err:
            # DoesNotFit: truncation 'none' and a preceding text longer than the context
            status, reason = Status.skipped, str(err)
        except BaseException as err:
            if isinstance(err, KeyboardInterrupt):
                raise
            if is_oom(err):
                status, reason = Status.oom, str(err).strip().splitlines()[0][:500]
            else:
                status, reason = Status.error, f"{type(err).__name__}: {str(err).strip()[:500]}"
                trace, cause = traceback.format_exc(), error_record(err, outputs.get("model_folder"))
            log.warning("cell %s: %s", status.value, reason)
    budget.release()
    trackers.report(metrics)
    metrics["time_by_phase"] = time_by_phase(metrics, settings["warmup_steps"], measure_start, time.time(),
                                             device_ready)
    # memory is per process and stays a measurement; speed does not where another process computed beside it
    metrics["throughput_measured"], shared_note = throughput_measured(probe, shared_device)
    if status is Status.ok:
        over = budget.judge(metrics["peak_device_bytes"]) or budget.judge_host(metrics.get("peak_host_unmapped_bytes"))
        if over:
            status, reason = Status.oom, over
    result = CellResult(
        cell_id=cell.cell_id, name=cell.name, matrix=cell.matrix, status=status, reason=reason,
        config=settings, varied=cell.varied, environment=env, metrics=metrics, budget=budget.as_dict(),
        records={**outputs.get("records", {}), "process": worker_status.started_how(),
                 **({"error": cause} if cause else {}),
                 **({"device_shared": {"note": shared_note, "other_pids": sorted(probe.others)[:20]}}
                    if shared_note and probe else {})}, model=outputs.get("model"),
        data=outputs.get("data"),
        trainer=outputs.get("trainer"), adapter=outputs.get("adapter") if status is Status.ok else None,
        fingerprint=outputs.get("fingerprint"),
        traceback=trace, started_at=started)
    return _finish(result, out)


def throughput_measured(probe: Any, shared_device: bool) -> tuple[bool, str | None]:
    """Whether the cell's speed is a measurement: not where the matrix lets cells share the device, nor where
    NVML saw another process (not this one's children) computing on the GPU while it ran, which the matrix did
    not say (a second run on the same folder, a colleague's job); the note says which."""
    if shared_device:
        return False, None
    others = getattr(probe, "others", None) or set()
    if not others:
        return True, None
    return False, (f"{len(others)} other process{'es' if len(others) > 1 else ''} computed on this GPU while the cell "
                   "ran, so its speed is not a measurement (its memory is)")


def time_by_phase(metrics: dict[str, Any], warmup_steps: int, measure_start: float, measure_end: float,
                  device_ready: float | None = None) -> dict[str, float]:
    """The process's wall time split so that the parts add up: from the process's own start (the kernel's
    record) to the end of the measurement, with the recipe's phases and the steps inside training."""
    import psutil

    process_start = psutil.Process().create_time()
    phases = metrics.get("phases") or {}

    def seconds(phase: str) -> float:
        return (phases.get(phase) or {}).get("seconds") or 0.0

    train = seconds("train")
    steps = metrics.get("step_seconds") or []
    first, measured = sum(steps[:warmup_steps]), sum(steps[warmup_steps:])
    device = max(device_ready - measure_start, 0.0) if device_ready is not None else 0.0
    parts = {"start_and_imports": max(measure_start - process_start, 0.0), "device_setup": device,
             "prepare": seconds("prepare"), "build": seconds("build"), "load": seconds("load"),
             "adapt": seconds("adapt"), "trainer_init": seconds("trainer"),
             "train_setup": max(train - first - measured, 0.0), "compile_and_first_steps": first,
             "measured_steps": measured}
    in_measurement = measure_end - measure_start
    parts["setup_and_teardown"] = max(in_measurement - sum(v for k, v in parts.items() if k != "start_and_imports"),
                                      0.0)
    return {**parts, "total": sum(parts.values())}


def leased_device() -> DeviceLeaseRecord | None:
    """The device this process's supervisor leased for it (harness/process/device_lease.py), as the result records
    it."""
    found = worker_status.recorded_lease()
    try:
        return DeviceLeaseRecord.model_validate(found) if found else None
    except ValueError as err:
        log.warning("the device lease handed to this process cannot be recorded: %s", err)
        return None


def _finish(result: CellResult, out: Path) -> CellResult:
    result.finished_at = now()
    record_input(result)
    result.device_lease = leased_device()
    record = worker_status.worker_record()
    if record:
        result.records.setdefault("supervisor", record)
    write_atomic(out, result)
    log.info("cell %s (%s): %s%s", result.cell_id, result.name, result.status.value,
             f" - {result.reason}" if result.reason else "")
    return result
