"""Command line of the report.

    python3 -m reports --claims catalog/claims.toml --manifest build/default/generated/cases.json \
        [--junit ctest-junit.xml] [--tests ctest-tests.json] [--baseline OLD/report.json [--fail-on-change]] \
        [--expect-platform NAME]... [--expect-platforms FILE]... \
        [--known catalog/known_findings.toml] [--known TEAM.toml]... [--write-findings FILE] [--strict] \
        --out DIR EVIDENCE_DIR...

Each EVIDENCE_DIR is one run (of one machine); several are merged, each
claim judged per platform, and the cross-platform claims on all of them.
--install STATE (repeatable) names one torch install of a run across
versions (./backendcheck run --torch A --torch B): its state file (JSON,
inputs/install_state.py) gives its run directory, build directory (ctest's
JUnit and test list) and how far it got; an install that failed is shown as an error, the others'
verdicts stand. Platforms that differ only in their torch are compared:
report.json's `changes` and the "Changed between versions" section.
Every verdict is held to the known findings (reports/known.py): a finding
that is known passes, and is shown as known, with the entry that decided
(FILE:LINE). The files are read in this order: the repository's
catalog/known_findings.toml (where given), then those the environment
variable BACKENDCHECK_KNOWN lists (absolute paths, `:`-separated, as PATH),
then each other --known in the order given. Where entries of two files both
apply to a claim on a platform and disagree, the later file's stands; two of
one file that disagree are bad input.
--baseline OLD/report.json compares each claim on each platform with that
earlier report (reports/baseline.py): the verdicts that moved, one line
each naming the claim, the platform, the old and the new verdict, and the
platforms of the baseline that left no evidence now (missing). Each
--expect-platform NAME (or line of an --expect-platforms FILE) is a platform
that should have reported: one that did not is shown as missing in the
page, report.json and this summary. --fail-on-change makes a move or a
missing platform fail the run (status 6). report.json records the run: the
commit, the CI run's id and URL (GitHub Actions, GitLab CI) and the time.
Writes DIR/index.html, DIR/report.json and DIR/claims-junit.xml, prints the
page's path and the verdict counts, and on standard error one line for each
verdict that is not what is known, each followed by the [[finding]] entry
that would make it known on its platform (reports/new_findings.py), ready to
paste into a findings file of your own. --write-findings FILE appends those
entries to FILE (created if missing), each after a comment naming its
platform; the same report with FILE given last as --known then exits 0.
Exit status:
  0  every verdict is what is known for its platform;
  1  bad input (one line, FILE:LINE: message: a missing or malformed
     findings file, two entries of one file that disagree), no report; or
     the FILE of --write-findings could not be written;
  3  a guarantee or a team's workload refuted with no known finding (--strict: any refuted guarantee);
  4  another unexpected verdict: a folklore or advice verdict that moved, a
     known finding no longer seen;
  5  the model and PyTorch disagree without a known reason;
  6  --fail-on-change: a verdict moved on a platform since the baseline, or a
     platform of the baseline or of the expected list is missing.
The first of 3, 5, 4, 6 that applies is the status.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from inputs.errors import SpecError

from . import carried, known, new_findings

from .page import summary
from .pipeline import Inputs, build
from .page.render import write_junit, write_report


def _arguments(argv: list[str] | None) -> Inputs:
    parser = argparse.ArgumentParser(prog="backendcheck-report", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--claims", required=True, type=Path)
    parser.add_argument("--manifest", type=Path,
                        help="the build's cases.json (default: the one the first evidence directory carries)")
    parser.add_argument("--junit", type=Path, help="ctest --output-junit of the first run: catches crashed tests")
    parser.add_argument("--tests", type=Path, help="ctest --show-only=json-v1: every registered test")
    parser.add_argument("--out", required=True, type=Path)
    parser.add_argument("--partial", action="store_true",
                        help="the run built only some cases (a user's matrix): a claim none of them addresses "
                             "is not evaluated rather than an error")
    parser.add_argument("--baseline", type=Path, help="report.json of an earlier run: show the verdicts that changed")
    parser.add_argument("--fail-on-change", action="store_true",
                        help="exit 6 when a verdict moved on a platform since --baseline, or a platform is missing")
    parser.add_argument("--expect-platform", action="append", default=[], metavar="NAME",
                        help="a platform that should have reported: a platform's name, its machine, or "
                             "MACHINE-torchVERSION (repeatable); one that did not is shown as missing")
    parser.add_argument("--expect-platforms", action="append", default=[], type=Path, metavar="FILE",
                        help="a file of expected platforms, one a line ('#' comments)")
    parser.add_argument("--known", action="append", default=[], type=Path,
                        help="a known findings file, keyed by condition (catalog/known_findings.toml; repeatable: "
                             "read after it and after BACKENDCHECK_KNOWN's, in order; a later file's entry stands)")
    parser.add_argument("--write-findings", type=Path, metavar="FILE",
                        help="append to FILE the entry that would make each unexpected verdict known")
    parser.add_argument("--strict", action="store_true",
                        help="exit 3 on every refuted guarantee, known or not")
    parser.add_argument("--install", action="append", default=[], type=Path, dest="installs",
                        help="the state file of one torch install of a run across versions (repeatable)")
    parser.add_argument("--self-bench", type=Path, metavar="FILE",
                        help="the harness's own speed as ./backendcheck bench --self recorded it (build/"
                             "self-bench.json): shown with the environment")
    parser.add_argument("--workloads", action="append", type=Path, metavar="FILE",
                        help="a team's workload file (inputs/workloads.py), each workload a claim; repeatable "
                             "(default: those BACKENDCHECK_CLAIMS lists)")
    parser.add_argument("evidence", nargs="*", type=Path)
    return Inputs(**vars(parser.parse_args(argv)))


def main(argv: list[str] | None = None) -> int:
    inputs = _arguments(argv)
    if inputs.manifest is None:
        inputs.manifest = carried.manifest_of(inputs.evidence)
        if inputs.manifest is None:
            print(f"{inputs.evidence[0] if inputs.evidence else 'EVIDENCE_DIR'}:1: no manifest: no evidence "
                  f"directory carries {carried.MANIFEST}; give --manifest", file=sys.stderr)
            return 1
    for line in carried.other_catalogs(inputs.evidence, inputs.claims):
        print(line, file=sys.stderr)
        inputs.partial = True
    try:
        inputs.known = known.sources(inputs.known, os.environ.get(known.ENVIRONMENT, ""))
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
    if inputs.write_findings is not None:
        try:
            for line in new_findings.write(inputs.write_findings, report.unexpected, inputs.known):
                print(line, file=sys.stderr)
        except SpecError as e:
            print(str(e), file=sys.stderr)
            return 1
    return report.exit_code()


if __name__ == "__main__":
    sys.exit(main())
