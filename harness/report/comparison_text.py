"""The report's words for reports/<matrix>/comparisons.csv: one line a comparison, with its effect, its interval at its
Holm level, n and the rule's word exactly as the table holds it. Every verdict report.md states is written here."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pandas as pd

from harness.report.comparisons import RESAMPLED_ITEMS, RESAMPLED_SEEDS
from harness.report.crossed_bootstrap import DRAWS
from harness.report.decision_rule import ALPHA, MIN_SEEDS, NO_VERDICT
from harness.report.derived_comparisons import HEADLINE
from harness.report.inputs import table_there
from harness.spec.comparisons import UNTRAINED

METRIC_WORDS = {"recall": "recall", "exact_match": "exact match", "bits_per_byte": "bits per byte"}
DIGITS = {"recall": 3, "exact_match": 3, "bits_per_byte": 4}
PAIR = ["family", "question", "a", "b", "did"]


def read_comparisons(folder: Path) -> pd.DataFrame | None:
    path = folder / "comparisons.csv"
    if not table_there(path):
        return None
    return pd.read_csv(path, dtype={"family": str, "question": str, "a": str, "b": str, "verdict": str, "rule": str,
                                    "condition": str, "task": str}, keep_default_na=False, na_values=[""])


def _number(value: Any, digits: int, signed: bool = False) -> str:
    return "–" if pd.isna(value) else f"{float(value):{'+' if signed else ''}.{digits}f}"


def interval_text(row: pd.Series, short: bool = False) -> str:
    """The interval at its Holm level; draws that never move are said to be so, never printed as [x, x]."""
    digits = DIGITS[row["metric"]]
    if pd.isna(row.get("low")):
        return "no interval"
    if row["low"] == row["high"]:
        where = "seed and item" if row.get("resampled") == RESAMPLED_ITEMS else "seed"
        said = f"no spread: the same difference in every {where}"
        return f"({said})" if short else said
    level = f"{100 * row['level']:.4g}%"
    if math.isinf(row["low"]) or math.isinf(row["high"]):
        return f"{DRAWS:,} draws are too few for a {level} interval"
    bounds = f"[{_number(row['low'], digits, True)}, {_number(row['high'], digits, True)}]"
    return f"{bounds} ({level})" if short else f"{level} interval {bounds}"


def n_text(row: pd.Series, short: bool = False) -> str:
    seeds, items = int(row["seeds"]), "" if pd.isna(row.get("items")) else f" × {int(row['items'])}"
    if short:
        return f"n = {seeds}{items}"
    if not seeds:
        return "n = 0"
    documents = f" ({int(row['documents'])} documents)" if not pd.isna(row.get("documents")) else \
        " (cell scores, items not resampled)"
    return f"n = {seeds} seed{'s' * (seeds != 1)}{items and items + ' items'}{documents}"


def measured_as(row: pd.Series) -> str:
    """`task` metric (condition): what a comparison scores."""
    return f"`{row['task']}` {METRIC_WORDS[row['metric']]}" + (f" ({row['condition']} condition)"
                                                                if not pd.isna(row["condition"]) else "")


def short_effect(row: pd.Series) -> str:
    """The effect and its interval at its Holm level, as the summary says them (no interval before a verdict)."""
    if pd.isna(row["effect"]):
        return ""
    spread = "" if row["verdict"] == NO_VERDICT else f" {interval_text(row, short=True)}"
    return f"{_number(row['effect'], DIGITS[row['metric']], True)}{spread}"


def clause(row: pd.Series, short: bool = False) -> str:
    """One comparison: `task`, metric (condition): a vs b, difference, interval, Holm p; n: **word**. Short: the
    effect, its interval, n and the word."""
    digits = DIGITS[row["metric"]]
    head = measured_as(row)
    word = f"**{row['verdict']}**"
    if pd.isna(row["effect"]):
        return f"{head}: {word} ({row['rule']})"
    effect = _number(row["effect"], digits, True)
    if short:
        return f"{head} {short_effect(row)}, {n_text(row, short=True)}: {word}"
    gains = "gains " if row["did"] else ""
    numbers = f"{gains}{_number(row['value_a'], digits)} vs {_number(row['value_b'], digits)}, difference {effect}"
    if row["verdict"] == NO_VERDICT:
        return f"{head}: {numbers}; {n_text(row)}: {word} ({row['rule']})"
    share = "" if pd.isna(row["outside_share"]) else \
        f"; {float(row['outside_share']):.1%} of the text's tokens lie outside `{row['a']}`'s kept set"
    return (f"{head}: {numbers}, {interval_text(row)}, Holm p = {float(row['p_holm']):.2g}; {n_text(row)}: "
            f"{word}{share}")


def pair_head(row: pd.Series) -> str:
    b = "the same model untrained" if row["b"] == UNTRAINED else f"`{row['b']}`"
    did = ", each against its own untrained model (difference-in-differences)" if row["did"] else ""
    return f"**{row['family']}**: {row['question']} (`{row['a']}` against {b}{did}):"


def lines(comparisons: pd.DataFrame, short: bool = False) -> list[str]:
    """A bullet a pair of arms, and a sub-bullet a comparison (task and metric) in the table's order; short: the
    comparisons of a pair on its bullet's line."""
    found = []
    for _, part in comparisons.groupby(PAIR, sort=False):
        head = pair_head(part.iloc[0])
        if short:
            found.append(f"- {head} " + "; ".join(clause(row, short=True) for _, row in part.iterrows()) + ".")
        else:
            found += [f"- {head}", *(f"  - {clause(row)}." for _, row in part.iterrows())]
    return found


def headline(comparisons: pd.DataFrame | None) -> list[str]:
    """The comparisons the summary states: every declared one, or of derived ones the seed's questions."""
    if comparisons is None or comparisons.empty:
        return []
    shown = comparisons if comparisons["declared"].astype(bool).all() else \
        comparisons[comparisons["family"].isin(HEADLINE)]
    return lines(shown, short=True)


def method(comparisons: pd.DataFrame) -> str:
    declared = bool(comparisons["declared"].astype(bool).all())
    margins = comparisons.drop_duplicates("metric").set_index("metric")["margin"]
    # a comparisons.csv written before the matrix could declare min_seeds has no such column
    min_seeds = int(comparisons["min_seeds"].max()) if "min_seeds" in comparisons else MIN_SEEDS
    source = ("decided in advance in the matrix's `comparisons:` section" if declared else
              "derived from the cells, as the matrix declares none: the baseline against the same model untrained, "
              "and each pair of groups that differ in one setting (a family per setting)")
    return (f"Comparisons {source}; every number is in `comparisons.csv`. Each effect is the mean over paired seeds "
            "of a − b on the same items (recall: the share right; bits per byte: the summed negative log-likelihood "
            f"over the summed bytes, in bits). Its interval comes from a crossed bootstrap of {DRAWS:,} draws that "
            "resamples the seeds, the documents and the items within each drawn document together; the p-value is "
            "twice the smaller share of draws on either side of 0 (+1 corrected), adjusted by Holm over each family, "
            "and each interval is printed at the level of its Holm step. The rule: **higher** or **lower** where Holm "
            f"rejects at α = {ALPHA:g} (the interval then excludes 0); **no difference** where the interval lies "
            "inside ±margin (" + ", ".join(f"{METRIC_WORDS[m]} {v:g}" for m, v in margins.items())
            + "); **inconclusive** otherwise; **no verdict** with fewer than "
            f"{min_seeds} paired seeds. For bits per byte, higher is worse." + _seeds_only(comparisons))


def _seeds_only(comparisons: pd.DataFrame) -> str:
    """Said where some comparison could resample its seeds alone: its interval is narrower than a crossed one."""
    if not (comparisons["resampled"] == RESAMPLED_SEEDS).any():
        return ""
    return (" Where the evaluation files hold no item outcomes (\"cell scores\" below), a draw resamples the seeds "
            "alone: that interval leaves out the sampling of items, and with few seeds every draw lies on the side "
            "of 0 where all seeds agree, so it is narrower than a crossed one would be.")


def section(comparisons: pd.DataFrame | None) -> list[str]:
    if comparisons is None or comparisons.empty:
        return []
    return ["### Comparisons", "", method(comparisons), "", *lines(comparisons), ""]


MIRRORED = {"higher": "lower", "lower": "higher"}


def effect_word(comparisons: pd.DataFrame | None, a: str, b: str, task: str, metric: str) -> str | None:
    """'+0.006 (higher)' for the comparison of a against b on a task's metric, where the table holds it, either way
    round: b against a is the same paired draws negated, so its effect and interval change sign and its word turns
    (higher and lower swap; no difference, inconclusive and no verdict stay). A difference-in-differences is not the
    plain difference this answers for."""
    if comparisons is None:
        return None
    plain = comparisons[(comparisons["task"] == task) & (comparisons["metric"] == metric)
                        & ~comparisons["did"].astype(bool)]
    for first, second, sign in ((a, b, 1), (b, a, -1)):
        match = plain[(plain["a"] == first) & (plain["b"] == second)]
        if not match.empty and not pd.isna(match.iloc[0]["effect"]):
            row = match.iloc[0]
            word = row["verdict"] if sign == 1 else MIRRORED.get(row["verdict"], row["verdict"])
            return f"{_number(sign * row['effect'] + 0.0, DIGITS[metric], True)} ({word})"  # + 0.0: never -0.000
    return None
