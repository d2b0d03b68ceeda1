"""The tiers of a run, smallest first: a suite belongs to its tier and every
larger one (a build of tier T runs the suites of T and of every smaller
tier), and what is not tiered belongs to all. The generator's specs, the
case labels and the claims' ctest tests read them here."""

from __future__ import annotations

TIERS = ("smoke", "ci", "nightly")


def tier_labels(tier: str) -> tuple[str, ...]:
    """A suite's tier labels: its tier and every larger one, since a build
    of a larger tier runs it too; `ctest -L smoke` then selects what a smoke
    build runs (tests that are not tiered carry all three)."""
    return TIERS[TIERS.index(tier):]
