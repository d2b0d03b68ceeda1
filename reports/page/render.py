"""Writing report.json and the self-contained HTML page."""

from __future__ import annotations

import functools
import json
import math
import os
import shlex
import statistics
import xml.etree.ElementTree as ET
from collections import Counter
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import jinja2

from inputs.engines import harness_system

from .folds import Folds
from .plots import interval_plot, roofline_plot, strip_plot
from ..evidence import Evidence, ctest_outcome, platform_of, platform_title, torch_of
from ..observe import bearing, cut, gravest, message, reading
from .summary import disagreement_line
from ..pipeline import Report
from ..ruling import VERDICTS, Ruling
from ..verdicts import Fact, Verdict
from ..invariance import LEVELS
from ..known import one_line
from ..wording import GLOSSARY, LINE_CHARS, plain
from ..changes import grouped, repro as run_again

TEMPLATES = Path(__file__).resolve().parent / "templates"
REPORT_SCHEMA = 1
# A reason line as the claims grid shows it, cut at a word; the cell's title
# and the claim's section hold it whole.
GRID_CHARS = 160


def _finite(value: Any) -> Any:
    """JSON has no infinity: write it as the string "inf"."""
    if isinstance(value, float) and math.isinf(value):
        return "inf"
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_finite(v) for v in value]
    return value


def _steps(record: dict[str, Any]) -> list[dict[str, Any]]:
    """The schedule of a case record, one row per step."""
    rows = []
    for i, s in enumerate(record.get("steps", [])):
        sel = s.get("selection", {})
        rows.append({"step": i, "problem": s.get("problem", ""), "chosen": sel.get("chosen", s.get("algorithm", "")),
                     "cache": sel.get("cache", ""), "step_ms": s.get("step_ns", 0) / 1e6,
                     "search_ms": sel.get("search_ns", 0) / 1e6, "rss_mib": s.get("rss_peak_bytes", 0) / 2**20,
                     "workspace_mib": s.get("workspace_bytes", 0) / 2**20})
    return rows


def _case_rows(manifest: list[dict[str, Any]], evidence: Evidence) -> list[dict[str, Any]]:
    rows = []
    for case in manifest:
        records = evidence.cases.get(case["test"], [])
        last = records[-1] if records else {}
        result = evidence.results.get(case["test"], {})
        checks = {c.get("name"): c.get("outcome") for c in last.get("checks", [])}
        rows.append({
            "id": case["id"], "test": case["test"], "repro": case["repro"], "suite": case["suite"],
            "command": repro_command(case["repro"]),
            "device": case["axes"].get("device", ""),
            "engine": last.get("engine", case["axes"].get("engine", "")),
            "implementation": last.get("implementation", ""), "algorithm": last.get("algorithm", ""),
            "digest": last.get("digest", ""), "distinct": last.get("distinct_digests", ""),
            "median_ms": _median_ms(last.get("times_ns", [])),
            "checks": ", ".join(f"{k}: {v}" for k, v in checks.items()),
            "outcome": result.get("outcome") or ctest_outcome(evidence, case["test"]) or "not run",
            "steps": _steps(last),
            "choices": last.get("choice_distribution", {}),
            "processes": last.get("processes", []),
            "reason": last.get("skip_reason", "") or (result.get("message", "") if result.get("outcome") != "passed" else ""),
        })
    return rows


def _median_ms(times: list[int]) -> str:
    return f"{statistics.median(times) / 1e6:.3f}" if times else ""


def repro_command(repro: str) -> str:
    return "./backendcheck run --case " + shlex.quote(repro) if repro else ""


def _fact_json(f: Fact, v: Verdict, said: str = "", evidence: Evidence | None = None) -> dict[str, Any]:
    """One test of a claim's evidence, with the command that runs it again
    on its platform's torch. `said`: the claim's reason line; the test's
    message is shown ("shown") only where it says more than that."""
    last = f.records[-1] if f.records else {}
    repro = (f.case or {}).get("repro", "") or str(last.get("repro", ""))
    env = (evidence.platform_env.get(str(last.get("platform", ""))) if evidence is not None else None)
    command = run_again(env, f.test, last or None) if env else repro_command(repro)
    own = message(f)
    return {"test": f.test, "outcome": f.outcome, "message": f.message, "mistrusted": f.mistrusted,
            "mistrust": f.mistrust, "test_outcome": f.test_outcome or f.outcome, "bearing": bearing(f, v.claim.rule, v.claim.polarity),
            "shown": own if own not in said and plain(own) not in said else "",
            "repro": repro, "command": command, "figures": _finite(f.figures),
            "device": (f.case or {}).get("axes", {}).get("device", last.get("device", "")),
            "engine": last.get("engine", ""), "algorithm": last.get("algorithm", ""),
            "implementation": last.get("implementation", ""), "digest": last.get("digest", ""),
            "distinct": last.get("distinct_digests", ""), "median_ms": _median_ms(last.get("times_ns", [])),
            "platform": last.get("platform", "")}


def _devices(v: Verdict) -> list[str]:
    scope = str(v.claim.scope.get("device", "any"))
    return sorted({d.strip() for d in scope.split(",") if d.strip()} or {"any"})


def _system_version(system: str, evidence: Evidence) -> str:
    """"pytorch 1.13.0": the system and the version its environment records
    name (the harness's own version for the model and the reference)."""
    if not system:
        return ""
    key = "backendcheck" if harness_system(system) else system
    versions = sorted({str(env.get("versions", {}).get(key, "")) for env in evidence.platform_env.values()} - {""})
    return f"{system} {', '.join(versions)}" if versions else system


def _groups(facts: list[Fact]) -> dict[str, dict[str, list[str]]]:
    """The computations an across claim compared, each once (several of its
    tests share one)."""
    return {key: sides for f in facts for key, sides in (f.figures.get("groups") or {}).items()}


def _once_each(said: list[tuple[str, dict[str, Any]]]) -> list[dict[str, Any]]:
    """(platform, what is said there) pairs as one entry per distinct thing
    said, with the platforms it is said for: each said once."""
    out: list[dict[str, Any]] = []
    for platform, entry in said:
        same = next((o for o in out if {k: o[k] for k in entry} == entry), None)
        if same is None:
            out.append({**entry, "platforms": [platform]})
        else:
            same["platforms"].append(platform)
    return out


def _settings(claim_id: str, cards: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """What the cards say of this claim's setting (set, do not set, no
    effect, undecided), with its cost."""
    return _once_each([(platform, {"setting": x["setting"], "says": x["says"], "goal": x["goal"],
                                   "title": section["title"],
                                   "cost": [{"claim": c["claim"], "text": c["text"]} for c in x["cost"]],
                                   "error": [{"claim": c["claim"], "text": c["text"]} for c in x.get("error", [])]})
                       for platform, card in cards.items() for section in card.get("sections", [])
                       for x in section["lines"] if any(c["id"] == claim_id for c in x["claims"])])


def _known_json(h: Any, pv: Verdict) -> dict[str, Any]:
    """A claim's standing against the known findings on one platform; its
    "said" is why without the verdict's reason, which the reason line says."""
    out = h.as_json()
    tail = ": " + one_line(pv.reason)
    out["said"] = h.why[:-len(tail)] if h.why.endswith(tail) else h.why
    return out


def _unexpected(h: Any, pv: Verdict) -> str:
    """An unexpected verdict as the page lists it: what was expected, then
    the fact first."""
    return f"{h.claim} on {h.platform}: {_known_json(h, pv)['said']}: {reading(pv).line}"


def _rows(v: Verdict, lines: dict[str, str], known: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """The claim on each platform, as its section lists it: platforms with
    the same verdict, line and standing against the known findings share
    one row."""
    standing = {p: {k: x for k, x in kh.items() if k != "platform"} for p, kh in known.items()}
    return _once_each([(p, {"verdict": pv.verdict, "line": cut(lines[p], LINE_CHARS), "whole": lines[p],
                            "known": standing.get(p), "snippet": pv.snippet}) for p, pv in v.platforms.items()])


def _claim_json(v: Verdict, report: Report) -> dict[str, Any]:
    readings = {p: reading(pv) for p, pv in v.platforms.items()}
    said = reading(v)
    known = {h.platform: _known_json(h, v.on(h.platform)) for h in report.held if h.claim == v.claim.id}
    shown = gravest(v)
    return {
        "id": v.claim.id, "statement": v.claim.statement, "source": v.claim.source, "kind": v.claim.kind,
        "scope": v.claim.scope, "devices": _devices(v), "rule": v.claim.rule, "verdict": v.verdict,
        "reason": v.reason, "about": v.claim.about, "evidence_system": v.claim.system,
        "decided_by": _system_version(v.decided_by, report.evidence),
        "prediction": None if v.prediction is None else {
            "system": v.prediction.claim.system, "verdict": v.prediction.verdict, "reason": v.prediction.reason,
            "line": reading(v.prediction).line},
        "platforms": {p: pv.verdict for p, pv in v.platforms.items()},
        "platform_reasons": {p: pv.reason for p, pv in v.platforms.items()},
        # The reason line, fact first (reports/observe.py): the claim's (its
        # gravest platform's), each platform's, and what each one names.
        "line": said.line, "grid_line": cut(said.line, GRID_CHARS), "line_named": said.named,
        "platform_lines": {p: r.line for p, r in readings.items()},
        "named": {p: r.named for p, r in readings.items()},
        "rows": _rows(v, {p: r.line for p, r in readings.items()}, known) or [
            {"platforms": [], "verdict": v.verdict, "line": cut(said.line, LINE_CHARS), "whole": said.line, "known": None,
             "snippet": v.snippet}],  # evidence of no named platform
        # the platform the claim's line and evidence are of (its gravest)
        "gravest_platform": next((p for p, pv in v.platforms.items() if pv is shown), ""),
        "facts": [_fact_json(f, v, said.line, report.evidence) for f in v.facts],
        "groups": _groups(v.facts),
        "observations": v.observations,
        "settings": _settings(v.claim.id, report.cards),
        "known": known,
    }


# The first screen's list: one line a claim (of at most LINE_CHARS), errors first.
_ATTENTION_ORDER = {"error": 0, "unexpected": 1, "refuted": 2}


def _attention(claims: list[dict[str, Any]], platforms: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """What needs attention, for the first screen: every claim in error, with
    an unexpected verdict, or refuted; one line each (its cause, fact first),
    errors first, then the unexpected, then the rest refuted."""
    out = []
    for c in claims:
        unexpected = [p for p, kh in c["known"].items() if kh and kh.get("status") == "unexpected"]
        if c["verdict"] not in ("refuted", "error") and not unexpected:
            continue
        kind = "error" if c["verdict"] == "error" else "unexpected" if unexpected else "refuted"
        where = (f" (unexpected on {platforms[unexpected[0]]['heading'] if unexpected[0] in platforms else unexpected[0]})"
                 if len(unexpected) == 1 else f" (unexpected on {len(unexpected)} platforms)" if unexpected else "")
        said = f"{c['verdict']}{where}: {c['line']}"
        out.append({"claim": c["id"], "kind": kind, "verdict": c["verdict"],
                    "line": cut(said, LINE_CHARS - len(c["id"]) - 2), "whole": said})
    return sorted(out, key=lambda a: _ATTENTION_ORDER[a["kind"]])


def _heading(env: dict[str, Any]) -> str:
    """"AMD AVX-512 BF16, 2 threads · torch 2.15.0": what a platform's
    column and card are headed with."""
    torch = torch_of(env)
    return platform_title(env) + (f" \u00b7 torch {torch}" if torch else "")


def to_json(report: Report) -> dict[str, Any]:
    """report.json: the Report, as data."""
    verdicts, evidence, baseline = report.verdicts, report.evidence, report.baseline
    by_id = {v.claim.id: v for v in verdicts}
    platforms = {name: {"signature": platform_of(env)[1], "machine": env.get("machine", ""), "torch": torch_of(env),
                        "heading": _heading(env)} for name, env in evidence.platform_env.items()}
    # Two machines of one kind: each heading names its machine too.
    twice = Counter(p["heading"] for p in platforms.values())
    for p in platforms.values():
        if twice[p["heading"]] > 1 and p["machine"]:
            p["heading"] += f" ({p['machine']})"
    return {
        "schema": REPORT_SCHEMA,
        "generated": report.run.get("time") or datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "run": report.run,
        "machines": evidence.environments,
        "platforms": platforms,
        "platform_env": evidence.platform_env,
        "self_bench": report.self_bench,
        "summary": dict(Counter(v.verdict for v in verdicts)),
        # The report's exit status (reports/__main__.py), for a caller that
        # ran it as ctest's report test and has only ctest's pass or fail.
        "exit_status": report.exit_code(),
        "card": report.cards,
        "coverage": report.coverage,
        "claims": (claims := [_claim_json(v, report) for v in verdicts]),
        "attention": _attention(claims, platforms),
        "cases": _case_rows(report.manifest, evidence),
        "conformance": report.conformance,
        "benchmarks": evidence.benchmarks,
        "problems": list(dict.fromkeys(evidence.problems)),
        "baseline": None if baseline is None else {
            "path": baseline.path, "generated": baseline.generated, "run": baseline.run,
            "changed": report.since["changed"], "fail_on_change": report.fail_on_change},
        "missing_platforms": report.since["missing"],
        "known": {"held": [h.as_json() for h in report.held],
                  "unexpected": [h.line() for h in report.unexpected], "strict": report.strict,
                  "unexpected_lines": [_unexpected(h, by_id[h.claim].on(h.platform)) for h in report.unexpected]},
        "changes": report.between,
        "changes_grouped": grouped(report.between),
        "installs": report.installs,
        "documented": report.listed,
        "census": report.censuses,
        "invariance": {"levels": {k: {"name": n, "promise": p, "source": s} for k, (n, p, s) in LEVELS.items()},
                       "platforms": report.grids},
    }


def write_report(out: Path, report: Report) -> Path:
    """report.json and the page, index.html, whose path it returns."""
    return write_page(out, to_json(report))


@functools.lru_cache(maxsize=1)
def _environment() -> jinja2.Environment:
    """The page's templates, compiled once a process (jinja2 recompiles a
    template whose file changed since)."""
    return jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES), autoescape=True,
                              undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)


def write_page(out: Path, data: dict[str, Any]) -> Path:
    """report.json and index.html of the report's data (to_json), the page's
    path returned."""
    out.mkdir(parents=True, exist_ok=True)
    _atomic_write(out / "report.json", json.dumps(data, indent=1, sort_keys=True) + "\n")
    html = _environment().get_template("report.html.j2").render(
        data=data, verdict_order=VERDICTS, slug=lambda s: "".join(c if c.isalnum() else "-" for c in s),
        strip=strip_plot, interval=interval_plot, roofline=roofline_plot, folds=Folds(), glossary=GLOSSARY,
        case_tests=frozenset(r["test"] for r in data["cases"]))  # the tests with a row to link to
    page = out / "index.html"
    _atomic_write(page, html)
    return page


def write_junit(path: Path, report: Report) -> None:
    """One testcase per claim and platform, as the CI's test-report views
    read it: a verdict that is not what is known for the platform fails with
    its UNEXPECTED line (with strict, every refuted guarantee fails); an
    error errs; a known finding is skipped, with its reason and the date it
    was first seen; not evaluated is skipped with its reason; any other
    verdict passes. Then one testcase per disagreement of the model with
    PyTorch: without a known reason it fails, with one it is skipped."""
    held = {(h.platform, h.claim): h for h in report.held}
    suite = ET.Element("testsuite", name="backendcheck.claims")
    counts = Counter()

    def testcase(classname: str, name: str, outcome: str = "", message: str = "", out: str = "") -> None:
        case = ET.SubElement(suite, "testcase", classname=classname, name=name)
        counts["tests"] += 1
        if outcome:
            ET.SubElement(case, outcome, message=message).text = message
            counts[{"failure": "failures", "error": "errors", "skipped": "skipped"}[outcome]] += 1
        ET.SubElement(case, "system-out").text = out or message

    for v in report.verdicts:
        for platform, pv in (v.platforms or {"": v}).items():
            name = f"{v.claim.id}" + (f" [{platform}]" if platform else "")
            h, said = held.get((platform, v.claim.id)), reading(pv).line  # the fact first, as the grid says it
            if h is not None and h.status == "unexpected":
                testcase(f"claims.{v.claim.kind}", name, "failure", "\n".join(h.lines()), said)
            elif report.strict and v.claim.kind == "guarantee" and pv.verdict == Ruling.REFUTED:
                testcase(f"claims.{v.claim.kind}", name, "failure", "\n".join(
                    [f"refuted guarantee (--strict): {said}", *pv.snippet.splitlines()]))
            elif pv.verdict == Ruling.ERROR:
                testcase(f"claims.{v.claim.kind}", name, "error", said)
            elif h is not None and h.status == "known":
                # "VERDICT, known since FIRST_SEEN: REASON (FILE:LINE)"
                testcase(f"claims.{v.claim.kind}", name, "skipped", "\n".join([h.why, *pv.snippet.splitlines()]), said)
            elif pv.verdict == Ruling.NOT_EVALUATED:
                testcase(f"claims.{v.claim.kind}", name, "skipped", said)
            else:
                testcase(f"claims.{v.claim.kind}", name, out="\n".join([said, *pv.snippet.splitlines()]))
    for d in report.conformance["disagreements"]:
        name = f"{d['test']} [{d['aspect']}]"
        if d["why"]:
            testcase("conformance", name, "skipped", f"known reason: {d['why']}")
        else:
            testcase("conformance", name, "failure", disagreement_line(d))
    for key in ("tests", "failures", "errors", "skipped"):
        suite.set(key, str(counts[key]))
    ET.indent(suite)
    _atomic_write(path, ET.tostring(suite, encoding="unicode", xml_declaration=True) + "\n")


def _atomic_write(path: Path, text: str) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)
