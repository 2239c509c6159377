"""Scores out of lm-eval's output, each with its spread.

lm-eval gives a standard error for metrics averaged over documents, and "N/A" for the corpus-level ratios
(bits per byte, word and byte perplexity), which are not means of per-document values. Those get a
bootstrap over documents instead (scipy.stats.bootstrap, paired): documents are drawn with replacement 1,000 times
(seeded), the ratio is computed on each draw, and its standard deviation is the standard error. The method is
recorded with every score.
"""

from __future__ import annotations

import math
from typing import Any

from harness.results import Score
from harness.results.model import higher_is_better
from harness.tasks.answers import first_line

BOOTSTRAP_DRAWS = 1000
# corpus-level ratios: from per-document (log-likelihood, units) pairs
_RATIOS = {
    "bits_per_byte": lambda ll, units: -ll / units / math.log(2),
    "word_perplexity": lambda ll, units: math.exp(-ll / units),
    "byte_perplexity": lambda ll, units: math.exp(-ll / units),
}


def bootstrap(pairs: list[tuple[float, float]], ratio: Any, draws: int = BOOTSTRAP_DRAWS, seed: int = 0) -> float:
    """The standard error of ratio(sum of firsts, sum of seconds) over documents drawn with replacement."""
    import numpy as np
    from scipy import stats

    if len(pairs) < 2:  # one document: every draw is that document, so the ratio does not vary
        return 0.0
    firsts, seconds = (np.array(values, dtype=float) for values in zip(*pairs, strict=True))
    found = stats.bootstrap((firsts, seconds), lambda a, b: ratio(float(a.sum()), float(b.sum())), paired=True,
                            vectorized=False, n_resamples=draws, method="percentile", rng=np.random.default_rng(seed))
    return float(found.standard_error)


def _standard_error(values: list[float]) -> float:
    from scipy import stats

    return float(stats.sem(values))


def scores_from(output: dict[str, Any], task: str) -> list[Score]:
    """Every metric lm-eval reports for `task`, with its spread; plus, for the recall task, exact match over
    the items whose answer survived truncation."""
    found = output["results"][task]
    samples = output.get("samples", {}).get(task, [])
    n = int(output.get("n-samples", {}).get(task, {}).get("effective", len(samples)))
    scores = []
    for key, value in found.items():
        if "," not in key or "_stderr" in key or not isinstance(value, int | float):
            continue
        metric, filter_name = key.split(",", 1)
        stderr = found.get(f"{metric}_stderr,{filter_name}")
        method: str | None = "lm-eval (standard error of the mean over documents)"
        if metric in _RATIOS and samples and all(isinstance(s.get(metric), list | tuple) for s in samples):
            pairs = [(float(s[metric][0]), float(s[metric][1])) for s in samples]
            stderr, method = bootstrap(pairs, _RATIOS[metric]), f"bootstrap over documents ({BOOTSTRAP_DRAWS} draws)"
        elif not isinstance(stderr, int | float):
            stderr, method = _mean_stderr(samples, metric), "standard error of the mean over items"
            if stderr is None:
                method = None
        scores.append(Score(metric=metric, value=float(value), stderr=stderr, stderr_method=method, n=n,
                            higher_is_better=higher_is_better(metric)))
    in_context = [s for s in samples if isinstance(s.get("doc"), dict) and s["doc"].get("in_context")]
    if in_context and "exact_match" in samples[0]:
        hits = [float(s["exact_match"]) for s in in_context]
        mean = sum(hits) / len(hits)
        stderr = _standard_error(hits) if len(hits) > 1 else None
        scores.append(Score(metric="exact_match_in_context", value=mean, stderr=stderr,
                            stderr_method="standard error of the mean over the items in context" if stderr else None,
                            n=len(hits), higher_is_better=True,
                            note="exact match over the items whose answer survived truncation"))
    return scores


def _mean_stderr(samples: list[dict[str, Any]], metric: str) -> float | None:
    """The standard error of a mean metric over its items, where lm-eval gave none (it bootstraps nothing here)."""
    values = [float(s[metric]) for s in samples if isinstance(s.get(metric), int | float)]
    if len(values) < 2:
        return None
    mean = sum(values) / len(values)
    return math.sqrt(sum((v - mean) ** 2 for v in values) / (len(values) - 1) / len(values))


def _generation(sample: dict[str, Any]) -> str:
    """The text the model generated for a sample (lm-eval keeps it filtered and raw, one list per request)."""
    for key in ("filtered_resps", "resps"):
        found = sample.get(key)
        while isinstance(found, list | tuple) and found:
            found = found[0]
        if isinstance(found, str):
            return found
    return ""


def items_from(output: dict[str, Any], task: str, fields: tuple[str, ...],
               key: tuple[str, ...]) -> list[dict[str, Any]]:
    """One record per scored item: its id (the `key` fields joined), the `fields` of its document that say what
    it tests (a fact's age, say), and what lm-eval scored on it; a bits-per-byte pair becomes its
    log-likelihood and bytes, a recall item keeps the first line it generated. Reports pair items across cells
    by id and bootstrap over them."""
    items = []
    for sample in output.get("samples", {}).get(task, []):
        doc = sample.get("doc") if isinstance(sample.get("doc"), dict) else {}
        record: dict[str, Any] = {"item": "/".join(str(doc.get(k)) for k in key)}
        record.update({f: doc[f] for f in fields if f in doc})
        for metric in ("exact_match", "recall", "bits_per_byte"):
            value = sample.get(metric)
            if metric in _RATIOS and isinstance(value, list | tuple):
                record["loglikelihood"], record["bytes"] = float(value[0]), float(value[1])
            elif isinstance(value, int | float):
                record[metric] = float(value)
        if "recall" in record:  # the generation's first line, so that the samples can be read and scored again
            record["answer"] = first_line(_generation(sample))
        items.append(record)
    return items
