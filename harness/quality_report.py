"""The quality part of a report, from reports/<matrix>/quality.csv (built by the aggregate from evaluation
result files) beside cells.csv and steps.csv.

Cells repeated over seeds are grouped under their name without the `/seed=N` suffix: mean, spread (sample
standard deviation over seeds) and n. Every score is shown with its difference to the same model untrained
(the adapter disabled), so the gain from fine-tuning shows. Random-weight models have no score: "n/a".
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import pandas as pd

from harness.evaluation.equivalence import EXACT_BY_DESIGN, Verdict, describe_tolerances, score_drifts
from harness.quality_findings import GIB, SIGMAS, effects, findings, group_name, main_metric, summarize


def _cell(row: pd.Series | None) -> str:
    if row is None:
        return "–"
    spread = f" ± {row['sd']:.3f}" if not math.isnan(row["sd"]) else ""
    delta = f" ({row['delta']:+.3f})" if not math.isnan(row["delta"]) else ""
    partial = "*" if row["partial"] else ""
    return f"{row['mean']:.3f}{spread}{delta}{partial}"


def quality_table(cells: pd.DataFrame, quality: pd.DataFrame) -> pd.DataFrame:
    table = summarize(quality)
    tasks = list(dict.fromkeys(quality["task"]))
    groups = list(dict.fromkeys(cells["name"].map(group_name)))
    random = {group_name(n) for n, r in zip(cells["name"], cells["random_weights"], strict=True) if r is True}
    rows = []
    for group in groups:
        row: dict[str, Any] = {"cell": group}
        for task in tasks:
            metric = main_metric(quality, task)
            match = table[(table["group"] == group) & (table["task"] == task) & (table["metric"] == metric)]
            if group in random:
                row[f"{task} {metric}"] = "n/a (random weights)"
            elif match.empty:
                statuses = quality.loc[(quality["name"].map(group_name) == group) & (quality["task"] == task),
                                       "status"]
                row[f"{task} {metric}"] = ", ".join(sorted(set(statuses))) or "pending"
            else:
                row[f"{task} {metric}"] = _cell(match.iloc[0])
        rows.append(row)
    return pd.DataFrame(rows)


def equivalence(cells: pd.DataFrame, steps: pd.DataFrame, quality: pd.DataFrame) -> list[Verdict]:
    """Each cell whose only difference from another is an exact-by-design technique, held to its tolerances."""
    from harness.settings import SETTINGS

    settings = [s for s in SETTINGS if s in cells.columns]
    ok = cells[cells["status"] == "ok"]
    verdicts = []
    for _, cell in ok.iterrows():
        for (setting, level), reference_level in EXACT_BY_DESIGN.items():
            if str(cell.get(setting)) != level:
                continue
            want = {s: str(cell[s]) for s in settings if s != setting}
            candidates = ok[(ok[setting].astype(str) == reference_level)
                            & (ok[list(want)].astype(str) == pd.Series(want)).all(axis=1)]
            if candidates.empty:
                continue
            reference = candidates.iloc[0]
            verdicts.append(_verdict(cell, reference, setting, level, steps, quality))
    return verdicts


def _verdict(cell: pd.Series, reference: pd.Series, setting: str, level: str, steps: pd.DataFrame,
             quality: pd.DataFrame) -> Verdict:
    mine = steps[steps["cell_id"] == cell["cell_id"]].set_index("step")["loss"]
    theirs = steps[steps["cell_id"] == reference["cell_id"]].set_index("step")["loss"]
    joined = pd.concat([mine, theirs], axis=1, keys=["a", "b"]).dropna()
    loss = float(((joined["a"] - joined["b"]).abs() / joined["b"].abs()).max()) if len(joined) else None
    drifts = []
    a = quality[(quality["cell_id"] == cell["cell_id"]) & (quality["status"] == "ok")]
    b = quality[(quality["cell_id"] == reference["cell_id"]) & (quality["status"] == "ok")]
    for _, score in a.iterrows():
        match = b[(b["task"] == score["task"]) & (b["metric"] == score["metric"])]
        if match.empty:
            continue
        ref = match.iloc[0]
        if score_drifts(float(score["value"]), _num(score["stderr"]), float(ref["value"]), _num(ref["stderr"])):
            drifts.append(f"{score['task']} {score['metric']} {score['value']:.3f} vs {ref['value']:.3f}")
    return Verdict(cell["name"], reference["name"], setting, level, loss, tuple(drifts))


def _num(value: Any) -> float | None:
    return None if value is None or (isinstance(value, float) and math.isnan(value)) else float(value)


def markdown(cells: pd.DataFrame, steps: pd.DataFrame, quality: pd.DataFrame) -> list[str]:
    lines = ["## Quality (lm-eval)", "",
             "Each entry: mean over seeds ± standard deviation, then in brackets the change against the same "
             "model untrained (its adapter disabled); `*` marks a partial score (a `limit` capped the documents). "
             "bits_per_byte: lower is better; exact_match: higher is better.", ""]
    lines += [quality_table(cells, quality).to_markdown(index=False), "",
              "Charts: `quality_by_cell.png` (each task per cell, trained and untrained), `quality_vs_memory.png` "
              "(the trade-off). Every score with its stderr and n: `quality.csv`.", ""]
    skipped = quality[quality["status"].isin(["skipped", "error"])].drop_duplicates(["task", "reason"])
    for _, row in skipped.iterrows():
        lines.append(f"- `{row['task']}` {row['status']} for some cells: {row['reason']}")
    change = effects(cells, quality)
    if not change.empty:
        reference = group_name(cells["name"].iloc[0])
        lines += ["", f"### Each change against `{reference}`", "",
                  f"Differences of the means (a single cell against `{reference}` at the same seed). "
                  f"\"better\" or \"worse\" only beyond {SIGMAS:g} combined standard errors (over seeds where "
                  "there are several, else over documents); otherwise \"within the spread\". Peak memory: "
                  "whole-process device memory, mean over seeds.", "",
                  change.to_markdown(index=False, floatfmt="+.2f"), ""]
    found = findings(cells, quality)
    if found:
        lines += ["", "### Findings", "", *[f"- {line}" for line in found]]
    verdicts = equivalence(cells, steps, quality)
    if verdicts:
        lines += ["", "### Equivalence checks", "",
                  f"Techniques that should not change the numbers, against their reference cell: "
                  f"{describe_tolerances()}.", "",
                  "| cell | reference | largest loss difference | verdict |", "| --- | --- | ---: | --- |"]
        for v in verdicts:
            loss = f"{v.loss_max_relative:.2%}" if v.loss_max_relative is not None else "–"
            verdict = "drift: " + "; ".join(v.score_drifts or ("loss",)) if v.drift else "agrees"
            lines.append(f"| {v.cell} | {v.reference} | {loss} | {verdict} |")
    return [*lines, ""]


def charts(cells: pd.DataFrame, quality: pd.DataFrame, out: Path) -> list[Path]:
    table = summarize(quality)
    if table.empty:
        return []
    paths = []
    memory = cells.assign(group=cells["name"].map(group_name)).groupby("group", sort=False)["peak_device_bytes"].mean()
    tasks = list(dict.fromkeys(table["task"]))[:6]
    columns = min(len(tasks), 3)
    rows = math.ceil(len(tasks) / columns)
    fig, axes = plt.subplots(rows, columns, figsize=(5.5 * columns, 4 * rows), squeeze=False)
    for ax in axes.flat[len(tasks):]:
        ax.set_visible(False)
    for ax, task in zip(axes.flat, tasks, strict=False):
        metric = main_metric(quality, task)
        part = table[(table["task"] == task) & (table["metric"] == metric)]
        x = pd.Series([memory.get(g, math.nan) / GIB for g in part["group"]], index=part.index)
        # repeated cells carry the comparisons and get labels; single cells (equivalence checks) sit on the
        # reference and would only hide it, so they are drawn faint and named in the report's tables
        repeated = part["n"] > 1
        ax.errorbar(x[repeated], part.loc[repeated, "mean"], yerr=part.loc[repeated, "sd"], fmt="o", capsize=3,
                    color="#4477aa", label="mean ± sd over seeds")
        ax.scatter(x[~repeated], part.loc[~repeated, "mean"], marker="o", facecolors="none", edgecolors="#bbbbbb",
                   label="single cell (equivalence checks)")
        _label(ax, x[repeated], part.loc[repeated, "mean"], part.loc[repeated, "group"])
        ax.set_xlabel("peak device memory (GiB, mean over seeds)")
        better = "higher" if part["higher_is_better"].any() else "lower"
        ax.set_ylabel(f"{task} {metric} ({better} is better)")
    axes[0][columns - 1].legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.02, 1.0))
    fig.suptitle("Quality against peak memory (error bars: standard deviation over seeds)")
    fig.tight_layout()
    paths.append(out / "quality_vs_memory.png")
    fig.savefig(paths[-1], dpi=120)
    plt.close(fig)
    paths.append(_by_cell(table, quality, tasks, out / "quality_by_cell.png"))
    return paths


def _label(ax: Any, x: pd.Series, y: pd.Series, names: pd.Series) -> None:
    """Name each point; a point close to one already named gets its name on the other side, so that two
    neighbours stay readable."""
    span_x = (x.max() - x.min()) or 1.0
    span_y = (y.max() - y.min()) or 1.0
    placed: list[tuple[float, float]] = []
    for i in sorted(x.index, key=lambda i: (x[i], y[i])):
        near = any(abs(x[i] - px) < 0.12 * span_x and abs(y[i] - py) < 0.06 * span_y for px, py in placed)
        ax.annotate(names[i], (x[i], y[i]), fontsize=7, textcoords="offset points",
                    xytext=(-4, -9) if near else (4, 2), ha="right" if near else "left")
        placed.append((x[i], y[i]))


def _by_cell(table: pd.DataFrame, quality: pd.DataFrame, tasks: list[str], path: Path) -> Path:
    """Each task's main metric per cell: the trained score (mean, standard deviation over seeds) as a bar, the
    same model untrained as a tick, so both the effect of a setting and the gain from training show."""
    shown = tasks[:6]
    groups = list(dict.fromkeys(table["group"]))
    fig, axes = plt.subplots(1, len(shown), figsize=(3.2 * len(shown), 0.35 * len(groups) + 1.8), sharey=True,
                             squeeze=False)
    for ax, task in zip(axes[0], shown, strict=True):
        metric = main_metric(quality, task)
        part = table[(table["task"] == task) & (table["metric"] == metric)].set_index("group")
        rows = [g for g in groups if g in part.index]
        y = [groups.index(g) for g in rows]
        ax.barh(y, part.loc[rows, "mean"], xerr=part.loc[rows, "sd"].fillna(0), color="#4477aa", capsize=2,
                label="trained")
        ax.scatter(part.loc[rows, "baseline"], y, marker="|", s=200, color="#ee6677", label="untrained", zorder=3)
        ax.set_title(f"{task}\n{metric} ({'higher' if part['higher_is_better'].any() else 'lower'} is better)",
                     fontsize=8)
        ax.tick_params(labelsize=7)
    axes[0][0].set_yticks(range(len(groups)), groups)
    axes[0][0].invert_yaxis()
    axes[0][-1].legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.02, 1.0))
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path
