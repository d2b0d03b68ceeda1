"""Computing each claim's verdict from the evidence its rule selects.

A fact is one test. Its outcome comes from the test's own result record (or,
for a rule with `check`, from that check in the test's case records); a test
that ctest saw fail but that wrote no result record crashed or timed out. A
passing case whose output was degenerate is mistrusted: it can never support
or refute a claim. So is every bitwise check on a device whose positive
control missed (a control that gave one digest shows that the check could
not see a race there), and the missed control itself: the claims they decide
are inconclusive ("control missed: ..."), never refuted, while the control's
own test still fails.

Rules:
- fact: passing facts hold; polarity says whether that supports or refutes.
- ratio: Compare records; the median of the per-rep ratios B/A of a metric
  (A and B run back to back in each rep) with a 90% bootstrap interval, over
  at least MIN_REPS reps. Decisive only when the interval clears the bound
  by 3% (reports/statistics.py; the level and margin come from the A/A
  experiment in BENCHMARKS.md). A claim whose statement claims a magnitude
  ("about twice") has a band in place of the bound (statistics.band_of):
  supported when the interval lies inside it, refuted when wholly outside
  it, either way by 3%, and its reason shows the measured factor beside
  the claimed one. A claim on several comparisons follows
  statistics.decide_many: supported when more than half are decisively for
  it and none against, refuted when more than half are against, otherwise
  inconclusive with the counts.
  A Compare timed while other processes took more than
  statistics.LOAD_LIMIT of the machine's CPU time decides nothing: the claim
  is not evaluated, withheld, naming the share.
- distribution: CrossProcess records; whether choices (or digests) vary
  across fresh processes. Not seeing variation is inconclusive, not a
  refutation, for a claim that something *may* vary.
- across: the digests of one computation on several devices (the same
  problem on the CPU and the GPU) or platforms. For platforms, the sides of a
  computation are its platforms in the merged evidence (machines, torch
  installs) and, on one platform, the case's own thread counts and
  ONEDNN_MAX_CPU_ISA caps; every pair of sides is counted under the part of
  the claim it differs in (GPU architectures, CPU ISAs, thread counts,
  library versions), and the parts nothing tested are named. A claim that
  results *may* differ is supported by one difference; equal bits everywhere
  are inconclusive.

Every claim but an `across` one is judged on each platform's evidence alone
(a platform is a machine with its ISA, thread count and GPU); its overall
verdict is the gravest of them: error, then refuted, supported, inconclusive,
not evaluated. A claim stated without a caveat that fails on one platform is
refuted as stated.

Verdicts: supported, refuted, inconclusive, not evaluated (with the skip
reasons), error (crashed facts, or selectors that match nothing).
"""

from __future__ import annotations

import fnmatch
import json
import math
from dataclasses import dataclass, field, replace
from typing import Any

from inputs.repro import split_repro

from .catalog import MIN_REPS, Claim, search_tests
from .evidence import PLATFORM_PARTS, Evidence, ctest_outcome, differing_parts
from .invariance import LEVELS, VARIANT_WORDS, level_cells, searched, searches
from .ruling import Ruling
from .statistics import LEVEL, LOAD_LIMIT, MANY_RULE, MARGIN, decide_band, decide_many, decide_ratio, side



@dataclass
class Fact:
    test: str
    outcome: str  # passed, failed (the fact did not hold), skipped, crashed, not run
    message: str = ""
    mistrusted: bool = False
    mistrust: str = ""  # why it is mistrusted
    case: dict[str, Any] | None = None   # manifest entry
    records: list[dict[str, Any]] = field(default_factory=list)  # evidence "case" records
    figures: dict[str, Any] = field(default_factory=dict)  # what a ratio or distribution rule computed
    # The test's own result (passed, failed, ...), which a fact that did not
    # hold need not share: a probe passes once it has recorded its finding.
    test_outcome: str = ""


@dataclass
class Verdict:
    claim: Claim
    verdict: str
    reason: str
    facts: list[Fact]
    observations: list[dict[str, Any]] = field(default_factory=list)
    platforms: dict[str, Verdict] = field(default_factory=dict)  # per platform, when judged per platform
    decided_by: str = ""  # the system whose evidence decided it ("" when no evidence could)
    prediction: Verdict | None = None  # what the model's evidence says, shown beside, never deciding
    withheld: bool = False  # not evaluated because its timings were taken on a busy machine
    snippet: str = ""  # a refuting counter-example as runnable Python (a universal claim's search)

    def on(self, platform: str) -> Verdict:
        """The verdict on one platform (itself, when it was not judged per platform)."""
        return self.platforms.get(platform) or self


def _case_matches(case: dict[str, Any], selector: dict[str, Any]) -> bool:
    axes = case.get("axes", {})
    for key, want in selector.items():
        have = case.get(key) if key in ("fixture", "suite", "binary", "positive_control") else axes.get(key)
        # "cudnn" selects every algorithm of the engine, "cudnn:algo_0" one of
        # them; "select:onednn" is one engine name.
        if key == "engine" and isinstance(have, str) and ":" not in str(want) and not str(want).startswith("select"):
            have = have.split(":", 1)[0]
        if have != want:
            return False
    return True


def select_tests(tests: list[str], cases: dict[str, Any], manifest: list[dict[str, Any]],
                 evidence: Evidence) -> list[str]:
    d = _derived(manifest, evidence)
    chosen: list[str] = []
    for pattern in tests:
        if pattern not in d.matching:
            d.matching[pattern] = sorted(t for t in d.known if fnmatch.fnmatchcase(t, pattern))
        chosen += d.matching[pattern]
    if cases:
        key = json.dumps(cases, sort_keys=True, default=str)
        if key not in d.selected:
            d.selected[key] = [c["test"] for c in manifest if _case_matches(c, cases)]
        chosen += d.selected[key]
    return list(dict.fromkeys(chosen))


def missed_controls(evidence: Evidence) -> dict[str, str]:
    """device -> what its first missed positive control said, then its test."""
    missed: dict[str, str] = {}
    for test, records in sorted(evidence.cases.items()):
        for r in records:
            for c in r.get("checks", []):
                if c.get("name") == "bitwise" and c.get("outcome") == "missed":
                    missed.setdefault(str(r.get("device", "")), f"{c.get('detail', '')} ({test})")
    return missed


def _mistrust(records: list[dict[str, Any]], missed: dict[str, str]) -> str:
    checks = [c for r in records for c in r.get("checks", [])]
    mistrusted = [str(c.get("detail", "")) for c in checks if c.get("outcome") == "mistrusted"]
    if mistrusted:  # a probe says why (its positive control did not vary); a case's output was degenerate
        return mistrusted[0].split("mistrusted: ", 1)[1] if "mistrusted: " in mistrusted[0] else "degenerate output"
    for r in records:
        for c in r.get("checks", []):
            if c.get("name") != "bitwise":
                continue
            if c.get("outcome") == "missed":
                return f"control missed: {c.get('detail', '')}"
            if c.get("outcome") != "caught" and str(r.get("device", "")) in missed:
                return f"control missed: {missed[str(r.get('device', ''))]}"
    return ""


def fact_for(test: str, manifest_by_test: dict[str, dict[str, Any]], evidence: Evidence, check: str = "",
             missed: dict[str, str] | None = None, conflicts: dict[str, list[str]] | None = None,
             system: str = "") -> Fact:
    records = evidence.cases.get(test, [])
    result = evidence.results.get(test)
    if result is not None:
        outcome = str(result.get("outcome", "failed"))
        message = str(result.get("message", ""))
    elif (seen := ctest_outcome(evidence, test)) is not None:
        outcome = seen
        message = (f"killed at its ctest TIMEOUT of {evidence.timeouts.get(test, 0):g} s" if seen == "timed out" else
                   "the test process ended without a result record (a signal, an abort or an early exit)")
    else:
        outcome, message = "not run", "no evidence: this test did not run"
    mistrust = _mistrust(records, missed or {})
    if (conflict := (evidence.conflicts() if conflicts is None else conflicts).get(test)) is not None:
        mistrust = "conflicting result records: " + ", ".join(conflict)
    shown = sorted({str(r["system"]) for r in records if "system" in r} - {system})
    if system and system != "any" and shown:  # "any": evidence of several systems
        mistrust = f"the catalog takes this test as {system} evidence, but its records come from {', '.join(shown)}"
    # A check the harness could not make (a probe that raised, an attribute
    # this version lacks) is an error of the harness, whatever the test's
    # outcome: it decides nothing about the system.
    errors = [c for r in records for c in r.get("checks", []) if c.get("outcome") == "error"]
    ran = outcome
    if errors:
        return Fact(test, "error", str(errors[0].get("detail", "")), bool(mistrust), mistrust,
                    manifest_by_test.get(test), records, test_outcome=ran)
    # A finding is not a failure of the test that observed it: a probe of
    # the system under test passes once it has recorded what it saw, and
    # the check it recorded is the fact.
    failed = [c for r in records for c in r.get("checks", []) if c.get("outcome") == "failed"]
    if outcome == "passed" and failed and not check:
        outcome, message = "failed", str(failed[0].get("detail", ""))
    if check and outcome in ("passed", "failed"):
        found = [c for r in records for c in r.get("checks", []) if c.get("name") == check]
        if not found:
            outcome, message = "not run", f"the test recorded no '{check}' check here"
        elif all(c.get("outcome") == "not_applicable" for c in found):
            # No bound covers what ran (a Winograd or FFT kernel, say): the
            # check was not made, which is neither a pass nor a failure.
            outcome, message = "skipped", f"not evaluated: {found[0].get('detail', '')}"
        else:
            found = [c for c in found if c.get("outcome") != "not_applicable"]
            failed = [c for c in found if c.get("outcome") != "passed"]
            outcome = "failed" if failed else "passed"
            message = (failed or found)[0].get("detail", "")
    return Fact(test, outcome, message, bool(mistrust), mistrust, manifest_by_test.get(test), records,
                test_outcome=ran)


@dataclass
class _Derived:
    """What every claim's judgement reads of one evidence and manifest."""
    known: set[str]  # every test named: by the manifest, a result, ctest
    by_test: dict[str, dict[str, Any]]  # the manifest's cases by test
    missed: dict[str, str]  # missed_controls
    conflicts: dict[str, list[str]]  # Evidence.conflicts
    # select_tests's answers: a pattern's tests, a selector's (by its JSON text)
    matching: dict[str, list[str]] = field(default_factory=dict)
    selected: dict[str, list[str]] = field(default_factory=dict)


# While judge_all judges (the evidence does not change): _Derived by the
# identity of the manifest and the evidence (both held, so that no other
# object takes their identity meanwhile), computed once for all claims.
_JUDGING: dict[tuple[int, int], tuple[list[dict[str, Any]], Evidence, _Derived]] | None = None


def _derived(manifest: list[dict[str, Any]], evidence: Evidence) -> _Derived:
    key = (id(manifest), id(evidence))
    if _JUDGING is not None and key in _JUDGING:
        return _JUDGING[key][2]
    d = _Derived({c["test"] for c in manifest} | set(evidence.results) | set(evidence.ctest) | evidence.registered,
                 {c["test"]: c for c in manifest}, missed_controls(evidence), evidence.conflicts())
    if _JUDGING is not None:
        _JUDGING[key] = (manifest, evidence, d)
    return d


def _facts(claim: Claim, manifest: list[dict[str, Any]], evidence: Evidence) -> list[Fact]:
    d = _derived(manifest, evidence)
    return [fact_for(t, d.by_test, evidence, claim.check, d.missed, d.conflicts, claim.system)
            for t in select_tests(claim.tests, claim.cases, manifest, evidence)]


def _searched(claim: Claim, verdict: Verdict, search_facts: list[Fact]) -> Verdict:
    """A claim that holds everywhere, judged with its search for a
    counter-example (the claim's `search`, "LEVEL | VARIANT" of
    TorchPython.CounterExampleSearch): a counter-example refutes it, its
    shrunk snippet the verdict's; a rule's support stands only beside a
    search that found none, and states what that search covered; without a
    search the claim is not evaluated, and with the search's planted
    controls missed, inconclusive. A search that failed is an error."""
    holds = Ruling.SUPPORTED if claim.polarity == "supports" else Ruling.REFUTED
    breaks = Ruling.REFUTED if claim.polarity == "supports" else Ruling.SUPPORTED
    broken = [f for f in search_facts if f.outcome in ("crashed", "timed out", "error")]
    if broken:
        first = (broken[0].message.strip().splitlines() or ["no message"])[0]
        return Verdict(claim, Ruling.ERROR, f"the search for a counter-example failed: {first}", verdict.facts)
    level, _, variant = claim.search.partition(" | ")
    found = searched(searches([c["observed"] for f in search_facts if f.outcome == "passed" and not f.mistrusted
                               for r in f.records for c in r.get("checks", [])
                               if isinstance(c.get("observed"), dict)]), level, variant)
    examples = found["counterexamples"] if found else []
    if found is not None and not found["trusted"]:
        # A planted control missed (or a holding one flagged): what the
        # search saw, found or not, decides nothing.
        said = f"the search's planted controls failed ({found['why']}), so what it found or did not find decides nothing"
        return replace(verdict, verdict=Ruling.INCONCLUSIVE, reason=_beside(said, verdict.reason))
    if examples:
        said = (f"the search found {len(examples)} counter-example{'s' if len(examples) > 1 else ''}: "
                + "; ".join(c["words"] for c in examples[:4])
                + (f" and {len(examples) - 4} more" if len(examples) > 4 else ""))
        reason = f"{verdict.reason}; {said}" if verdict.verdict == breaks else _beside(said, verdict.reason)
        return replace(verdict, verdict=breaks, reason=reason, snippet=examples[0].get("snippet", ""))
    if verdict.verdict != holds:
        return verdict
    if found is None:
        why = next((f.message.strip() for f in search_facts if f.outcome in ("skipped", "not run")
                    and f.message.strip()), "this evidence holds no search")
        said = f"no search for a counter-example ran ({why}); a claim that holds everywhere needs one"
        return replace(verdict, verdict=Ruling.NOT_EVALUATED,
                       reason=f"{said}: {verdict.reason}" if verdict.reason else said)
    if not found["evaluated"]:
        said = f"the search evaluated no case ({found['line']})"
        return replace(verdict, verdict=Ruling.INCONCLUSIVE,
                       reason=f"{verdict.reason}; but {said}" if verdict.reason else said)
    said = f"no counter-example in {found['line']}"
    return replace(verdict, reason=f"{verdict.reason}; {said}" if verdict.reason else said[0].upper() + said[1:])


def _beside(said: str, reason: str) -> str:
    """What the search said, then the claim's other evidence (where it has any)."""
    return f"{said}; beside it, {reason}" if reason else said


def _unsearched(claim: Claim, facts: list[Fact]) -> list[Fact]:
    """A claim that holds everywhere is supported only after a search for
    its counter-example: a passing fact whose observation lacks the claim's
    `searched` key (evidence older than the search) decides nothing, and
    counts as not evaluated with that reason; a failing one still refutes."""
    if not claim.searched:
        return facts
    out = []
    for f in facts:
        seen = [c.get("observed") for r in f.records for c in r.get("checks", []) if isinstance(c.get("observed"), dict)]
        if f.outcome == "passed" and not any(claim.searched in o for o in seen):
            f = Fact(f.test, "skipped", f"this evidence holds no search for a counter-example ('{claim.searched}' "
                                        f"not recorded: it predates the search)", case=f.case, records=f.records,
                     test_outcome=f.test_outcome)
        out.append(f)
    return out


def _judge_facts(claim: Claim, facts: list[Fact]) -> Verdict:
    crashed = [f for f in facts if f.outcome in ("crashed", "timed out", "error")]
    failed = [f for f in facts if f.outcome == "failed" and not f.mistrusted]
    clean = [f for f in facts if f.outcome == "passed" and not f.mistrusted]
    mistrusted = [f for f in facts if f.outcome in ("passed", "failed") and f.mistrusted]
    skipped = [f for f in facts if f.outcome in ("skipped", "not run")]
    holds = Ruling.SUPPORTED if claim.polarity == "supports" else Ruling.REFUTED
    breaks = Ruling.REFUTED if claim.polarity == "supports" else Ruling.SUPPORTED
    note = f"; {len(skipped)} of {len(facts)} not evaluated here" if skipped else ""
    if crashed:
        first = crashed[0].message.strip().splitlines()
        return Verdict(claim, Ruling.ERROR, f"{len(crashed)} fact(s) crashed, timed out or could not be observed: "
                                       f"{crashed[0].test}" + (f": {first[0]}" if first else ""), facts)
    if failed:
        first = failed[0].message.strip().splitlines()
        return Verdict(claim, breaks, f"{len(failed)} of {len(facts)} fact(s) did not hold, e.g. {failed[0].test}: "
                                      f"{first[0] if first else 'did not hold'}", facts)
    if clean:
        extra = f"; {len(mistrusted)} mistrusted" if mistrusted else ""
        return Verdict(claim, holds, _held(claim, clean) + extra + note, facts)
    if mistrusted:
        return Verdict(claim, Ruling.INCONCLUSIVE, f"all {len(mistrusted)} evaluated fact(s) are mistrusted, e.g. "
                                              f"{mistrusted[0].test}: {mistrusted[0].mistrust}", facts)
    reasons = sorted({f.message.strip() for f in skipped if f.message.strip()})
    return Verdict(claim, Ruling.NOT_EVALUATED, "; ".join(reasons) or "no fact was evaluated", facts)


def _held(claim: Claim, clean: list[Fact]) -> str:
    """Which facts held, in words: one fact's own observation (what its test
    saw, as it said it), or how many tests of which kind held, with some of
    their names."""
    what = f"the '{claim.check}' check of " if claim.check else ""
    if len(clean) == 1:
        f = clean[0]
        details = [str(c.get("detail", "")) for r in f.records for c in r.get("checks", [])
                   if c.get("detail") and (not claim.check or c.get("name") == claim.check)]
        said = ((f.message.strip() or (details[0] if details else "")).splitlines() or [""])[0]
        return f"{what}{f.test} held" + (f": {said[:400]}" if said else "")
    names = [f.test.rsplit("/", 1)[-1] if "/" in f.test else f.test for f in clean]
    kinds = sorted({f.test.split("/", 2)[1] if f.test.count("/") >= 2 else f.test.split(".")[0] for f in clean})
    shown = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
    return f"{what}{len(clean)} tests held ({', '.join(kinds[:3])}: {shown})"


def recorded_grids(facts: list[Fact]) -> list[dict[str, Any]]:
    """The invariance grids the passing facts recorded (the CPU's, a CUDA
    device's)."""
    return [c["observed"] for f in facts if f.outcome == "passed" for r in f.records
            for c in r.get("checks", []) if isinstance(c.get("observed"), dict) and "rows" in c["observed"]]


def level_name(claim: Claim, grids: list[dict[str, Any]]) -> str:
    """The claim's level as a sentence names it: "thread count (2 threads against 1)"."""
    name = LEVELS[claim.level][0]
    if claim.level == "threads":
        threads_all = max(g.get("threads_all", 2) for g in grids)
        name += f" (2 threads against 1{' and ' + str(threads_all) if threads_all > 2 else ''})"
    return name


def _invariance(claim: Claim, facts: list[Fact]) -> Verdict:
    """A claim that results hold their bits at one level of the invariance
    grid, for the rows of one flag variant: supported when every operation
    evaluated there is invariant and the level's positive control varied,
    refuted by one that differs (named, with where and how much),
    inconclusive when the level's positive control did not vary; without a
    recorded grid, as its test's outcome says. A claim that holds everywhere
    names its search too (_searched)."""
    grids = recorded_grids(facts)
    if not grids:
        return _judge_facts(claim, facts)
    # Each grid (the CPU's, a CUDA device's) is judged with its own control.
    cells: dict[str, dict[str, Any]] = {}
    untrusted: list[str] = []
    for grid in grids:
        mine = level_cells(grid, claim.level, claim.variant)
        cells.update(mine)
        control = grid.get("controls", {}).get(claim.level, {})
        if any(c["state"] in ("invariant", "untrusted") for c in mine.values()) and not control.get("varied"):
            untrusted.append(str(control.get("what")))
    name = level_name(claim, grids)
    flags = VARIANT_WORDS[claim.variant]
    judged = {op: c for op, c in cells.items() if c["state"] in ("invariant", "differs", "untrusted")}
    differ = {op: c for op, c in judged.items() if c["state"] == "differs"}
    others = {op: c["why"] for op, c in cells.items() if op not in judged}
    aside = (f"; not evaluated: {', '.join(sorted(others))} ({next(iter(others.values()))})" if others else "")
    holds = Ruling.SUPPORTED if claim.polarity == "supports" else Ruling.REFUTED
    breaks = Ruling.REFUTED if claim.polarity == "supports" else Ruling.SUPPORTED
    if differ:
        shown = "; ".join(f"{op}: {c['why']}" for op, c in list(differ.items())[:3])
        return Verdict(claim, breaks, f"across the {name}, {flags}, {len(differ)} of {len(judged)} operations of "
                                      f"the grid do not hold their bits ({', '.join(differ)}); {shown}{aside}", facts)
    if not judged:
        return Verdict(claim, Ruling.NOT_EVALUATED, f"no operation evaluated across the {name}{aside}", facts)
    controls = "; ".join(str(g.get("controls", {}).get(claim.level, {}).get("what")) for g in grids)
    if untrusted:
        return Verdict(claim, Ruling.INCONCLUSIVE, f"across the {name} all {len(judged)} operations gave the same "
                                                   f"bits, but the level's control ({'; '.join(untrusted)}) did not "
                                                   f"vary, so that proves nothing{aside}", facts)
    return Verdict(claim, holds, f"across the {name}, {flags}, all {len(judged)} operations of the grid held their "
                                 f"bits ({', '.join(judged)}), and the control ({controls}) varied{aside}", facts)


def _ratio(claim: Claim, facts: list[Fact]) -> Verdict:
    """One Compare per fact; the claim holds when every decisive fact agrees.
    A Compare timed while other processes took more than LOAD_LIMIT of the
    machine's CPU time decides nothing: the claim is then not evaluated, and
    marked withheld."""
    outcomes: list[str] = []
    busy: list[float] = []
    for f in facts:
        compare = next((r["compare"] for r in f.records if "compare" in r), None)
        if f.outcome != "passed" or compare is None:
            continue
        others = compare.get("others_cpu")
        if others is not None and others > LOAD_LIMIT:
            busy.append(others)
            f.figures = {"others_cpu": others, "note": f"timed while other processes took {others:.0%} of the "
                                                       f"machine's CPU time"}
            continue
        a = [float(x) for x in compare["a"].get(claim.metric, [])]
        b = [float(x) for x in compare["b"].get(claim.metric, [])]
        if min(len(a), len(b)) < MIN_REPS:
            f.figures = {"note": f"only {min(len(a), len(b))} reps (at least {MIN_REPS} needed)"}
            outcomes.append(Ruling.INCONCLUSIVE)
            continue
        if claim.band:
            outcome, ratio, (lo, hi) = decide_band(a, b, claim.band)
        else:
            outcome, ratio, (lo, hi) = decide_ratio(a, b, claim.bound, claim.supports_when)
        f.figures = {"metric": claim.metric, "ratio": ratio, "ci": [lo, hi], "reps": min(len(a), len(b)),
                     "median_a": sorted(a)[len(a) // 2], "median_b": sorted(b)[len(b) // 2], "outcome": outcome,
                     "a": compare["a"]["repro"], "b": compare["b"]["repro"],
                     "versus": compare.get("versus_flags", {}), "samples_a": a, "samples_b": b,
                     "unit": "bytes" if claim.metric.endswith("_bytes") else "ns", "bound": claim.bound,
                     # whether B is decisively below or above A, whatever the claim's bound or band
                     "direction": side((lo, hi), 1.0)}
        if claim.band:
            f.figures["band"] = list(claim.band)
        f.figures["text"] = _ratio_text(claim, f)
        outcomes.append(outcome)
    if busy:
        return Verdict(claim, Ruling.NOT_EVALUATED,
                       f"{len(busy)} of {len(busy) + len(outcomes)} comparisons were timed while other processes "
                       f"took up to {max(busy):.0%} of the machine's CPU time; a ratio is decided only on timings "
                       f"taken while others took under {LOAD_LIMIT:.0%}, since on a busy machine it measures the "
                       f"contention rather than the setting: rerun on a quiet machine", facts, withheld=True)
    if not outcomes:
        return _judge_facts(claim, facts) if any(f.outcome != "passed" for f in facts) else Verdict(
            claim, Ruling.ERROR, "no Compare record among the selected tests", facts)
    shown = "; ".join(f.figures["text"] for f in facts if "text" in f.figures)
    verdict, counts = decide_many(outcomes)
    return Verdict(claim, verdict, f"{counts} ({MANY_RULE}): {shown}" if len(outcomes) > 1 else shown, facts)


def _ratio_text(claim: Claim, f: Fact) -> str:
    x = f.figures
    hi = "inf" if math.isinf(x["ci"][1]) else f"{x['ci'][1]:.3g}"
    ratio = "inf" if math.isinf(x["ratio"]) else f"{x['ratio']:.3g}"
    head = (f"{f.test.rsplit('/', 1)[-1]}: {claim.metric} B/A = {ratio} (median of {x['reps']} paired reps) "
            f"[{100 * LEVEL:.0f}% CI {x['ci'][0]:.3g}, {hi}]")
    if not claim.band:
        return f"{head}; decisive beyond {1 + MARGIN:g}x the bound"
    return f"{head}: {magnitude_text(claim, x['ratio'], x['ci'])}; decisive beyond {1 + MARGIN:g}x the band's edges"


def _factor(claim: Claim, ratio: float) -> float:
    """A ratio B/A as the statement's factor: A/B where it calls B the
    faster (supports_when below), B/A where the larger."""
    if claim.supports_when != "below":
        return ratio
    return math.inf if ratio == 0 else 1 / ratio


def magnitude_text(claim: Claim, ratio: float, ci: list[float] | tuple[float, float]) -> str:
    """The measured factor beside the claimed one and its band, in the
    statement's direction ("A/B 3.9x [3.8x, 4x] against about 2x claimed
    (1.33x to 3x)")."""
    def shown(v: float) -> str:
        return "inf" if math.isinf(v) else f"{v:.3g}x"

    which = "A/B" if claim.supports_when == "below" else "B/A"
    lo, hi = sorted((_factor(claim, ci[0]), _factor(claim, ci[1])))
    edges = sorted(_factor(claim, e) for e in claim.band or (claim.bound, claim.bound))
    return (f"measured {which} {shown(_factor(claim, ratio))} [{shown(lo)}, {shown(hi)}] against about "
            f"{claim.factor:g}x claimed ({shown(edges[0])} to {shown(edges[1])})")


def _distribution(claim: Claim, facts: list[Fact]) -> Verdict:
    counted = []
    for f in facts:
        record = next((r for r in f.records if claim.count in r), None)
        if f.outcome != "passed" or record is None:
            continue
        f.figures = {"count": record[claim.count], "processes": len(record.get("processes", [])),
                     "choices": record.get("choice_distribution", {})}
        counted.append(f)
    if not counted:
        return _judge_facts(claim, facts)
    varies = [f for f in counted if f.figures["count"] > 1]
    text = "; ".join(f"{f.test.rsplit('/', 1)[-1]}: {f.figures['count']} distinct in {f.figures['processes']} "
                     f"processes" for f in counted)
    if claim.supports_when == "varies":
        if varies:
            return Verdict(claim, Ruling.SUPPORTED, text, facts)
        return Verdict(claim, Ruling.INCONCLUSIVE, text + "; no variation seen, which does not show it cannot happen",
                       facts)
    return Verdict(claim, Ruling.REFUTED if varies else Ruling.SUPPORTED, text, facts)


def _observations(claim: Claim, manifest: list[dict[str, Any]], evidence: Evidence) -> list[dict[str, Any]]:
    out = []
    for o in claim.observe:
        for test in select_tests([], o["cases"], manifest, evidence):
            for r in evidence.cases.get(test, []):
                if o["show"] in r:
                    out.append({"test": test, "field": o["show"], "value": r[o["show"]],
                                "label": o.get("label", o["show"]), "distribution": r.get("digest_distribution"),
                                "processes": r.get("processes", [])})
    return out


# What "another platform" may differ in, as no-cross-arch's statement names
# it. A case's own settings vary two of them on one machine: its `threads=`
# and its `env.ONEDNN_MAX_CPU_ISA=` (oneDNN capped to an older ISA); the
# platforms of merged runs vary the rest.
PARTS = tuple(part.name for part in PLATFORM_PARTS)
_IN_CASE = {"threads": "thread counts", "env.ONEDNN_MAX_CPU_ISA": "CPU ISAs"}
_NEEDS = {
    "GPU architectures": "the same case on GPUs of two architectures: merge their runs with "
                         "./backendcheck report DIR1 DIR2",
    "CPU ISAs": "cases with env.ONEDNN_MAX_CPU_ISA, or runs on CPUs of two ISAs merged with "
                "./backendcheck report DIR1 DIR2",
    "thread counts": "the same case with two threads= values",
    "library versions": "two torch installs: ./backendcheck run --torch A --torch B",
}


def _variant(repro: str) -> tuple[str, dict[str, str]]:
    """(the computation: the repro without the settings of _IN_CASE, the
    settings of _IN_CASE the case chose)."""
    schedule, settings = split_repro(repro)
    chosen = {k: v for k, v in settings.items() if k in _IN_CASE}
    return " ".join([schedule] + [f"{k}={v}" for k, v in settings.items() if k not in _IN_CASE]), chosen


def _part_between(a: tuple[str, dict[str, str]], b: tuple[str, dict[str, str]], evidence: Evidence) -> str:
    """The one part two sides (platform, the case's own settings) differ in,
    or "several parts at once"."""
    parts = set()
    if a[0] != b[0]:
        parts = differing_parts(evidence.platform_env.get(a[0], {}), evidence.platform_env.get(b[0], {}))
    parts |= {part for key, part in _IN_CASE.items() if a[1].get(key, "") != b[1].get(key, "")}
    return parts.pop() if len(parts) == 1 else "several parts at once"


def _side_label(platform: str, chosen: dict[str, str]) -> str:
    return " ".join([platform] + [f"{k.removeprefix('env.')}={v or 'default'}" for k, v in sorted(chosen.items())])


def _across(claim: Claim, manifest: list[dict[str, Any]], evidence: Evidence) -> Verdict:
    """Groups trusted, single-digest records of the selected cases by the
    computation and compares the digests of its sides: for devices, the
    problem on each device; for platforms, the case on each platform and
    under each of its own thread counts and ISA caps, every pair of sides
    counted under the part of the claim (PARTS) they differ in."""
    tests = select_tests(claim.tests, claim.cases, manifest, evidence)
    groups: dict[str, dict[str, set[str]]] = {}
    sides: dict[str, tuple[str, dict[str, str]]] = {}
    where: dict[str, dict[str, str]] = {}
    for test in tests:
        for r in evidence.cases.get(test, []):
            digest = r.get("digest")
            if not digest or r.get("distinct_digests", 1) != 1 or r.get("skip_reason") or \
                    any(c.get("outcome") == "mistrusted" for c in r.get("checks", [])):
                continue
            repro = str(r.get("repro", ""))
            if claim.across == "device":
                key, side = split_repro(repro)[0], str(r.get("device", ""))
            else:
                key, chosen = _variant(repro)
                side = _side_label(str(r.get("platform", "")), chosen)
                sides[side] = (str(r.get("platform", "")), chosen)
            groups.setdefault(key, {}).setdefault(side, set()).add(str(digest))
            where.setdefault(key, {})[side] = test
    spanning = {k: g for k, g in groups.items() if len(g) > 1}
    d = _derived(manifest, evidence)
    facts = [fact_for(t, d.by_test, evidence, conflicts=d.conflicts) for t in tests if t in evidence.cases]
    for f in facts:
        f.figures = {"groups": {k: {side: sorted(ds) for side, ds in g.items()}
                                for k, g in spanning.items() if f.test in where[k].values()}}
    if claim.across == "platform":
        return _across_parts(claim, spanning, sides, evidence, facts)
    if not spanning:
        seen = sorted({s for g in groups.values() for s in g})
        return Verdict(claim, Ruling.NOT_EVALUATED, "needs the same problem on the CPU and a GPU (this run has: "
                       + (", ".join(seen) or "none") + ")", facts)
    # Different bits: no digest common to every side (a side may hold several,
    # say the CPU on one and two threads).
    differ = {k: g for k, g in spanning.items() if not set.intersection(*g.values())}
    if differ:
        key, g = next(iter(sorted(differ.items())))
        shown = "; ".join(f"{side}: {', '.join(sorted(ds))}" for side, ds in sorted(g.items()))
        return Verdict(claim, Ruling.SUPPORTED, f"{len(differ)} of {len(spanning)} computation(s) seen on several "
                                           f"devices give different bits, e.g. {key}: {shown}", facts)
    return Verdict(claim, Ruling.INCONCLUSIVE, f"all {len(spanning)} computation(s) seen on several devices give "
                                          "equal bits here, which does not show they cannot differ", facts)


def _across_parts(claim: Claim, spanning: dict[str, dict[str, set[str]]],
                  sides: dict[str, tuple[str, dict[str, str]]], evidence: Evidence, facts: list[Fact]) -> Verdict:
    """The platform rule, part by part: for each part, how many computations
    were seen on two sides differing in that part alone, how many of them gave
    different bits (no digest in common), and one example; the parts no pair
    of sides tested are named with what they need."""
    compared: dict[str, set[str]] = {}
    differ: dict[str, dict[str, str]] = {}  # part -> computation -> example
    for key, g in sorted(spanning.items()):
        names = sorted(g)
        for i, x in enumerate(names):
            for y in names[i + 1:]:
                part = _part_between(sides[x], sides[y], evidence)
                compared.setdefault(part, set()).add(key)
                if not g[x] & g[y]:
                    differ.setdefault(part, {}).setdefault(
                        key, f"{key}: {x}: {', '.join(sorted(g[x]))}; {y}: {', '.join(sorted(g[y]))}")
    order = [p for p in PARTS + ("machines", "several parts at once") if p in compared]
    parts = {p: {"compared": len(compared[p]), "differ": len(differ.get(p, {})),
                 "example": next(iter(differ[p].values()), "") if p in differ else ""} for p in order}
    untested = {p: _NEEDS[p] for p in PARTS if p not in compared}
    for f in facts:
        f.figures["parts"] = parts
        f.figures["untested"] = untested
    if not compared:
        return Verdict(claim, Ruling.NOT_EVALUATED, "no computation was seen on two sides; "
                       + "; ".join(f"{p} need {need}" for p, need in untested.items()), facts)
    # Pairs differing in several parts at once do not say which part made the
    # difference: named when no single part was compared, or when they alone
    # saw different bits (which still shows that bits may differ).
    named = [p for p in order if p != "several parts at once" or p in differ or len(order) == 1]
    counts = ", ".join(f"{p} ({parts[p]['differ']} of {parts[p]['compared']} computation(s) differ)" for p in named)
    rest = ("; not tested by this evidence: " + "; ".join(f"{p} (needs {need})" for p, need in untested.items())
            if untested else "")
    example = next((parts[p]["example"] for p in named if parts[p]["example"]), "")
    if example:
        return Verdict(claim, Ruling.SUPPORTED, f"different bits across {counts}; e.g. {example}{rest}", facts)
    return Verdict(claim, Ruling.INCONCLUSIVE, f"equal bits across {counts}, which does not show they cannot "
                                          f"differ{rest}", facts)




def judge(claim: Claim, manifest: list[dict[str, Any]], evidence: Evidence, partial: bool = False) -> Verdict:
    """The claim's verdict from evidence of the system it is about. Evidence
    of another system (the model) never decides: the claim is then not
    evaluated, with what that evidence predicts; a claim's prediction block
    is judged the same way and shown beside the deciding verdict."""
    verdict = _judge_block(claim, manifest, evidence, partial)
    if claim.rule != "out-of-scope" and not claim.decides():
        predicted = verdict
        verdict = Verdict(claim, Ruling.NOT_EVALUATED,
                          f"needs {claim.about} evidence; the {claim.system} predicts {predicted.verdict}: "
                          f"{predicted.reason}", predicted.facts, predicted.observations, prediction=predicted)
    else:
        verdict.decided_by = claim.system if verdict.verdict not in (Ruling.NOT_EVALUATED, Ruling.ERROR) else ""
        if verdict.decided_by == "any":
            # Evidence of several systems: name those whose records decided.
            verdict.decided_by = ", ".join(sorted({str(r["system"]) for f in verdict.facts
                                                   if f.outcome in ("passed", "failed") for r in f.records
                                                   if r.get("system")})) or "any"
        if claim.prediction is not None:
            verdict.prediction = _judge_block(claim.prediction, manifest, evidence, partial)
    return verdict


# What a reader is told when this run ran none of a claim's tests.
NONE_RAN = "this run ran none of the tests that decide it"
NEEDS_CUDA = "needs a CUDA device"


def none_ran(claim: Claim, evidence: Evidence) -> str:
    """Why a claim has no fact here: a CUDA device, where the claim is about
    one and no platform of the evidence has one; else what the run left out."""
    devices = str(claim.scope.get("device", "any"))
    if "cuda" in devices and "cpu" not in devices and not any(env.get("gpu") for env in evidence.platform_env.values()):
        return f"{NEEDS_CUDA}: this machine has none, and {NONE_RAN}"
    return NONE_RAN


def _judge_block(claim: Claim, manifest: list[dict[str, Any]], evidence: Evidence, partial: bool) -> Verdict:
    if claim.rule == "out-of-scope":
        return Verdict(claim, Ruling.NOT_EVALUATED, f"out of scope: {claim.reason}", [])
    if claim.rule == "across":
        return _across(claim, manifest, evidence)
    facts = _facts(claim, manifest, evidence)
    if not facts and partial:
        return Verdict(claim, Ruling.NOT_EVALUATED, none_ran(claim, evidence), [])
    if not facts:
        return Verdict(claim, Ruling.ERROR, "the catalog's selectors match no test: fix catalog/claims.toml", [])
    search_facts = [f for f in facts if f.test in search_tests(claim.search)] if claim.search else []
    judged = [f for f in facts if f not in search_facts]
    if claim.rule == "ratio":
        verdict = _ratio(claim, judged)
    elif claim.rule == "invariance":
        verdict = _invariance(claim, judged)
    elif claim.rule == "distribution":
        verdict = _distribution(claim, judged)
    elif claim.search and not judged:
        # A claim its search alone decides: what the search finds is the verdict.
        verdict = Verdict(claim, Ruling.SUPPORTED if claim.polarity == "supports" else Ruling.REFUTED, "", [])
    else:
        verdict = _judge_facts(claim, _unsearched(claim, judged))
    if claim.search:
        verdict = _searched(claim, verdict, search_facts)
        verdict.facts = facts
    verdict.observations = _observations(claim, manifest, evidence)
    return verdict


def judge_platforms(claim: Claim, manifest: list[dict[str, Any]], evidence: Evidence,
                    partial: bool = False) -> Verdict:
    """The claim on each platform's evidence, and overall the gravest."""
    if claim.rule in ("across", "out-of-scope") or len(evidence.platforms) < 1:
        v = judge(claim, manifest, evidence, partial)
        v.platforms = {p: v for p in evidence.platforms}
        return v
    per = {p: judge(claim, manifest, ev, partial) for p, ev in evidence.platforms.items()}
    worst = min(per.values(), key=lambda v: Ruling(v.verdict).gravity)
    if len(per) == 1:
        worst.platforms = per
        return worst
    reason = "; ".join(f"{p}: {v.verdict}" for p, v in per.items()) + f". {worst.reason}"
    return Verdict(claim, worst.verdict, reason, worst.facts, worst.observations, per, worst.decided_by,
                   worst.prediction, worst.withheld, worst.snippet)


def judge_all(claims: list[Claim], manifest: list[dict[str, Any]], evidence: Evidence,
              partial: bool = False) -> list[Verdict]:
    """Every claim's verdict; what all of them read of the evidence is
    computed once (_derived), not once per claim and platform."""
    global _JUDGING
    outer, _JUDGING = _JUDGING, ({} if _JUDGING is None else _JUDGING)
    try:
        return [judge_platforms(c, manifest, evidence, partial) for c in claims]
    finally:
        _JUDGING = outer


def refuted_guarantees(verdicts: list[Verdict]) -> list[Verdict]:
    return [v for v in verdicts if v.claim.kind == "guarantee" and v.verdict == Ruling.REFUTED]
