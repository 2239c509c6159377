"""The seed's two quality claims (exponential-decay truncation, vocabulary slicing), and the techniques it chose
for what they cost in quality, answered from item outcomes (reports/<matrix>/items.csv), with intervals.
Why it is so: docs/quality.md."""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from harness.report.paired_stats import Metric, Paired, bits_per_byte, interval_text, paired, read, recall
from harness.report.quality_findings import group_rows, pairs_differing_in
from harness.report.vocabulary_cells import kept_size
from harness.spec.groups import group_name
from harness.stack.techniques.vocabulary import corpus_source

# the largest difference still read as "no difference" (an interval inside +/- this)
MARGINS = {"exact_match": 0.05, "bits_per_byte": 0.01}
# fact age in sections back: [1, 5), [5, 15), [15, 30), [30, 60), [60, ...)
AGE_EDGES = (1, 5, 15, 30, 60)
# facts introduced at least this many sections before the question: where tail keeps nothing of their section
OLD = 15
LANGUAGE_NAMES = {"en": "English", "es": "Spanish", "ca": "Catalan", "fr": "French", "de": "German"}
# untrained exact recall at or under a fifth of the facts is "at the floor": too little for policies to differ
FLOOR = 0.2


def age_bucket(sections_back: float) -> str:
    for low, high in zip(AGE_EDGES, (*AGE_EDGES[1:], None), strict=True):
        if high is None or sections_back < high:
            return f"{low}+" if high is None else f"{low}–{high - 1}"
    raise AssertionError("unreachable")


def _with_groups(items: pd.DataFrame) -> pd.DataFrame:
    return items.assign(group=items["name"].map(group_name))


def _select(items: pd.DataFrame, group: str, task: str, model: str = "trained") -> pd.DataFrame:
    return items[(items["group"] == group) & (items["task"] == task) & (items["model"] == model)]


def _sentence(label: str, metric: str, result: Paired, digits: int = 3) -> str:
    margin = MARGINS[metric]
    reading = read(result, margin)
    word = {"higher": "higher", "lower": "lower"}.get(reading.word, reading.word)
    if metric == "bits_per_byte" and reading.word in ("higher", "lower"):
        word = "worse (more bits per byte)" if reading.word == "higher" else "better (fewer bits per byte)"
    elif metric == "exact_match" and reading.word in ("higher", "lower"):
        word = "better" if reading.word == "higher" else "worse"
    return (f"{label}: {result.a:.{digits}f} vs {result.b:.{digits}f}, difference {result.difference:+.{digits}f}, "
            f"95% CI over items {interval_text(result.item_interval, digits)}, over seeds "
            f"{interval_text(result.seed_interval, digits)}; n = {result.seeds} seed{'s' * (result.seeds != 1)} "
            f"× {result.items} paired items: **{word}** ({reading.basis}).")


def _compare(items: pd.DataFrame, a: str, b: str, task: str, metric: str, label: str,
             where: Any = None) -> str | None:
    first, second = _select(items, a, task), _select(items, b, task)
    if first.empty or second.empty:
        return None
    if where is not None:
        first, second = first[where(first)], second[where(second)]
    measure: Metric = recall if metric == "exact_match" else bits_per_byte
    result = paired(first, second, measure)
    return None if result is None else _sentence(label, metric, result)


def _policy(groups: pd.DataFrame, group: str) -> str:
    policy = str(groups.at[group, "truncation"])
    return f"exp_decay (ρ = {float(groups.at[group, 'truncation_decay']):g})" if policy == "exp_decay" else policy


def _order(groups: pd.DataFrame, group: str) -> tuple[bool, float]:
    return str(groups.at[group, "truncation"]) == "exp_decay", float(groups.at[group, "truncation_decay"])


def truncation_claims(cells: pd.DataFrame, items: pd.DataFrame) -> list[str]:
    """exp_decay against tail, and one decay ratio against another, at the same context."""
    items = _with_groups(items)
    groups = group_rows(cells)
    scored = set(items["group"])
    pairs = [*pairs_differing_in(cells, "truncation", ignore=("truncation_decay",)),
             *pairs_differing_in(cells, "truncation_decay")]
    lines = []
    for a, b in pairs:
        kinds = {str(groups.at[a, "truncation"]), str(groups.at[b, "truncation"])}
        if not {a, b} <= scored or not kinds <= {"exp_decay", "tail"} or "exp_decay" not in kinds:
            continue
        if _order(groups, a) < _order(groups, b):  # exp_decay first, then the larger decay ratio first
            a, b = b, a
        head = (f"At {int(groups.at[a, 'context']):,} tokens, {_policy(groups, a)} (`{a}`) against "
                f"{_policy(groups, b)} (`{b}`)")
        found = [
            _compare(items, a, b, "workload_recall", "exact_match", f"{head}, exact recall of planted facts"),
            _compare(items, a, b, "workload_recall", "exact_match",
                     f"{head}, exact recall of facts introduced {OLD} or more sections before the question",
                     where=lambda f: f["sections_back"] >= OLD),
            _compare(items, a, b, "workload_bpb", "bits_per_byte", f"{head}, bits per byte of the target sections"),
        ]
        lines += [line for line in found if line]
    return lines


def _languages(source: str) -> list[str]:
    """The kept languages of a vocabulary source 'corpus:[name:]l1,l2[+training]'; none for 'training'."""
    return corpus_source(source)[1] if source.startswith("corpus:") else []


def _language_tasks(items: pd.DataFrame) -> dict[str, list[str]]:
    """Held-out text tasks by language: text_<lang> and <corpus>_<lang>."""
    found: dict[str, list[str]] = {}
    for task in sorted(set(items["task"])):
        lang = task.rsplit("_", 1)[-1]
        if lang in LANGUAGE_NAMES and task != "workload_bpb":
            found.setdefault(lang, []).append(task)
    return found


def vocabulary_claims(cells: pd.DataFrame, items: pd.DataFrame) -> list[str]:
    """Each sliced vocabulary against the native one, inside and outside the kept languages."""
    items = _with_groups(items)
    groups = group_rows(cells)
    scored = set(items["group"])
    lines = []
    for a, b in pairs_differing_in(cells, "vocabulary", ignore=("vocabulary_source",)):
        sliced, native = (b, a) if str(groups.at[a, "vocabulary"]) == "native" else (a, b)
        if str(groups.at[native, "vocabulary"]) != "native" or not {a, b} <= scored:
            continue
        kept = _languages(str(groups.at[sliced, "vocabulary_source"]))
        size = kept_size(cells[cells["name"].map(group_name) == sliced])
        head = (f"Slicing to {size} (`{sliced}`, kept for {', '.join(kept) or 'the training data'}) "
                f"against `{native}`")
        for lang, tasks in _language_tasks(items).items():
            where = "inside" if lang in kept else "outside"
            for task in tasks:
                line = _compare(items, sliced, native, task, "bits_per_byte",
                                f"{head}, {LANGUAGE_NAMES[lang]} ({where} the kept set, `{task}`) bits per byte")
                if line:
                    lines.append(line)
        for task, metric, what in (("workload_bpb", "bits_per_byte", "the documents' bits per byte"),
                                   ("workload_recall", "exact_match", "exact recall of planted facts")):
            line = _compare(items, sliced, native, task, metric, f"{head}, {what}")
            if line:
                lines.append(line)
    return lines


# the settings of the seed's techniques, and which level goes first in a sentence (the seed's choice, or the
# larger rank): the sign of a difference then reads as what choosing it did
TECHNIQUE_FIRST = {"quantization": lambda level: level != "none", "adapter": lambda level: level == "rslora",
                   "lora_rank": lambda level: float(level)}
WORKLOAD_SCORES = (("workload_bpb", "bits_per_byte", "bits per byte of the target sections"),
                   ("workload_recall", "exact_match", "exact recall of planted facts"))


def technique_claims(cells: pd.DataFrame, items: pd.DataFrame) -> list[str]:
    """Each technique of TECHNIQUE_FIRST against the cell that differs only in it, on the workload's scores."""
    items = _with_groups(items)
    groups = group_rows(cells)
    scored = set(items["group"])
    lines = []
    for setting, first in TECHNIQUE_FIRST.items():
        if setting not in groups.columns:
            continue
        for a, b in pairs_differing_in(cells, setting):
            if not {a, b} <= scored:
                continue
            if first(str(groups.at[b, setting])) > first(str(groups.at[a, setting])):
                a, b = b, a
            head = f"{setting} {groups.at[a, setting]} (`{a}`) against {groups.at[b, setting]} (`{b}`)"
            found = [_compare(items, a, b, task, metric, f"{head}, {what}") for task, metric, what in WORKLOAD_SCORES]
            lines += [line for line in found if line]
    return lines


def untrained_recall(cells: pd.DataFrame, items: pd.DataFrame) -> list[str]:
    """Exact recall of the model before training, at each context and truncation: whether the task is off
    its floor at all."""
    items = _with_groups(items)
    untrained = items[(items["task"] == "workload_recall") & (items["model"] == "untrained")]
    if untrained.empty:
        return []
    groups = group_rows(cells)
    seen: dict[tuple[Any, ...], pd.DataFrame] = {}
    for group, part in untrained.groupby("group", sort=False):
        key = (int(groups.at[group, "context"]), _policy(groups, group))
        seen.setdefault(key, part.drop_duplicates("item"))
    parts = []
    rates: dict[tuple[int, str], tuple[float, float, float]] = {}  # (recall, share kept, recall of the kept)
    for (context, policy), part in sorted(seen.items(), key=lambda kv: (kv[0][0], kv[0][1])):
        rate = float(part["exact_match"].mean())
        half = 1.96 * math.sqrt(rate * (1 - rate) / len(part)) if len(part) > 1 else math.nan
        kept = part[part["in_context"].astype(bool)]
        kept_rate = float(kept["exact_match"].mean()) if len(kept) else math.nan
        within = f", {kept_rate:.3f} of the {len(kept)} whose answer the context holds" if len(kept) else ""
        parts.append(f"{context:,} tokens {policy}: {rate:.3f} ± {half:.3f} (n = {len(part)} items; "
                     f"{len(kept) / len(part):.0%} of the answers survive truncation{within})")
        rates[(context, policy)] = (rate, len(kept) / len(part), kept_rate)
    return ["Exact recall of the model untrained (the adapter disabled), 95% normal interval over items: "
            + "; ".join(parts) + ". Recall is bounded by what truncation keeps: a fact whose answer is cut away "
            "cannot be recalled but by chance." + _off_the_floor(rates)]


def _span(values: list[float], spec: str) -> str:
    low, high = format(min(values), spec), format(max(values), spec)
    return low if low == high else f"{low}-{high}"


def _off_the_floor(rates: dict[tuple[int, str], tuple[float, float, float]]) -> str:
    """Where untrained recall is at or under FLOOR: whether the model or the truncation holds it there, and
    the shortest context that lifts every policy above it."""
    low = {key: value for key, value in rates.items() if value[0] <= FLOOR}
    if not low:
        return f" Every setting recalls more than {FLOOR:.0%} untrained."
    kept = [value[1] for value in low.values()]
    within = [value[2] for value in low.values() if not math.isnan(value[2])]
    where = ", ".join(f"{context:,} tokens {policy}" for context, policy in sorted(low))
    text = f" At or under {FLOOR:.0%}: {where}, where the context holds only {_span(kept, '.0%')} of the answers"
    text += f" and the model recalls {_span(within, '.2f')} of those it holds" if within else ""
    # the contexts past every one at the floor where no policy is at it
    longer = sorted({c for c, _ in rates} - {c for c, _ in low})
    longer = [c for c in longer if c > max(context for context, _ in low)]
    text += (f": the truncation holds recall down, not the model; a context of {longer[0]:,} tokens lifts every "
             f"policy above {FLOOR:.0%}." if longer else
             f": no context measured lifts every policy above {FLOOR:.0%} untrained.")
    return text


def recall_by_age(cells: pd.DataFrame, items: pd.DataFrame) -> pd.DataFrame:
    """Exact recall per group and fact age, trained (mean over seeds of each seed's rate) and untrained, with
    the share of facts whose answer survived truncation: one row a (group, age bucket)."""
    items = _with_groups(items)
    recall_items = items[items["task"] == "workload_recall"].copy()
    columns = ["group", "context", "truncation", "age", "age_order", "items", "recall", "recall_sd", "seeds",
               "untrained", "in_context"]
    if recall_items.empty:
        return pd.DataFrame(columns=columns)
    groups = group_rows(cells)
    recall_items["age"] = recall_items["sections_back"].map(age_bucket)
    recall_items["age_order"] = recall_items["sections_back"].map(lambda s: sum(s >= e for e in AGE_EDGES))
    rows = []
    for (group, age, order), part in recall_items.groupby(["group", "age", "age_order"], sort=False):
        trained = part[part["model"] == "trained"]
        per_seed = trained.groupby("seed")["exact_match"].mean()
        untrained = part[part["model"] == "untrained"].drop_duplicates(["seed", "item"])
        rows.append({"group": group, "context": int(groups.at[group, "context"]),
                     "truncation": _policy(groups, group), "age": age, "age_order": order,
                     "items": int(trained.groupby("seed").size().min()) if len(trained) else 0,
                     "recall": float(per_seed.mean()) if len(per_seed) else math.nan,
                     "recall_sd": float(per_seed.std(ddof=1)) if len(per_seed) > 1 else math.nan,
                     "seeds": len(per_seed),
                     "untrained": float(untrained["exact_match"].mean()) if len(untrained) else math.nan,
                     "in_context": float(part["in_context"].astype(float).mean())})
    return pd.DataFrame(rows, columns=columns).sort_values(["context", "truncation"], kind="stable")


def age_table(by_age: pd.DataFrame) -> pd.DataFrame:
    """recall_by_age as a wide table for a report: one row a group, a column an age bucket."""
    if by_age.empty:
        return by_age
    order = sorted(set(by_age["age_order"]))
    labels = {o: by_age.loc[by_age["age_order"] == o, "age"].iloc[0] for o in order}
    rows = []
    for group, part in by_age.groupby("group", sort=False):
        row: dict[str, Any] = {"cell": group, "context": f"{int(part['context'].iloc[0]):,}",
                               "truncation": part["truncation"].iloc[0]}
        for o in order:
            match = part[part["age_order"] == o]
            if match.empty:
                row[f"{labels[o]} back"] = "–"
                continue
            r = match.iloc[0]
            spread = f" ± {r['recall_sd']:.2f}" if not math.isnan(r["recall_sd"]) else ""
            row[f"{labels[o]} back"] = (f"{r['recall']:.2f}{spread} ({r['untrained']:.2f}; {r['in_context']:.0%} "
                                        f"kept; n={r['items']})")
        rows.append(row)
    return pd.DataFrame(rows)
