"""What the committed results say about a reading of a claim, read only: the named cells' result files, or a ceiling
search's answer from the probes it kept (never a new probe: a search that has not settled is not measured yet)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from harness.report.claims.model import Reading
from harness.results import CellResult, read, result_path
from harness.results.ceiling import kept_probes, settled
from harness.spec.ceiling import probe_folder
from harness.spec.matrix import ceiling_spec, expand

MARGIN_BYTES = 512 * 2**20  # what a ceiling with a stated margin leaves of the budget: room for a driver or a desktop


@dataclass(frozen=True)
class CeilingAnswer:
    tokens: int | None  # the longest context that fits; None below the search's range
    resolution: int
    at_top: bool = False  # the top of the range fits: the answer is a lower bound
    result: CellResult | None = None  # the probe that fits at the answer
    # the longest context among the kept probes whose whole-process peak left at least MARGIN_BYTES of the budget:
    # the answer with a stated margin (a lower bound: the search did not look for it)
    with_margin: int | None = None


@dataclass
class Measured:
    """A reading's measurement: the cells' results (in the reading's order) or a ceiling's answer; `missing` names
    what has no result yet."""

    results: list[CellResult] = field(default_factory=list)
    ceiling: CeilingAnswer | None = None
    missing: list[str] = field(default_factory=list)

    @property
    def complete(self) -> bool:
        return not self.missing and (bool(self.results) or self.ceiling is not None)


def measure(reading: Reading, results_dir: Path) -> Measured:
    cells = {c.name: c for c in expand(reading.matrix)}
    unknown = [n for n in (reading.cells or [reading.ceiling]) if n not in cells]
    if unknown:
        raise ValueError(f"{reading.matrix} has no cell {unknown[0]!r} (claim reading {reading.reading!r})")
    if reading.ceiling is not None:
        return _ceiling(reading.matrix, cells[reading.ceiling], results_dir)
    found = Measured()
    for name in reading.cells or []:
        path = result_path(results_dir, cells[name].matrix, cells[name].cell_id)
        if path.is_file():
            found.results.append(read(path))
        else:
            found.missing.append(name)
    return found


def _ceiling(matrix: str, cell: object, results_dir: Path) -> Measured:
    spec = ceiling_spec(matrix)
    if spec is None:
        raise ValueError(f"{matrix} has no ceiling: section")
    kept = kept_probes(probe_folder(results_dir, cell.matrix, cell), cell)
    fits = {context: result["status"] == "ok" for context, result in kept.items()}
    answer = settled(fits, spec)
    if answer is None:
        if fits.get(spec.low) is False:  # even the bottom of the range does not fit
            return Measured(ceiling=CeilingAnswer(None, spec.resolution))
        state = f"{len(kept)} probes kept, not settled" if kept else "no probe yet"
        return Measured(missing=[f"the search of {cell.name} ({state})"])
    return Measured(ceiling=CeilingAnswer(answer, spec.resolution, at_top=answer == spec.high,
                                          result=CellResult.model_validate(kept[answer]),
                                          with_margin=_with_margin(kept)))


def _with_margin(kept: dict[int, dict]) -> int | None:
    """The longest ok probe whose device peak left MARGIN_BYTES of its budget."""
    spare = []
    for context, result in kept.items():
        peak = (result.get("metrics") or {}).get("peak_device_bytes")
        limit = (result.get("budget") or {}).get("limit_bytes")
        if result["status"] == "ok" and peak is not None and limit is not None and limit - peak >= MARGIN_BYTES:
            spare.append(context)
    return max(spare, default=None)
