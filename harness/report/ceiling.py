"""reports/<matrix>/ceiling.{csv,md,png,pdf}: the longest context each configuration of a ceiling search
(harness/process/ceiling.py) reached within its budget, with its peak and its speed there."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import matplotlib.pyplot as plt
import pandas as pd

from harness.process.ceiling import GUESS_MARGIN, Search
from harness.report.charts.ceiling import draw
from harness.report.charts.style import RC, save

GIB = 2**30


def measured_on(searches: list[Search]) -> list[str]:
    """Where and with what the probes ran, and whether their speed is a measurement, as the probes record it."""
    probes = [p for s in searches for p in s.probes.values()]
    if not probes:
        return []
    def machine(env: dict[str, Any]) -> str:
        return (f"{env.get('gpu') or env.get('cpu')} torch {(env.get('versions') or {}).get('torch')} "
                f"at {str((env.get('git') or {}).get('commit', '?'))[:7]}")

    machines = sorted({machine(p.get("environment") or {}) for p in probes})
    shared = sum(not (p.get("metrics") or {}).get("throughput_measured", True) for p in probes)
    lines = [f"{len(probes)} probes, measured on {'; '.join(machines)}."]
    if shared:
        lines[0] += (f" {shared} of them shared the GPU with other probes: their peaks are their own processes' "
                     "and stay measurements, their speed does not (tokens/s there: –).")
    return [*lines, ""]


def write_report(matrix: str, searches: list[Search], reports_dir: Path) -> list[Path]:
    """reports/<matrix>/ceiling.csv (one row a configuration), ceiling.md and ceiling.png: the context each
    configuration reached within its budget, with its peak and its speed there."""
    def gib(value: float | None) -> str:
        return f"{value / GIB:.2f}" if pd.notna(value) else "–"

    folder = reports_dir / matrix
    folder.mkdir(parents=True, exist_ok=True)
    table = pd.DataFrame([s.row() for s in searches])
    table.to_csv(folder / "ceiling.csv", index=False)
    shown = pd.DataFrame({
        "configuration": table["cell"], "budget": table["budget"], "longest context that fits": table["answer"],
        "estimated": [f"{int(c):,}" if pd.notna(c) else "–" for c in table["estimated_context"]],
        "peak device GiB there": [gib(b) for b in table["peak_device_bytes"]],
        "host GiB no file backs there": [gib(b) for b in table["peak_host_unmapped_bytes"]],
        "of it pinned": [gib(b) for b in table["peak_host_pinned_bytes"]],
        "tokens/s there": [f"{t:,.0f}" if pd.notna(t) else "–" for t in table["tokens_per_second"]],
        "probes (context:status)": table["probes"]})
    spec = searches[0].spec if searches else None
    lines = [f"# {matrix}: the longest context within the budget", "",
             (f"Bisection over context from {spec.low:,} to {spec.high:,} tokens, to within {spec.resolution:,}: "
              "every probe is a real cell in a fresh process, judged on the whole process's device memory, and "
              f"kept under `results/{matrix}/ceiling/<cell id>/`. The search starts from the memory estimate's "
              f"answer (`estimated`, `vramlab estimate`), {GUESS_MARGIN:.0%} either side of it; where the kept "
              "probes already hold a context that fits next to one that does not, they are the answer, whatever "
              "the estimate says now.")
             if spec else "No configuration.", "",
             *measured_on(searches), shown.to_markdown(index=False), ""]
    (folder / "ceiling.md").write_text("\n".join(lines))

    with plt.rc_context(RC):
        charts = save(draw(table, spec.low if spec else 0, spec.high if spec else 0), folder, "ceiling")
    return [folder / "ceiling.csv", folder / "ceiling.md", *charts]
