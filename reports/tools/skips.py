"""Prints every skipped test with its reason, from the evidence result
records: what this machine could not evaluate, and why. With --require
DEVICE (and ctest's test list), fails when no test of that device ran: a
GPU run in which every GPU test skipped is a failed GPU run.

    python3 -m reports.tools.skips [--require cpu|cuda --tests ctest-tests.json] EVIDENCE_DIR...
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..evidence import Evidence, read_evidence, read_registered

DEVICE_LABELS = {"cpu": "cpu", "cuda": "gpu"}


def required_ran(ev: Evidence, tests_json: Path, device: str) -> str | None:
    """Why the run fails --require DEVICE, or None when a test of it ran."""
    labelled = Evidence()
    read_registered(tests_json, labelled)
    # A test labelled for both devices (a PyTorch probe with CUDA entries)
    # runs on either: it counts for neither.
    others = set(DEVICE_LABELS.values()) - {DEVICE_LABELS[device]}
    mine = sorted(t for t, labels in labelled.labels.items()
                  if DEVICE_LABELS[device] in labels and not others & set(labels))
    if not mine:
        return f"--require {device}: this build has no {device} test"
    ran = [t for t in mine if ev.results.get(t, {}).get("outcome") in ("passed", "failed")]
    if ran:
        return None
    first = mine[0]
    why = str(ev.results.get(first, {}).get("message", "")).strip() or "no result"
    return f"--require {device}: none of the {len(mine)} {device} tests ran, e.g. {first}: {why.splitlines()[0]}"


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="reports.tools.skips", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--require", choices=sorted(DEVICE_LABELS))
    parser.add_argument("--tests", type=Path, help="ctest --show-only=json-v1 (needed with --require)")
    parser.add_argument("evidence", nargs="+", type=Path)
    args = parser.parse_args(argv)
    ev = read_evidence(args.evidence)
    skipped = sorted((t, r.get("message", "").strip()) for t, r in ev.results.items() if r.get("outcome") == "skipped")
    if skipped:
        print(f"{len(skipped)} test(s) skipped, not evaluated on this machine:")
        for test, reason in skipped:
            print(f"  SKIPPED {test}: {reason or '(no reason given)'}")
    if args.require:
        if args.tests is None:
            parser.error("--require needs --tests")
        if (why := required_ran(ev, args.tests, args.require)) is not None:
            print(f"backendcheck: {why}", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
