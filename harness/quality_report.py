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

GIB = 2**30
# the metric that stands for each task in tables: the first of these that the task reports
MAIN_METRICS = ("bits_per_byte", "exact_match", "acc_norm", "acc", "word_perplexity")
LANGUAGES = {"en": "English", "es": "Spanish", "fr": "French", "de": "German"}


def group_name(name: str) -> str:
    return name.split("/seed=")[0]


def main_metric(quality: pd.DataFrame, task: str) -> str | None:
    metrics = set(quality.loc[(quality["task"] == task) & quality["metric"].notna(), "metric"])
    return next((m for m in MAIN_METRICS if m in metrics), min(metrics) if metrics else None)


def summary(quality: pd.DataFrame) -> pd.DataFrame:
    """One row per (group, task, metric): mean over seeds, spread, n, the untrained score and the gain."""
    scored = quality[quality["status"] == "ok"].copy()
    if scored.empty:
        return pd.DataFrame(columns=["group", "task", "metric", "mean", "sd", "n", "baseline", "delta", "partial"])
    scored["group"] = scored["name"].map(group_name)
    rows = []
    for (group, task, metric), part in scored.groupby(["group", "task", "metric"], sort=False):
        values = part["value"].astype(float)
        rows.append({"group": group, "task": task, "metric": metric, "mean": values.mean(),
                     "sd": values.std(ddof=1) if len(values) > 1 else math.nan, "n": len(values),
                     "stderr": part["stderr"].astype(float).mean(), "baseline": part["baseline"].astype(float).mean(),
                     "delta": part["delta"].astype(float).mean(), "partial": bool(part["partial"].any()),
                     "higher_is_better": bool(part["higher_is_better"].iloc[0])})
    return pd.DataFrame(rows)


def _cell(row: pd.Series | None) -> str:
    if row is None:
        return "–"
    spread = f" ± {row['sd']:.3f}" if not math.isnan(row["sd"]) else ""
    delta = f" ({row['delta']:+.3f})" if not math.isnan(row["delta"]) else ""
    partial = "*" if row["partial"] else ""
    return f"{row['mean']:.3f}{spread}{delta}{partial}"


def quality_table(cells: pd.DataFrame, quality: pd.DataFrame) -> pd.DataFrame:
    table = summary(quality)
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


def _mean_of(table: pd.DataFrame, group: str, task: str, metric: str) -> pd.Series | None:
    match = table[(table["group"] == group) & (table["task"] == task) & (table["metric"] == metric)]
    return None if match.empty else match.iloc[0]


def _groups(cells: pd.DataFrame) -> pd.DataFrame:
    """One row per group of seeds (the first seed's settings stand for the group)."""
    return cells.assign(group=cells["name"].map(group_name)).drop_duplicates("group").set_index("group")


def pairs_differing_in(groups: pd.DataFrame, setting: str, ignore: tuple[str, ...] = ()) -> list[tuple[str, str]]:
    """(group, group) pairs whose settings are equal but for `setting` (and the seed, and `ignore`)."""
    from harness.settings import SETTINGS

    same = [s for s in SETTINGS if s in groups.columns and s not in {setting, "seed", *ignore}]
    keys = groups[same].astype(str).apply(tuple, axis=1)
    found = []
    for a in groups.index:
        for b in groups.index:
            if a < b and keys[a] == keys[b] and str(groups.at[a, setting]) != str(groups.at[b, setting]):
                found.append((a, b))
    return found


def findings(cells: pd.DataFrame, quality: pd.DataFrame) -> list[str]:
    """The questions the quality matrix was built to answer, answered from its numbers."""
    table = summary(quality)
    scored = set(table["group"])
    groups = _groups(cells)
    lines = []
    if "truncation" in groups.columns:
        for a, b in pairs_differing_in(groups, "truncation", ignore=("truncation_decay",)):
            policies = {groups.at[a, "truncation"]: a, groups.at[b, "truncation"]: b}
            if {"exp_decay", "tail"} <= set(policies) and {a, b} <= scored:
                context = int(groups.at[a, "context"])
                lines.append(_compare(table, policies["exp_decay"], policies["tail"],
                                      f"At {context:,} tokens of context, exp_decay (`{policies['exp_decay']}`) "
                                      f"against tail (`{policies['tail']}`)"))
    if "vocabulary" in groups.columns:
        for a, b in pairs_differing_in(groups, "vocabulary", ignore=("vocabulary_source",)):
            base, group = (a, b) if str(groups.at[a, "vocabulary"]) == "native" else (b, a)
            if str(groups.at[base, "vocabulary"]) != "native" or not {a, b} <= scored:
                continue
            row = groups.loc[group]
            parts = []
            for lang, language in LANGUAGES.items():
                x = _mean_of(table, group, f"text_{lang}", "bits_per_byte")
                y = _mean_of(table, base, f"text_{lang}", "bits_per_byte")
                if x is not None and y is not None:
                    share = _outside_share(quality, group, f"text_{lang}")
                    parts.append(f"{language} {x['mean'] - y['mean']:+.3f} bits/byte"
                                 + (f" ({share:.1%} of its tokens spelled out)" if share is not None else ""))
            x, y = _mean_of(table, group, "workload_bpb", "bits_per_byte"), _mean_of(table, base, "workload_bpb",
                                                                                     "bits_per_byte")
            if x is not None and y is not None:
                parts.append(f"the documents {x['mean'] - y['mean']:+.3f} bits/byte")
            if parts:
                lines.append(f"Slicing to {int(row['vocabulary']):,} tokens ({row['vocabulary_source']}), against "
                             f"`{base}` after the same training (n={_n(table, group)} and {_n(table, base)}): "
                             + "; ".join(parts) + ".")
    return lines


def _n(table: pd.DataFrame, group: str) -> int:
    return int(table.loc[table["group"] == group, "n"].max())


def _outside_share(quality: pd.DataFrame, group: str, task: str) -> float | None:
    if "outside_share" not in quality.columns:
        return None
    rows = quality[(quality["name"].map(group_name) == group) & (quality["task"] == task)]["outside_share"].dropna()
    return float(rows.mean()) if len(rows) else None


def _compare(table: pd.DataFrame, a: str, b: str, label: str) -> str:
    parts = []
    for task, metric in (("workload_bpb", "bits_per_byte"), ("workload_recall", "exact_match"),
                         ("workload_recall", "answer_in_context")):
        x, y = _mean_of(table, a, task, metric), _mean_of(table, b, task, metric)
        if x is None or y is None:
            continue
        spread = math.sqrt(_var(x) + _var(y))
        better = (x["mean"] > y["mean"]) == x["higher_is_better"]
        verdict = "within the spread" if spread and abs(x["mean"] - y["mean"]) <= 2 * spread else \
            ("better" if better else "worse")
        parts.append(f"{task} {metric} {x['mean']:.3f} vs {y['mean']:.3f} ({verdict}, n={x['n']} and {y['n']})")
    return f"{label}: " + ("; ".join(parts) if parts else "no scores to compare") + "."


def _var(row: pd.Series) -> float:
    if not math.isnan(row["sd"]) and row["n"] > 1:
        return row["sd"] ** 2 / row["n"]
    return (row["stderr"] ** 2) if not math.isnan(row["stderr"]) else 0.0


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
    table = summary(quality)
    if table.empty:
        return []
    paths = []
    memory = cells.assign(group=cells["name"].map(group_name)).groupby("group", sort=False)["peak_device_bytes"].mean()
    tasks = [t for t in dict.fromkeys(table["task"])]
    fig, axes = plt.subplots(1, min(len(tasks), 3), figsize=(5 * min(len(tasks), 3), 4), squeeze=False)
    for ax, task in zip(axes[0], tasks[:3], strict=False):
        metric = main_metric(quality, task)
        part = table[(table["task"] == task) & (table["metric"] == metric)]
        x = [memory.get(g, math.nan) / GIB for g in part["group"]]
        ax.errorbar(x, part["mean"], yerr=part["sd"].fillna(0), fmt="o", capsize=3)
        for xi, yi, label in zip(x, part["mean"], part["group"], strict=True):
            ax.annotate(label, (xi, yi), fontsize=6, xytext=(3, 3), textcoords="offset points")
        ax.set_xlabel("peak device memory (GiB, mean over seeds)")
        ax.set_ylabel(f"{task} {metric}")
    fig.suptitle("Quality against peak memory (error bars: standard deviation over seeds)")
    fig.tight_layout()
    paths.append(out / "quality_vs_memory.png")
    fig.savefig(paths[-1], dpi=120)
    plt.close(fig)
    paths.append(_by_cell(table, quality, tasks, out / "quality_by_cell.png"))
    return paths


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
