"""Wilson's score interval for one arm's rate (a share of items right): unlike the normal interval it stays inside
[0, 1] and is not of zero width at 0 or 1 of n."""

from __future__ import annotations

import math
from statistics import NormalDist


def wilson(successes: float, n: int, level: float = 0.95) -> tuple[float, float]:
    if n < 1:
        return math.nan, math.nan
    z = NormalDist().inv_cdf(1 - (1 - level) / 2)
    rate = successes / n
    centre = (rate + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(rate * (1 - rate) / n + z * z / (4 * n * n))
    return max(0.0, centre - half), min(1.0, centre + half)
