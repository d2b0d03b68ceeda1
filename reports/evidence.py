"""Reading evidence: JSON Lines files of test processes, ctest's JUnit XML and
the generator's manifest. A corrupt or truncated line is reported with its
file and line and skipped; it never stops the report."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass
class Evidence:
    environments: dict[str, dict[str, Any]] = field(default_factory=dict)  # machine -> record
    results: dict[str, dict[str, Any]] = field(default_factory=dict)       # test -> result record
    cases: dict[str, list[dict[str, Any]]] = field(default_factory=dict)   # test -> case records
    ctest: dict[str, str] = field(default_factory=dict)                    # test -> junit status
    registered: set[str] = field(default_factory=set)                      # every test ctest knows
    problems: list[str] = field(default_factory=list)                      # FILE:LINE: what
    files: int = 0


def read_evidence(dirs: list[Path]) -> Evidence:
    ev = Evidence()
    for d in dirs:
        paths = sorted(list(d.glob("*.jsonl")) + list(d.glob("*.jsonl.part"))) if d.is_dir() else [d]
        for path in paths:
            ev.files += 1
            _read_file(path, ev)
    return ev


def _read_file(path: Path, ev: Evidence) -> None:
    machine = "unknown"
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError as e:
        ev.problems.append(f"{path}:1: cannot read: {e.strerror or e}")
        return
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as e:
            ev.problems.append(f"{path}:{number}: unreadable record skipped ({e.msg})")
            continue
        if not isinstance(record, dict) or "kind" not in record:
            ev.problems.append(f"{path}:{number}: record without a kind skipped")
            continue
        kind = record["kind"]
        if kind == "environment":
            machine = str(record.get("machine", "unknown"))
            ev.environments.setdefault(machine, record)
        elif kind == "result":
            record["machine"] = machine
            ev.results[str(record.get("test", ""))] = record
        elif kind == "case":
            record["machine"] = machine
            ev.cases.setdefault(str(record.get("test", "")), []).append(record)


def read_junit(path: Path, ev: Evidence) -> None:
    """ctest --output-junit: the status of every test, including those that
    crashed or timed out before writing a result record."""
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError) as e:
        ev.problems.append(f"{path}:1: cannot read JUnit XML ({e})")
        return
    for tc in root.iter("testcase"):
        name = tc.get("name", "")
        status = tc.get("status", "")
        if tc.find("failure") is not None or tc.find("error") is not None:
            status = status or "fail"
        ev.ctest[name] = status or "run"


def read_registered(path: Path, ev: Evidence) -> None:
    """`ctest --show-only=json-v1`: every registered test, run or not, so that a
    label subset leaves the other claims not evaluated rather than in error."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        ev.problems.append(f"{path}:1: cannot read the ctest test list ({e})")
        return
    ev.registered.update(t["name"] for t in data.get("tests", []) if "name" in t)


def read_manifest(path: Path) -> list[dict[str, Any]]:
    data = json.loads(path.read_text(encoding="utf-8"))
    return list(data.get("cases", []))
