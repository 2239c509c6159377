"""The longest context a configuration trains at within its budget, measured: a bisection over context whose
every probe is a real cell (the configuration at that context) run in a fresh process by `vramlab run-cell`,
judged as every cell is (whole-process device memory against the budget), and kept as a result file.
Why it is so: docs/measurement.md."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.core.budget import budget_bytes
from harness.core.devices import machine_devices
from harness.core.errors import UsageError
from harness.estimate import ShapesUnknown, estimate_cell
from harness.results import read, result_path
from harness.results.store import result_files
from harness.spec.ceiling import CeilingSpec, probe_cell, probe_folder
from harness.spec.cells import Cell


class Inconclusive(Exception):
    """A probe that says nothing about memory; the search of its configuration stops with this reason."""


GUESS_MARGIN = 0.10  # the first bracket around the estimate's answer: the estimate is calibrated to within 10%


def bisect(fits: Callable[[int], bool], spec: CeilingSpec, guess: int | None = None) -> int | None:
    """The largest multiple of `resolution` in [low, high] at which `fits` holds, or None where even `low`
    does not fit. Without a guess it probes low, then high, then halves the bracket: about
    log2((high - low) / resolution) + 2 probes. With a guess (the memory estimate's answer) it first probes
    GUESS_MARGIN either side of it, and falls back to the range's ends only where the guess was wrong."""
    res = spec.resolution

    def on_grid(context: float, up: bool) -> int:
        steps = -(-context // res) if up else context // res
        return int(min(max(steps * res, spec.low), spec.high))

    first_low, first_high = spec.low, spec.high
    if guess is not None:
        first_low, first_high = on_grid(guess * (1 - GUESS_MARGIN), False), on_grid(guess * (1 + GUESS_MARGIN), True)
    if not fits(first_low):
        if first_low == spec.low or not fits(spec.low):
            return None
        good, bad = spec.low, first_low  # the guess was too high: the answer is below the bracket
    elif first_high == first_low:
        return first_low if first_low == spec.high else _upward(fits, spec, first_low)
    elif fits(first_high):
        if first_high == spec.high or fits(spec.high):
            return spec.high
        good, bad = first_high, spec.high  # the guess was too low: the answer is above the bracket
    else:
        good, bad = first_low, first_high
    return _halve(fits, res, good, bad)


def _upward(fits: Callable[[int], bool], spec: CeilingSpec, good: int) -> int:
    """From a context that fits, with nothing known above it: the top, else the bracket up to it."""
    if fits(spec.high):
        return spec.high
    return _halve(fits, spec.resolution, good, spec.high)


def _halve(fits: Callable[[int], bool], res: int, good: int, bad: int) -> int:
    while bad - good > res:
        middle = good + (bad - good) // 2 // res * res
        middle = max(middle, good + res)
        if fits(middle):
            good = middle
        else:
            bad = middle
    return good


@dataclass
class Search:
    """One configuration's search: its probes (context -> result), and its answer."""

    cell: Cell
    spec: CeilingSpec
    probes: dict[int, dict[str, Any]]
    ceiling: int | None = None
    stopped: str | None = None
    estimated: int | None = None  # the memory estimate's answer, which bracketed the search

    def row(self) -> dict[str, Any]:
        at = self.probes.get(self.ceiling, {}) if self.ceiling is not None else {}
        metrics = at.get("metrics") or {}
        measured = metrics.get("throughput_measured", True)  # a probe that shared the device timed nothing
        if self.stopped:
            answer = f"not found: {self.stopped}"
        elif self.ceiling is None:
            answer = f"below {self.spec.low:,}"
        elif self.ceiling == self.spec.high:
            answer = f"at least {self.spec.high:,} (the top of the range)"
        else:
            answer = f"{self.ceiling:,}"
        return {"cell": self.cell.name, "cell_id": self.cell.cell_id, "ceiling_context": self.ceiling,
                "answer": answer, "estimated_context": self.estimated, "budget": self.cell.settings.get("budget"),
                "peak_device_bytes": metrics.get("peak_device_bytes"),
                "peak_host_bytes": metrics.get("peak_host_bytes"),
                "peak_host_unmapped_bytes": metrics.get("peak_host_unmapped_bytes"),
                "peak_host_pinned_bytes": metrics.get("peak_host_pinned_bytes"),
                "tokens_per_second": metrics.get("tokens_per_second") if measured else None,
                # a probe times one step or a few: one step has no spread to give
                "step_seconds_iqr": metrics.get("step_seconds_iqr")
                if measured and (metrics.get("measured_steps") or 0) > 1 else None,
                "probes": " ".join(f"{c}:{p['status']}" for c, p in sorted(self.probes.items()))}


def search(matrix: str, cell: Cell, spec: CeilingSpec, results_dir: Path,
           run: Callable[[str, Cell, int, Path], None] | None = None) -> Search:
    """Search one configuration; `run` measures one probe into its result file (by default: `vramlab run-cell`
    in a fresh process)."""
    run = run or run_probe
    folder = probe_folder(results_dir, cell.matrix, cell)
    found = Search(cell, spec, {})

    def fits(context: int) -> bool:
        probe = probe_cell(cell, context)
        path = folder / f"{probe.cell_id}.json"
        # at the cell's own context the probe is the cell itself (the same settings, the same id)
        measured = result_path(results_dir, cell.matrix, probe.cell_id)
        if not path.is_file() and measured.is_file():
            path = measured
        elif not path.is_file():
            run(matrix, cell, context, path)
        result = read(path).model_dump(mode="json")
        found.probes[context] = result
        if result["status"] not in ("ok", "oom"):
            raise Inconclusive(f"the probe at {context:,} tokens ended '{result['status']}': {result['reason']}")
        return result["status"] == "ok"

    found.estimated = estimated_ceiling(cell, spec)
    kept = kept_probes(folder, cell)
    answer = settled({context: result["status"] == "ok" for context, result in kept.items()}, spec)
    if answer is not None:
        found.probes, found.ceiling = kept, answer
        return found
    try:
        found.ceiling = bisect(fits, spec, found.estimated)
    except Inconclusive as err:
        found.stopped = str(err)
    return found


class ProbeMissing(RuntimeError):
    """A ceiling's answer needs a probe that is not kept: `vramlab ceiling` measures it, a rebuild never does."""


def kept_search(matrix: str, cell: Cell, spec: CeilingSpec, results_dir: Path) -> Search:
    """The search as its kept probes settle it, never running one (ProbeMissing where one is needed)."""
    def refuse(_matrix: str, probed: Cell, context: int, _out: Path) -> None:
        raise ProbeMissing(f"{matrix}: no kept probe at {context:,} tokens for {probed.name}; "
                           f"run `vramlab ceiling {matrix}` to measure it")

    return search(matrix, cell, spec, results_dir, run=refuse)


def kept_probes(folder: Path, cell: Cell) -> dict[int, dict[str, Any]]:
    """The probes of this configuration already in its folder that fit or ran out of memory, by context (a file
    of other settings, which has another id, is not one of them)."""
    kept = {}
    for path in result_files(folder):
        result = read(path).model_dump(mode="json")
        context = result["config"].get("context")
        if result["status"] in ("ok", "oom") and probe_cell(cell, context).cell_id == result["cell_id"]:
            kept[context] = result
    return kept


def settled(fits: dict[int, bool], spec: CeilingSpec) -> int | None:
    """The answer known probes give on their own: the longest that fits, if the next context up the grid is
    known not to fit or it is the top of the range; None where a probe is still needed."""
    good = max((c for c, ok in fits.items() if ok and spec.low <= c <= spec.high), default=None)
    if good is None:
        return None
    above = [c for c, ok in fits.items() if not ok and c > good]
    return good if good == spec.high or (above and min(above) - good <= spec.resolution) else None


def estimated_ceiling(cell: Cell, spec: CeilingSpec) -> int | None:
    """The longest context the memory estimate (harness/estimate) says fits the cell's budget, on the search's
    grid; None where the estimate cannot say (a model whose shapes are not known here)."""
    budget = budget_bytes(cell.settings["budget"])
    try:
        return bisect(lambda c: estimate_cell({**cell.settings, "context": c}).total_bytes <= budget, spec)
    except ShapesUnknown:
        return None


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
