"""Reading evidence: JSON Lines files of test processes, ctest's JUnit XML and
the generator's manifest. A corrupt or truncated line is reported with its
file and line and skipped; it never stops the report."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .benchmarks import BenchmarkError
from .benchmarks import load as load_benchmarks


@dataclass
class Evidence:
    environments: dict[str, dict[str, Any]] = field(default_factory=dict)  # machine -> record
    results: dict[str, dict[str, Any]] = field(default_factory=dict)       # test -> result record
    cases: dict[str, list[dict[str, Any]]] = field(default_factory=dict)   # test -> case records
    ctest: dict[str, str] = field(default_factory=dict)                    # test -> junit status
    ctest_seconds: dict[str, float] = field(default_factory=dict)          # test -> junit time
    timeouts: dict[str, float] = field(default_factory=dict)               # test -> its ctest TIMEOUT
    registered: set[str] = field(default_factory=set)                      # every test ctest knows
    problems: list[str] = field(default_factory=list)                      # FILE:LINE: what
    files: int = 0
    # Merged evidence only: each platform's own evidence, and the environment
    # record that names it.
    platforms: dict[str, Evidence] = field(default_factory=dict)
    platform_env: dict[str, dict[str, Any]] = field(default_factory=dict)
    # platform -> the summary of its run's benchmarks.json (reports.benchmarks)
    benchmarks: dict[str, dict[str, Any]] = field(default_factory=dict)

    def merge(self, other: Evidence, platform: str) -> None:
        for test, records in other.cases.items():
            for r in records:
                r["platform"] = platform
            self.cases.setdefault(test, []).extend(records)
        for test, r in other.results.items():
            r["platform"] = platform
        self.results.update(other.results)
        self.environments.update(other.environments)
        self.ctest.update(other.ctest)
        self.ctest_seconds.update(other.ctest_seconds)
        self.timeouts.update(other.timeouts)
        self.registered |= other.registered
        self.files += other.files


# What `./backendcheck bench` (and the benchmarks.smoke test) leaves in a run's evidence directory.
BENCHMARKS_FILE = "benchmarks.json"

_GPU = re.compile(r"device 0: (.+?) \((sm_\d+)\)")


def platform_of(env: dict[str, Any]) -> tuple[str, str]:
    """(name, signature) of the platform an environment record describes: the
    machine, oneDNN's effective ISA, the OpenMP thread count and, when a GPU is
    usable, its name, architecture and cuDNN version. The signature, without
    the machine, names the expectation file of that kind of platform."""
    parts = [str(env.get("onednn_isa") or "unknown-isa"), f"{env.get('omp_max_threads', '?')}t"]
    backends = env.get("backends", {})
    cudnn = backends.get("cudnn", {})
    m = _GPU.search(str(cudnn.get("reason", "")) or str(backends.get("cublas", {}).get("reason", "")))
    if cudnn.get("available") and m:
        version = str(cudnn.get("version", "")).split(",")[0].replace("cuDNN ", "cudnn")
        parts += [m.group(1), m.group(2), version]
    signature = "-".join(re.sub(r"[^a-z0-9_.]+", "_", p.lower()).strip("_") for p in parts if p)
    return f"{env.get('machine', 'unknown')} ({signature})", signature


def read_evidence(dirs: list[Path]) -> Evidence:
    """Every directory (or file) is one run. A run's platform is what most of
    its environment records say (a case that starts its own process with
    ONEDNN_MAX_CPU_ISA set stays part of its run); runs on the same platform
    pool their evidence."""
    merged = Evidence()
    for d in dirs:
        run = Evidence(problems=merged.problems)
        paths = sorted(list(d.glob("*.jsonl")) + list(d.glob("*.jsonl.part"))) if d.is_dir() else [d]
        votes: Counter[str] = Counter()
        envs: dict[str, dict[str, Any]] = {}
        for path in paths:
            run.files += 1
            env = _read_file(path, run)
            if env is not None:
                name, _ = platform_of(env)
                votes[name] += 1
                envs.setdefault(name, env)
        if not votes:
            if run.files and (run.results or run.cases):
                merged.problems.append(f"{d}:1: no environment record: its platform is unknown")
            name = "unknown (unknown)"
            envs[name] = {}
        else:
            name = votes.most_common(1)[0][0]
        merged.platform_env.setdefault(name, envs[name])
        bench = d / BENCHMARKS_FILE if d.is_dir() else None
        if bench is not None and bench.exists():
            try:
                merged.benchmarks[name] = load_benchmarks(bench)
            except BenchmarkError as e:
                merged.problems.append(str(e))
        merged.platforms.setdefault(name, Evidence(problems=merged.problems)).merge(run, name)
        merged.merge(run, name)
    return merged


def _read_file(path: Path, ev: Evidence) -> dict[str, Any] | None:
    """Reads one process's records into ev; returns its environment record."""
    machine = "unknown"
    environment = None
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError as e:
        ev.problems.append(f"{path}:1: cannot read: {e.strerror or e}")
        return None
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
            environment = environment or record
        elif kind == "result":
            record["machine"] = machine
            ev.results[str(record.get("test", ""))] = record
        elif kind == "case":
            record["machine"] = machine
            ev.cases.setdefault(str(record.get("test", "")), []).append(record)
    return environment


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
        try:
            ev.ctest_seconds[name] = float(tc.get("time", "0"))
        except ValueError:
            pass


def read_registered(path: Path, ev: Evidence) -> None:
    """`ctest --show-only=json-v1`: every registered test, run or not, so that a
    label subset leaves the other claims not evaluated rather than in error."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        ev.problems.append(f"{path}:1: cannot read the ctest test list ({e})")
        return
    for t in data.get("tests", []) if isinstance(data, dict) else []:
        if not isinstance(t, dict) or "name" not in t:
            continue
        ev.registered.add(t["name"])
        for prop in t.get("properties", []):
            if isinstance(prop, dict) and prop.get("name") == "TIMEOUT":
                try:
                    ev.timeouts[t["name"]] = float(prop.get("value"))
                except (TypeError, ValueError):
                    pass


def ctest_outcome(ev: Evidence, test: str) -> str | None:
    """What ctest saw of a test that wrote no result record: "timed out"
    (failed at its TIMEOUT), "crashed" (failed otherwise: a signal, an abort,
    an exit before the result), or None."""
    if ev.ctest.get(test) != "fail":
        return None
    timeout = ev.timeouts.get(test)
    if timeout and ev.ctest_seconds.get(test, 0.0) >= 0.98 * timeout:
        return "timed out"
    return "crashed"


def read_manifest(path: Path) -> list[dict[str, Any]]:
    data = json.loads(path.read_text(encoding="utf-8"))
    return list(data.get("cases", []))
