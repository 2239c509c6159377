"""Paired differences between two groups of cells, item by item and seed by seed, with two intervals.

Cells of two groups that share a seed are scored on the same held-out items (the evaluation's data depends on
its own seed and the cell's context and truncation, never on the training seed), so a difference is taken
within each seed over the items both hold, then averaged over seeds. Two 95% intervals go with it:
- over seeds: Student's t on the per-seed differences (n - 1 degrees of freedom), which carries the
  variation between training runs; with 2 or 3 seeds it is wide;
- over items: a bootstrap that redraws the items of each seed with replacement (seeds kept as strata), which
  carries the sampling of items but not of training runs.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd

BOOTSTRAP_DRAWS = 2000
LEVEL = 0.95
# two-sided 97.5% quantiles of Student's t by degrees of freedom (1..30); the normal quantile beyond
_T975 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145,
         2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048,
         2.045, 2.042)


def t_quantile(df: int) -> float:
    return _T975[df - 1] if df <= len(_T975) else 1.960


# a metric of a set of items: their exact-match rate, or the bits per byte of their text
Metric = Callable[[pd.DataFrame], float]


def recall(items: pd.DataFrame) -> float:
    return float(items["exact_match"].mean())


def bits_per_byte(items: pd.DataFrame) -> float:
    return float(-items["loglikelihood"].sum() / items["bytes"].sum() / math.log(2))


@dataclass(frozen=True)
class Paired:
    a: float  # the metric of group a, averaged over the paired seeds
    b: float
    difference: float  # a - b
    seeds: int
    items: int  # paired items per seed (the smallest count)
    seed_interval: tuple[float, float] | None  # None with one seed
    item_interval: tuple[float, float]
    per_seed: tuple[float, ...]

    @property
    def consistent_sign(self) -> bool:
        return all(d > 0 for d in self.per_seed) or all(d < 0 for d in self.per_seed)


def _arrays(items: pd.DataFrame, metric: Metric) -> tuple[np.ndarray, ...]:
    """The columns the metric reads, as arrays (the bootstrap draws rows of these)."""
    if metric is bits_per_byte:
        return items["loglikelihood"].to_numpy(float), items["bytes"].to_numpy(float)
    return (items["exact_match"].to_numpy(float),)


def _on_rows(metric: Metric, columns: tuple[np.ndarray, ...], rows: np.ndarray) -> np.ndarray:
    """The metric of many redrawn item sets at once: rows is (draws, items) of indices."""
    if metric is bits_per_byte:
        ll, nbytes = columns
        return -ll[rows].sum(axis=1) / nbytes[rows].sum(axis=1) / math.log(2)
    return columns[0][rows].mean(axis=1)


def paired(a: pd.DataFrame, b: pd.DataFrame, metric: Metric, draws: int = BOOTSTRAP_DRAWS,
           seed: int = 0) -> Paired | None:
    """a and b: item outcomes (columns seed, item and what the metric reads) of two groups; None when no seed
    has items in both."""
    rng = np.random.default_rng(seed)
    per_seed, means_a, means_b, boot, counts = [], [], [], [], []
    for s in sorted(set(a["seed"]) & set(b["seed"])):
        joined = a[a["seed"] == s].merge(b[b["seed"] == s], on="item", suffixes=("_a", "_b"))
        if joined.empty:
            continue
        side_a = joined[[c for c in joined.columns if c.endswith("_a")]].rename(columns=lambda c: c[:-2])
        side_b = joined[[c for c in joined.columns if c.endswith("_b")]].rename(columns=lambda c: c[:-2])
        means_a.append(metric(side_a))
        means_b.append(metric(side_b))
        per_seed.append(means_a[-1] - means_b[-1])
        rows = rng.integers(0, len(joined), size=(draws, len(joined)))
        boot.append(_on_rows(metric, _arrays(side_a, metric), rows) - _on_rows(metric, _arrays(side_b, metric), rows))
        counts.append(len(joined))
    if not per_seed:
        return None
    n = len(per_seed)
    mean = float(np.mean(per_seed))
    seed_interval = None
    if n > 1:
        half = t_quantile(n - 1) * float(np.std(per_seed, ddof=1)) / math.sqrt(n)
        seed_interval = (mean - half, mean + half)
    averaged = np.mean(np.vstack(boot), axis=0)
    tail = (1 - LEVEL) / 2 * 100
    low, high = np.percentile(averaged, [tail, 100 - tail])
    return Paired(float(np.mean(means_a)), float(np.mean(means_b)), mean, n, min(counts), seed_interval,
                  (float(low), float(high)), tuple(per_seed))


@dataclass(frozen=True)
class Reading:
    word: str  # "higher", "lower", "no difference", "inconclusive"
    basis: str  # which interval the word rests on


def read(result: Paired, margin: float) -> Reading:
    """What the intervals allow one to say. With fewer than 5 seeds the word rests on the interval over items,
    and a difference is called only when every seed's difference has the same sign too; with 5 or more on the
    interval over seeds. "No difference" only when that interval lies inside +/- margin."""
    if result.seeds >= 5 and result.seed_interval is not None:
        low, high = result.seed_interval
        basis, agree = "the interval over seeds", True
    else:
        low, high = result.item_interval
        basis, agree = "the interval over items, with every seed the same sign", result.consistent_sign
    if (low > 0 or high < 0) and agree:
        return Reading("higher" if low > 0 else "lower", basis)
    if -margin <= low and high <= margin:
        return Reading("no difference", basis.split(",")[0] + f" inside ±{margin:g}")
    return Reading("inconclusive", basis.split(",")[0])


def interval_text(interval: tuple[float, float] | None, digits: int) -> str:
    if interval is None:
        return "–"
    return f"[{interval[0]:+.{digits}f}, {interval[1]:+.{digits}f}]"
