"""The longest context a configuration trains at within its budget, measured: a bisection over context whose
every probe is a real cell (the configuration at that context) run in a fresh process by `vramlab run-cell`,
judged as every cell is (whole-process device memory against the budget), and kept as a result file, from which
the search's answer is read (harness/results/ceiling.py). Why it is so: docs/measurement.md."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from harness.core.devices import machine_devices
from harness.core.errors import UsageError
from harness.estimate.ceiling import estimated_ceiling
from harness.results import ceiling as kept
from harness.results.ceiling import Search
from harness.spec.ceiling import CeilingSpec
from harness.spec.cells import Cell


def search(matrix: str, cell: Cell, spec: CeilingSpec, results_dir: Path,
           run: Callable[[str, Cell, int, Path], None] | None = None) -> Search:
    """Search one configuration, bracketed by the memory estimate's answer; `run` measures one probe into its result
    file (by default: `vramlab run-cell` in a fresh process)."""
    return kept.search(matrix, cell, spec, results_dir, run or run_probe, estimated_ceiling(cell, spec))


def run_probe(matrix: str, cell: Cell, context: int, out: Path, shared: bool = False, warm: bool = False,
              slots: int = 1) -> None:
    """One probe in a process of its own, supervised like any cell (so a crash or a hang still leaves a
    result), on a GPU leased for it (harness/process/device_lease.py). `shared`: other searches probe on the same
    device at the same time, so its speed is not a measurement; `slots`: how many probes may share one GPU.
    `warm`: started as harness/process/warm_start.py says (`run-cell --warm-start`)."""
    log = out.parent.parent.parent / "logs" / f"{out.stem}.log"
    done = subprocess.run([sys.executable, "-m", "harness", "run-cell", "--matrix", matrix, "--cell", cell.cell_id,
                           "--context", str(context), "--out", str(out), "--log", str(log), "--device-slots",
                           str(slots)] + ["--shared-device"] * shared + ["--warm-start"] * warm, check=False)
    if done.returncode != 0:  # run-cell has said why, in one line above; the search cannot go on without it
        raise UsageError(f"the search of {cell.name} stopped: its probe at {context:,} tokens was not run (run-cell "
                         f"exited {done.returncode}, saying why above)")


def search_all(matrix: str, cells: list[Cell], spec: CeilingSpec, results_dir: Path, jobs: int = 1,
               warm: bool = False) -> list[Search]:
    """Every cell's search; with jobs > 1 that many searches at once, spread over the machine's GPUs: with no more
    searches than GPUs each probe has a GPU to itself, with more they share (as evenly as the leases spread them;
    on a CPU they share it too): each probe's peak is its own process's, so it stays a measurement; where
    probes share a device, tokens/s does not."""
    from functools import partial

    if jobs <= 1:
        probe = partial(run_probe, warm=warm)
        return [search(matrix, cell, spec, results_dir, run=probe) for cell in cells]
    from concurrent.futures import ThreadPoolExecutor

    gpus = len(machine_devices()) if any(c.settings.get("device") != "cpu" for c in cells) else 0
    slots = -(-jobs // max(gpus, 1))
    spread = partial(run_probe, shared=slots > 1, warm=warm, slots=slots)
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        return list(pool.map(lambda cell: search(matrix, cell, spec, results_dir, run=spread), cells))
