"""Fault isolation and durable evidence, with real test processes.

    python3 -m reports.tests.fault_isolation BUILD_DIR

1. A crash (SIGSEGV), an abort and a hang are injected
   (BACKENDCHECK_INJECT_FAULT) into three of nine cases run by ctest, two at
   a time, with a 10 s timeout each: the report must show exactly those three
   as crashed or timed out and every other case passed, and every evidence
   line of the nine processes must be whole (no interleaving under -j2).
   Then the same nine in one batch (runner/batch.py), as ./backendcheck runs
   them: the same outcomes, the six others run in the batch, each fault
   costing its own case only (which its own test then runs alone).
2. A test binary is killed with SIGKILL mid-run: every record it completed
   is read back, and a truncated line appended to its file is reported with
   its file and line, not fatal.
Exit 0 when all hold; 1 with what did not; 77 (a ctest skip) when the build
has not generated the default matrix's cases (a user's --matrix build).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from reports.evidence import read_evidence

ROOT = Path(__file__).resolve().parents[2]
NORMAL = [f"Cpu/Determinism.Bitwise/{d}_{e}_T{t}_Small" for d in ("Fwd", "BwdData", "BwdWeights")
          for e, t in (("Onednn", 1), ("Onednn", 2), ("ReferenceOwner", 2))]
FAULTS = {NORMAL[1]: "crash", NORMAL[4]: "abort", NORMAL[7]: "hang"}
TIMEOUT_S = 10


BATCH = ROOT / "runner" / "batch.py"


def _project(tmp: Path, binary: Path, evidence: Path, batched: bool) -> Path:
    """A ctest project of one test per case, as gtest_discover_tests makes
    them; `batched`: with the case's command through batch.py and a batch
    test ahead of them, as bc_test_binary and generators/emit.py make them."""
    project = tmp / "project"
    project.mkdir()
    faults = ",".join(f"{mode}={test}" for test, mode in FAULTS.items())
    env = f"BACKENDCHECK_EVIDENCE_DIR={evidence};BACKENDCHECK_INJECT_FAULT={faults}"
    lines = []
    if batched:
        lines.append(f'add_test("batch.1" "{sys.executable}" "{BATCH}" shard --binary "{binary}" '
                     f'--timeout {TIMEOUT_S} --name batch.1 ' + " ".join(f'"{t}"' for t in NORMAL) + ")")
        lines.append(f'set_tests_properties("batch.1" PROPERTIES TIMEOUT 300 ENVIRONMENT "{env}")')
    for test in NORMAL:
        through = f'"{sys.executable}" "{BATCH}" case ' if batched else ""
        lines.append(f'add_test("{test}" {through}"{binary}" "--gtest_filter={test}")')
        lines.append(f'set_tests_properties("{test}" PROPERTIES TIMEOUT {TIMEOUT_S} ENVIRONMENT "{env}"'
                     + (' DEPENDS "batch.1")' if batched else ")"))
    (project / "CTestTestfile.cmake").write_text("\n".join(lines) + "\n")
    return project


def check_faults(build: Path, tmp: Path, batched: bool = False) -> list[str]:
    problems: list[str] = []
    evidence = tmp / "evidence"
    project = _project(tmp, build / "suites" / "cpu" / "determinism_tests", evidence, batched)
    junit = tmp / "junit.xml"
    tests = tmp / "tests.json"
    tests.write_text(subprocess.run(["ctest", "--test-dir", str(project), "--show-only=json-v1"],
                                    capture_output=True, text=True, check=True).stdout)
    started = time.monotonic()
    subprocess.run(["ctest", "--test-dir", str(project), "-j2", "--output-junit", str(junit)],
                   capture_output=True, text=True, check=False, timeout=300,
                   env={**os.environ, "BACKENDCHECK_BATCH": str(tests)} if batched else None)
    elapsed = time.monotonic() - started
    out = tmp / "report"
    r = subprocess.run([sys.executable, "-m", "reports", "--claims", str(ROOT / "catalog" / "claims.toml"),
                        "--manifest", str(build / "generated" / "cases.json"), "--junit", str(junit), "--tests", str(tests),
                        "--partial", "--out", str(out), str(evidence)],
                       cwd=ROOT, capture_output=True, text=True, check=False,
                       env={**os.environ, "PYTHONPATH": str(ROOT)})
    if r.returncode not in (0, 3):
        return [f"the report failed ({r.returncode}): {r.stderr.strip()}"]
    rows = {c["test"]: c for c in json.loads((out / "report.json").read_text())["cases"]}
    for test in NORMAL:
        want = {"crash": "crashed", "abort": "crashed", "hang": "timed out"}.get(FAULTS.get(test, ""), "passed")
        got = rows.get(test, {}).get("outcome", "missing")
        print(f"  {test}: {FAULTS.get(test, 'no fault')} -> {got}")
        if got != want:
            problems.append(f"{test}: expected {want}, the report shows {got}")
    others = [t for t, c in rows.items() if t not in NORMAL and c["outcome"] != "not run"]
    if others:
        problems.append(f"cases that did not run show outcomes: {others[:3]}")
    files = sorted(evidence.glob("*.jsonl*"))
    if batched:
        # The batch: the six in it, a fresh process after each fault; each
        # fault's test then ran its case alone.
        seen = {t: (json.loads(p.read_text()) if p.exists() else {}).get("outcome", "missing")
                for t in NORMAL for p in [evidence / "batch" / (t.replace("/", "%2F") + ".json")]}
        wrong = {t: o for t, o in seen.items() if o != ("left" if t in FAULTS else "passed")}
        if wrong:
            problems.append(f"in the batch: {wrong} (a fault leaves its case to its own test, the others pass)")
        processes = len(list((evidence / "batch" / ".state" / "batch.1").glob("process-*.log")))
        if not 1 < processes <= 1 + len(FAULTS) or len(files) != processes + len(FAULTS):
            problems.append(f"{len(files)} evidence files for {processes} batch processes (at most one after each "
                            f"fault) and {len(FAULTS)} cases alone")
    elif len(files) != len(NORMAL):
        problems.append(f"{len(files)} evidence files for {len(NORMAL)} processes")
    for f in files:
        for number, line in enumerate(f.read_text().splitlines(), 1):
            try:
                json.loads(line)
            except ValueError:
                problems.append(f"{f}:{number}: not one whole record (interleaved or torn)")
    print(f"  ctest -j2 ran {len(NORMAL)} cases with 3 faults{' in a batch' if batched else ''} in {elapsed:.1f} s; "
          f"{len(files)} evidence files")
    return problems


def check_kill(build: Path, tmp: Path) -> list[str]:
    evidence = tmp / "killed"
    binary = build / "suites" / "cpu" / "determinism_tests"
    proc = subprocess.Popen([str(binary), "--gtest_filter=Cpu/Determinism.*:CpuControl/Determinism.*"],
                            env={**os.environ, "BACKENDCHECK_EVIDENCE_DIR": str(evidence)},
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    results = 0
    while time.monotonic() < deadline and proc.poll() is None:
        parts = list(evidence.glob("*.jsonl.part"))
        results = sum(line.count('"kind":"result"') for p in parts for line in p.read_text().splitlines())
        if results >= 5:
            break
        time.sleep(0.05)
    if proc.poll() is not None:
        return ["the test binary ended before it could be killed"]
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    parts = list(evidence.glob("*.jsonl.part"))
    if len(parts) != 1:
        return [f"expected the killed process's .jsonl.part file, found {[p.name for p in parts]}"]
    text = parts[0].read_text()
    whole = sum(1 for line in text.splitlines() if line.strip())
    ev = read_evidence([evidence])
    read = sum(len(v) for v in ev.cases.values()) + len(ev.results) + len(ev.environments)
    problems = [] if read == whole and not ev.problems else [f"read {read} of {whole} records: {ev.problems}"]
    with parts[0].open("a") as f:
        f.write('{"kind":"case","test":"Cpu/Determinism.Bitwise/Torn","dig')
    ev = read_evidence([evidence])
    torn = [p for p in ev.problems if p.startswith(f"{parts[0]}:{whole + 1}: unreadable record skipped")]
    if not torn or len(ev.results) < results:
        problems.append(f"a torn last line: problems {ev.problems}, {len(ev.results)} results read")
    print(f"  SIGKILL after {results} results: {whole} whole records, all read back; torn line: {torn[:1]}")
    return problems


SKIP = 77


def main(argv: list[str]) -> int:
    build = Path(argv[0]).resolve()
    manifest = json.loads((build / "generated" / "cases.json").read_text())
    have = {c["test"] for c in manifest.get("cases", [])}
    if not set(NORMAL) <= have:
        print("skipped: this build has not generated the default matrix's CPU determinism cases "
              "(a user's --matrix build); the check runs with the default specs")
        return SKIP
    problems = []
    for check in (check_faults, lambda b, t: check_faults(b, t, batched=True), check_kill):
        with tempfile.TemporaryDirectory() as d:
            problems += check(build, Path(d))
    for p in problems:
        print(f"FAIL: {p}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
