"""The longest context a configuration trains at within its budget, measured: a bisection over context whose
every probe is a real cell (the configuration at that context) run in a fresh process by `vramlab run-cell`,
judged as every cell is (whole-process device memory against the budget), and kept as a result file.

A matrix asks for it with a `ceiling:` section; each of its cells is one configuration to search:

    ceiling:
      low: 8192          # the search's range of contexts, in tokens
      high: 131072
      resolution: 1024   # probes stay on multiples of this; the answer is exact to within it

The search assumes what the memory of a training step does: more context never needs less memory, so a
context that fits bounds the answer from below and one that does not bounds it from above. A probe that
neither fits nor runs out of memory (an error, a timeout, a skipped technique) says nothing about memory, and
the search of that configuration stops there with its reason. Probes already measured are read back, so an
interrupted search resumes where it was; where the kept probes already hold a context that fits next to one that
does not (one resolution apart), that is the answer without a new probe, whatever the estimate says now (its
answer, which first brackets a search, changes as the memory model learns).
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.atomic_files import write_csv_atomic
from harness.cells import Cell

GIB = 2**30


MAX_HIGH = 2**20  # a million tokens: past the context of any model this harness trains


class CeilingSpecError(ValueError):
    """A `ceiling:` section that cannot be used; the message says which key and why."""


@dataclass(frozen=True)
class CeilingSpec:
    low: int
    high: int
    resolution: int = 1024

    @classmethod
    def parse(cls, section: Any) -> CeilingSpec | None:
        if section is None:
            return None
        if not isinstance(section, dict):
            raise CeilingSpecError(f"expected a mapping with low, high and resolution, got {section!r}")
        unknown = set(section) - {"low", "high", "resolution"}
        if unknown:
            raise CeilingSpecError(f"unknown key {sorted(unknown)[0]!r}; the keys are low, high and resolution")
        values = {}
        for key in ("low", "high", "resolution"):
            value = section.get(key, cls.resolution if key == "resolution" else None)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise CeilingSpecError(f"{key}: {value!r} is not a positive number of tokens")
            values[key] = value
        if values["high"] > MAX_HIGH:
            raise CeilingSpecError(f"high ({values['high']}) is more than {MAX_HIGH:,} tokens, past any model's "
                                   "context; a probe there would only fill the machine's memory")
        if values["low"] >= values["high"]:
            raise CeilingSpecError(f"low ({values['low']}) must be below high ({values['high']})")
        if values["low"] % values["resolution"] or values["high"] % values["resolution"]:
            raise CeilingSpecError(f"low and high must be multiples of resolution ({values['resolution']})")
        return cls(**values)


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


def probe_cell(cell: Cell, context: int) -> Cell:
    """The configuration at another context: a cell of its own, with its own id and result file."""
    return Cell(matrix=cell.matrix, name=f"{cell.name}@context={context}", settings={**cell.settings,
                                                                                      "context": context},
                varied={**cell.varied, "context": context})


def probe_folder(results_dir: Path, matrix: str, cell: Cell) -> Path:
    return results_dir / matrix / "ceiling" / cell.cell_id


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
    from harness.results import read, result_path

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


def kept_probes(folder: Path, cell: Cell) -> dict[int, dict[str, Any]]:
    """The probes of this configuration already in its folder that fit or ran out of memory, by context (a file
    of other settings, which has another id, is not one of them)."""
    from harness.results import read

    kept = {}
    for path in sorted(folder.glob("*.json")):
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
    from harness.budget import budget_bytes
    from harness.estimate import ShapesUnknown, estimate_cell

    budget = budget_bytes(cell.settings["budget"])
    try:
        return bisect(lambda c: estimate_cell({**cell.settings, "context": c}).total_bytes <= budget, spec)
    except ShapesUnknown:
        return None


def run_probe(matrix: str, cell: Cell, context: int, out: Path, shared: bool = False, warm: bool = False) -> None:
    """One probe in a process of its own, supervised like any cell (so a crash or a hang still leaves a
    result). `shared`: other searches probe on the same device at the same time, so its speed is not a
    measurement. `warm`: started as harness/warm_start.py says (`run-cell --warm-start`)."""
    log = out.parent.parent.parent / "logs" / f"{out.stem}.log"
    subprocess.run([sys.executable, "-m", "harness", "run-cell", "--matrix", matrix, "--cell", cell.cell_id,
                    "--context", str(context), "--out", str(out), "--log", str(log)]
                   + ["--shared-device"] * shared + ["--warm-start"] * warm, check=True)


def search_all(matrix: str, cells: list[Cell], spec: CeilingSpec, results_dir: Path, jobs: int = 1,
               warm: bool = False) -> list[Search]:
    """Every cell's search; with jobs > 1 that many searches at once, their probes sharing the device (each
    probe's peak is its own process's, so it stays a measurement; tokens/s does not)."""
    from functools import partial

    if jobs <= 1:
        probe = partial(run_probe, warm=warm)
        return [search(matrix, cell, spec, results_dir, run=probe) for cell in cells]
    from concurrent.futures import ThreadPoolExecutor

    shared = partial(run_probe, shared=True, warm=warm)
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        return list(pool.map(lambda cell: search(matrix, cell, spec, results_dir, run=shared), cells))


def measured_on(searches: list[Search]) -> list[str]:
    """Where and with what the probes ran, and whether their speed is a measurement, as the probes record it."""
    probes = [p for s in searches for p in s.probes.values()]
    if not probes:
        return []
    def machine(env: dict[str, Any]) -> str:
        return (f"{env.get('gpu') or env.get('cpu')} torch {(env.get('versions') or {}).get('torch')} "
                f"at {str((env.get('git') or {}).get('commit', '?'))[:7]}")

    machines = sorted({machine(p.get("environment") or {}) for p in probes})
    shared = sum(not (p.get("metrics") or {}).get("throughput_measured", True) for p in probes)
    lines = [f"{len(probes)} probes, measured on {'; '.join(machines)}."]
    if shared:
        lines[0] += (f" {shared} of them shared the GPU with other probes: their peaks are their own processes' "
                     "and stay measurements, their speed does not (tokens/s there: –).")
    return [*lines, ""]


def write_report(matrix: str, searches: list[Search], reports_dir: Path) -> list[Path]:
    """reports/<matrix>/ceiling.csv (one row a configuration) and the ceiling chart: the context each
    configuration reached within its budget, with its peak and its speed there. harness.ceiling_report writes the
    tables beside them (ceiling.md, tables.tex)."""
    import matplotlib.pyplot as plt
    import pandas as pd

    folder = reports_dir / matrix
    folder.mkdir(parents=True, exist_ok=True)
    table = pd.DataFrame([s.row() for s in searches])
    write_csv_atomic(folder / "ceiling.csv", table)
    spec = searches[0].spec if searches else None
    from harness.chart_widths import FORMATS, WIDTHS
    from harness.charts.ceiling import draw
    from harness.charts.style import RC, fit_labels, save

    charts: list[Path] = []
    with plt.rc_context(RC):
        for suffix, width in WIDTHS.items():
            charts += save(fit_labels(draw(table, spec.low if spec else 0, spec.high if spec else 0, width)), folder,
                           f"ceiling{suffix}", FORMATS[suffix])
    return [folder / "ceiling.csv", *charts]
