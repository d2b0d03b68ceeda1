"""Command line of the report.

    python3 -m reports --claims suites/claims.toml --manifest build/default/generated/cases.json \
        [--junit ctest-junit.xml] [--tests ctest-tests.json] [--baseline OLD/report.json] \
        [--known suites/known_findings.toml] [--strict] --out DIR EVIDENCE_DIR...

Each EVIDENCE_DIR is one run (of one machine); several are merged, each
claim judged per platform, and the cross-platform claims on all of them.
--install STATE (repeatable) names one torch install of a run across
versions (./backendcheck run --torch A --torch B): its key=value state file
gives its run directory, build directory (ctest's JUnit and test list) and
how far it got; an install that failed is shown as an error, the others'
verdicts stand. Platforms that differ only in their torch are compared:
report.json's `changes` and the "Changed between versions" section.
Every verdict is held to what --known declares for its platform
(reports/known.py): a finding that is known passes, and is shown as known.
Writes DIR/index.html, DIR/report.json and DIR/claims-junit.xml, prints the
page's path and the verdict counts, and one line on standard error for each
verdict that is not what is known. Exit status:
  0  every verdict is what is known for its platform;
  1  bad input (one line, FILE:LINE: message), no report;
  3  a guarantee refuted with no known finding (--strict: any refuted guarantee);
  4  another unexpected verdict: a folklore or advice verdict that moved, a
     known finding no longer seen;
  5  the model and PyTorch disagree without a known reason.
The first of 3, 5, 4 that applies is the status.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from inputs.errors import SpecError

from . import summary
from .pipeline import Inputs, build
from .render import write_junit, write_report


def _arguments(argv: list[str] | None) -> Inputs:
    parser = argparse.ArgumentParser(prog="backendcheck-report", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--claims", required=True, type=Path)
    parser.add_argument("--manifest", required=True, type=Path)
    parser.add_argument("--junit", type=Path, help="ctest --output-junit of the first run: catches crashed tests")
    parser.add_argument("--tests", type=Path, help="ctest --show-only=json-v1: every registered test")
    parser.add_argument("--out", required=True, type=Path)
    parser.add_argument("--partial", action="store_true",
                        help="the run built only some cases (a user's matrix): a claim none of them addresses "
                             "is not evaluated rather than an error")
    parser.add_argument("--baseline", type=Path, help="report.json of an earlier run: show the verdicts that changed")
    parser.add_argument("--known", type=Path, help="the known findings, keyed by condition "
                                                   "(suites/known_findings.toml)")
    parser.add_argument("--strict", action="store_true",
                        help="exit 3 on every refuted guarantee, known or not")
    parser.add_argument("--install", action="append", default=[], type=Path, dest="installs",
                        help="the state file of one torch install of a run across versions (repeatable)")
    parser.add_argument("evidence", nargs="*", type=Path)
    return Inputs(**vars(parser.parse_args(argv)))


def main(argv: list[str] | None = None) -> int:
    inputs = _arguments(argv)
    try:
        report = build(inputs)
    except SpecError as e:
        print(str(e), file=sys.stderr)
        return 1
    page = write_report(inputs.out, report)
    write_junit(inputs.out / "claims-junit.xml", report)
    for line in summary.lines(report, page):
        print(line)
    for line in summary.alarms(report):
        print(line, file=sys.stderr)
    return report.exit_code()


if __name__ == "__main__":
    sys.exit(main())
