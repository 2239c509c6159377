"""One cell in this (fresh) process: set the budget, run the recipe, write the result file.

Whatever happens inside the recipe becomes a result: `ok`, `oom` (an allocation failed, or the whole
process went over the budget), `skipped` (a declared conflict, or a technique this machine cannot run)
or `error` (anything else, with the traceback). The process exits 0 for all four, so the matrix goes
on; only a failure to write the result itself is fatal.
"""

from __future__ import annotations

import logging
import tempfile
import traceback
from pathlib import Path
from typing import Any

from harness import environment, results
from harness.cells import Cell
from harness.techniques.base import Unavailable

log = logging.getLogger("vramlab")

_OOM_MARKERS = ("out of memory", "can't allocate memory", "cannot allocate memory", "CUBLAS_STATUS_ALLOC_FAILED")


def is_oom(error: BaseException) -> bool:
    import torch

    if isinstance(error, torch.OutOfMemoryError | MemoryError):
        return True
    return isinstance(error, RuntimeError) and any(m in str(error) for m in _OOM_MARKERS)


def run(cell: Cell, out: Path) -> dict[str, Any]:
    result = results.new_result(cell)
    conflict = cell.conflict
    if conflict is not None:
        result.update(status="skipped", reason=f"declared conflict '{conflict.name}': {conflict.reason}")
        result["environment"] = environment.collect()
        return _finish(result, out)

    import torch

    from harness.budget import Budget
    from harness.measure import DeviceMemoryProbe, MemoryTracker
    from harness.recipe import Skipped, train_cell

    wants_cuda = cell.settings["device"] != "cpu" and torch.cuda.is_available()
    probe = DeviceMemoryProbe() if wants_cuda else None  # baseline read before this process touches CUDA
    budget = Budget.from_setting(cell.settings["budget"], cuda=wants_cuda)
    if wants_cuda:
        torch.cuda.init()
        # a first matrix product loads cuBLAS and its workspace, which live outside the allocator
        warm = torch.ones(64, 64, device="cuda", dtype=torch.bfloat16)
        (warm @ warm).sum().item()
        del warm
        budget.apply(outside_bytes=probe.read() - torch.cuda.memory_reserved())
    result["environment"] = environment.collect(driver=probe.driver() if probe else None)
    if probe:
        result["environment"]["device_memory_source"] = probe.method

    outputs: dict[str, Any] = {"metrics": result["metrics"]}
    tracker = MemoryTracker(probe, cuda=wants_cuda, observer=budget.observe if wants_cuda else None)
    with tempfile.TemporaryDirectory(prefix="vramlab-") as scratch, tracker:
        outputs["scratch_dir"] = scratch
        try:
            train_cell(cell.settings, tracker, budget, outputs)
            result["status"] = "ok"
        except (Skipped, Unavailable) as err:
            result.update(status="skipped", reason=str(err))
        except BaseException as err:
            if isinstance(err, KeyboardInterrupt):
                raise
            if is_oom(err):
                result.update(status="oom", reason=str(err).strip().splitlines()[0][:500])
            else:
                result.update(status="error", reason=f"{type(err).__name__}: {str(err).strip()[:500]}",
                              traceback=traceback.format_exc())
            log.warning("cell %s: %s", result["status"], result["reason"])
    _fold_memory(result, tracker, budget)
    for key in ("records", "model", "data", "trainer"):
        if key in outputs:
            result[key] = outputs[key]
    if result["status"] == "ok":
        over = budget.judge(result["metrics"]["peak_device_bytes"])
        if over:
            result.update(status="oom", reason=over)
        _add_mfu(result, wants_cuda)
    return _finish(result, out)


def _fold_memory(result: dict[str, Any], tracker: Any, budget: Any) -> None:
    metrics = result["metrics"]
    peaks = {key: value for key, value in tracker.total.as_dict().items() if key != "seconds"}
    metrics.update(peaks, memory_samples=tracker.samples,
                   phases={name: phase.as_dict() for name, phase in tracker.phases.items()})
    result["budget"] = budget.as_dict()


def _add_mfu(result: dict[str, Any], cuda: bool) -> None:
    import torch

    from harness.flops import cached_peak_flops
    from harness.models import cache_root

    metrics = result["metrics"]
    if not metrics.get("achieved_flops_per_second"):
        return
    dtype = torch.bfloat16 if cuda else torch.float32
    name = result["environment"]["gpu"] if cuda else result["environment"]["cpu"]
    peak = cached_peak_flops(cache_root(), "cuda" if cuda else "cpu", dtype, name)
    metrics["peak_flops_per_second"] = peak
    metrics["mfu"] = metrics["achieved_flops_per_second"] / peak


def _finish(result: dict[str, Any], out: Path) -> dict[str, Any]:
    result["finished_at"] = results.now()
    results.write_atomic(out, result)
    log.info("cell %s (%s): %s%s", result["cell_id"], result["name"], result["status"],
             f" - {result['reason']}" if result["reason"] else "")
    return result
