"""The "What to set on this stack" card of one platform (a machine and its
torch): derived from the verdicts and the measured ratios, never written by
hand. A claim joins the card through its catalog field `card` (goal and
setting; see catalog/claims.toml). Every setting a claim decides shows on
the card under one heading:

- **Set**: a reproducibility claim that holds here, with its measured
  cost (the comparisons of the claim named by `cost`); a speed setting
  faster on most of its timed shapes, with the gain; a reduced precision
  that computes as documented, with its error against fp64;
- **Do not set**: a reproducibility claim refuted (the setting does not give
  what it promises, and costs what it costs), a speed setting slower on
  most shapes, a "no effect" claim refuted, or a reduced precision beyond its
  bound: each with its harm, the refuting line;
- **No effect here**: a "no effect" claim that holds, a speed setting
  within noise on every shape, a reduced precision that leaves the bits as
  they are;
- **Undecided here**: inconclusive, or a speed setting faster on some shapes
  and slower on others, with the counts;
- **Not measured here**: a claim not evaluated here or in error, grouped by
  why, naming its settings.

Claims that name the same setting for the same goal share one line, which
links to each of them. A line's verdict is the gravest of its decided claims
(error, refuted, supported, inconclusive), except a speed line, whose
heading is what its timed comparisons say (faster on most shapes: set;
slower on most: do not set; none decisive: no effect; else undecided),
whatever a claimed magnitude's verdict, shown beside; its words come from a
fixed table of goal and heading, its figures from the claims' records.
"""

from __future__ import annotations

import statistics
from typing import Any

from .observe import cut, line as line_of
from .reasons import reason_group, reason_one
from .catalog import MIN_REPS, WORKLOAD_KIND
from .ruling import Ruling, gravest
from .statistics import LOAD_LIMIT, decide_ratio, side
from .verdicts import Verdict, magnitude_text
from .wording import METRICS

# The card's headings, in the order it shows them.
HEADINGS = {"set": "Set", "do not set": "Do not set", "no effect": "No effect here", "undecided": "Undecided here"}

# What a line says, by goal and heading: the only words of the card that are
# not the catalog's setting, a measured figure or a refuting line.
SAYS = {
    ("reproducibility", "set"): "for bitwise reproducibility",
    ("reproducibility", "do not set"): "it does not give bitwise reproducibility here",
    ("reproducibility", "undecided"): "for bitwise reproducibility: undecided here",
    ("speed", "set"): "for speed: faster here",
    ("speed", "do not set"): "slower here",
    ("speed", "no effect"): "no measurable difference in time here",
    ("speed", "undecided"): "undecided here",
    ("no effect", "no effect"): "no effect here",
    ("no effect", "do not set"): "it has an effect here",
    ("no effect", "undecided"): "undecided here",
    ("precision", "set"): "for speed, where its precision is enough: it computes as documented here",
    ("precision", "do not set"): "its error goes past the documented bound here",
    ("precision", "no effect"): "no effect here: the bits are those of fp32",
    ("precision", "undecided"): "undecided here",
}

def _side_is_b(claim_supports_when: str, faster: bool) -> bool:
    """Whether the setting is the Compare's B side. A speed claim's setting
    is the side it calls faster (B when it holds below the bound); a cost
    claim's is the side it calls slower (B when it holds above)."""
    return (claim_supports_when == "below") == faster


def timing(v: Verdict, faster: bool) -> dict[str, Any] | None:
    """The timed comparisons of a ratio verdict, as the setting's time over
    the other side's: their median, range, how many were decisively faster or
    slower with the setting, and the Compare's B flags. None when none was
    timed."""
    ran = [f for f in v.facts if "ratio" in f.figures]
    if not ran:
        return None
    b = _side_is_b(v.claim.supports_when, faster)
    ratios = sorted(f.figures["ratio"] if b else 1 / f.figures["ratio"] if f.figures["ratio"] else float("inf")
                    for f in ran)
    outcomes = [f.figures.get("outcome", "") for f in ran]
    # A supported outcome is decisively on the side the claim names: for a speed
    # claim that is faster with the setting, for a cost claim slower.
    with_claim, against = outcomes.count(Ruling.SUPPORTED), outcomes.count(Ruling.REFUTED)
    claimed = ""
    if v.claim.band:
        # A magnitude's outcome says whether the factor is about the claimed
        # one, not which side is faster: that is the interval against 1.
        lower = [f.figures.get("direction", "") == ("below" if b else "above") for f in ran]
        higher = [f.figures.get("direction", "") == ("above" if b else "below") for f in ran]
        with_claim, against = (sum(lower), sum(higher)) if faster else (sum(higher), sum(lower))
        claimed = f"{v.verdict}: " + "; ".join(magnitude_text(v.claim, f.figures["ratio"], f.figures["ci"])
                                               for f in ran)
    versus = ran[0].figures.get("versus") or {}
    return {"metric": v.claim.metric, "median": statistics.median(ratios), "low": ratios[0], "high": ratios[-1],
            "comparisons": len(ran), "faster": with_claim if faster else against,
            "slower": against if faster else with_claim,
            "b": ", ".join(f"{k}={val}" for k, val in versus.items()), "setting_is_b": b, "claimed": claimed}


def timing_text(t: dict[str, Any]) -> str:
    """What the setting does to the metric, as a user says it: "2.3× faster
    on 12 of 15 shapes", "no measurable difference (6 shapes, all within
    noise: 0.97–1.02× the time)"."""
    less, more, noun = METRICS.get(t["metric"], ("lower", "higher", t["metric"].replace("_", " ")))
    n, median = t["comparisons"], t["median"]
    shapes = f"{n} shape{'s' if n != 1 else ''}"
    spread = f"{t['low']:.2g}–{t['high']:.2g}× the {noun}" if n > 1 else f"{median:.2g}× the {noun}"
    rest = n - t["faster"] - t["slower"]
    if t["faster"] == 0 and t["slower"] == 0:
        said = f"no measurable difference ({shapes}, all within noise: {spread})"
    elif t["faster"] * 2 > n:
        said = f"{1 / median:.2g}× {less} (median) on {t['faster']} of {shapes}" + (
            f", {more} on {t['slower']}" if t["slower"] else "") + (", the rest within noise" if rest else "")
    elif t["slower"] * 2 > n:
        said = f"{median:.2g}× {more} (median) on {t['slower']} of {shapes}" + (
            f", {less} on {t['faster']}" if t["faster"] else "") + (", the rest within noise" if rest else "")
    else:
        parts = [f"{less} on {t['faster']}" if t["faster"] else "", f"{more} on {t['slower']}" if t["slower"] else "",
                 f"within noise on {rest}" if rest else ""]
        said = ", ".join(filter(None, parts)) + f" of {shapes} (median {median:.2g}× the {noun})"
    if not t["setting_is_b"]:
        said += " (the setting is the compared side's baseline)"
    return said + (f"; the claim's magnitude {t['claimed']}" if t.get("claimed") else "")


def _cost(cost_id: str, by_id: dict[str, Verdict], platform: str) -> dict[str, Any]:
    pv = by_id[cost_id].on(platform)  # the catalog's loader checked that it exists
    t = timing(pv, faster=False) if pv.verdict != Ruling.NOT_EVALUATED else None
    if t is None:
        return {"claim": cost_id, "verdict": pv.verdict, "text": f"not measured here ({_why_not(pv)})"}
    return {"claim": cost_id, "verdict": pv.verdict, "text": timing_text(t), "timing": t}


def _runs(pv: Verdict) -> list[dict[str, Any]]:
    """The reduced-precision runs a claim's probe recorded (observed "runs":
    the setting, its precision, whether the bits changed, the errors)."""
    return [r for f in pv.facts for rec in f.records for c in rec.get("checks", [])
            for r in ((c.get("observed") or {}).get("runs") or {}).values() if isinstance(r, dict) and "error" in r]


def _why_not(pv: Verdict) -> str:
    return reason_group(pv.reason) if pv.verdict == Ruling.NOT_EVALUATED else f"{pv.verdict}: {cut(line_of(pv), 160)}"


def _error(error_id: str, by_id: dict[str, Verdict], platform: str) -> dict[str, Any]:
    """What a reduced-precision setting costs in accuracy: the error against
    fp64 that the claim's probe recorded, with the setting and without."""
    pv = by_id[error_id].on(platform)
    runs = _runs(pv)
    if not runs:
        return {"claim": error_id, "verdict": pv.verdict, "text": f"not measured here ({_why_not(pv)})"}
    text = "; ".join(f"{r['setting']}='{r['precision']}': error against fp64 {r['error'][r['precision']]:.3g} "
                     f"(fp32 {r['error']['none']:.3g}, bound {r['bound']:.3g})" for r in runs)
    return {"claim": error_id, "verdict": pv.verdict, "text": text}


# A decided verdict's heading, by goal (a speed line's comes from its timing).
_HEADING = {Ruling.SUPPORTED: {"reproducibility": "set", "no effect": "no effect", "precision": "set", "speed": "set"},
            Ruling.REFUTED: {"reproducibility": "do not set", "no effect": "do not set", "precision": "do not set",
                             "speed": "do not set"}}


def _heading(line: dict[str, Any], refuted_unchanged: bool) -> str:
    """Where a line goes: by its goal and verdict, a speed line by what its
    timed comparisons say, a refuted precision whose bits never changed under
    no effect."""
    measured = [f["timing"] for f in line["figures"]]
    if line["goal"] == "speed" and measured:
        n = sum(t["comparisons"] for t in measured)
        faster, slower = sum(t["faster"] for t in measured), sum(t["slower"] for t in measured)
        if faster * 2 > n and slower * 2 < faster:
            return "set"
        if slower * 2 > n and faster * 2 < slower:
            return "do not set"
        return "no effect" if faster == slower == 0 else "undecided"
    if line["goal"] == "precision" and line["verdict"] == Ruling.REFUTED and refuted_unchanged:
        return "no effect"
    return _HEADING.get(line["verdict"], {}).get(line["goal"], "undecided")


def card(verdicts: list[Verdict], platform: str) -> dict[str, Any]:
    """The card of one platform."""
    by_id = {v.claim.id: v for v in verdicts}
    lines: dict[tuple[str, str], dict[str, Any]] = {}
    waiting: dict[str, list[dict[str, str]]] = {}
    unchanged: dict[tuple[str, str], bool] = {}
    for v in verdicts:
        c = v.claim.card
        if not c:
            continue
        pv = v.on(platform)
        entry = {"id": v.claim.id, "verdict": pv.verdict}
        if pv.verdict in (Ruling.NOT_EVALUATED, Ruling.ERROR):
            why = reason_one(pv.reason) if pv.verdict == Ruling.NOT_EVALUATED else \
                "the harness could not decide it (an error: see the claim)"
            waiting.setdefault(why, []).append({**entry, "setting": c["setting"], "goal": c["goal"]})
            continue
        key = (c["goal"], c["setting"])
        line = lines.setdefault(key, {"goal": c["goal"], "setting": c["setting"], "claims": [], "figures": [],
                                      "cost": [], "error": [], "harm": []})
        line["claims"].append(entry)
        if pv.verdict == Ruling.REFUTED:
            line["harm"].append({"claim": v.claim.id, "text": cut(line_of(pv), 160)})
        if c["goal"] == "speed":
            t = timing(pv, faster=True)
            if t is not None:
                line["figures"].append({"claim": v.claim.id, "text": timing_text(t), "timing": t})
        if c["goal"] == "precision":
            runs = _runs(pv)
            unchanged[key] = unchanged.get(key, True) and bool(runs) and not any(r.get("changed") for r in runs)
        if c.get("cost") and not any(x["claim"] == c["cost"] for x in line["cost"]):
            line["cost"].append(_cost(c["cost"], by_id, platform))
        errors = [v.claim.id] if c["goal"] == "precision" else [x.strip() for x in c.get("error", "").split(",")]
        for name in filter(None, errors):
            if not any(x["claim"] == name for x in line["error"]):
                line["error"].append(_error(name, by_id, platform))
    for key, line in lines.items():
        line["verdict"] = gravest(e["verdict"] for e in line["claims"])
        line["heading"] = _heading(line, unchanged.get(key, False))
        if line["goal"] == "speed" and line["figures"]:
            # The verdict shown beside a speed line is what its timing says
            # (a 3.9x gain refutes "about twice" and still recommends the
            # setting); the claims keep their own verdicts, linked.
            line["verdict"] = {"set": Ruling.SUPPORTED, "do not set": Ruling.REFUTED}.get(
                line["heading"], Ruling.INCONCLUSIVE)
        if line["heading"] != "do not set":
            line["harm"] = []
        line["says"] = SAYS.get((line["goal"], line["heading"]), HEADINGS[line["heading"]].lower())
    sections = [{"heading": h, "title": title, "lines": [x for x in lines.values() if x["heading"] == h]}
                for h, title in HEADINGS.items()]
    return {"platform": platform, "sections": [s for s in sections if s["lines"]],
            "not_evaluated": [{"why": why, "claims": entries,
                               "settings": list(dict.fromkeys(e["setting"] for e in entries))}
                              for why, entries in sorted(waiting.items(), key=lambda kv: (-len(kv[1]), kv[0]))]}


def _lever_cost(records: list[dict[str, Any]]) -> str:
    """The step's time with the levers over without, from the workload's
    comparison (paired, alternated), by the project's ratio rule."""
    compare = next((r["compare"] for r in records if "compare" in r), None)
    if compare is None:
        return "its cost not measured here (an environment lever is timed only in a fresh process)"
    others = compare.get("others_cpu")
    if others is not None and others > LOAD_LIMIT:
        return f"its cost not measured: other processes took {others:.0%} of the CPU while it was timed"
    a, b = ([float(x) for x in compare[k].get("steady_ns", [])] for k in ("a", "b"))
    if min(len(a), len(b)) < MIN_REPS:
        return f"its cost not measured: {min(len(a), len(b))} timed runs, at least {MIN_REPS} needed"
    _, ratio, (lo, hi) = decide_ratio(a, b, 1.0, "above")
    where = side((lo, hi), 1.0)
    if not where:
        return f"no measurable cost ({lo:.2g}–{hi:.2g}× the time, {min(len(a), len(b))} paired runs)"
    return f"{ratio:.2g}× the time ({lo:.2g}–{hi:.2g}, {min(len(a), len(b))} paired runs)"


def workload_lines(verdicts: list[Verdict], platform: str) -> list[dict[str, Any]]:
    """A team's workloads on this platform's card: for each level its
    statement holds to that moved, the levers that hold it with their cost,
    or that none tried does and the operation that still moves."""
    out = []
    for v in verdicts:
        if v.claim.kind != WORKLOAD_KIND:
            continue
        pv = v.on(platform)
        for f in pv.facts:
            levels = next((c.get("observed", {}).get("levels") for r in f.records for c in r.get("checks", [])
                           if isinstance(c.get("observed"), dict) and "levels" in c["observed"]), None) or {}
            held = (next((c["observed"]["workload"].get("hold") for r in f.records for c in r.get("checks", [])
                          if isinstance(c.get("observed"), dict) and "workload" in c["observed"]), None)
                    or list(levels))
            for level in held:
                got = levels.get(level) or {}
                if got.get("held", True):
                    continue
                levers = got.get("levers") or {}
                first = got.get("first_divergence") or {}
                line = {"claim": v.claim.id, "level": level, "op": first.get("op", ""), "where": first.get("line", "")}
                if levers.get("held_by"):
                    line.update(heading="set", setting=", ".join(f"{k}={val}" for k, val in levers["held_by"].items()),
                                cost=_lever_cost(f.records))
                else:
                    still = levers.get("still_moves") or {}
                    line.update(heading="undecided", setting="", tried=len(levers.get("tried", [])),
                                op=still.get("op", line["op"]))
                out.append(line)
    return out


def cards(verdicts: list[Verdict], platforms: list[str]) -> dict[str, dict[str, Any]]:
    """One card per platform (one for all the evidence when none is named)."""
    out = {p: card(verdicts, p) for p in platforms or [""]}
    for p, c in out.items():
        c["workloads"] = workload_lines(verdicts, p)
    return out
