"""`./backendcheck run` leaves out the project's tests of itself (the ctest
label `selftest`); `test` runs everything. This check, run by `test`, holds
that no claim loses its evidence to that: every test that a claim's evidence
filter (its `tests` patterns and `cases` selectors, the prediction's too)
matches among the build's tests is one that `run` runs.

    python3 -m reports.run_selection --claims suites/claims.toml \
        --manifest BUILD/generated/cases.json --build-dir BUILD [--ctest CTEST]

reads the build's tests with their labels (`ctest --show-only=json-v1`), prints
one line per test a claim would lose, and exits 1 if any.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from inputs.errors import SpecError

from .catalog import Claim, load_catalog
from .evidence import Evidence, read_manifest, read_registered
from .verdicts import select_tests

# The label of the tests `run` leaves out (./backendcheck's SELFTEST_LABEL).
SELFTEST_LABEL = "selftest"
SCRIPT = Path(__file__).resolve().parents[1] / "backendcheck"


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


def script_label() -> str:
    """The label ./backendcheck's run leaves out, as the script spells it."""
    found = re.search(r"^SELFTEST_LABEL=(\S+)$", SCRIPT.read_text(encoding="utf-8"), re.MULTILINE)
    return found.group(1) if found else ""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m reports.run_selection", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--claims", required=True, type=Path)
    parser.add_argument("--manifest", required=True, type=Path)
    parser.add_argument("--build-dir", required=True, type=Path)
    parser.add_argument("--ctest", default="ctest")
    args = parser.parse_args(argv)
    try:
        claims, manifest = load_catalog(args.claims), read_manifest(args.manifest)
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
    if script_label() != SELFTEST_LABEL:
        bad.append(f"{SCRIPT}: run leaves out the label {script_label()!r}, this check {SELFTEST_LABEL!r}")
    for line in bad:
        print(line, file=sys.stderr)
    left = run_leaves_out(ev)
    print(f"run.selection: run runs {len(ev.registered) - len(left)} of {len(ev.registered)} tests "
          f"(leaves out {len(left)} labelled {SELFTEST_LABEL}); "
          + (f"{len(bad)} claim evidence test(s) lost" if bad else "every claim keeps its evidence"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
