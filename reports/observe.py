"""One sentence of what was observed for a claim on a platform, generated
from its evidence (never written per claim): what ran, what was toggled,
and what was seen, with one example in the system's own words (a check's
detail, which names the system, its version and what it did)."""

from __future__ import annotations

from typing import Any

from .ruling import Ruling
from .verdicts import Fact, Verdict


def _checks(f: Fact, name: str = "") -> list[dict[str, Any]]:
    return [c for r in f.records for c in r.get("checks", []) if not name or c.get("name") == name]


EXAMPLE_CHARS = 240  # an example's length in the sentence; the evidence keeps it whole


def _example(f: Fact, check: str) -> str:
    """The fact in its own words, cut at EXAMPLE_CHARS."""
    said = _own_words(f, check)
    return said if len(said) <= EXAMPLE_CHARS else said[:EXAMPLE_CHARS - 1].rstrip() + "…"


def _own_words(f: Fact, check: str) -> str:
    """A failure's message, else its check's detail, else the test's message,
    else its repro."""
    if f.outcome in ("failed", "crashed", "timed out", "error") and f.message.strip():
        return f.message.strip().splitlines()[0]
    details = [str(c.get("detail", "")).strip() for c in _checks(f, check) if str(c.get("detail", "")).strip()]
    if details:
        return details[0].splitlines()[0]
    if f.message.strip():
        return f.message.strip().splitlines()[0]
    repro = next((str(r.get("repro", "")) for r in f.records if r.get("repro")), "")
    return f"ran {repro}" if repro else "no record"


def toggled(facts: list[Fact]) -> list[str]:
    """The flags whose values differ among the facts' case records."""
    values: dict[str, set[str]] = {}
    for f in facts:
        for r in f.records:
            for k, v in (r.get("flags") or {}).items():
                values.setdefault(k, set()).add(str(v))
    return sorted(k for k, vs in values.items() if len(vs) > 1)


def _short(test: str) -> str:
    return test.rsplit("/", 1)[-1] if "/" in test else test


def _counts(facts: list[Fact]) -> str:
    order = ("passed", "failed", "crashed", "timed out", "error", "skipped", "not run")
    n = {o: sum(f.outcome == o for f in facts) for o in order}
    said = [f"{n[o]} {Ruling.NOT_EVALUATED if o in ('skipped', 'not run') else o}" for o in order if n[o]]
    mistrusted = sum(f.mistrusted for f in facts)
    return ", ".join(said) + (f" ({mistrusted} mistrusted)" if mistrusted else "")


def sentence(v: Verdict) -> str:
    """The observation of one verdict (a platform's, or an across claim's)."""
    claim, facts = v.claim, v.facts
    if claim.rule == "out-of-scope" or not facts:
        return v.reason
    if claim.rule == "across":
        return f"Compared the digests of {len(facts)} test(s) across sides: {v.reason}"
    if claim.rule == "ratio":
        if v.withheld:
            return f"Timed {len(facts)} comparison(s), withheld: {v.reason}."
        ran = [f for f in facts if "ratio" in f.figures]
        if not ran:
            return f"{len(facts)} comparison(s), none timed: {_example(facts[0], '')}"
        ratios = sorted(f.figures["ratio"] for f in ran)
        versus = ", ".join(f"{k}={val}" for k, val in (ran[0].figures.get("versus") or {}).items()) or "the other side"
        outcomes = [f.figures.get("outcome", "") for f in ran]
        return (f"Timed {len(ran)} comparison(s) of {claim.metric}, B setting {versus}: {outcomes.count(Ruling.SUPPORTED)} "
                f"decisively for the claim, {outcomes.count(Ruling.REFUTED)} against, {outcomes.count(Ruling.INCONCLUSIVE)} "
                f"within noise; median B/A from {ratios[0]:.3g} to {ratios[-1]:.3g} "
                f"(e.g. {_short(ran[0].test)}: {ran[0].figures['ratio']:.3g}).")
    if claim.rule == "distribution":
        counted = [f for f in facts if "count" in f.figures]
        if counted:
            return (f"Ran {len(counted)} case(s) in fresh processes: "
                    + "; ".join(f"{_short(x.test)}: {x.figures['count']} distinct in {x.figures['processes']} processes"
                                for x in counted[:3]) + ".")
    flags = toggled(facts)
    lead = next((f for f in facts if f.outcome in ("failed", "crashed", "timed out", "error") and not f.mistrusted),
                next((f for f in facts if f.outcome == "passed"), facts[0]))
    on = next((str(r["engine_version"]) for f in facts for r in f.records if r.get("engine_version")), "")
    what = f"Ran {len(facts)} test(s)" + (f" on {on}" if on else "") + (f" toggling {', '.join(flags)}" if flags else "")
    return f"{what}: {_counts(facts)}; e.g. {_short(lead.test)}: {_example(lead, claim.check)}"
