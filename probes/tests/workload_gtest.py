"""The workload probe through its gtest, TorchPython.Workload, as the ctest
test Workload.<id> runs it (BACKENDCHECK_WORKLOAD, BACKENDCHECK_RECORD_AS):
every record of the process is named for the workload, its fact is the
probe's, and without a workload named the test is not evaluated.

    python3 -m probes.tests.workload_gtest PYTORCH_PYTHON_TESTS_BINARY
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

DATA = Path(__file__).resolve().parent / "data" / "workloads.toml"


def records(binary: str, env: dict[str, str]) -> list[dict]:
    with tempfile.TemporaryDirectory() as tmp:
        run = subprocess.run([binary, "--gtest_filter=TorchPython.Workload"], capture_output=True, text=True,
                             env={**os.environ, "BACKENDCHECK_EVIDENCE_DIR": tmp, **env}, timeout=900)
        if run.returncode != 0:
            raise AssertionError(f"exit {run.returncode}: {run.stdout[-800:]} {run.stderr[-800:]}")
        return [json.loads(line) for f in sorted(Path(tmp).glob("*.jsonl")) for line in f.read_text().splitlines()]


def main(argv: list[str]) -> int:
    binary = argv[1]
    named = records(binary, {"BACKENDCHECK_WORKLOAD": f"{DATA}:holds", "BACKENDCHECK_RECORD_AS": "Workload.holds"})
    tests = {r.get("test") for r in named if r["kind"] != "environment"}
    failures = [] if tests == {"Workload.holds"} else [f"records named {sorted(map(str, tests))}, not Workload.holds"]
    checks = [c for r in named if r["kind"] == "case" for c in r.get("checks", [])]
    if [c["outcome"] for c in checks] != ["passed"]:
        failures.append(f"the fact of a step that holds: {checks}")
    bare = records(binary, {"BACKENDCHECK_WORKLOAD": "", "BACKENDCHECK_RECORD_AS": ""})
    results = [r for r in bare if r["kind"] == "result"]
    if [(r["test"], r["outcome"]) for r in results] != [("TorchPython.Workload", "skipped")]:
        failures.append(f"without a workload named: {results}")
    for f in failures:
        print(f"workload_gtest: {f}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
