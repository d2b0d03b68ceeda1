"""The verdict type: the five rulings a claim (or an entry of a documented
list) can get, and their order of gravity. Every module of the report names
a verdict through this type; the words themselves are spelled here alone
(and in the template, which shows them).

A Ruling is a str: it compares equal to its word, and report.json and the
page write the word.
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import StrEnum


class Ruling(StrEnum):
    SUPPORTED = "supported"
    REFUTED = "refuted"
    INCONCLUSIVE = "inconclusive"
    NOT_EVALUATED = "not evaluated"
    ERROR = "error"

    @property
    def gravity(self) -> int:
        """0 for the gravest: the order in which the rulings of several
        platforms, devices or operations combine into one."""
        return GRAVITY.index(self)

    @property
    def decided(self) -> bool:
        """Whether the evidence decided something: supported or refuted."""
        return self in (Ruling.SUPPORTED, Ruling.REFUTED)


# The order the report shows them in.
VERDICTS = tuple(Ruling)
# The gravest first: error, then refuted, supported, inconclusive, not evaluated.
GRAVITY = (Ruling.ERROR, Ruling.REFUTED, Ruling.SUPPORTED, Ruling.INCONCLUSIVE, Ruling.NOT_EVALUATED)


def gravest(rulings: Iterable[str]) -> Ruling:
    """The gravest of several rulings (words are read as rulings)."""
    return min((Ruling(r) for r in rulings), key=lambda r: r.gravity)


def flip(ruling: Ruling) -> Ruling:
    """What a fact that holds says when the claim's polarity is reversed."""
    return {Ruling.SUPPORTED: Ruling.REFUTED, Ruling.REFUTED: Ruling.SUPPORTED}.get(ruling, ruling)
