"""One reason line per verdict and platform, fact first: what was seen, in
the claim's terms, with the figure that decided it ("addmm, linear, mm:
85.1–91.1% of elements differ across the thread count ..."; "needs a CUDA
device: ..."; "'medium' changed the bits of a CPU fp32 matmul ...").

It is generated from the evidence, never written per claim: the words of the
fact that decided (a check's detail, a failing test's message), the cells of
the invariance grid that differ, the measured ratios, the distinct counts, or
the reason a claim was not evaluated. Counts follow the fact; test names,
commands and the interpreter's path are left to the evidence (the page's fold
and its environment section), so a line never opens with them. Like pytest's
short test summary, a line is one line, its words the fact's.

`reading(v)` gives the line and what it names: the items the line leads
with, that decided the verdict (for a refutation, what differed from the
claim), which the report's browser check finds on the page.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from dataclasses import replace

from .catalog import search_tests
from .invariance import SEARCH_WHERE, VARIANT_WORDS, level_cells
from .reasons import needs
from .ruling import Ruling
from .verdicts import Fact, Verdict, level_name, recorded_grids
from .wording import INTERPRETER, METRICS, plain

# The probes' records frame what they say with the interpreter's path
# ("PyTorch 2.15.0 (/…/bin/python): ...", "/usr/bin/python3: needs a CUDA
# device: ..."), which the environment section names once per platform.
_FRAMES = (re.compile(rf"^PyTorch \S+ \({INTERPRETER}\): "), re.compile(rf"^{INTERPRETER}: "),
           re.compile(rf" ?\({INTERPRETER}\)"), re.compile(r" \(probe \w+\)"),
           re.compile(r"^not evaluated: "), re.compile(r": not evaluated$"))
TIMES = "×"


@dataclass
class Reading:
    line: str
    named: list[str] = field(default_factory=list)  # what the line leads with, that decided the verdict


def own_words(text: str) -> str:
    """The first line of what a record says, without the harness's framing
    of it: the interpreter's path, the probe's name, a closing "not
    evaluated" (the verdict says it)."""
    said = (text.strip().splitlines() or [""])[0].strip()
    for frame in _FRAMES:
        said = frame.sub("", said)
    return said.strip()


def cut(text: str, chars: int) -> str:
    """`text` cut at a word to at most `chars` characters, with an ellipsis."""
    if len(text) <= chars:
        return text
    head = text[:chars].rsplit(" ", 1)[0] if " " in text[:chars] else text[:chars]
    return head.rstrip(" ,;:") + "…"


def gravest(v: Verdict) -> Verdict:
    """The platform's verdict an overall one stands for (the first gravest,
    as judge_platforms chose it); a platform's verdict itself."""
    if not v.platforms or v in v.platforms.values():
        return v
    return min(v.platforms.values(), key=lambda pv: Ruling(pv.verdict).gravity)


def line(v: Verdict) -> str:
    return reading(v).line


_SENTENCE = re.compile(r"((?<=[.;])\s+)")


def once(text: str) -> str:
    """`text` with each of its sentences said once: a later sentence the
    same as an earlier one (a library's message repeated for each backend
    that raised it) is left out."""
    pieces, kept, seen = _SENTENCE.split(text), [], set()
    for i in range(0, len(pieces), 2):
        sentence = pieces[i].rstrip(".;")
        if len(sentence) >= 24 and sentence in seen:
            continue
        seen.add(sentence)
        kept += ([pieces[i - 1]] if kept else []) + [pieces[i]]
    return "".join(kept)


def reading(v: Verdict) -> Reading:
    """The reason line of a verdict (of the platform an overall verdict
    stands for) and what it names."""
    said = _reading(gravest(v))
    return Reading(plain(once(said.line)), [plain(n) for n in said.named])


def _reading(v: Verdict) -> Reading:
    if v.claim.search and v.verdict in (Ruling.SUPPORTED, Ruling.REFUTED):
        return _searched(v)
    return _judged(v)


def _searched(v: Verdict) -> Reading:
    """A claim judged with its search: the shrunk counter-examples first,
    where it found one; else the rule's own line, then what the search
    covered."""
    level, _, variant = v.claim.search.partition(" | ")
    found = re.search(r"the search found (\d+) counter-examples?: (.*?)(?:; beside it, |$)", v.reason)
    if v.snippet and found:
        first, count = found.group(2).split("; ")[0], int(found.group(1))
        more = f" and {count - 1} more" if count > 1 else ""
        flags = f", {VARIANT_WORDS[variant]}" if variant != "defaults" else ""
        return Reading(f"{first}{more}: the search's counter-example{'s' * (count > 1)} {SEARCH_WHERE[level]}{flags}",
                       [first])
    rest = replace(v, facts=[f for f in v.facts if f.test not in search_tests(v.claim.search)])
    said = _judged(rest) if rest.facts else Reading(own_words(v.reason), [own_words(v.reason)])
    covered = v.reason.split("; no counter-example in ", 1)
    if len(covered) == 2:
        return Reading(f"{said.line}; the search found no counter-example in {covered[1]}", said.named)
    return said


# The systems a claim is about, in a reader's words; those that need a GPU.
SYSTEM_WORDS = {"pytorch": "PyTorch", "cudnn": "cuDNN", "cublas": "cuBLAS", "cuda_native": "CUDA's own kernels",
                "onednn": "oneDNN", "blas": "the BLAS", "reference": "the reference kernels"}
GPU_SYSTEMS = ("cudnn", "cublas", "cuda_native")


def needs_evidence(about: str, predicted: str) -> str:
    """The line of a claim that only the harness's prediction speaks to."""
    who = SYSTEM_WORDS.get(about, about)
    if about in GPU_SYSTEMS:
        return f"needs a CUDA device: {who} itself decides it (the harness predicts {predicted})"
    return f"needs {who}'s own evidence, which this run did not produce (the harness predicts {predicted})"


def _judged(v: Verdict) -> Reading:
    claim = v.claim
    if not claim.decides() and v.prediction is not None:  # only the model's evidence ran
        if v.prediction.verdict == Ruling.NOT_EVALUATED:  # and it too needs what this run lacks
            return _not_evaluated(v.prediction) if v.prediction.facts else \
                Reading(own_words(v.prediction.reason), [re.split(r"; |: ", own_words(v.prediction.reason), 1)[0]])
        said = needs_evidence(claim.about, v.prediction.verdict)
        return Reading(said, [said])
    if claim.rule in ("out-of-scope", "across") or not v.facts:
        said = own_words(v.reason)
        return Reading(said, [re.split(r"; |: ", said, maxsplit=1)[0]])
    if v.verdict == Ruling.NOT_EVALUATED:
        return _not_evaluated(v)
    if v.verdict == Ruling.ERROR:
        crashed = [f for f in v.facts if f.outcome in ("crashed", "timed out", "error")]
        said = _words(crashed[0]) if crashed else own_words(v.reason)
        return Reading(f"could not be observed: {said}" if crashed else said, [said])
    for rule, read in (("invariance", _invariance), ("ratio", _ratio), ("distribution", _distribution)):
        if claim.rule == rule and (found := read(v)) is not None:
            return found
    return _facts(v)


def _not_evaluated(v: Verdict) -> Reading:
    """What would evaluate it, then why not here: the first clause of the
    skipped tests' reasons, each need and each clause said once ("needs a
    CUDA device: cudnn unavailable: ...; PyTorch 2.15.0 sees none")."""
    busy = [float(f.figures["others_cpu"]) for f in v.facts if "others_cpu" in f.figures]
    if v.withheld and busy:  # the load it was timed under, then how many comparisons it held back
        timed = sum(bool({"others_cpu", "ratio", "note"} & set(f.figures)) for f in v.facts)
        said = f"timed while other processes took up to {max(busy):.0%} of the machine's CPU time"
        return Reading(f"{said} ({len(busy)} of {timed} comparisons): rerun on a quiet machine", [said])
    reasons = [message(f) for f in v.facts if f.outcome in ("skipped", "not run") and f.message.strip()]
    by_need: dict[str, list[str]] = {}
    for reason in dict.fromkeys(reasons or [own_words(v.reason)]):
        need, rest = (reason.split(": ", 1) if reason.startswith("needs ") and ": " in reason
                      else (needs(reason), reason))
        # Why not here is its first clause; what the probe saw all the same
        # ("...; here: the matmul ran ...") is the evidence's, in the fold.
        rest = rest.split("; ", 1)[0]
        if rest not in by_need.setdefault(need, []):
            by_need[need].append(rest)
    parts = [f"{need}: " * bool(need) + "; ".join(rests[:3]) + (f"; {len(rests) - 3} more" if len(rests) > 3 else "")
             for need, rests in by_need.items()]
    said = "; ".join(parts)
    return Reading(said, [next(iter(by_need)) or said.split(";")[0]])


def message(f: Fact) -> str:
    """A test's message in its own words, without the test's name it may
    open with ("Cpu/Determinism.Bitwise/Fwd_Small failed: ...")."""
    said = own_words(f.message)
    return re.sub(rf"^(?:{re.escape(f.test)}|{re.escape(f.test.rsplit('/', 1)[-1])})(?: failed)?: ", "", said)


def _check_words(f: Fact, check: str) -> str:
    """A held fact's own words: its check's detail (the claim's check, else
    the first that says something), else the test's message."""
    details = [str(c.get("detail", "")) for r in f.records for c in r.get("checks", [])
               if str(c.get("detail", "")).strip() and (not check or c.get("name") == check)]
    return own_words(details[0]) if details else message(f)


def _words(f: Fact, check: str = "") -> str:
    """What a fact says, in its own words; a test that recorded none, by
    its name read as the sentence it is (DefaultsMirrorPyTorch: "defaults
    mirror PyTorch")."""
    if f.outcome == "passed":
        said = _check_words(f, check)
    else:  # the check that did not hold says what it saw; a test's assertion, what it expected
        failed = [str(c.get("detail", "")) for r in f.records for c in r.get("checks", [])
                  if c.get("outcome") == "failed" and (not check or c.get("name") == check)]
        said = own_words(failed[0]) if failed and f.outcome == "failed" else message(f)
    if said:
        return said
    name = f.test.rsplit("/", 1)[-1].rsplit(".", 1)[-1]
    words = [w.replace("PyTorchs", "PyTorch's") if w.startswith("PyTorch") or w.isupper() else w.lower()
             for w in re.findall(r"PyTorchs?|[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+", name)]
    return f"{'held' if f.outcome == 'passed' else 'did not hold'}: {' '.join(words)}"


# How a count of tests says what they did to the claim: (one test, several).
_DID = {Ruling.REFUTED: ("refutes the claim", "refute the claim"),
        Ruling.SUPPORTED: ("supports the claim", "support the claim")}


def _tally(decided: int, facts: list[Fact], verdict: str) -> str:
    """How many tests the fact stands for, after it."""
    if len(facts) < 2:
        return ""
    skipped = sum(f.outcome in ("skipped", "not run") for f in facts)
    did = _DID.get(Ruling(verdict), ("is alike", "are alike"))[decided != 1]
    return f", {decided} of {len(facts)} tests {did}" + (f" ({skipped} not evaluated here)" if skipped else "")


def _facts(v: Verdict) -> Reading:
    """The fact rule: the words of the first fact that decided, then how
    many decided alike."""
    facts = v.facts
    failed = [f for f in facts if f.outcome == "failed" and not f.mistrusted]
    clean = [f for f in facts if f.outcome == "passed" and not f.mistrusted]
    mistrusted = [f for f in facts if f.outcome in ("passed", "failed") and f.mistrusted]
    if not failed and not clean and mistrusted:
        said = own_words(mistrusted[0].mistrust)
        return Reading(f"mistrusted: {said}{_tally(len(mistrusted), facts, v.verdict)}", [said])
    decided = failed or clean or facts
    said = _words(decided[0], v.claim.check)
    return Reading(said + _tally(len(decided), facts, v.verdict), [said])


def _invariance(v: Verdict) -> Reading | None:
    """The operations that do not hold their bits at the claim's level, the
    share of their elements that differ; or that all held."""
    claim = v.claim
    grids = recorded_grids(v.facts)
    if not grids:
        return None
    cells = {op: c for g in grids for op, c in level_cells(g, claim.level, claim.variant).items()}
    judged = [op for op, c in cells.items() if c["state"] in ("invariant", "differs", "untrusted")]
    differ = sorted((op for op in judged if cells[op]["state"] == "differs"),
                    key=lambda op: -(cells[op].get("fraction") or 0))
    where = f"across the {level_name(claim, grids)}, {VARIANT_WORDS[claim.variant]}"
    if differ:
        shares = sorted(100 * cells[op]["fraction"] for op in differ if cells[op].get("fraction") is not None)
        share = (f"{shares[0]:.3g}%" if len({f'{x:.3g}' for x in shares}) == 1 else
                 f"{shares[0]:.3g}–{shares[-1]:.3g}%") if shares else "some"
        return Reading(f"{', '.join(differ)}: {share} of elements differ {where}, {len(differ)} of {len(judged)} "
                       f"operations", differ)
    if v.verdict in (Ruling.SUPPORTED, Ruling.REFUTED) and judged:
        said = f"all {len(judged)} operations hold their bits {where}"
        return Reading(f"{said} (the level's control varied)", [said])
    return None  # untrusted or nothing judged: the verdict's reason says which


def _ratio(v: Verdict) -> Reading | None:
    """The timed comparisons: the setting, the metric's ratio to the other
    side's (median of paired reps, the range over comparisons), and how many
    were decisive each way."""
    ran = [f for f in v.facts if "ratio" in f.figures]
    if not ran:
        return None
    ratios = sorted(float(f.figures["ratio"]) for f in ran)
    span = f"{ratios[0]:.3g}" if f"{ratios[0]:.3g}" == f"{ratios[-1]:.3g}" else f"{ratios[0]:.3g}–{ratios[-1]:.3g}"
    versus = ", ".join(f"{k}={val}" for k, val in (ran[0].figures.get("versus") or {}).items())
    noun = METRICS.get(v.claim.metric, ("", "", v.claim.metric.replace("_", " ")))[2]
    said = (f"with {versus}: {span}{TIMES} the {noun} without it" if versus else
            f"{span}{TIMES} the {noun} of the other side")
    outcomes = [f.figures.get("outcome", "") for f in ran]
    counts = [(outcomes.count(Ruling.SUPPORTED), "decisively for the claim"),
              (outcomes.count(Ruling.REFUTED), "against"), (outcomes.count(Ruling.INCONCLUSIVE), "within noise")]
    shown = ", ".join(f"{n} {what}" for n, what in counts if n)
    return Reading(f"{said} (median of paired runs); {len(ran)} shape{'s' if len(ran) > 1 else ''}: {shown}",
                   [said])


def _distribution(v: Verdict) -> Reading | None:
    """Fresh processes: how many distinct results they gave."""
    counted = [f for f in v.facts if "count" in f.figures]
    if not counted:
        return None
    noun = v.claim.count.removeprefix("distinct_").removesuffix("s")
    said = "; ".join(dict.fromkeys(f"{f.figures['count']} distinct {noun}{'s' if f.figures['count'] != 1 else ''} "
                                   f"in {f.figures['processes']} fresh processes" for f in counted[:3]))
    first = said.split(";")[0]
    if len(counted) > 3:
        said += f", and {len(counted) - 3} more tests"
    if v.verdict == Ruling.INCONCLUSIVE:
        said += "; no variation seen, which does not show it cannot happen"
    return Reading(said, [first])


def bearing(f: Fact, claim_rule: str, polarity: str) -> str:
    """What one test's fact says of the claim, in the words of the verdict
    it leads to: a fact that did not hold refutes a claim it would support,
    whatever the test's own outcome (a probe passes once it has recorded its
    finding), and "failed" stays the word of a test that failed."""
    if f.mistrusted:
        return f"mistrusted: {own_words(f.mistrust)}"
    if f.outcome in ("skipped", "not run"):
        return ""  # the test's outcome says it
    if f.outcome not in ("passed", "failed"):
        return "not observed: an error of the harness"
    if claim_rule == "ratio" and f.figures.get("outcome"):
        return {Ruling.SUPPORTED: "decisively for the claim", Ruling.REFUTED: "decisively against the claim"}.get(
            f.figures["outcome"], "within noise")
    if claim_rule != "fact":
        return ""
    holds = (f.outcome == "passed") == (polarity == "supports")
    return "supports the claim" if holds else "refutes the claim"
