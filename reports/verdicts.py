"""Computing each claim's verdict from the facts its evidence rule selects.

A fact is one test. Its outcome comes from the test's own result record;
a test that ctest saw fail but that wrote no result record crashed or timed
out. A passed determinism case whose output was degenerate is mistrusted:
it can never support or refute a claim.

Verdicts: supported, refuted, inconclusive, not evaluated (with the skip
reasons), error (crashed facts, or selectors that match nothing).
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass, field
from typing import Any

from .catalog import Claim
from .evidence import Evidence

VERDICTS = ("supported", "refuted", "inconclusive", "not evaluated", "error")


@dataclass
class Fact:
    test: str
    outcome: str  # passed, failed, skipped, crashed, not run
    message: str = ""
    mistrusted: bool = False
    case: dict[str, Any] | None = None   # manifest entry
    records: list[dict[str, Any]] = field(default_factory=list)  # evidence "case" records


@dataclass
class Verdict:
    claim: Claim
    verdict: str
    reason: str
    facts: list[Fact]


def _case_matches(case: dict[str, Any], selector: dict[str, Any]) -> bool:
    axes = case.get("axes", {})
    for key, want in selector.items():
        have = case[key] if key in ("fixture", "suite", "binary", "positive_control") else axes.get(key)
        if key == "engine" and isinstance(have, str):
            have = have.split(":", 1)[0]
        if have != want:
            return False
    return True


def select_tests(claim: Claim, manifest: list[dict[str, Any]], evidence: Evidence) -> list[str]:
    known = {c["test"] for c in manifest} | set(evidence.results) | set(evidence.ctest) | evidence.registered
    chosen: list[str] = []
    for pattern in claim.tests:
        chosen += sorted(t for t in known if fnmatch.fnmatchcase(t, pattern))
    if claim.cases:
        chosen += [c["test"] for c in manifest if _case_matches(c, claim.cases)]
    return list(dict.fromkeys(chosen))


def fact_for(test: str, manifest_by_test: dict[str, dict[str, Any]], evidence: Evidence) -> Fact:
    records = evidence.cases.get(test, [])
    result = evidence.results.get(test)
    if result is not None:
        outcome = str(result.get("outcome", "failed"))
        message = str(result.get("message", ""))
    elif evidence.ctest.get(test) == "fail":
        outcome, message = "crashed", "the test process ended without a result record (crash, abort or timeout)"
    else:
        outcome, message = "not run", "no evidence: this test did not run"
    mistrusted = any(check.get("outcome") == "mistrusted" for r in records for check in r.get("checks", []))
    return Fact(test, outcome, message, mistrusted, manifest_by_test.get(test), records)


def judge(claim: Claim, manifest: list[dict[str, Any]], evidence: Evidence) -> Verdict:
    if claim.rule == "out-of-scope":
        return Verdict(claim, "not evaluated", f"out of scope: {claim.reason}", [])
    tests = select_tests(claim, manifest, evidence)
    if not tests:
        return Verdict(claim, "error", "the catalog's selectors match no test: fix suites/claims.toml", [])
    by_test = {c["test"]: c for c in manifest}
    facts = [fact_for(t, by_test, evidence) for t in tests]
    crashed = [f for f in facts if f.outcome == "crashed"]
    failed = [f for f in facts if f.outcome == "failed"]
    clean = [f for f in facts if f.outcome == "passed" and not f.mistrusted]
    mistrusted = [f for f in facts if f.outcome == "passed" and f.mistrusted]
    skipped = [f for f in facts if f.outcome in ("skipped", "not run")]
    holds = "supported" if claim.polarity == "supports" else "refuted"
    breaks = "refuted" if claim.polarity == "supports" else "supported"
    note = f"; {len(skipped)} of {len(facts)} not evaluated here" if skipped else ""
    if crashed:
        return Verdict(claim, "error", f"{len(crashed)} fact(s) crashed or timed out: {crashed[0].test}", facts)
    if failed:
        first = failed[0].message.strip().splitlines()
        return Verdict(claim, breaks, f"{len(failed)} of {len(facts)} fact(s) failed, e.g. {failed[0].test}: "
                                      f"{first[0] if first else 'failed'}", facts)
    if clean:
        extra = f"; {len(mistrusted)} mistrusted" if mistrusted else ""
        return Verdict(claim, holds, f"all {len(clean)} evaluated fact(s) hold{extra}{note}", facts)
    if mistrusted:
        return Verdict(claim, "inconclusive", f"all {len(mistrusted)} passing fact(s) are mistrusted "
                                              "(degenerate output)", facts)
    reasons = sorted({f.message.strip() for f in skipped if f.message.strip()})
    return Verdict(claim, "not evaluated", "; ".join(reasons) or "no fact was evaluated", facts)


def judge_all(claims: list[Claim], manifest: list[dict[str, Any]], evidence: Evidence) -> list[Verdict]:
    return [judge(c, manifest, evidence) for c in claims]


def refuted_guarantees(verdicts: list[Verdict]) -> list[Verdict]:
    return [v for v in verdicts if v.claim.kind == "guarantee" and v.verdict == "refuted"]
