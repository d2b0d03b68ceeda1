"""Reading a case's repro string, for the Python that has one in hand (the
report). The C++ owns the case (harness/case.cc formats and parses it);
bc_problem answers a "case" request with the same split, and
reports/tests/test_inputs.py holds this function to it on every case of the
manifest."""

from __future__ import annotations


def split_repro(repro: str) -> tuple[str, dict[str, str]]:
    """(the schedule, {key: value} of the settings after it, in order): the
    first token is the schedule; each other is key=value (a bare key reads
    as "")."""
    schedule, _, rest = repro.partition(" ")
    settings: dict[str, str] = {}
    for token in rest.split(" "):
        if token:
            key, _, value = token.partition("=")
            settings[key] = value
    return schedule, settings
