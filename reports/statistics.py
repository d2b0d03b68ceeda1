"""The statistics of the ratio rule: per-rep ratios of a Compare's paired
reps, and a seeded bootstrap interval of their median. Standard library
only; the bootstrap is seeded so a report is reproducible.

The rule's level and margin were settled by measurement, with the A/A and
injected-slowdown experiment (benchmarks/aa_experiment.py, BENCHMARKS.md):
pooled (unpaired) medians with a Mann-Whitney test raised 1.5% false alarms
and saw a 15% slowdown in 77.5% of 200 trials, because a shared host moves
between speed states and makes each side's samples bimodal; pairing cancels
that, and a 3% margin absorbs the small systematic shifts (up to about 2%)
that A/A runs of one configuration still show.
"""

from __future__ import annotations

import functools
import math
import random
import statistics

from .ruling import Ruling

BOOTSTRAP_RESAMPLES = 2000
BOOTSTRAP_SEED = 20261120
LEVEL = 0.90   # of the bootstrap interval of the median per-rep ratio
MARGIN = 0.03  # the interval must clear the bound by this much (relative)
# A Compare records the share of the machine's CPU time that other processes
# took while it ran. Above this share its ratio is withheld, not decided:
# with another process on the cores, PyTorch's OpenMP threads wait for each
# other at every barrier while one is descheduled, and paths with more
# barriers lose more, so the ratio measures the contention rather than the
# setting. BENCHMARKS.md, "Verdict stability": idle runs here saw 0.6-8.1%,
# runs beside stress-ng --cpu 2 about half, and at 15% a verdict already moved.
LOAD_LIMIT = 0.10
# One run's interval is of its own reps only: it does not hold what differs
# between two runs. Between fresh clones of one commit (BENCHMARKS.md,
# "Between runs"), a comparison's median moved by up to this factor between
# two runs of one install, from one side of 1 to the other, and a rule that
# asked a move between versions to cross 1 by 25% on each side still counted
# a move in one clone and not in the next. A speed ratio's move between two
# installs, each run once, is listed but not counted as a change.
BETWEEN_RUNS_FACTOR = 2.07


def paired_ratios(a: list[float], b: list[float]) -> list[float]:
    """b[k]/a[k] for each rep k. A Compare runs A and B back to back in every
    rep (in alternating order), so a pair shares the machine's state of that
    moment and its ratio cancels it. +inf when only a[k] is zero, 1 when both are."""
    out = []
    for x, y in zip(a, b):
        if x == 0:
            out.append(1.0 if y == 0 else math.inf)
        else:
            out.append(y / x)
    return out


def bootstrap_median_ci(values: list[float], level: float = LEVEL) -> tuple[float, float]:
    """Percentile interval of the median, resampling the values (seeded: the
    same values give the same interval, so it is computed once a process)."""
    return _bootstrap(tuple(values), level)


@functools.lru_cache(maxsize=4096)
def _bootstrap(values: tuple[float, ...], level: float) -> tuple[float, float]:
    rng = random.Random(BOOTSTRAP_SEED)
    # rng.choice(values), drawn as choice draws it (the same seeded stream),
    # and statistics.median's own arithmetic, without a call per value
    pick, n, half = rng._randbelow, len(values), len(values) // 2
    medians = []
    for _ in range(BOOTSTRAP_RESAMPLES):
        draw = sorted([values[pick(n)] for _ in values])
        medians.append(draw[half] if n % 2 else (draw[half - 1] + draw[half]) / 2)
    medians.sort()
    return medians[int((1 - level) / 2 * (len(medians) - 1))], medians[int((1 + level) / 2 * (len(medians) - 1))]


def side(ci: tuple[float, float], bound: float) -> str:
    """Where a ratio's interval lies against `bound`, by the rule's margin:
    "below" (the whole interval under bound / (1 + MARGIN)), "above" (over
    bound x (1 + MARGIN)), or "" (within noise of it)."""
    if ci[1] < bound / (1 + MARGIN):
        return "below"
    if ci[0] > bound * (1 + MARGIN):
        return "above"
    return ""


def decide_ratio(a: list[float], b: list[float], bound: float,
                 supports_when: str) -> tuple[str, float, tuple[float, float]]:
    """The ratio rule on one comparison of paired reps: (outcome, median of
    the per-rep ratios B/A, its LEVEL bootstrap interval). Decisive only when
    the whole interval clears the bound by MARGIN: above bound x (1 + MARGIN)
    or below bound / (1 + MARGIN). Then supported when the ratio lies on
    the `supports_when` side ("below" or "above") of the bound, else
    refuted; otherwise inconclusive."""
    ratios = paired_ratios(a, b)
    if not ratios:
        return Ruling.INCONCLUSIVE, 1.0, (1.0, 1.0)
    ratio = statistics.median(ratios)
    lo, hi = bootstrap_median_ci(ratios)
    where = side((lo, hi), bound)
    if not where:
        outcome = Ruling.INCONCLUSIVE
    elif where == supports_when:
        outcome = Ruling.SUPPORTED
    else:
        outcome = Ruling.REFUTED
    return outcome, ratio, (lo, hi)


# A claim of a magnitude ("about twice as slow", "about 3x faster") holds
# from the stated factor N divided by ABOUT_SPREAD to N times ABOUT_SPREAD:
# for "about twice", from 1.33x to 3x. Symmetric on a log scale, as a
# ratio's errors are factors; a third more is not "twice", and past three
# times the statement would be "three times", so a factor of 1.5 each way
# is what the word "about" grants. The factor is read from the claim's
# statement (reports/catalog.py stated_factor), never written beside it.
ABOUT_SPREAD = 1.5


def band_of(factor: float, supports_when: str) -> tuple[float, float]:
    """The band of B/A that "about `factor`x" allows: B the faster (or
    smaller) side when `supports_when` is "below", so B/A is about
    1/factor; the larger when "above"."""
    lo, hi = factor / ABOUT_SPREAD, factor * ABOUT_SPREAD
    return (1 / hi, 1 / lo) if supports_when == "below" else (lo, hi)


def decide_band(a: list[float], b: list[float],
                band: tuple[float, float]) -> tuple[str, float, tuple[float, float]]:
    """The ratio rule of a magnitude: (outcome, median of the per-rep ratios
    B/A, its LEVEL bootstrap interval). Supported when the whole interval
    lies inside the band by MARGIN at each edge, refuted when it lies
    wholly outside by MARGIN (beyond either edge), otherwise inconclusive."""
    ratios = paired_ratios(a, b)
    if not ratios:
        return Ruling.INCONCLUSIVE, 1.0, (1.0, 1.0)
    ratio = statistics.median(ratios)
    ci = bootstrap_median_ci(ratios)
    if side(ci, band[0]) == "above" and side(ci, band[1]) == "below":
        return Ruling.SUPPORTED, ratio, ci
    if side(ci, band[0]) == "below" or side(ci, band[1]) == "above":
        return Ruling.REFUTED, ratio, ci
    return Ruling.INCONCLUSIVE, ratio, ci


def decide_many(outcomes: list[str]) -> tuple[str, str]:
    """A claim judged on several comparisons (decide_ratio's outcomes, one a
    shape, say): supported when more than half of them are decisively for
    it and none is decisively against; refuted when more than half are
    decisively against; otherwise inconclusive. Returns the verdict and its
    counts ("10 of 15 decisively for, 0 against, 5 not decisive"). One
    comparison is the rule of one: its own outcome."""
    n = len(outcomes)
    for_, against = outcomes.count(Ruling.SUPPORTED), outcomes.count(Ruling.REFUTED)
    counts = f"{for_} of {n} decisively for, {against} against, {n - for_ - against} not decisive"
    if for_ * 2 > n and against == 0:
        return Ruling.SUPPORTED, counts
    if against * 2 > n:
        return Ruling.REFUTED, counts
    return Ruling.INCONCLUSIVE, counts


MANY_RULE = ("a claim judged on several comparisons is supported when more than half of them are decisively for it "
             "and none is decisively against, refuted when more than half are decisively against, and otherwise "
             "inconclusive")


def ratio_moved(ci_a: tuple[float, float], ci_b: tuple[float, float]) -> str:
    """How one comparison's ratio moved from run A to run B (two torch
    installs, say), by the ratio rule with A's interval as the bound: "up"
    when B's whole LEVEL interval lies above A's by MARGIN, "down" when below
    it by MARGIN, "" when the intervals come closer than that (within noise).
    Each interval is of paired per-rep ratios, so each run's own machine
    state cancels; the margin is the one the A/A experiment settled."""
    if ci_b[0] > ci_a[1] * (1 + MARGIN):
        return "up"
    if ci_b[1] < ci_a[0] / (1 + MARGIN):
        return "down"
    return ""
