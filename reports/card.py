"""The "What to set on this stack" card of one platform (a machine and its
torch): derived from the verdicts and the measured ratios, never written by
hand. A claim joins the card through its catalog field `card` (goal and
setting; see catalog/claims.toml); the card says, per platform:

- for bitwise reproducibility: the settings whose claims hold here, each with
  its measured cost (the comparisons of the claim named by `cost`);
- for speed: the settings whose ratio claims were timed here, with the
  measured gain, or that the timing was mixed or went the other way;
- the settings that have no effect here;
- the settings this platform could not evaluate, grouped by what would.

Claims that name the same setting for the same goal share one line, which
links to each of them. A line's verdict is the gravest of its decided claims
(error, refuted, supported, inconclusive), except a speed line of claims of a
magnitude ("about twice as slow"), whose verdict is whether the setting was
faster here, the claimed factor's own verdict shown beside the measured one;
its words come from a fixed table of goal and verdict, its figures from the
claims' Compare records, whatever their verdict.
"""

from __future__ import annotations

import statistics
from typing import Any

from .catalog import CARD_GOALS
from .observe import cut, line
from .reasons import reason_group
from .ruling import Ruling, gravest
from .verdicts import Verdict, magnitude_text
from .wording import METRICS

TITLES = {"reproducibility": "For bitwise reproducibility", "speed": "For speed", "no effect": "No effect here"}

# What a line says, by goal and verdict: the only words of the card that are
# not the catalog's setting or a measured figure.
SAYS = {
    ("reproducibility", Ruling.SUPPORTED): "set",
    ("reproducibility", Ruling.REFUTED): "does not give what is claimed here",
    ("reproducibility", Ruling.INCONCLUSIVE): "undecided here",
    ("speed", Ruling.SUPPORTED): "set: faster here",
    ("speed", Ruling.REFUTED): "slower here",
    ("speed", Ruling.INCONCLUSIVE): "mixed or within noise here",
    ("no effect", Ruling.SUPPORTED): "no effect here",
    ("no effect", Ruling.REFUTED): "has an effect here",
    ("no effect", Ruling.INCONCLUSIVE): "undecided here",
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
        said = (f"{less} on {t['faster']}, {more} on {t['slower']}" + (f", within noise on {rest}" if rest else "")
                + f" of {shapes} (median {median:.2g}× the {noun})")
    if not t["setting_is_b"]:
        said += " (the setting is the compared side's baseline)"
    return said + (f"; the claim's magnitude {t['claimed']}" if t.get("claimed") else "")


def _cost(cost_id: str, by_id: dict[str, Verdict], platform: str) -> dict[str, Any]:
    pv = by_id[cost_id].on(platform)  # the catalog's loader checked that it exists
    t = timing(pv, faster=False) if pv.verdict != Ruling.NOT_EVALUATED else None
    if t is None:
        why = reason_group(pv.reason) if pv.verdict == Ruling.NOT_EVALUATED else f"{pv.verdict}: {cut(line(pv), 160)}"
        return {"claim": cost_id, "verdict": pv.verdict, "text": f"not measured here ({why})"}
    return {"claim": cost_id, "verdict": pv.verdict, "text": timing_text(t), "timing": t}


def _error(error_id: str, by_id: dict[str, Verdict], platform: str) -> dict[str, Any]:
    """What a reduced-precision setting costs in accuracy: the error against
    fp64 that the claim's probe recorded, with the setting and without."""
    pv = by_id[error_id].on(platform)
    runs = [r for f in pv.facts for rec in f.records for c in rec.get("checks", [])
            for r in ((c.get("observed") or {}).get("runs") or {}).values() if isinstance(r, dict) and "error" in r]
    if not runs:
        why = reason_group(pv.reason) if pv.verdict == Ruling.NOT_EVALUATED else f"{pv.verdict}: {cut(line(pv), 160)}"
        return {"claim": error_id, "verdict": pv.verdict, "text": f"not measured here ({why})"}
    text = "; ".join(f"{r['setting']}='{r['precision']}': error against fp64 {r['error'][r['precision']]:.3g} "
                     f"(fp32 {r['error']['none']:.3g}, bound {r['bound']:.3g})" for r in runs)
    return {"claim": error_id, "verdict": pv.verdict, "text": text}


def card(verdicts: list[Verdict], platform: str) -> dict[str, Any]:
    """The card of one platform."""
    by_id = {v.claim.id: v for v in verdicts}
    lines: dict[tuple[str, str], dict[str, Any]] = {}
    waiting: dict[str, list[dict[str, str]]] = {}
    for v in verdicts:
        c = v.claim.card
        if not c:
            continue
        pv = v.on(platform)
        entry = {"id": v.claim.id, "verdict": pv.verdict}
        if pv.verdict == Ruling.NOT_EVALUATED:
            waiting.setdefault(reason_group(pv.reason), []).append({**entry, "setting": c["setting"],
                                                                     "goal": c["goal"]})
            continue
        line = lines.setdefault((c["goal"], c["setting"]), {"goal": c["goal"], "setting": c["setting"],
                                                            "claims": [], "figures": [], "cost": [], "error": []})
        line["claims"].append(entry)
        if c["goal"] == "speed":
            t = timing(pv, faster=True)
            if t is not None:
                line["figures"].append({"claim": v.claim.id, "text": timing_text(t), "timing": t})
        if c.get("cost") and not any(x["claim"] == c["cost"] for x in line["cost"]):
            line["cost"].append(_cost(c["cost"], by_id, platform))
        for name in filter(None, (x.strip() for x in c.get("error", "").split(","))):
            if not any(x["claim"] == name for x in line["error"]):
                line["error"].append(_error(name, by_id, platform))
    for line in lines.values():
        line["verdict"] = gravest(e["verdict"] for e in line["claims"])
        measured = [f["timing"] for f in line["figures"] if f["timing"]["claimed"]]
        if measured and len(measured) == len(line["claims"]):
            # Claims of a magnitude only: the line says whether the setting
            # is faster here, whatever the claimed factor's verdict (beside
            # the figure): a 3.9x gain refutes "about twice" and still
            # recommends the setting.
            quicker, slower = sum(t["faster"] for t in measured), sum(t["slower"] for t in measured)
            line["verdict"] = (Ruling.SUPPORTED if quicker and not slower else
                               Ruling.REFUTED if slower and not quicker else Ruling.INCONCLUSIVE)
        line["says"] = SAYS.get((line["goal"], line["verdict"]), line["verdict"])
    sections = [{"goal": g, "title": TITLES[g], "lines": [x for x in lines.values() if x["goal"] == g]}
                for g in CARD_GOALS]
    return {"platform": platform, "sections": [s for s in sections if s["lines"]],
            "not_evaluated": [{"why": why, "claims": entries}
                              for why, entries in sorted(waiting.items(), key=lambda kv: (-len(kv[1]), kv[0]))]}


def cards(verdicts: list[Verdict], platforms: list[str]) -> dict[str, dict[str, Any]]:
    """One card per platform (one for all the evidence when none is named)."""
    return {p: card(verdicts, p) for p in platforms or [""]}
