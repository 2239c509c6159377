"""The quality part of a report, from reports/<matrix>/quality.csv (built by the aggregate from evaluation
result files) beside cells.csv and steps.csv.

Cells repeated over seeds are grouped under their name without the `/seed=N` suffix: mean, spread (sample
standard deviation over seeds) and n. Every score is shown with its difference to the same model untrained
(the adapter disabled), so the gain from fine-tuning shows. Random-weight models have no score: "n/a".
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from harness.evaluation.equivalence import EXACT_BY_DESIGN, Verdict, describe_tolerances, score_drifts
from harness.report import comparison_text
from harness.report.quality_findings import effects, group_name, main_metric, summarize
from harness.report.recall_by_age import MIN_BIN, age_table, recall_by_age, untrained_recall
from harness.report.tables import MISSING, Column, Table, number
from harness.spec.settings import SETTINGS


def quality_table(cells: pd.DataFrame, quality: pd.DataFrame) -> Table:
    """Each cell's score on each task's main metric: per task the mean over seeds, the sample standard deviation
    (where seeds repeat) and the change against the same model untrained, each a column of its own so that the
    numbers line up; a cell without a score says why in the mean's column."""
    table = summarize(quality)
    tasks = list(dict.fromkeys(quality["task"]))
    groups = list(dict.fromkeys(cells["name"].map(group_name)))
    repeats = bool((table["n"] > 1).any())
    random = {group_name(n) for n, r in zip(cells["name"], cells["random_weights"], strict=True) if r is True}
    # a cell that was skipped or failed has nothing to evaluate: its scores are not pending, they never come
    untrained = {group: ", ".join(sorted(set(statuses))) for group, statuses
                 in cells.groupby(cells["name"].map(group_name), sort=False)["status"]
                 if not set(statuses) & {"ok", "pending"}}
    columns = [Column("cell", numeric=False)]
    for task in tasks:
        metric = main_metric(quality, task)  # None: no score of the task came back
        label = f"{task} {metric.replace('_', ' ')}" if metric else task
        columns += [Column("mean", group=label), *([Column("± sd", group=label)] if repeats else []),
                    Column("Δ untrained", group=label)]
    rows = []
    for group in groups:
        row = [group]
        for task in tasks:
            metric = main_metric(quality, task)
            match = table[(table["group"] == group) & (table["task"] == task) & (table["metric"] == metric)]
            if match.empty:
                statuses = quality.loc[(quality["name"].map(group_name) == group) & (quality["task"] == task),
                                       "status"]
                why = ("n/a (random weights)" if group in random else ", ".join(sorted(set(statuses)))
                       or (f"– (cell {untrained[group]})" if group in untrained else "pending"))
                row += [why, *([MISSING] if repeats else []), MISSING]
                continue
            score = match.iloc[0]
            row += [number(score["mean"], 3) + ("*" if score["partial"] else ""),
                    *([number(score["sd"], 3)] if repeats else []), number(score["delta"], 3, signed=True)]
        rows.append(row)
    note = (("Mean over seeds, the standard deviation over seeds (sd)" if repeats else "The score of one cell")
            + " and the change against the same model untrained (its adapter disabled); * marks a partial score (a "
            "`limit` capped the documents). Bits per byte: lower is better; exact match: higher is better.")
    return Table("quality", "Quality of each cell on each evaluation task", columns, rows, note)


def _delta(comparisons: pd.DataFrame | None, row: pd.Series, reference: str, column: str) -> str:
    """The comparison's paired effect and word where comparisons.csv holds this change, else the means' difference
    alone."""
    task, metric = column.removeprefix("Δ ").rsplit(" ", 1)
    said = comparison_text.effect_word(comparisons, str(row["cell"]), reference, task, metric)
    return said or ("–" if pd.isna(row[column]) else f"{row[column]:+.{comparison_text.DIGITS.get(metric, 3)}f}")


def effects_table(cells: pd.DataFrame, quality: pd.DataFrame, reference: str,
                  comparisons: pd.DataFrame | None = None) -> Table | None:
    """Each change against the reference (quality_findings.effects), sorted by its effect on peak memory, with the
    word of its comparison where comparisons.csv holds one."""
    change = effects(cells, quality, reference)
    if change.empty:
        return None
    # by effect, the largest saving first; a stable sort keeps design order among equals and puts unknowns last
    change = change.sort_values("Δ peak GiB", kind="stable", na_position="last")
    tasks = [c for c in change.columns if c.startswith("Δ ") and c != "Δ peak GiB"]
    columns = [Column("cell", numeric=False), Column("what differs", numeric=False), Column("n"),
               Column("Δ peak device (GiB)")]
    for task in tasks:
        label = task.removeprefix("Δ ").replace("_", " ")
        columns += [Column("Δ", group=label), Column("verdict", numeric=False, group=label)]
    rows = [[str(r["cell"]), str(r["what differs"]), str(r["n"]), number(r["Δ peak GiB"], 2, signed=True),
             *(part for c in tasks for part in _effect_and_verdict(_delta(comparisons, r, reference, c)))]
            for _, r in change.iterrows()]
    note = (f"Against `{reference}`, sorted by Δ peak device memory, the largest saving first. A quality change "
            "with a word is its comparison in `comparisons.csv`: the paired effect over seeds and the rule's word "
            "(higher, lower, no difference, inconclusive, or no verdict before the seeds the matrix asks for; for bits "
            "per byte higher is worse), turned round where the "
            f"comparison holds `{reference}` against the cell; one without a word is the difference of the means, "
            f"not among the comparisons (a cell of one seed, held against `{reference}` at its seed, one that differs "
            "in more than one setting, or a task compared only as a difference-in-differences against the untrained "
            "model). Peak memory: whole-process device memory.")
    return Table("quality-effects", f"Each change against `{reference}`: quality and memory", columns, rows, note)


def _effect_and_verdict(cell: str) -> list[str]:
    """"+0.006 (higher)" as its number and its word, each in a column of its own (no word: not a comparison)."""
    effect, _, verdict = cell.partition(" (")
    return [effect, verdict.removesuffix(")") or MISSING]


def equivalence(cells: pd.DataFrame, steps: pd.DataFrame, quality: pd.DataFrame) -> list[Verdict]:
    """Each cell whose only difference from another is an exact-by-design technique, held to its tolerances."""
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


def comparisons_markdown(cells: pd.DataFrame, items: pd.DataFrame | None,
                         comparisons: pd.DataFrame | None) -> list[str]:
    """Every comparison with its verdict (comparisons.csv), then what describes the recall items: the untrained
    model's recall and recall by fact age."""
    lines = comparison_text.section(comparisons)
    if items is None or not len(items):
        return lines
    lines += [f"- {line}" for line in untrained_recall(cells, items)]
    by_age = age_latex(cells, items)
    if by_age is not None:
        lines += ["", *by_age.markdown()]
    return lines


def age_latex(cells: pd.DataFrame, items: pd.DataFrame) -> Table | None:
    """Recall by fact age (recall_by_age.age_table) as a report table."""
    frame = age_table(recall_by_age(cells, items))
    if frame.empty:
        return None
    note = ("Recall of planted facts by how many sections before the question the fact was introduced, in bins "
            f"chosen from the data so that each holds at least {MIN_BIN} items of every cell (one bin of all where a "
            "cell has fewer): trained (mean over seeds ± sd), then in brackets the same model untrained with its 95% "
            "Wilson interval, the share of those facts whose answer the truncated context still holds, and items "
            "per seed. Descriptive: the verdicts are the comparisons'. Chart: `recall_by_age.pdf`/`.png`; every "
            "item: `items.csv`.")
    columns = [Column("cell", numeric=False), Column("context (tokens)"), Column("truncation", numeric=False),
               *(Column(str(c)) for c in frame.columns[3:])]
    rows = [[str(v) for v in row] for row in frame.itertuples(index=False)]
    return Table("recall-by-age", "Recall by fact age", columns, rows, note)


def equivalence_table(cells: pd.DataFrame, steps: pd.DataFrame, quality: pd.DataFrame) -> Table | None:
    """Each exact-by-design technique against its reference cell (equivalence), as a report table."""
    verdicts = equivalence(cells, steps, quality)
    if not verdicts:
        return None
    rows = [[v.cell, v.reference, number(100 * v.loss_max_relative, 2) if v.loss_max_relative is not None else MISSING,
             "drift: " + "; ".join(v.score_drifts or ("loss",)) if v.drift else "agrees"] for v in verdicts]
    columns = [Column("cell", numeric=False), Column("reference", numeric=False),
               Column("largest loss difference (%)"), Column("verdict", numeric=False)]
    return Table("equivalence", "Equivalence checks", columns, rows,
                 f"Techniques that should not change the numbers, against their reference cell: "
                 f"{describe_tolerances()}.")


def quality_tables(cells: pd.DataFrame, steps: pd.DataFrame, quality: pd.DataFrame, reference: str,
                   items: pd.DataFrame | None, comparisons: pd.DataFrame | None = None) -> list[Table]:
    """Every table the quality section shows, in its order, for tables.tex."""
    found = [age_latex(cells, items) if items is not None and len(items) else None, quality_table(cells, quality),
             effects_table(cells, quality, reference, comparisons), equivalence_table(cells, steps, quality)]
    return [table for table in found if table is not None]


def markdown(cells: pd.DataFrame, steps: pd.DataFrame, quality: pd.DataFrame, reference: str,
             items: pd.DataFrame | None = None, comparisons: pd.DataFrame | None = None) -> list[str]:
    lines = ["## Quality (lm-eval)", "", *comparisons_markdown(cells, items, comparisons)]
    lines += [*quality_table(cells, quality).markdown(),
              "Charts: `quality_by_cell.pdf`/`.png` (each task per cell, trained and untrained), "
              "`quality_vs_memory.pdf`/`.png` (the trade-off). Every score with its stderr and n: `quality.csv`.", ""]
    skipped = quality[quality["status"].isin(["skipped", "error"])].drop_duplicates(["task", "reason"])
    for _, row in skipped.iterrows():
        lines.append(f"- `{row['task']}` {row['status']} for some cells: {row['reason']}")
    change = effects_table(cells, quality, reference, comparisons)
    if change is not None:
        lines += ["", *change.markdown()]
    checks = equivalence_table(cells, steps, quality)
    if checks is not None:
        lines += ["", *checks.markdown()]
    return [*lines, ""]
