"""A probe of torch's Python that raises is an error, never a refutation.

    python3 -m reports.tests.probe_error BUILD_DIR

Runs the real TorchPython test of `mkldnn-available` with
BACKENDCHECK_PROBE_FAULT making its probe raise AttributeError (as a renamed
attribute of torch._C once did), then judges the claim from that evidence
with the catalog: the test must fail, its record must carry an "error"
check naming AttributeError, and the claim's verdict must be "error", not
"refuted". A control run without the fault must decide the claim. Exit 0
when all hold; 1 with what did not; 77 (a ctest skip) when no torch imports.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

from reports.catalog import load_catalog
from reports.evidence import read_evidence
from reports.verdicts import judge

ROOT = Path(__file__).resolve().parents[2]
TEST = "TorchPython.MkldnnIsAvailableReportsTheBuild"
CLAIM = "mkldnn-available"


def _run(binary: Path, evidence: Path, fault: bool) -> tuple[int, str]:
    env = {k: v for k, v in os.environ.items() if k != "BACKENDCHECK_PROBE_FAULT"}
    env["BACKENDCHECK_EVIDENCE_DIR"] = str(evidence)
    if fault:
        env["BACKENDCHECK_PROBE_FAULT"] = "mkldnn_available"
    r = subprocess.run([str(binary), f"--gtest_filter={TEST}"], env=env, capture_output=True, text=True,
                       timeout=120, check=False)
    return r.returncode, r.stdout + r.stderr


def _verdict(evidence: Path) -> tuple[str, str, list[dict]]:
    claim = next(c for c in load_catalog(ROOT / "suites" / "claims.toml") if c.id == CLAIM)
    ev = read_evidence([evidence])
    v = judge(claim, [], ev, partial=True)
    checks = [c for r in ev.cases.get(TEST, []) for c in r.get("checks", [])]
    return v.verdict, v.reason, checks


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: python3 -m reports.tests.probe_error BUILD_DIR", file=sys.stderr)
        return 1
    binary = Path(argv[1]) / "suites" / "cpu" / "pytorch_python_tests"
    problems: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        control, faulty = Path(tmp) / "control", Path(tmp) / "fault"
        control.mkdir()
        faulty.mkdir()
        rc, out = _run(binary, control, fault=False)
        verdict, reason, _ = _verdict(control)
        if verdict == "not evaluated" and "cannot import torch" in reason:
            print(f"probe_error: skipped: {reason}")
            return 77
        if rc != 0 or verdict not in ("supported", "refuted"):
            problems.append(f"control: exit {rc}, verdict {verdict} ({reason}); it must decide the claim:\n{out}")
        rc, out = _run(binary, faulty, fault=True)
        verdict, reason, checks = _verdict(faulty)
        if rc == 0:
            problems.append("with the injected AttributeError the test passed; it must fail")
        if not any(c.get("outcome") == "error" and "AttributeError" in c.get("detail", "") for c in checks):
            problems.append(f"no 'error' check naming AttributeError in the evidence: {checks}")
        if verdict != "error":
            problems.append(f"with the injected AttributeError the verdict is {verdict} ({reason}), not error")
        else:
            print(f"probe_error: injected AttributeError -> verdict error: {reason}")
    for p in problems:
        print(f"probe_error: {p}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
