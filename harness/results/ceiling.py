"""A ceiling search as its result files give it: each probe is a cell at another context, kept as a result file under
results/<matrix>/ceiling/<cell_id>/, and a search's answer is what its kept probes settle. `vramlab ceiling`
(harness/process/ceiling.py) measures the probes still needed; a report reads the answers from the files alone.
Why it is so: docs/measurement.md."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.results import read, result_path
from harness.results.store import result_files
from harness.spec.ceiling import CeilingSpec, bisect, probe_cell, probe_folder
from harness.spec.cells import Cell


class Inconclusive(Exception):
    """A probe that says nothing about memory; the search of its configuration stops with this reason."""


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


def search(matrix: str, cell: Cell, spec: CeilingSpec, results_dir: Path, run: Callable[[str, Cell, int, Path], None],
           estimated: int | None) -> Search:
    """Search one configuration from its kept probes; `run` measures a probe that is not kept into its result file
    (harness/process/ceiling.py runs `vramlab run-cell`); `estimated`, the memory estimate's answer, brackets the
    bisection."""
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

    found.estimated = estimated
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


def kept_search(matrix: str, cell: Cell, spec: CeilingSpec, results_dir: Path, estimated: int | None) -> Search:
    """The search as its kept probes settle it, never running one (ProbeMissing where one is needed)."""
    def refuse(_matrix: str, probed: Cell, context: int, _out: Path) -> None:
        raise ProbeMissing(f"{matrix}: no kept probe at {context:,} tokens for {probed.name}; "
                           f"run `vramlab ceiling {matrix}` to measure it")

    return search(matrix, cell, spec, results_dir, refuse, estimated)


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
