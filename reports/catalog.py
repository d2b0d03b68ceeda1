"""Loading the claim catalog (catalog/claims.toml), with FILE:LINE errors."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from inputs.engines import MODEL, systems
from inputs import workloads as workload_files
from inputs.errors import SpecError, load_toml
from inputs.locate import LineIndex

from .statistics import ABOUT_SPREAD, band_of

KINDS = ("guarantee", "folklore", "advice", "out-of-scope")
WORKLOAD_KIND = "workload"  # a team's own step, declared in its file (inputs/workloads.py)
RULES = ("fact", "ratio", "distribution", "across", "invariance", "out-of-scope")
# invariance: the levels a claim can name, and the flag variants of the grid
# (probes/invariance.py).
LEVELS = ("run", "threads", "batch", "process", "capability", "isa")
VARIANTS = ("defaults", "mkldnn off", "deterministic")
ACROSS = ("device", "platform")
METRICS = ("total_ns", "steady_ns", "search_ns", "workspace_bytes", "rss_peak_bytes")
FIELDS = ("distinct_choices", "distinct_digests")
MIN_REPS = 9
POLARITIES = ("supports", "refutes")
# What a claim is about, and which system an evidence block's tests show:
# the systems of backends/engines.def ("model" is the harness's own
# re-implementation of PyTorch's dispatch and cuDNN selection, which no claim
# is about), or any.
SYSTEMS = systems() + ("any",)
ABOUT = tuple(s for s in SYSTEMS if s != MODEL)
# The search for counter-examples (probes/counterexamples.py): its tests
# (the CPU's and the CUDA device's) and the levels each searches (a claim's
# `search`).
SEARCH_TEST = "TorchPython.CounterExampleSearch"
CUDA_SEARCH_TEST = "TorchPython.CudaCounterExampleSearch"
SEARCH_LEVELS = {"threads": (SEARCH_TEST,), "run": (SEARCH_TEST,), "cudnn": (SEARCH_TEST,),
                 "batch": (SEARCH_TEST, CUDA_SEARCH_TEST), "cuda-run": (CUDA_SEARCH_TEST,),
                 "cuda-streams": (CUDA_SEARCH_TEST,)}


def search_tests(search: str) -> tuple[str, ...]:
    """The tests that record a claim's search ("LEVEL | VARIANT"): the batch
    level is searched on the CPU and on a CUDA device, each by its own."""
    return SEARCH_LEVELS.get(search.partition(" | ")[0], (SEARCH_TEST,))


CLAIM_KEYS = {"id", "statement", "source", "kind", "scope", "about", "evidence", "prediction", "card"}
CARD_GOALS = ("reproducibility", "speed", "no effect", "precision")
_ID = re.compile(r"^[a-z0-9][a-z0-9-]*$")
# A magnitude as a statement says it: "about twice", "about three times",
# "about 3x", "about 1.5×".
_NUMBERS = {"two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10}
_ABOUT = re.compile(r"\babout\s+(?:(twice)|(thrice)|(\d+(?:\.\d+)?|" + "|".join(_NUMBERS) +
                    r")\s*(?:×|x\b|-?fold\b|\s+times\b))", re.IGNORECASE)


def stated_factor(statement: str) -> float:
    """The factor a statement claims with "about" ("about twice as slow":
    2), or 0 where it states none."""
    m = _ABOUT.search(statement)
    if not m:
        return 0.0
    if m.group(1) or m.group(2):
        return 2.0 if m.group(1) else 3.0
    word = m.group(3).lower()
    return float(_NUMBERS.get(word, 0) or word)


@dataclass
class Claim:
    id: str
    statement: str
    source: str
    kind: str
    scope: dict[str, str]
    rule: str
    polarity: str = "supports"
    tests: list[str] = field(default_factory=list)
    cases: dict[str, Any] = field(default_factory=dict)
    reason: str = ""
    check: str = ""            # fact: judge this check of the case records, not the whole test
    searched: str = ""         # fact: the observation key of the search a supporting fact must carry
    search: str = ""           # "LEVEL | VARIANT" of the search for counter-examples (CounterExampleSearch)
    metric: str = ""           # ratio: which measurement of a Compare
    bound: float = 1.0         # ratio: the bound median(B)/median(A) is compared with
    supports_when: str = ""    # ratio: "below" or "above"; distribution: "varies" or "constant"
    factor: float = 0.0        # ratio: the factor the statement claims ("about twice": 2), 0 where none
    band: tuple[float, float] | None = None  # ratio: the B/A that "about factor x" allows, in place of bound
    count: str = ""            # distribution: which count of a CrossProcess record
    observe: list[dict[str, Any]] = field(default_factory=list)  # context shown, never judged
    across: str = ""           # across: compare digests of one computation across devices or platforms
    level: str = ""            # invariance: the level of the grid (batch, threads, ...)
    variant: str = ""          # invariance: the flags of the grid's rows (defaults, deterministic, ...)
    about: str = "any"         # the system the claim is about
    system: str = ""           # the system the evidence block's tests show
    prediction: Claim | None = None  # the model's evidence, shown beside the deciding one, never deciding
    card: dict[str, str] = field(default_factory=dict)  # goal, setting, cost: its line on the "What to set" card

    def decides(self) -> bool:
        """Whether this evidence may decide the claim: only evidence from the
        system the claim is about does (any system, for a claim about any)."""
        return self.rule == "out-of-scope" or self.about == "any" or self.system == self.about


def load_claims(path: Path, workloads: list[Path] | None = None) -> list[Claim]:
    """The catalog's claims, then a team's workloads (the files named, else
    those BACKENDCHECK_CLAIMS lists, ':'-separated), each a claim that its
    ctest test Workload.<id> decides (probes/workloads.py)."""
    claims = load_catalog(path)
    if workloads is None:
        workloads = [Path(p) for p in os.environ.get(workload_files.ENVIRONMENT, "").split(":") if p]
    ids = {c.id for c in claims}
    for w in workload_files.load_all(workloads):
        if w.id in ids:
            raise SpecError(str(w.file), w.line, f"id '{w.id}' is a claim of the catalog ({path}) already")
        claims.append(Claim(id=w.id, statement=w.statement, source=f"{w.file}:{w.line}", kind=WORKLOAD_KIND,
                            scope={"device": "cpu", "levels": ", ".join(w.hold)}, rule="fact",
                            tests=[f"Workload.{w.id}"], about="pytorch", system="pytorch"))
    return claims


def load_catalog(path: Path) -> list[Claim]:
    text, doc = load_toml(path, "catalog")
    index = LineIndex(text)

    def error(where: tuple[str | int, ...], message: str) -> SpecError:
        return SpecError(str(path), index.line(where), message)

    raw_claims = doc.get("claim")
    if not isinstance(raw_claims, list) or not raw_claims:
        raise error(("claim",), "the catalog defines no [[claim]]")
    claims: list[Claim] = []
    seen: set[str] = set()
    for i, raw in enumerate(raw_claims):
        here = ("claim", i)
        for key in raw:
            if key not in CLAIM_KEYS:
                raise error(here + (key,), f"unknown claim key '{key}'")
        for key in ("id", "statement", "source", "kind", "evidence"):
            if key not in raw:
                raise error(here, f"claim is missing '{key}'")
        cid = raw["id"]
        if not isinstance(cid, str) or not _ID.match(cid):
            raise error(here + ("id",), "claim id must be lowercase letters, digits and '-'")
        if cid in seen:
            raise error(here + ("id",), f"duplicate claim id '{cid}'")
        seen.add(cid)
        if raw["kind"] not in KINDS:
            raise error(here + ("kind",), f"unknown kind '{raw['kind']}' (known: {', '.join(KINDS)})")
        if raw.get("about") not in ABOUT:
            raise error(here + ("about",), f"about must be one of {', '.join(ABOUT)}: the system the claim is about")
        claim = _evidence(raw["evidence"], here + ("evidence",), error,
                          Claim(id=cid, statement=raw["statement"], source=raw["source"], kind=raw["kind"],
                                scope=dict(raw.get("scope", {})), rule="", about=raw["about"]))
        if "prediction" in raw:
            claim.prediction = _evidence(raw["prediction"], here + ("prediction",), error,
                                         Claim(id=cid, statement=raw["statement"], source=raw["source"],
                                               kind=raw["kind"], scope=dict(raw.get("scope", {})), rule="",
                                               about=raw["about"]))
            if claim.prediction.decides() or claim.prediction.rule == "out-of-scope":
                raise error(here + ("prediction", "system"),
                            f"a prediction is evidence from a system other than '{claim.about}', the one the claim "
                            "is about")
        if "card" in raw:
            claim.card = _card(raw["card"], here + ("card",), error, claim)
        claims.append(claim)
    ids = {c.id: c for c in claims}
    for i, c in enumerate(claims):
        cost = c.card.get("cost")
        if cost and (cost not in ids or ids[cost].rule != "ratio"):
            raise error(("claim", i, "card", "cost"), f"card cost must name a ratio claim of this catalog, not '{cost}'")
        for name in filter(None, (x.strip() for x in c.card.get("error", "").split(","))):
            if name not in ids or ids[name].rule != "fact":
                raise error(("claim", i, "card", "error"), f"card error must name fact claims of this catalog (their "
                                                           f"probes record the error), not '{name}'")
    return claims


def _card(card: Any, here: tuple[str | int, ...], error: Any, claim: Claim) -> dict[str, str]:
    """The claim's line on the report's "What to set on this stack" card."""
    if not isinstance(card, dict):
        raise error(here, "card must be a table { goal, setting, cost, error }")
    for key in card:
        if key not in ("goal", "setting", "cost", "error"):
            raise error(here + (key,), f"unknown card key '{key}' (known: goal, setting, cost, error)")
    if card.get("goal") not in CARD_GOALS:
        raise error(here + ("goal",), f"card goal must be one of {', '.join(CARD_GOALS)}")
    if not isinstance(card.get("setting"), str) or not card["setting"].strip():
        raise error(here + ("setting",), "card setting must name what to set, as a user writes it")
    if card["goal"] == "precision" and claim.rule != "fact":
        raise error(here + ("goal",), "card goal precision needs a fact claim whose probe records its runs' errors")
    if card["goal"] == "speed" and claim.rule != "ratio":
        raise error(here + ("goal",), "card goal speed needs a ratio claim: its gain is the claim's own comparisons")
    if "cost" in card and card["goal"] != "reproducibility":
        raise error(here + ("cost",), "card cost: only a reproducibility card names a cost claim")
    if "error" in card and card["goal"] != "speed":
        raise error(here + ("error",), "card error: only a speed card names the claims that measure its error")
    return {k: str(v) for k, v in card.items()}


def _evidence(ev: Any, here: tuple[str | int, ...], error: Any, claim: Claim) -> Claim:
    """An evidence block (the deciding one, or a prediction) into `claim`."""
    if not isinstance(ev, dict):
        raise error(here, "an evidence block must be a table")
    rule = ev.get("rule")
    if rule not in RULES:
        raise error(here + ("rule",), f"unknown rule {rule!r} (known: {', '.join(RULES)})")
    claim.rule = rule
    if rule == "out-of-scope":
        claim.reason = ev.get("reason", "")
        if not claim.reason:
            raise error(here, "an out-of-scope claim needs a reason")
        return claim
    claim.system = ev.get("system", "")
    if claim.system not in SYSTEMS:
        raise error(here + ("system",), f"system must be one of {', '.join(SYSTEMS)}: whose behaviour the "
                                        "selected tests show")
    claim.polarity = ev.get("polarity", "supports")
    if claim.polarity not in POLARITIES:
        raise error(here + ("polarity",), f"polarity must be one of {', '.join(POLARITIES)}")
    claim.tests = list(ev.get("tests", []))
    claim.cases = dict(ev.get("cases", {}))
    claim.check = str(ev.get("check", ""))
    claim.searched = str(ev.get("searched", ""))
    claim.search = str(ev.get("search", ""))
    if claim.search:
        level, _, variant = claim.search.partition(" | ")
        if level not in SEARCH_LEVELS or variant not in VARIANTS:
            raise error(here + ("search",), f"search is \"LEVEL | VARIANT\": a level of {', '.join(SEARCH_LEVELS)} "
                                            f"and a variant of {', '.join(VARIANTS)}")
        if not set(search_tests(claim.search)) & set(claim.tests):
            raise error(here + ("search",), f"a claim judged with its search lists its test, "
                                            f"{' or '.join(search_tests(claim.search))}")
    if claim.searched and rule != "fact":
        raise error(here + ("searched",), "searched names what a fact's search recorded: rule = \"fact\" only")
    if not claim.tests and not claim.cases:
        raise error(here, f"a {rule} rule needs 'tests' or 'cases'")
    claim.factor = stated_factor(claim.statement)
    if claim.factor and rule != "ratio":
        raise error(here + ("rule",), f"the statement claims a magnitude (about {claim.factor:g}x): it is judged on "
                                      "Compare records, rule = \"ratio\"")
    if rule == "ratio":
        claim.metric = ev.get("metric", "")
        claim.bound = float(ev.get("bound", 1.0))
        claim.supports_when = ev.get("supports_when", "")
        if claim.metric not in METRICS:
            raise error(here + ("metric",), f"metric must be one of {', '.join(METRICS)}")
        if claim.supports_when not in ("below", "above"):
            raise error(here + ("supports_when",), "supports_when must be below or above")
        if claim.factor:
            # "About N times": the band is read from the statement; a bound
            # beside it would be a second, contradicting threshold.
            if "bound" in ev:
                raise error(here + ("bound",), f"the statement claims about {claim.factor:g}x, whose band "
                                               f"(N/{ABOUT_SPREAD:g} to N x {ABOUT_SPREAD:g}) is read from it: remove bound")
            claim.band = band_of(claim.factor, claim.supports_when)
            claim.bound = 1 / claim.factor if claim.supports_when == "below" else claim.factor
    if rule == "across":
        claim.across = ev.get("across", "")
        claim.supports_when = ev.get("supports_when", "")
        if claim.across not in ACROSS:
            raise error(here + ("across",), f"across must be one of {', '.join(ACROSS)}")
        if claim.supports_when != "differs":
            raise error(here + ("supports_when",),
                        "an across rule supports a claim when digests differ: supports_when = \"differs\"")
    if rule == "invariance":
        claim.level, claim.variant = ev.get("level", ""), ev.get("variant", "defaults")
        if claim.level not in LEVELS:
            raise error(here + ("level",), f"level must be one of {', '.join(LEVELS)}")
        if claim.variant not in VARIANTS:
            raise error(here + ("variant",), f"variant must be one of {', '.join(VARIANTS)}")
    if rule == "distribution":
        claim.count = ev.get("count", "")
        claim.supports_when = ev.get("supports_when", "")
        if claim.count not in FIELDS:
            raise error(here + ("count",), f"count must be one of {', '.join(FIELDS)}")
        if claim.supports_when not in ("varies", "constant"):
            raise error(here + ("supports_when",), "supports_when must be varies or constant")
    observe = ev.get("observe", [])
    if not isinstance(observe, list) or not all(isinstance(o, dict) and "cases" in o and "show" in o
                                                for o in observe):
        raise error(here + ("observe",), "observe must be a list of { cases = {...}, show = FIELD }")
    claim.observe = observe
    return claim
