"""The `ceiling:` section of a matrix file, and the probes it asks for: a cell at another context, a cell of its
own. The search itself is harness/process/ceiling.py.

    ceiling:
      low: 8192          # the search's range of contexts, in tokens
      high: 131072
      resolution: 1024   # probes stay on multiples of this; the answer is exact to within it
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.spec.cells import Cell

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


def probe_cell(cell: Cell, context: int) -> Cell:
    """The configuration at another context: a cell of its own, with its own id and result file."""
    return Cell(matrix=cell.matrix, name=f"{cell.name}@context={context}", settings={**cell.settings,
                                                                                      "context": context},
                varied={**cell.varied, "context": context})


def probe_folder(results_dir: Path, matrix: str, cell: Cell) -> Path:
    return results_dir / matrix / "ceiling" / cell.cell_id
