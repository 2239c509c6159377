"""reports/<matrix>/ceiling.csv and the ceiling chart: the longest context each configuration of a ceiling search
(harness/results/ceiling.py) reached within its budget, with its peak and its speed there; the tables beside
them are harness/report/ceiling_report.py's."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import matplotlib.pyplot as plt
import pandas as pd

from harness.core.atomic_files import write_csv_atomic
from harness.core.errors import UsageError
from harness.core.made_folders import make_folders
from harness.estimate.ceiling import estimated_ceiling
from harness.report.charts.ceiling import draw
from harness.report.charts.style import RC, fit_labels, save
from harness.results.ceiling import Search, kept_search
from harness.spec.ceiling import CeilingSpec
from harness.spec.cells import Cell
from harness.spec.chart_widths import FORMATS, WIDTHS
from harness.spec.matrix import MatrixError, expand


def settled_search(matrix: str, cell: Cell, spec: CeilingSpec, results_dir: Path) -> Search:
    """A search as its kept probes settle it, the memory estimate's answer beside it; ProbeMissing where it needs a
    probe, which is never run here."""
    return kept_search(matrix, cell, spec, results_dir, estimated_ceiling(cell, spec))


def measured_on(searches: list[Search]) -> list[str]:
    """Where and with what the probes ran, and whether their speed is a measurement, as the probes record it."""
    probes = [p for s in searches for p in s.probes.values()]
    if not probes:
        return []
    def machine(env: dict[str, Any]) -> str:
        versions = env.get("versions") or {}
        stack = ", ".join(f"{name} {versions[name]}" for name in ("torch", "transformers", "peft", "unsloth")
                          if versions.get(name))
        commit = str((env.get("git") or {}).get("commit", "?"))[:7]
        return f"{env.get('gpu') or env.get('cpu')} with {stack} at {commit}"

    machines = sorted({machine(p.get("environment") or {}) for p in probes})
    shared = sum(not (p.get("metrics") or {}).get("throughput_measured", True) for p in probes)
    lines = [f"{len(probes)} probes, measured on {'; '.join(machines)}."]
    if shared:
        lines[0] += (f" {shared} of them shared the GPU with other probes: their peaks are their own processes' "
                     "and stay measurements, their speed does not (tokens/s there: –).")
    return [*lines, ""]


def _cells_of(matrix: str, searches: list[Search]) -> set[str]:
    """The ids of the matrix's searches today (a shipped matrix's, or those searched now where it is not found)."""
    try:
        return {cell.cell_id for cell in expand(matrix, check_model=False)}
    except MatrixError:
        return {search.cell.cell_id for search in searches}


def _keep_answers(path: Path, new: pd.DataFrame, cells: set[str]) -> None:
    """A ceiling table is not replaced by one that has fewer answers (report/kept.py says why): an answer of a
    search still in the matrix that the new table lacks (--cell ran fewer searches) or has lost (its probes are
    not in this results folder, or were skipped) keeps the table as it is."""
    try:
        old = pd.read_csv(path, dtype=str, keep_default_na=False)
    except (OSError, ValueError):
        return
    if not {"cell_id", "ceiling_context"} <= set(old.columns):
        return
    answered = {row.cell_id: row.cell for row in old.itertuples() if row.ceiling_context and row.cell_id in cells}
    still = {str(row.cell_id) for row in new.itertuples() if pd.notna(row.ceiling_context)} if len(new) else set()
    lost = sorted(name for cell_id, name in answered.items() if cell_id not in still)
    if lost:
        raise UsageError(f"{path} shows {len(lost)} answers this run does not have (first: {lost[0]}); it is kept "
                         "as it is: run every search (no --cell) with the results folder that holds their probes, "
                         "or give another --reports-dir")


def write_csv_and_chart(matrix: str, searches: list[Search], reports_dir: Path) -> list[Path]:
    """reports/<matrix>/ceiling.csv (one row a configuration) and the ceiling chart: the context each
    configuration reached within its budget, with its peak and its speed there. harness.report.ceiling_report
    writes the tables beside them (ceiling.md, ceiling.tex)."""
    folder = reports_dir / matrix
    table = pd.DataFrame([s.row() for s in searches])
    _keep_answers(folder / "ceiling.csv", table, _cells_of(matrix, searches))
    make_folders(folder)
    write_csv_atomic(folder / "ceiling.csv", table)
    spec = searches[0].spec if searches else None
    charts: list[Path] = []
    with plt.rc_context(RC):
        for suffix, width in WIDTHS.items():
            charts += save(fit_labels(draw(table, spec.low if spec else 0, spec.high if spec else 0, width)), folder,
                           f"ceiling{suffix}", FORMATS[suffix])
    return [folder / "ceiling.csv", *charts]
