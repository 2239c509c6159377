"""The estimate of each cell as text: its components, the total, and how it stands against the cell's budget."""

from __future__ import annotations

from typing import Any

from harness.core.budget import budget_bytes
from harness.estimate import Estimate, ShapesUnknown, estimate_cell
from harness.spec.cells import Cell

GIB = 2**30


def verdict(est: Estimate, budget: int) -> str:
    left = budget - est.total_bytes
    if left >= 0:
        return f"fits ({left / GIB:.2f} GiB left)"
    return f"does not fit ({-left / GIB:.2f} GiB over)"


def cell_estimate(cell: Cell) -> tuple[Estimate | None, str | None]:
    """The estimate, or why there is none (a declared conflict, shapes not known here)."""
    if cell.conflict is not None:
        return None, f"skipped: declared conflict '{cell.conflict.name}'"
    try:
        return estimate_cell(cell.settings), None
    except ShapesUnknown as err:
        return None, str(err)


def render(cell: Cell, est: Estimate | None, why_not: str | None) -> str:
    s = cell.settings
    head = f"{cell.name} ({cell.cell_id})  {s['model']}  {s['batch_size']} x {s['context']:,} tokens"
    if est is None:
        return f"{head}\n  {why_not}"
    budget = budget_bytes(s["budget"])
    lines = [f"{head}  peak: {est.peak_moment}"]
    lines += [f"  {c.name:<32}{c.bytes / GIB:>7.2f} GiB  {c.detail}" for c in est.components]
    lines.append(f"  {'total':<32}{est.total_bytes / GIB:>7.2f} GiB  of a {budget / GIB:.2f} GiB budget: "
                 f"{verdict(est, budget)}")
    if est.host_pinned_bytes:
        lines.append(f"  {'host memory, pinned':<32}{est.host_pinned_bytes / GIB:>7.2f} GiB  {est.host_detail}")
    lines += [f"  note: {note}" for note in est.notes]
    return "\n".join(lines)


def as_json(cell: Cell, est: Estimate | None, why_not: str | None) -> dict[str, Any]:
    record: dict[str, Any] = {"cell_id": cell.cell_id, "name": cell.name,
                              "budget_bytes": budget_bytes(cell.settings["budget"])}
    if est is None:
        record["none"] = why_not
    else:
        record.update(est.as_dict())
    return record
