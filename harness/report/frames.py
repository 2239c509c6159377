"""What the groups of a matrix say against each other, from the group table (harness/report/cell_groups.py) and the
design (harness/spec/design.py): each change against the baseline, the sweep's points, the memory-throughput
Pareto front, the loss curves with those that coincide. Tables, charts and the summary all read these frames,
so a number is computed once.

Spread: where a group has repeats (seeds), a difference carries the standard error of a difference of two
means, sqrt(sd_a^2/n_a + sd_b^2/n_b); a group of one cell adds nothing to it, and with no repeat on either side
there is no spread to give (NaN).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import pandas as pd

from harness.report.cell_groups import GIB, group_name, group_table, reference_cells
from harness.report.pareto_fronts import fronts_by_context
from harness.spec.design import ReportDesign
from harness.spec.groups import describe, differences
from harness.spec.settings import SETTINGS

# loss curves closer than this (relative, at every step) are drawn once: they could not be told apart anyway
SAME_CURVE = 1e-4


def _standard_error(row: pd.Series, metric: str) -> float:
    sd, n = row[f"{metric}_sd"], row[f"{metric}_n"]
    return float(sd) / math.sqrt(n) if n > 1 and not math.isnan(sd) else 0.0


def _difference_error(a: pd.Series, b: pd.Series, metric: str) -> float:
    n_a, n_b = a[f"{metric}_n"], b[f"{metric}_n"]
    if min(n_a, n_b) == 0 or max(n_a, n_b) == 1:
        return math.nan
    return math.hypot(_standard_error(a, metric), _standard_error(b, metric))


def _settings(cells: pd.DataFrame) -> dict[str, dict[str, object]]:
    """Each group's settings, as cells.csv holds them (its first cell's: seeds aside, a group's cells agree)."""
    columns = [s for s in SETTINGS if s in cells.columns]
    firsts = cells.assign(group=cells["name"].map(group_name)).drop_duplicates("group")
    return {row["group"]: {c: row[c] for c in columns} for _, row in firsts.iterrows()}


def same_model_reference(cells: pd.DataFrame, group: str, baseline: str) -> str:
    """What a group's change is measured against: the baseline, or, for a group of another model, that model's
    own reference, its group closest to the baseline (Llama sliced to 100k against Llama at 128k, not against the
    Qwen3 baseline: a delta across models mixes the model into every change). The model's own reference is held
    against the baseline: its delta is the change of model."""
    settings = _settings(cells)
    mine, base = settings.get(group), settings.get(baseline)
    if mine is None or base is None or "model" not in mine or str(mine["model"]) == str(base["model"]):
        return baseline
    same = [g for g, s in settings.items() if str(s["model"]) == str(mine["model"])]
    anchor = min(same, key=lambda g: len(differences(settings[g], base)))  # ties: the first in matrix order
    return baseline if anchor == group else anchor


def deltas(table: pd.DataFrame, design: ReportDesign, cells: pd.DataFrame) -> pd.DataFrame:
    """Each group of design.deltas against its reference (the baseline, or a group of its own model:
    same_model_reference): Δ peak device memory (GiB; a lower bound where the group ran out of memory), Δ tokens/s
    in percent of the reference's, each with its standard error. A group of one cell is held against the
    reference's cell of the same seed where there is one (`same_seed`), as the quality comparisons are
    (harness.report.cell_groups.reference_cells); otherwise against the reference's mean."""
    rows = []
    for group in design.deltas:
        base = same_model_reference(cells, group, design.baseline)
        theirs = reference_cells(cells, group, base)
        same_seed = int(table.at[group, "n"]) == 1 and len(theirs) < int(table.at[base, "n"])
        b = group_table(theirs).iloc[0] if same_seed else table.loc[base]
        a = table.loc[group]
        peak = a["peak_device"] - b["peak_device"]
        tokens = a["tokens_per_second"] / b["tokens_per_second"]
        relative = math.hypot(_standard_error(a, "tokens_per_second") / a["tokens_per_second"],
                              _standard_error(b, "tokens_per_second") / b["tokens_per_second"])
        spread = _difference_error(a, b, "tokens_per_second")
        differs = design.changes[group] if base == design.baseline else \
            describe(differences(_settings(cells)[group], _settings(cells)[base], [design.x] if design.x else []))
        rows.append({"group": group, "change": design.changes[group], "reference": base, "differs": differs,
                     "status": a["status"],
                     "n": a["n"], "peak_reached": bool(a["peak_reached"]), "same_seed": same_seed,
                     "d_peak": peak, "d_peak_se": _difference_error(a, b, "peak_device"),
                     "d_tokens_pct": 100 * (tokens - 1),
                     "d_tokens_pct_se": 100 * tokens * relative if not math.isnan(spread) else math.nan})
    columns = ["group", "change", "reference", "differs", "status", "n", "peak_reached", "same_seed", "d_peak",
               "d_peak_se", "d_tokens_pct", "d_tokens_pct_se"]
    return pd.DataFrame(rows, columns=columns)


def _spread_columns(metric: str) -> tuple[str, str, str]:
    return metric, f"{metric}_sd", f"{metric}_n"


def sweep(table: pd.DataFrame, design: ReportDesign) -> pd.DataFrame:
    """One row a point of the sweep: its line, x, and the group's memory and speed with their spread."""
    rows = []
    for line in design.sweep:
        for group in line.cells:
            row = table.loc[group]
            rows.append({"line": line.label, "change": line.change, "group": group, "x": float(row[design.x]),
                         **{k: row[k] for k in ("status", "n", "peak_reached", *_spread_columns("peak_device"),
                                                *_spread_columns("tokens_per_second"))}})
    return pd.DataFrame(rows)


def same_lines(points: pd.DataFrame, metric: str) -> dict[str, str]:
    """Sweep lines whose trained points agree with an earlier line's within SAME_CURVE at every x: line -> that
    earlier line. Drawn one over the other, the first would vanish."""
    ok = points[points["status"] == "ok"].dropna(subset=[metric])
    series = {line: part.set_index("x")[metric] for line, part in ok.groupby("line", sort=False)}
    same: dict[str, str] = {}
    for i, (line, values) in enumerate(series.items()):
        for earlier, other in list(series.items())[:i]:
            if earlier not in same and list(values.index) == list(other.index) and all(
                    math.isclose(a, b, rel_tol=SAME_CURVE) for a, b in zip(values, other, strict=True)):
                same[line] = earlier
                break
    return same


def pareto_front(table: pd.DataFrame) -> dict[int, list[str]]:
    """Per context, the ok groups that no other group at that context beats on both counts (no more memory and at
    least the tokens/s, one of them strictly), in increasing memory."""
    points = table[(table["status"] == "ok") & table["peak_device"].notna() & table["tokens_per_second"].notna()]
    return fronts_by_context(points, "peak_device", "tokens_per_second")


def loss_curves(steps: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """Each group's training loss per optimizer step: mean, standard deviation and n over its cells, and whether
    the step is a warm-up step."""
    steps = steps.dropna(subset=["loss"]).assign(group=lambda s: s["name"].map(group_name))
    curves = {}
    for group, part in steps.groupby("group", sort=False):
        curve = part.groupby("step").agg(mean=("loss", "mean"), sd=("loss", "std"), n=("loss", "size"),
                                         warmup=("warmup", "any"))
        curves[str(group)] = curve.reset_index()
    return curves


def coinciding(curves: dict[str, pd.DataFrame]) -> list[list[str]]:
    """Groups whose loss curves agree within SAME_CURVE at every step, in first-seen order: each list is one
    drawn curve."""
    drawn: list[list[str]] = []
    for group, curve in curves.items():
        for members in drawn:
            other = curves[members[0]]
            if list(other["step"]) == list(curve["step"]) and all(
                    math.isclose(a, b, rel_tol=SAME_CURVE) for a, b in zip(other["mean"], curve["mean"], strict=True)):
                members.append(group)
                break
        else:
            drawn.append([group])
    return drawn


def on_cpu(cells: pd.DataFrame) -> bool:
    """Whether every cell is set to run on a CPU (`device: cpu`, as the smoke matrix): its "device" peak is then
    the process's peak resident set, its MFU is against a CPU's peak and no GPU budget applies."""
    devices = cells["device"].astype(str) if "device" in cells else pd.Series(dtype=str)
    return bool(len(devices)) and bool((devices == "cpu").all())


def memory_words(cpu: bool) -> str:
    return "resident memory (CPU)" if cpu else "device memory"


@dataclass
class Frames:
    """Everything the report states, computed once from cells.csv, steps.csv and design.json."""

    cells: pd.DataFrame
    design: ReportDesign
    table: pd.DataFrame
    deltas: pd.DataFrame
    points: pd.DataFrame
    front: dict[int, list[str]]  # context -> its Pareto front
    curves: dict[str, pd.DataFrame]
    drawn: list[list[str]]
    budget: float | None  # GiB; None on a CPU, where no device budget is drawn
    on_cpu: bool = False  # every cell ran on a CPU: "device memory" is the process's resident set there

    @property
    def memory(self) -> str:
        """What the peak memory of a cell is, in words."""
        return memory_words(self.on_cpu)

    @classmethod
    def build(cls, cells: pd.DataFrame, steps: pd.DataFrame, design: ReportDesign) -> Frames:
        table = group_table(cells)
        curves = loss_curves(steps)
        budgets = cells["budget_bytes"].dropna()
        cpu = on_cpu(cells)
        return cls(cells=cells, design=design, table=table, deltas=deltas(table, design, cells),
                   points=sweep(table, design), front=pareto_front(table) if design.throughput_measured else {},
                   curves=curves, drawn=coinciding(curves),
                   budget=budgets.iloc[0] / GIB if len(budgets) and not cpu else None, on_cpu=cpu)
