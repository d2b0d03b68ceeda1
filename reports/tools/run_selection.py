"""`./backendcheck run` leaves out the project's tests of itself (the ctest
label `selftest`); `test` runs everything. This check, run by `test`, holds
that no claim loses its evidence to that: every test that a claim's evidence
filter (its `tests` patterns and `cases` selectors, the prediction's too)
matches among the build's tests is one that `run` runs.

    python3 -m reports.tools.run_selection --claims catalog/claims.toml \
        --manifest BUILD/generated/cases.json --build-dir BUILD [--ctest CTEST]

reads the build's tests with their labels (`ctest --show-only=json-v1`), prints
one line per test a claim would lose, and exits 1 if any.

It also holds the label `torch-free` to its meaning, since `test` over several
installs runs those tests on the first install only: each is a selftest, runs
the build's own python3 (the same for every install), and names nothing of the
build but bc_problem and bc_cudnn_log (which link no torch; bc_cudnn_log calls
no engine but cuDNN, and that only on a device) and the folder its
screenshots go to.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from inputs import labels
from inputs.errors import SpecError

from ..catalog import Claim, load_claims
from ..evidence import Evidence, read_manifest, read_registered
from ..verdicts import select_tests

# The labels the command line selects by (inputs/labels.py).
SELFTEST_LABEL = labels.SELFTEST
TORCH_FREE_LABEL = labels.TORCH_FREE
# What of the build a torch-free test may name: bc_problem and bc_cudnn_log
# (the harness's parsers, no torch), and the folder the browser check writes
# its screenshots into.
TORCH_FREE_USES = ("bc_problem", "bc_cudnn_log", "artifacts")


def run_leaves_out(ev: Evidence) -> set[str]:
    """The registered tests `run` does not run."""
    return {t for t in ev.registered if SELFTEST_LABEL in ev.labels.get(t, [])}


def lost(claims: list[Claim], manifest: list[dict], ev: Evidence) -> list[str]:
    """"claim: test" for each test a claim's filter matches that `run` leaves out."""
    out = run_leaves_out(ev)
    lines = []
    for claim in claims:
        for block in (claim, claim.prediction):
            if block is None or block.rule in ("out-of-scope", ""):
                continue
            for test in select_tests(block.tests, block.cases, manifest, ev):
                if test in out:
                    lines.append(f"{claim.id}: {test} carries the label {SELFTEST_LABEL}, which run leaves out")
    return lines


def not_torch_free(tests: list[dict], build_dir: Path, python: str) -> list[str]:
    """"test: why" for each test labelled torch-free whose outcome could
    depend on the install: not a selftest, run by an interpreter other than
    the build's own python3 (`python`, found on PATH, so the same for every
    install of one run), or
    naming something of the build other than bc_problem, bc_cudnn_log and
    the artifacts folder (in its command or environment)."""
    build = str(build_dir.resolve())
    lines = []
    for t in tests:
        props = {p["name"]: p["value"] for p in t.get("properties", [])}
        labels = props.get("LABELS", [])
        if TORCH_FREE_LABEL not in labels:
            continue
        name, command = t["name"], t.get("command", [])
        words = command + [v.split("=", 1)[-1] for v in props.get("ENVIRONMENT", [])]
        if SELFTEST_LABEL not in labels:
            lines.append(f"{name}: labelled {TORCH_FREE_LABEL} but not {SELFTEST_LABEL}, so it may decide a claim")
        # Not resolved: a virtual environment's python links to the system's.
        if command and os.path.abspath(command[0]) != os.path.abspath(python):
            lines.append(f"{name}: labelled {TORCH_FREE_LABEL} but run by {command[0]}, not the build's own "
                         f"python3 ({python}), the same for every install")
        for w in words:
            if w.startswith(build) and Path(w).name not in TORCH_FREE_USES:
                lines.append(f"{name}: labelled {TORCH_FREE_LABEL} but uses {w}, a file of this build")
    return lines


def build_python(build_dir: Path) -> str:
    """The build's own python3 (its tools' interpreter), as its cache names it."""
    cache = build_dir / "CMakeCache.txt"
    found = re.search(r"^Python3_EXECUTABLE:[A-Z]+=(.*)$", cache.read_text(encoding="utf-8"), re.MULTILINE) \
        if cache.is_file() else None
    return found.group(1).strip() if found else sys.executable


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m reports.tools.run_selection", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--claims", required=True, type=Path)
    parser.add_argument("--manifest", required=True, type=Path)
    parser.add_argument("--build-dir", required=True, type=Path)
    parser.add_argument("--ctest", default="ctest")
    args = parser.parse_args(argv)
    try:
        claims, manifest = load_claims(args.claims), read_manifest(args.manifest)
    except SpecError as e:
        print(str(e), file=sys.stderr)
        return 1
    ev = Evidence()
    with tempfile.TemporaryDirectory() as tmp:
        tests = Path(tmp) / "tests.json"
        listed = subprocess.run([args.ctest, "--test-dir", str(args.build_dir), "--show-only=json-v1"],
                                capture_output=True, text=True, check=False)
        tests.write_text(listed.stdout, encoding="utf-8")
        read_registered(tests, ev)
    if not ev.registered:
        print(f"{args.build_dir}:1: ctest lists no test here (exit {listed.returncode}): {listed.stderr[:200]}",
              file=sys.stderr)
        return 1
    bad = lost(claims, manifest, ev)
    bad += not_torch_free(json.loads(listed.stdout).get("tests", []), args.build_dir,
                          build_python(args.build_dir))
    for line in bad:
        print(line, file=sys.stderr)
    left = run_leaves_out(ev)
    free = sum(TORCH_FREE_LABEL in ev.labels.get(t, []) for t in ev.registered)
    print(f"run.selection: run runs {len(ev.registered) - len(left)} of {len(ev.registered)} tests "
          f"(leaves out {len(left)} labelled {SELFTEST_LABEL}); {free} labelled {TORCH_FREE_LABEL}; "
          + (f"{len(bad)} fault(s)" if bad else "every claim keeps its evidence"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
