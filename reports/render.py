"""Writing report.json and the self-contained HTML page."""

from __future__ import annotations

import json
import math
import os
from collections import Counter
from dataclasses import asdict
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import jinja2

from .evidence import Evidence
from .verdicts import VERDICTS, Verdict

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
            "device": case["axes"].get("device", ""),
            "engine": last.get("engine", case["axes"].get("engine", "")),
            "implementation": last.get("implementation", ""), "algorithm": last.get("algorithm", ""),
            "digest": last.get("digest", ""), "distinct": last.get("distinct_digests", ""),
            "median_ms": _median_ms(last.get("times_ns", [])),
            "checks": ", ".join(f"{k}: {v}" for k, v in checks.items()),
            "outcome": result.get("outcome", "not run"),
            "steps": _steps(last),
            "choices": last.get("choice_distribution", {}),
            "processes": last.get("processes", []),
            "reason": last.get("skip_reason", "") or (result.get("message", "") if result.get("outcome") != "passed" else ""),
        })
    return rows


def _median_ms(times: list[int]) -> str:
    if not times:
        return ""
    s = sorted(times)
    mid = len(s) // 2
    med = s[mid] if len(s) % 2 else (s[mid - 1] + s[mid]) / 2
    return f"{med / 1e6:.3f}"


def to_json(verdicts: list[Verdict], manifest: list[dict[str, Any]], evidence: Evidence) -> dict[str, Any]:
    return {
        "schema": REPORT_SCHEMA,
        "generated": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "machines": evidence.environments,
        "summary": dict(Counter(v.verdict for v in verdicts)),
        "claims": [{
            "id": v.claim.id, "statement": v.claim.statement, "source": v.claim.source, "kind": v.claim.kind,
            "scope": v.claim.scope, "verdict": v.verdict, "reason": v.reason,
            "facts": [{"test": f.test, "outcome": f.outcome, "message": f.message, "mistrusted": f.mistrusted,
                       "repro": (f.case or {}).get("repro", ""), "figures": _finite(f.figures)} for f in v.facts],
            "observations": v.observations,
        } for v in verdicts],
        "cases": _case_rows(manifest, evidence),
        "problems": evidence.problems,
    }


def write_report(out: Path, verdicts: list[Verdict], manifest: list[dict[str, Any]], evidence: Evidence) -> Path:
    out.mkdir(parents=True, exist_ok=True)
    data = to_json(verdicts, manifest, evidence)
    _atomic_write(out / "report.json", json.dumps(data, indent=1, sort_keys=True) + "\n")
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES), autoescape=True,
                             undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    html = env.get_template("report.html.j2").render(
        data=data, verdict_order=VERDICTS, verdicts=verdicts,
        slug=lambda s: "".join(c if c.isalnum() else "-" for c in s))
    page = out / "index.html"
    _atomic_write(page, html)
    return page


def _atomic_write(path: Path, text: str) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)
