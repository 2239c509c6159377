"""The estimate of each cell as text: its components, the total, and how it stands against the cell's budget."""

from __future__ import annotations

from typing import Any

from harness.core.budget import budget_bytes, parse_bytes, shown_size
from harness.estimate import Estimate, ShapesUnknown, estimate_cell, host_budget_exceeded, predicted_not_to_fit
from harness.spec.cells import Cell

GIB = 2**30


def verdict(est: Estimate, budget: int, host_budget: int | None = None) -> str:
    """How the estimate stands against the device budget and, where it is exceeded, the host budget: a cell that
    fits the device but not its host budget does not fit (predicted_oom: skip skips it so)."""
    left = budget - est.total_bytes
    host = (f"its pinned host memory is over the {shown_size(host_budget)} host budget by "
            f"{shown_size(est.host_pinned_bytes - host_budget)}" if host_budget is not None else "")
    if left >= 0:
        return (f"fits the device ({left / GIB:.2f} GiB left), but does not fit: {host}" if host
                else f"fits ({left / GIB:.2f} GiB left)")
    return f"does not fit ({-left / GIB:.2f} GiB over)" + (f", and {host}" if host else "")


def cell_estimate(cell: Cell) -> tuple[Estimate | None, str | None]:
    """The estimate, or why there is none (a declared conflict, shapes not known here)."""
    if cell.conflict is not None:
        return None, f"skipped: declared conflict '{cell.conflict.name}'"
    try:
        return estimate_cell(cell.settings), None
    except ShapesUnknown as err:
        return None, str(err)


def render(cell: Cell, est: Estimate | None, why_not: str | None, skip: bool = False) -> str:
    """`skip`: the matrix says predicted_oom: skip, so a cell the estimate says does not fit is not run."""
    s = cell.settings
    head = f"{cell.name} ({cell.cell_id})  {s['model']}  {s['batch_size']} x {s['context']:,} tokens"
    if est is None:
        return f"{head}\n  {why_not}"
    budget = budget_bytes(s["budget"])
    lines = [f"{head}  peak: {est.peak_moment}"]
    lines += [f"  {c.name:<32}{c.bytes / GIB:>7.2f} GiB  {c.detail}" for c in est.components]
    lines.append(f"  {'total':<32}{est.total_bytes / GIB:>7.2f} GiB  of a {budget / GIB:.2f} GiB budget: "
                 f"{verdict(est, budget, host_budget_exceeded(s, est))}")
    if est.host_pinned_bytes:
        host_budget = s.get("host_budget", "none")
        host = "" if host_budget == "none" else f"; of a {shown_size(parse_bytes(host_budget))} host budget"
        lines.append(f"  {'host memory, pinned':<32}{est.host_pinned_bytes / GIB:>7.2f} GiB  {est.host_detail}{host}")
    lines += [f"  note: {note}" for note in est.notes]
    if skip and predicted_not_to_fit(s):
        lines.append("  predicted_oom: skip: on a CUDA GPU this cell is not run, and is recorded as skipped with this "
                     "estimate")
    return "\n".join(lines)


def as_json(cell: Cell, est: Estimate | None, why_not: str | None) -> dict[str, Any]:
    host = cell.settings.get("host_budget", "none")
    record: dict[str, Any] = {"cell_id": cell.cell_id, "name": cell.name,
                              "budget_bytes": budget_bytes(cell.settings["budget"]),
                              "host_budget_bytes": None if host == "none" else parse_bytes(host)}
    if est is None:
        record["none"] = why_not
    else:
        record.update(est.as_dict())
    return record
