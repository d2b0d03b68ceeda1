"""A probe of torch's Python that raises is an error, never a refutation.

    python3 -m reports.tests.probe_error BUILD_DIR

Runs the real TorchPython test of `mkldnn-available` with
BACKENDCHECK_PROBE_FAULT making its probe raise AttributeError (as a renamed
attribute of torch._C once did), then judges the claim from that evidence
with the catalog: the test must fail, its record must carry an "error"
check naming AttributeError, and the claim's verdict must be "error", not
"refuted". A control run without the fault must decide the claim. Then the
same for one entry of use_deterministic_algorithms's own list
(TorchPython.DocumentedDeterminismList with BACKENDCHECK_PROBE_FAULT=
documented:ENTRY, and BACKENDCHECK_DOCUMENTED_ONLY naming that entry and
one other, so that the list is not checked whole): the test fails, its check
is an "error" that keeps the other entry's observations, and the report
judges that entry "error", not refuted. Exit 0 when all hold; 1 with what did not; 77 (a ctest skip) when no
torch imports.
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


LISTED_TEST = "TorchPython.DocumentedDeterminismList"
LISTED_ENTRY = "throws:torch.Tensor.put_:any:accumulate=False"  # in every release's list, run on the CPU
OTHER_ENTRY = "deterministic:torch.Tensor.index_put:cpu:accumulate=True"  # also in every release's list


def _run(binary: Path, evidence: Path, fault: str, test: str = TEST, only: str = "") -> tuple[int, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("BACKENDCHECK_PROBE_FAULT", "BACKENDCHECK_DOCUMENTED_ONLY")}
    if only:
        env["BACKENDCHECK_DOCUMENTED_ONLY"] = only
    env["BACKENDCHECK_EVIDENCE_DIR"] = str(evidence)
    if fault:
        env["BACKENDCHECK_PROBE_FAULT"] = fault
    r = subprocess.run([str(binary), f"--gtest_filter={test}"], env=env, capture_output=True, text=True,
                       timeout=600, check=False)
    return r.returncode, r.stdout + r.stderr


def _listed_entry_fault(binary: Path, evidence: Path) -> list[str]:
    """One entry of the documented list fails, ending the child that ran it: the
    harness's error, the rest of the list kept and judged."""
    from reports import documented
    # The faulty entry and one other, not the whole list: what is checked is
    # that one entry's failure is its own, the other's observations kept.
    rc, out = _run(binary, evidence, f"documented:{LISTED_ENTRY}", LISTED_TEST, f"{LISTED_ENTRY},{OTHER_ENTRY}")
    ev = read_evidence([evidence])
    checks = [c for r in ev.cases.get(LISTED_TEST, []) for c in r.get("checks", [])]
    problems = []
    if rc == 0:
        problems.append(f"with an injected fault in {LISTED_ENTRY} the documented-list test passed; it must fail")
    if not any(c.get("outcome") == "error" and LISTED_ENTRY in c.get("detail", "") for c in checks):
        problems.append(f"no 'error' check naming {LISTED_ENTRY}: {[c.get('outcome') for c in checks]}\n{out[-2000:]}")
    listed = documented.judge(ev)
    entries = {e["id"]: e for d in listed.values() for e in d["entries"]}
    if entries.get(LISTED_ENTRY, {}).get("verdict") != "error":
        problems.append(f"the faulty entry is judged {entries.get(LISTED_ENTRY, {}).get('verdict')}, not error")
    if not any(e["verdict"] == "supported" for e in entries.values()):
        problems.append("the other entries were not judged: their observations were lost")
    if not problems:
        print(f"probe_error: injected fault in {LISTED_ENTRY} -> that entry is an error, "
              f"{sum(e['verdict'] == 'supported' for e in entries.values())} other entries supported")
    return problems


def _verdict(evidence: Path) -> tuple[str, str, list[dict]]:
    claim = next(c for c in load_catalog(ROOT / "catalog" / "claims.toml") if c.id == CLAIM)
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
        rc, out = _run(binary, control, fault="")
        verdict, reason, _ = _verdict(control)
        if verdict == "not evaluated" and "cannot import torch" in reason:
            print(f"probe_error: skipped: {reason}")
            return 77
        if rc != 0 or verdict not in ("supported", "refuted"):
            problems.append(f"control: exit {rc}, verdict {verdict} ({reason}); it must decide the claim:\n{out}")
        rc, out = _run(binary, faulty, fault="mkldnn_available")
        verdict, reason, checks = _verdict(faulty)
        if rc == 0:
            problems.append("with the injected AttributeError the test passed; it must fail")
        if not any(c.get("outcome") == "error" and "AttributeError" in c.get("detail", "") for c in checks):
            problems.append(f"no 'error' check naming AttributeError in the evidence: {checks}")
        if verdict != "error":
            problems.append(f"with the injected AttributeError the verdict is {verdict} ({reason}), not error")
        else:
            print(f"probe_error: injected AttributeError -> verdict error: {reason}")
        listed = Path(tmp) / "listed"
        listed.mkdir()
        problems += _listed_entry_fault(binary, listed)
    for p in problems:
        print(f"probe_error: {p}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
