"""Command line of the report.

    python3 -m reports --claims suites/claims.toml --manifest build/default/generated/cases.json \
        [--junit ctest-junit.xml] [--tests ctest-tests.json] --out DIR EVIDENCE_DIR...

Writes DIR/index.html and DIR/report.json, prints the page's path and the
verdict counts. Exit status: 0, or 3 when a guarantee is refuted, or 1 on
bad input (one line, FILE:LINE: message).
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

from generators.errors import SpecError

from .catalog import load_catalog
from .evidence import read_evidence, read_junit, read_manifest, read_registered
from .render import write_report
from .verdicts import judge_all, refuted_guarantees

EXIT_REFUTED_GUARANTEE = 3


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="backendcheck-report", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--claims", required=True, type=Path)
    parser.add_argument("--manifest", required=True, type=Path)
    parser.add_argument("--junit", type=Path, help="ctest --output-junit: catches crashed tests")
    parser.add_argument("--tests", type=Path, help="ctest --show-only=json-v1: every registered test")
    parser.add_argument("--out", required=True, type=Path)
    parser.add_argument("--partial", action="store_true",
                        help="the run built only some cases (a user's matrix): a claim none of them addresses "
                             "is not evaluated rather than an error")
    parser.add_argument("evidence", nargs="+", type=Path)
    args = parser.parse_args(argv)
    try:
        claims = load_catalog(args.claims)
    except SpecError as e:
        print(str(e), file=sys.stderr)
        return 1
    except OSError as e:
        print(f"{args.claims}:1: cannot read: {e.strerror or e}", file=sys.stderr)
        return 1
    try:
        manifest = read_manifest(args.manifest)
    except (OSError, ValueError) as e:
        print(f"{args.manifest}:1: cannot read the manifest: {e}", file=sys.stderr)
        return 1
    evidence = read_evidence(args.evidence)
    if args.junit:
        read_junit(args.junit, evidence)
    if args.tests:
        read_registered(args.tests, evidence)
    for problem in evidence.problems:
        print(f"warning: {problem}", file=sys.stderr)
    verdicts = judge_all(claims, manifest, evidence, partial=args.partial)
    page = write_report(args.out, verdicts, manifest, evidence)
    counts = Counter(v.verdict for v in verdicts)
    print(f"report: {page}")
    print("claims: " + ", ".join(f"{n} {v}" for v, n in sorted(counts.items())))
    bad = refuted_guarantees(verdicts)
    for v in bad:
        print(f"REFUTED GUARANTEE {v.claim.id}: {v.reason}", file=sys.stderr)
    return EXIT_REFUTED_GUARANTEE if bad else 0


if __name__ == "__main__":
    sys.exit(main())
