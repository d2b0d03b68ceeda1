"""Statistics of the performance rules: medians, a bootstrap confidence
interval of a ratio of medians, and the Mann-Whitney U test. Standard
library only; the bootstrap is seeded so a report is reproducible."""

from __future__ import annotations

import math
import random
import statistics

BOOTSTRAP_RESAMPLES = 2000
BOOTSTRAP_SEED = 20261120


def ratio_of_medians(a: list[float], b: list[float]) -> float:
    """median(b) / median(a); +inf when only a's median is zero, 1 when both are."""
    ma, mb = statistics.median(a), statistics.median(b)
    if ma == 0:
        return 1.0 if mb == 0 else math.inf
    return mb / ma


def bootstrap_ratio_ci(a: list[float], b: list[float], level: float = 0.95) -> tuple[float, float]:
    """Percentile interval of median(b)/median(a), resampling a and b independently."""
    rng = random.Random(BOOTSTRAP_SEED)
    ratios = sorted(
        ratio_of_medians([rng.choice(a) for _ in a], [rng.choice(b) for _ in b]) for _ in range(BOOTSTRAP_RESAMPLES))
    lo = ratios[int((1 - level) / 2 * (len(ratios) - 1))]
    hi = ratios[int((1 + level) / 2 * (len(ratios) - 1))]
    return lo, hi


def mann_whitney_p(a: list[float], b: list[float]) -> float:
    """Two-sided p-value of the Mann-Whitney U test, normal approximation with
    tie correction (adequate from about 8 samples a side)."""
    n1, n2 = len(a), len(b)
    if n1 == 0 or n2 == 0:
        return 1.0
    pooled = sorted([(v, 0) for v in a] + [(v, 1) for v in b])
    ranks = [0.0] * len(pooled)
    ties = 0.0
    i = 0
    while i < len(pooled):
        j = i
        while j + 1 < len(pooled) and pooled[j + 1][0] == pooled[i][0]:
            j += 1
        for k in range(i, j + 1):
            ranks[k] = (i + j) / 2 + 1
        t = j - i + 1
        ties += t ** 3 - t
        i = j + 1
    r1 = sum(r for r, (_, g) in zip(ranks, pooled) if g == 0)
    u = r1 - n1 * (n1 + 1) / 2
    n = n1 + n2
    variance = n1 * n2 / 12 * ((n + 1) - ties / (n * (n - 1)))
    if variance <= 0:
        return 1.0
    z = (abs(u - n1 * n2 / 2) - 0.5) / math.sqrt(variance)
    return max(0.0, min(1.0, math.erfc(max(z, 0.0) / math.sqrt(2))))
