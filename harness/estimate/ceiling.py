"""The memory estimate's ceiling: the longest context a cell's estimated peak fits its budget at, on a ceiling
search's grid. A prediction, which brackets the measured search (harness/process/ceiling.py)."""

from __future__ import annotations

from harness.core.budget import budget_bytes
from harness.estimate import ShapesUnknown, estimate_cell
from harness.spec.ceiling import CeilingSpec, bisect
from harness.spec.cells import Cell


def estimated_ceiling(cell: Cell, spec: CeilingSpec) -> int | None:
    """The longest context the memory estimate (harness/estimate) says fits the cell's budget, on the search's
    grid; None where the estimate cannot say (a model whose shapes are not known here)."""
    budget = budget_bytes(cell.settings["budget"])
    try:
        return bisect(lambda c: estimate_cell({**cell.settings, "context": c}).total_bytes <= budget, spec)
    except ShapesUnknown:
        return None
