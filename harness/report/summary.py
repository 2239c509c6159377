"""The few lines at the top of report.md that state what the matrix found, in numbers, from the same frames the
tables and charts draw (harness/report/frames.py): what fitted, the baseline, the largest effects against it, how
memory and speed grow along the sweep, the memory-throughput front, which loss curves coincide.
"""

from __future__ import annotations

import math

import pandas as pd

from harness.report.cell_groups import GIB, measured_so_far
from harness.report.frames import Frames
from harness.spec.design import ReportDesign, x_label
from harness.spec.groups import group_name

# a difference smaller than this many standard errors is said to be within the spread
SIGMAS = 2.0
# a status in words: one cell, several cells
STATUS_WORDS = {"oom": ("ran out of memory",) * 2, "skipped": ("was skipped", "were skipped"),
                "error": ("failed",) * 2, "timeout": ("timed out",) * 2,
                "pending": ("has not run yet", "have not run yet")}


def _names(groups: list[str]) -> str:
    return ", ".join(f"`{g}`" for g in groups)


def _value(row: pd.Series, metric: str, digits: int, unit: str) -> str:
    if pd.isna(row[metric]):  # a cell that shared the device has no speed of its own
        return f"– {unit}"
    spread = f" ± {row[f'{metric}_sd']:,.{digits}f}" if row[f"{metric}_n"] > 1 else ""
    return f"{row[metric]:,.{digits}f}{spread} {unit}"


def _fit(cells: pd.DataFrame) -> str:
    budget = cells["budget_bytes"].dropna()
    within = f" within the {budget.iloc[0] / GIB:.2f} GiB budget" if len(budget) else ""
    status = cells["status"]
    parts = [f"{(status == 'ok').sum()} trained{within}"]
    for word, (one, several) in STATUS_WORDS.items():
        failed = cells[status == word]
        if len(failed):
            groups = _names(list(dict.fromkeys(failed["name"].map(group_name))))
            parts.append(f"{len(failed)} {one if len(failed) == 1 else several} ({groups})")
    if len(parts) == 1:
        return f"All {len(cells)} cells trained{within}."
    return f"Of {len(cells)} cells, " + ", ".join(parts[:-1]) + " and " + parts[-1] + "."


def _baseline(table: pd.DataFrame, design: ReportDesign, memory: str = "device memory") -> str:
    row = table.loc[design.baseline]
    if not measured_so_far(row["status"]):
        return f"The baseline `{design.baseline}` did not train ({row['status']}): no change is measured against it."
    speed = f", {_value(row, 'tokens_per_second', 0, 'tokens/s')}" if design.throughput_measured else ""
    n = f" (n={row['n']})" if row["n"] > 1 else ""
    if row["status"] != "ok":
        n = f" ({row['status']}: so far n={row['peak_device_n']} of {row['n']})"
    return f"Baseline `{design.baseline}`{n}: {_value(row, 'peak_device', 2, 'GiB')} peak {memory}{speed}."


def _effect(row: pd.Series, metric: str, fmt: str, unit: str) -> str:
    se = row[f"{metric}_se"]
    spread = "" if math.isnan(se) else (f" ± {se:{fmt.lstrip('+')}}" + (", within the spread" if abs(row[metric])
                                                                         <= SIGMAS * se else ""))
    return f"`{row['group']}` ({row['change'] or 'the seed'}, {row[metric]:{fmt}}{unit}{spread})"


def _span(rows: pd.DataFrame, metric: str, fmt: str, unit: str, what: str) -> str:
    """'what from <lowest> to <highest>', each named, or the one value where there is one."""
    low, high = rows.loc[rows[metric].idxmin()], rows.loc[rows[metric].idxmax()]
    if low["group"] == high["group"]:
        return f"{what} {_effect(low, metric, fmt, unit)}"
    return f"{what} from {_effect(low, metric, fmt, unit)} to {_effect(high, metric, fmt, unit)}"


def _deltas(deltas: pd.DataFrame, design: ReportDesign, table: pd.DataFrame) -> list[str]:
    if deltas.empty or not measured_so_far(table.at[design.baseline, "status"]):
        return []
    where = f", at {design.x} {table.at[design.baseline, design.x]:,}" if design.x else ""
    ok = deltas[deltas["status"].map(measured_so_far)].dropna(subset=["d_peak"])
    parts = [_span(ok, "d_peak", "+.2f", " GiB", "peak memory")] if len(ok) else []
    oom = deltas[deltas["peak_reached"]]
    if len(oom):
        parts.append("out of memory: " + ", ".join(f"`{r['group']}` ({r['change']}, at least {r['d_peak']:+.2f} GiB)"
                                                   for _, r in oom.iterrows()))
    timed = ok.dropna(subset=["d_tokens_pct"])
    if design.throughput_measured and len(timed):
        parts.append(_span(timed, "d_tokens_pct", "+.1f", "%", "tokens/s"))
    return [f"Each change against it{where}: " + "; ".join(parts) + "."] if parts else []


def _speed(*rows: pd.Series) -> str:
    """Tokens/s of a sweep's ends; – where a cell shared the device and timed nothing of its own."""
    values = ["–" if pd.isna(r["tokens_per_second"]) else f"{r['tokens_per_second']:,.0f}" for r in rows]
    return " → ".join(values) + " tokens/s"


def _sweep(points: pd.DataFrame, design: ReportDesign) -> list[str]:
    lines = []
    for label, line in points.groupby("line", sort=False):
        ok = line[line["status"] == "ok"]
        if ok.empty:
            lines.append(f"`{label}`: no cell trained ({', '.join(sorted(set(line['status'])))} at every {design.x}).")
            continue
        first, last = ok.iloc[0], ok.iloc[-1]
        speed = design.throughput_measured
        if len(ok) == 1:
            text = (f"`{label}`: only {design.x} {first['x']:,.0f} trained, peak {first['peak_device']:.2f} GiB"
                    + (f", {_speed(first)}" if speed else ""))
        else:
            text = (f"`{label}`: from {design.x} {first['x']:,.0f} to {last['x']:,.0f}, peak "
                    f"{first['peak_device']:.2f} → {last['peak_device']:.2f} GiB"
                    + (f", {_speed(first, last)}" if speed else ""))
        beyond = line[(line["x"] > last["x"]) & (line["status"] != "ok")]
        if len(beyond):
            text += f"; at {beyond.iloc[0]['x']:,.0f}: {beyond.iloc[0]['status']}"
        lines.append(text + ".")
    return [f"Along {x_label(design.x)}: " + " ".join(lines)] if lines else []


def _front(table: pd.DataFrame, fronts: dict[int, list[str]]) -> list[str]:
    """The memory-throughput Pareto front of each context: cells at different contexts do different work, so
    none is said to beat another."""
    lines = []
    for context, front in fronts.items():
        if not front:
            continue
        points = ", ".join(f"`{g}` ({table.at[g, 'peak_device']:.2f} GiB, {table.at[g, 'tokens_per_second']:,.0f} "
                           "tokens/s)" for g in front)
        at = f" at context {context:,}" if len(fronts) > 1 else ""
        lines.append(f"Memory-throughput Pareto front{at} (no other cell{at} needs less memory and runs faster): "
                     f"{points}.")
    return lines


def _loss(drawn: list[list[str]]) -> list[str]:
    shared = [members for members in drawn if len(members) > 1]
    if not shared:
        return []
    groups = sum(len(m) for m in drawn)
    curves = f"{len(drawn)} distinct curve{'s' if len(drawn) > 1 else ''}"
    return [f"Loss: {groups} cells draw {curves}; the same curve: "
            + "; ".join(" = ".join(f"`{g}`" for g in members) for members in shared) + "."]


def summary(frames: Frames, quality: list[str] | None = None) -> list[str]:
    """The report's opening bullets; `quality`: the comparisons that answer the matrix's questions, as bullets
    (harness/report/comparison_text.py)."""
    design, table = frames.design, frames.table
    lines = [_fit(frames.cells), _baseline(table, design, frames.memory), *_deltas(frames.deltas, design, table)]
    if design.sweep:
        lines += _sweep(frames.points, design)
    if design.throughput_measured:
        lines += _front(table, frames.front)
    else:
        lines.append("Speed is not a measurement here: the cells shared the device.")
    lines += _loss(frames.drawn)
    bullets = [f"- {line}" for line in lines]
    if quality:
        bullets += ["- Quality (lm-eval; the quality section below has every comparison and the rule):",
                    *(f"  {line}" for line in quality)]
    return ["## Summary", "", *bullets, ""]
