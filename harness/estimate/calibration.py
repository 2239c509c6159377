"""The estimate against every committed GPU measurement: predicted and measured device peak of each ok cell,
with the error, and the allocated peak beside it (the part of the device figure the formulas derive;
the rest is the measured context and the allocator's fragmentation). The same rows, one matrix at a time, are
the aggregate step's estimate.csv and the report's section on the estimate (harness/report/aggregate.py,
harness/report/build.py)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.estimate import estimate_cell
from harness.results.store import read_data, result_files

GIB = 2**30
# how calibration.md opens its second paragraph: the sources it names are what `vramlab report --all` rebuilds from
TOLERANCE = 0.10  # the goal: every ok cell's device peak predicted within 10%
# the statuses whose device peak is measured: an ok cell's is its peak, an oom cell's a lower bound of its need
MEASURED = ("ok", "oom")


@dataclass(frozen=True)
class Row:
    matrix: str
    name: str
    cell_id: str
    measured_bytes: int
    predicted_bytes: int | None  # None: no prediction, `unpredicted` says why
    measured_allocated_bytes: int | None
    predicted_allocated_bytes: int | None
    status: str = "ok"
    peak_moment: str = ""  # the moment of the step the estimate puts the peak at
    unpredicted: str = ""  # why the estimate predicts nothing for this cell

    @property
    def error(self) -> float | None:
        return None if self.predicted_bytes is None else self.predicted_bytes / self.measured_bytes - 1

    @property
    def allocated_error(self) -> float | None:
        if self.predicted_allocated_bytes is None or not self.measured_allocated_bytes:
            return None
        return self.predicted_allocated_bytes / self.measured_allocated_bytes - 1


def row(result: dict[str, Any], statuses: tuple[str, ...] = ("ok",)) -> Row | None:
    """A result file's measured device peak beside the estimate's, for a cell measured on a CUDA GPU with one
    of `statuses`; None for any other cell (the estimate is for GPUs). Where the estimate cannot predict the cell
    (the model's shapes not known here, settings it has no model for) the row says why instead."""
    if result.get("status") not in statuses or not (result.get("environment") or {}).get("cuda_available"):
        return None
    metrics = result["metrics"]
    if metrics.get("peak_device_bytes") is None:
        return None
    try:
        est = estimate_cell(result["config"])
    except ValueError as err:  # ShapesUnknown, or settings the memory model has no formulas for
        return Row(result["matrix"], result["name"], result["cell_id"], metrics["peak_device_bytes"], None,
                   metrics.get("peak_allocated_bytes"), None, result["status"], unpredicted=str(err))
    return Row(result["matrix"], result["name"], result["cell_id"], metrics["peak_device_bytes"], est.total_bytes,
               metrics.get("peak_allocated_bytes"), est.allocated_bytes, result["status"], est.peak_moment)


def rows(results_dirs: list[Path]) -> list[Row]:
    """Every ok cell measured on a CUDA GPU under `results_dirs`, ceiling probes included, in file order. Each
    file is read as every result reader reads it (bounded, validated): a damaged, oversized or foreign one is a
    ResultFileError naming it, never a traceback or a file silently left out."""
    found = []
    for folder in results_dirs:
        for path in result_files(folder) + result_files(folder, "ceiling/*/*.json"):
            found_row = row(read_data(path))
            if found_row is not None:
                found.append(found_row)
    return found


def summary(found: list[Row], label=lambda r: f"{r.matrix}/{r.name}") -> str:
    """How many ok cells the estimate predicts within the tolerance, and the largest error (oom cells, whose
    peak is only a lower bound, and cells without a prediction do not count)."""
    judged = [r for r in found if r.status == "ok" and r.error is not None]
    if not judged:
        return "No ok cell with a prediction to judge the estimate on."
    worst = max(judged, key=lambda r: abs(r.error))
    within = sum(abs(r.error) <= TOLERANCE for r in judged)
    return (f"{within} of {len(judged)} ok cells within {TOLERANCE:.0%} of the measured device peak; "
            f"the largest error is {worst.error:+.1%} (`{label(worst)}`).")
