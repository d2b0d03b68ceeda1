"""How often does each CPU positive control miss, on a loaded machine?

    python3 benchmarks/control_miss_rate.py [--build build/default] [--runs 1000] [--load 2]
                                           [--filter GTEST_FILTER]

Starts --load busy processes (stress-ng --cpu N when installed, else busy
Python loops) so that every core is taken, then runs the determinism test
binary --runs times, a new process each time, on the positive controls
(the generated CpuControl and CpuMatmulControl cases and the
DeterminismCheck test of the check itself). Each control must catch its race
(two different digests) within its time budget; a control that does not is a
miss. Prints, per control, the misses out of the runs and the runs it took to
catch the race (median and largest, from the evidence records), and exits 1
when any control missed more than --allow times.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CONTROLS = "CpuControl/*:CpuMatmulControl/*:DeterminismCheck.CatchesAtomicReferenceWithTwoThreads"


def _spin() -> None:
    while True:
        pass


def start_load(n: int) -> list:
    if n <= 0:
        return []
    if shutil.which("stress-ng"):
        return [subprocess.Popen(["stress-ng", "--cpu", str(n), "--quiet"], start_new_session=True,
                                 stderr=subprocess.DEVNULL)]
    procs = [multiprocessing.Process(target=_spin, daemon=True) for _ in range(n)]
    for p in procs:
        p.start()
    return procs


def stop_load(load: list) -> None:
    for p in load:
        if isinstance(p, subprocess.Popen):
            os.killpg(p.pid, signal.SIGTERM)
            p.wait()
        else:
            p.terminate()


def one_run(binary: Path, gtest_filter: str, evidence: Path) -> dict[str, tuple[str, int]]:
    """test -> (outcome, runs it took to see two digests) for one process."""
    evidence.mkdir()
    env = {**os.environ, "BACKENDCHECK_EVIDENCE_DIR": str(evidence)}
    subprocess.run([str(binary), f"--gtest_filter={gtest_filter}"], env=env, capture_output=True, timeout=600,
                   check=False)
    out: dict[str, tuple[str, int]] = {}
    runs: dict[str, list[int]] = defaultdict(list)
    for path in evidence.glob("*.jsonl*"):
        for line in path.read_text().splitlines():
            r = json.loads(line)
            if r.get("kind") == "case":
                runs[r.get("test", "")] += [c.get("runs_to_distinct", 0) for c in r.get("checks", [])
                                            if c.get("name") == "bitwise"]
            elif r.get("kind") == "result":
                out[r["test"]] = (r["outcome"], 0)
    for test, (outcome, _) in out.items():
        out[test] = (outcome, max(runs.get(test, [0]) or [0]))
    shutil.rmtree(evidence)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build", type=Path, default=ROOT / "build" / "default")
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--load", type=int, default=os.cpu_count() or 2, help="busy processes beside the runs")
    parser.add_argument("--filter", default=CONTROLS)
    parser.add_argument("--allow", type=int, default=1, help="misses per control that still pass")
    args = parser.parse_args(argv)
    binary = args.build / "suites" / "cpu" / "determinism_tests"
    if not binary.exists():
        print(f"{binary}:1: no such test binary: build first (./backendcheck test)", file=sys.stderr)
        return 1
    work = Path(tempfile.mkdtemp(prefix="backendcheck-controls-"))
    misses: Counter[str] = Counter()
    seen: Counter[str] = Counter()
    took: dict[str, list[int]] = defaultdict(list)
    load = start_load(args.load)
    started = time.monotonic()
    try:
        for i in range(args.runs):
            for test, (outcome, runs) in one_run(binary, args.filter, work / str(i)).items():
                seen[test] += 1
                if outcome != "passed":
                    misses[test] += 1
                elif runs:
                    took[test].append(runs)
            if (i + 1) % 50 == 0:
                print(f"controls: {i + 1}/{args.runs} processes, {sum(misses.values())} miss(es), "
                      f"{time.monotonic() - started:.0f} s", flush=True)
    finally:
        stop_load(load)
        shutil.rmtree(work, ignore_errors=True)
    print(f"controls: {args.runs} processes with {args.load} busy process(es) beside them, "
          f"{time.monotonic() - started:.0f} s")
    worst = 0
    for test in sorted(seen):
        t = took[test]
        shape = f"runs to catch: median {statistics.median(t):g}, max {max(t)}" if t else "runs to catch: -"
        print(f"  {test}: {misses[test]} miss(es) in {seen[test]} runs; {shape}")
        worst = max(worst, misses[test])
    if not seen:
        print("controls: no control ran (check --filter)", file=sys.stderr)
        return 1
    return 1 if worst > args.allow else 0


if __name__ == "__main__":
    sys.exit(main())
