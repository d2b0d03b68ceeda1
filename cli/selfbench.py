"""`./backendcheck bench --self`: the harness's own speed, measured on a
fresh clone of this checkout's commit, as the project's targets are stated
(issue "fast enough"): a cold `run` (a clone that has built nothing; the
downloads' caches outside it kept), then a warm `run` of that clone (built,
nothing to install), the per-case overhead of the evidence tests in that
warm run, and `test` on another fresh clone. Each is one run of one command
on this machine: a figure, not a verdict; BENCHMARKS.md and the report's
environment section show them beside the machine and the commit.

Per-case overhead: an evidence test's case (a case of a generated batch,
generators/emit.py) costs its ctest test's time plus its share of its
batch's time beyond its cases' own gtest time, less the case's own gtest
time; one process per case (--one-process-per-case), its test's time less
its gtest time. The median over the cases that ran.
"""

from __future__ import annotations

import json
import os
import platform
import re
import statistics
import subprocess
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path

from reports.self_speed import row

RESULT = "self-bench.json"  # under build/: the last measurement, for the report
BENCHMARKS = "BENCHMARKS.md"
HEADING = "## The harness's own speed, by `./backendcheck bench --self`"
TABLE_HEAD = ("| date | commit | machine | cold `run` | warm `run` | per-case overhead (median, cases) | `test` |\n"
              "| --- | --- | --- | --- | --- | --- | --- |\n")
_GTEST_TIME = re.compile(r"^\[\s+(?:OK|FAILED|SKIPPED)\s+\] (\S+) \((\d+) ms\)", re.M)


def own_ms(output: str, test: str) -> float | None:
    """The case's own time, as gtest printed it in its output."""
    for name, ms in _GTEST_TIME.findall(output):
        if name == test:
            return float(ms)
    return None


def overhead(build: Path, run_dir: Path) -> dict:
    """The per-case overhead of the evidence tests of the run in `build`
    (its ctest-junit.xml, ctest-tests.json) whose evidence is `run_dir`:
    {"median_s", "cases", "batched"}; "median_s" None where no case ran."""
    tests = json.loads((build / "ctest-tests.json").read_text(encoding="utf-8")).get("tests", [])
    batches: dict[str, list[str]] = {}
    for t in tests:
        command = t.get("command") or []
        if t.get("name", "").startswith("batch.") and "--name" in command:
            batches[t["name"]] = command[command.index("--name") + 2:]
    junit = {c.get("name"): (float(c.get("time") or 0), (c.findtext("system-out") or ""))
             for c in ET.parse(build / "ctest-junit.xml").getroot().iter("testcase")}
    outcomes = run_dir / "batch"
    share: dict[str, float] = {}
    for name, cases in batches.items():
        if name not in junit:
            continue
        ran = {}
        for case in cases:
            try:
                record = json.loads((outcomes / f"{case.replace('/', '%2F')}.json").read_text(encoding="utf-8"))
            except (OSError, ValueError):
                continue
            if record.get("outcome") != "left" and "ms" in record:
                ran[case] = float(record["ms"]) / 1000
        for case in ran:
            share[case] = max(junit[name][0] - sum(ran.values()), 0.0) / len(ran)
    costs = []
    for cases in batches.values():
        for case in cases:
            if case not in junit:
                continue
            seconds, output = junit[case]
            ms = own_ms(output, case)
            if ms is None:
                continue
            costs.append(seconds + share.get(case, 0.0) - (0.0 if case in share else ms / 1000))
    return {"median_s": round(statistics.median(costs), 3) if costs else None, "cases": len(costs),
            "batched": bool(share)}


def machine() -> str:
    """This machine in a few words: CPU model, the ISA extensions that
    change PyTorch's kernels, cores."""
    model, flags = platform.processor() or "?", set()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name") and model in ("?", "", "x86_64"):
                model = line.split(":", 1)[1].strip()
            if line.startswith("flags"):
                flags = set(line.split(":", 1)[1].split())
                break
    except OSError:
        pass
    isa = [f for f in ("avx2", "avx512f", "avx512_bf16", "avx512_fp16", "amx_tile") if f in flags]
    return f"{model} ({', '.join(isa) or 'no AVX2'}), {os.cpu_count()} cores"


def timed(args: list[str], cwd: Path, log: Path) -> tuple[float, int]:
    """Seconds and exit status of one command, its output into `log`."""
    began = time.monotonic()
    with log.open("w") as out:
        rc = subprocess.run(args, cwd=cwd, stdout=out, stderr=subprocess.STDOUT, check=False).returncode
    return round(time.monotonic() - began, 1), rc


def clone(root: Path, into: Path) -> str:
    """A fresh clone of `root`'s HEAD in `into`; that commit."""
    subprocess.run(["git", "clone", "-q", str(root), str(into)], check=True)
    return subprocess.run(["git", "-C", str(into), "rev-parse", "--short", "HEAD"], check=True,
                          capture_output=True, text=True).stdout.strip()


def latest_run(build_root: Path) -> tuple[Path, Path] | None:
    """The build tree and run directory of the last run of a clone: the
    build holding the newest ctest-junit.xml, its newest evidence run."""
    junits = sorted(build_root.glob("**/ctest-junit.xml"), key=lambda p: p.stat().st_mtime)
    if not junits:
        return None
    build = junits[-1].parent
    runs = sorted((build / "evidence").glob("run-*"), key=lambda p: p.stat().st_mtime)
    return (build, runs[-1]) if runs else None


def measure(root: Path, parts: tuple[str, ...], say) -> dict:
    """The figures `parts` ask for, each on a fresh clone of `root`."""
    result: dict = {"date": time.strftime("%Y-%m-%d"), "machine": machine(), "commit": None}
    with tempfile.TemporaryDirectory(prefix="backendcheck-self-") as tmp:
        logs = root / "build" / "self-bench-logs"
        logs.mkdir(parents=True, exist_ok=True)
        if "run" in parts:
            where = Path(tmp) / "run"
            result["commit"] = clone(root, where)
            say(f"cold run: ./backendcheck run in a fresh clone ({where}); log {logs / 'cold-run.log'}")
            result["cold_run_s"], result["cold_run_rc"] = timed(["./backendcheck", "run"], where, logs / "cold-run.log")
            say(f"warm run: ./backendcheck run again there; log {logs / 'warm-run.log'}")
            result["warm_run_s"], result["warm_run_rc"] = timed(["./backendcheck", "run"], where, logs / "warm-run.log")
            last = latest_run(where / "build")
            result["overhead"] = overhead(*last) if last else {"median_s": None, "cases": 0, "batched": False}
        if "test" in parts:
            where = Path(tmp) / "test"
            commit = clone(root, where)  # HEAD may have moved while the run part ran
            if result["commit"] not in (None, commit):
                result["test_commit"] = commit
            result["commit"] = result["commit"] or commit
            say(f"test: ./backendcheck test in a fresh clone ({where}); log {logs / 'test.log'}")
            result["test_s"], result["test_rc"] = timed(["./backendcheck", "test"], where, logs / "test.log")
    return result


def record(result: dict, benchmarks: Path) -> None:
    """Adds the measurement's row to BENCHMARKS.md's table of them (the
    section and table made where missing)."""
    text = benchmarks.read_text(encoding="utf-8") if benchmarks.exists() else "# Benchmarks\n"
    if HEADING not in text:
        text = text.rstrip("\n") + (f"\n\n{HEADING}\n\n`./backendcheck bench --self` (`--self=run` or `--self=test` "
                                    "for one part): each figure one run of one command on a fresh clone of the "
                                    "commit named (cli/selfbench.py says how the overhead is counted).\n\n"
                                    + TABLE_HEAD)
    start = text.index(HEADING)
    end = text.find("\n## ", start + len(HEADING))
    section = text[start:] if end < 0 else text[start:end + 1]
    new = section.rstrip("\n") + "\n" + row(result) + ("\n" if end >= 0 else "")
    benchmarks.write_text(text[:start] + new + ("" if end < 0 else text[end + 1:]), encoding="utf-8")
