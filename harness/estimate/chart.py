"""A matrix's predicted components as stacked bars, one per cell, with the measured device peak where a result
file has one, and the budget."""

from __future__ import annotations

import json
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

from harness.core.atomic_files import atomic_path
from harness.core.budget import budget_bytes
from harness.estimate import Estimate
from harness.spec.cells import Cell

GIB = 2**30
# bars longer than this many budgets are cut there, so that a cell far over the budget leaves the others legible
CUT_AT_BUDGETS = 1.5


def measured_peak(results_dir: Path, cell: Cell) -> float | None:
    path = results_dir / cell.matrix / f"{cell.cell_id}.json"
    if not path.is_file():
        return None
    metrics = json.loads(path.read_text()).get("metrics") or {}
    peak = metrics.get("peak_device_bytes")
    return peak / GIB if peak else None


def components_chart(estimated: list[tuple[Cell, Estimate]], results_dir: Path, out: Path) -> Path:
    names = [c.name for c, _ in estimated]
    budget = max(budget_bytes(c.settings["budget"]) for c, _ in estimated) / GIB
    cut = CUT_AT_BUDGETS * budget
    fig, ax = plt.subplots(figsize=(10, max(3.0, 0.4 * len(estimated) + 2.0)))
    left = [0.0] * len(estimated)
    for part in [c.name for c in estimated[0][1].components]:
        widths = []
        for row, (_, est) in enumerate(estimated):
            size = next(c.bytes for c in est.components if c.name == part) / GIB
            widths.append(max(0.0, min(size, cut - left[row])))
        ax.barh(names, widths, left=left, label=part)
        left = [a + b for a, b in zip(left, widths, strict=True)]
    measured = [(row, measured_peak(results_dir, cell)) for row, (cell, _) in enumerate(estimated)]
    shown = [(row, min(peak, cut)) for row, peak in measured if peak is not None]
    if shown:
        ax.scatter([p for _, p in shown], [r for r, _ in shown], marker="D", color="black", zorder=3,
                   label="measured device peak (an oom cell: where it stopped)")
    ax.axvline(budget, color="black", linestyle="--", label=f"budget {budget:.2f} GiB")
    ax.set_xlim(0, cut)
    ax.invert_yaxis()
    ax.set_xlabel(f"predicted device memory at the peak, by component (GiB; cut at {cut:.0f})")
    ax.set_title(f"{estimated[0][0].matrix}: the memory estimate per cell")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8)
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    with atomic_path(out) as tmp:
        fig.savefig(tmp, dpi=120)
    plt.close(fig)
    return out
