"""Writing report.json and the self-contained HTML page."""

from __future__ import annotations

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

from .plots import interval_plot, roofline_plot, strip_plot
from .evidence import Evidence, ctest_outcome, platform_of, torch_of
from .observe import sentence
from .summary import disagreement_line
from .pipeline import Report
from .ruling import VERDICTS, Ruling
from .verdicts import Fact, Verdict
from .invariance import LEVELS
from .changes import grouped

TEMPLATES = Path(__file__).resolve().parent / "templates"
REPORT_SCHEMA = 1


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


def _fact_json(f: Fact) -> dict[str, Any]:
    last = f.records[-1] if f.records else {}
    repro = (f.case or {}).get("repro", "") or str(last.get("repro", ""))
    return {"test": f.test, "outcome": f.outcome, "message": f.message, "mistrusted": f.mistrusted, "mistrust": f.mistrust,
            "repro": repro, "command": repro_command(repro), "figures": _finite(f.figures),
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


def to_json(report: Report) -> dict[str, Any]:
    """report.json: the Report, as data."""
    verdicts, evidence, baseline = report.verdicts, report.evidence, report.baseline
    platforms = {name: {"signature": platform_of(env)[1], "machine": env.get("machine", ""), "torch": torch_of(env)}
                 for name, env in evidence.platform_env.items()}
    return {
        "schema": REPORT_SCHEMA,
        "generated": report.run.get("time") or datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "run": report.run,
        "machines": evidence.environments,
        "platforms": platforms,
        "platform_env": evidence.platform_env,
        "summary": dict(Counter(v.verdict for v in verdicts)),
        "card": report.cards,
        "coverage": report.coverage,
        "claims": [{
            "id": v.claim.id, "statement": v.claim.statement, "source": v.claim.source, "kind": v.claim.kind,
            "scope": v.claim.scope, "devices": _devices(v), "rule": v.claim.rule, "verdict": v.verdict,
            "reason": v.reason, "about": v.claim.about, "evidence_system": v.claim.system,
            "decided_by": _system_version(v.decided_by, evidence),
            "prediction": None if v.prediction is None else {
                "system": v.prediction.claim.system, "verdict": v.prediction.verdict, "reason": v.prediction.reason},
            "platforms": {p: pv.verdict for p, pv in v.platforms.items()},
            "platform_reasons": {p: pv.reason for p, pv in v.platforms.items()},
            "observation": sentence(v),
            "platform_observations": {p: sentence(pv) for p, pv in v.platforms.items()},
            "facts": [_fact_json(f) for f in v.facts],
            "observations": v.observations,
            "known": {h.platform: h.as_json() for h in report.held if h.claim == v.claim.id},
        } for v in verdicts],
        "cases": _case_rows(report.manifest, evidence),
        "conformance": report.conformance,
        "benchmarks": evidence.benchmarks,
        "problems": list(dict.fromkeys(evidence.problems)),
        "baseline": None if baseline is None else {
            "path": baseline.path, "generated": baseline.generated, "run": baseline.run,
            "changed": report.since["changed"], "fail_on_change": report.fail_on_change},
        "missing_platforms": report.since["missing"],
        "known": {"held": [h.as_json() for h in report.held],
                  "unexpected": [h.line() for h in report.unexpected], "strict": report.strict},
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
    out.mkdir(parents=True, exist_ok=True)
    data = to_json(report)
    _atomic_write(out / "report.json", json.dumps(data, indent=1, sort_keys=True) + "\n")
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES), autoescape=True,
                             undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    html = env.get_template("report.html.j2").render(
        data=data, verdict_order=VERDICTS, slug=lambda s: "".join(c if c.isalnum() else "-" for c in s),
        strip=strip_plot, interval=interval_plot, roofline=roofline_plot)
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
            h, said = held.get((platform, v.claim.id)), f"{pv.verdict}: {pv.reason}"
            if h is not None and h.status == "unexpected":
                testcase(f"claims.{v.claim.kind}", name, "failure", h.line(), said)
            elif report.strict and v.claim.kind == "guarantee" and pv.verdict == Ruling.REFUTED:
                testcase(f"claims.{v.claim.kind}", name, "failure", f"refuted guarantee (--strict): {pv.reason}")
            elif pv.verdict == Ruling.ERROR:
                testcase(f"claims.{v.claim.kind}", name, "error", pv.reason)
            elif h is not None and h.status == "known":
                # "VERDICT, known since FIRST_SEEN: REASON (FILE:LINE)"
                testcase(f"claims.{v.claim.kind}", name, "skipped", h.why, said)
            elif pv.verdict == Ruling.NOT_EVALUATED:
                testcase(f"claims.{v.claim.kind}", name, "skipped", pv.reason)
            else:
                testcase(f"claims.{v.claim.kind}", name, out=said)
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
