"""The estimate against every committed GPU measurement: predicted and measured device peak of each ok cell,
with the error, and the allocated peak beside it (the part of the device figure the formulas derive;
the rest is the measured context and the allocator's fragmentation)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from harness.estimate import estimate_cell

GIB = 2**30
TOLERANCE = 0.10  # the goal: every ok cell's device peak predicted within 10%


@dataclass(frozen=True)
class Row:
    matrix: str
    name: str
    cell_id: str
    measured_bytes: int
    predicted_bytes: int
    measured_allocated_bytes: int
    predicted_allocated_bytes: int

    @property
    def error(self) -> float:
        return self.predicted_bytes / self.measured_bytes - 1

    @property
    def allocated_error(self) -> float:
        return self.predicted_allocated_bytes / self.measured_allocated_bytes - 1


def rows(results_dirs: list[Path]) -> list[Row]:
    """Every ok cell measured on a CUDA GPU under `results_dirs`, in file order."""
    found = []
    for folder in results_dirs:
        for path in sorted(Path(folder).glob("*.json")):
            data = json.loads(path.read_text())
            if data.get("status") != "ok" or not (data.get("environment") or {}).get("cuda_available"):
                continue
            metrics = data["metrics"]
            est = estimate_cell(data["config"])
            found.append(Row(data["matrix"], data["name"], data["cell_id"], metrics["peak_device_bytes"],
                             est.total_bytes, metrics["peak_allocated_bytes"], est.allocated_bytes))
    return found


def table(found: list[Row]) -> str:
    lines = ["| matrix | cell | measured GiB | predicted GiB | error | allocated measured | allocated predicted "
             "| error |", "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for r in found:
        lines.append(f"| {r.matrix} | `{r.name}` | {r.measured_bytes / GIB:.2f} | {r.predicted_bytes / GIB:.2f} "
                     f"| {r.error:+.1%} | {r.measured_allocated_bytes / GIB:.2f} "
                     f"| {r.predicted_allocated_bytes / GIB:.2f} | {r.allocated_error:+.1%} |")
    worst = max(found, key=lambda r: abs(r.error))
    within = sum(abs(r.error) <= TOLERANCE for r in found)
    lines.append("")
    lines.append(f"{within} of {len(found)} ok cells within {TOLERANCE:.0%} of the measured device peak; "
                 f"the largest error is {worst.error:+.1%} (`{worst.name}`).")
    return "\n".join(lines)
