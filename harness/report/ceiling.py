"""reports/<matrix>/ceiling.csv and the ceiling chart: the longest context each configuration of a ceiling search
(harness/process/ceiling.py) reached within its budget, with its peak and its speed there; the tables beside
them are harness/report/ceiling_report.py's."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import matplotlib.pyplot as plt
import pandas as pd

from harness.core.atomic_files import write_csv_atomic
from harness.core.made_folders import make_folders
from harness.process.ceiling import Search
from harness.report.charts.ceiling import draw
from harness.report.charts.style import RC, fit_labels, save
from harness.spec.chart_widths import FORMATS, WIDTHS


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


def write_csv_and_chart(matrix: str, searches: list[Search], reports_dir: Path) -> list[Path]:
    """reports/<matrix>/ceiling.csv (one row a configuration) and the ceiling chart: the context each
    configuration reached within its budget, with its peak and its speed there. harness.report.ceiling_report
    writes the tables beside them (ceiling.md, tables.tex)."""
    folder = reports_dir / matrix
    make_folders(folder)
    table = pd.DataFrame([s.row() for s in searches])
    write_csv_atomic(folder / "ceiling.csv", table)
    spec = searches[0].spec if searches else None
    charts: list[Path] = []
    with plt.rc_context(RC):
        for suffix, width in WIDTHS.items():
            charts += save(fit_labels(draw(table, spec.low if spec else 0, spec.high if spec else 0, width)), folder,
                           f"ceiling{suffix}", FORMATS[suffix])
    return [folder / "ceiling.csv", *charts]
