"""One claim judged as a ctest test (`claim.<id>`), or the model held to
PyTorch (`model.conformance`), from this run's evidence, through the
report's own pipeline (reports/pipeline.py `judge`): the model never decides.

    python3 -m reports.tools.claim_test --claims catalog/claims.toml --manifest BUILD/generated/cases.json \
        [--known catalog/known_findings.toml]... [--partial] [--evidence DIR] (--claim ID | --model | --report DIR)

The evidence is the run's directory: --evidence, else BACKENDCHECK_EVIDENCE_DIR
(what ./backendcheck sets for a run), else BACKENDCHECK_DEFAULT_EVIDENCE_DIR
(BUILD/evidence, where ctest run by hand writes). The known findings are
read as the report reads them: the repository's, then BACKENDCHECK_KNOWN's
files, then each other --known. --report DIR writes the page of the run
(`python3 -m reports`) into BACKENDCHECK_REPORT_DIR, else DIR, and exits
with the report's status (0, 1, 3, 4, 5: see reports/__main__.py).

Exit status, for ctest:
  0   the claim's verdict is what is known for each platform (a supported or
      inconclusive verdict no entry speaks of included); --model: no
      disagreement of the model with PyTorch without a known reason;
  1   a verdict that is not what is known (its UNEXPECTED line, then the
      entry that would make it known), an error (a harness failure: the
      reason, never a refutation), an unexplained disagreement (--model), or
      bad input (one line, FILE:LINE: message);
  77  not evaluated on any platform of this run (SKIP_RETURN_CODE), with why.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from inputs.errors import SpecError

from .. import known
from ..conformance import summarize
from ..__main__ import main as report_main
from ..pipeline import Inputs, Judged, judge
from ..ruling import Ruling
from ..page.summary import disagreement_line

SKIP = 77  # the claim tests' SKIP_RETURN_CODE (reports/tools/claim_tests.py)
REPORT_ENV = "BACKENDCHECK_REPORT_DIR"  # where the report test writes the page, when set
# More of the report's own options for the report test (a JSON list, e.g.
# ["--baseline", "/old/report.json", "--fail-on-change", "--strict"]), as the
# command line hands them to the ctest it runs.
REPORT_OPTIONS_ENV = "BACKENDCHECK_REPORT_OPTIONS"
EVIDENCE_ENV = ("BACKENDCHECK_EVIDENCE_DIR", "BACKENDCHECK_DEFAULT_EVIDENCE_DIR")


def evidence_dir(given: Path | None) -> Path:
    """The run's evidence: `given`, else the directory the tests wrote to."""
    if given is not None:
        return given
    for name in EVIDENCE_ENV:
        if os.environ.get(name):
            return Path(os.environ[name])
    raise SpecError(EVIDENCE_ENV[1], 1, "no evidence directory: give --evidence, or run under ctest "
                    "(the tests' environment names it)")


def report_options(text: str) -> list[str]:
    """BACKENDCHECK_REPORT_OPTIONS's value: a JSON list of strings, or nothing."""
    if not text.strip():
        return []
    try:
        value = json.loads(text)
    except json.JSONDecodeError as e:
        raise SpecError(REPORT_OPTIONS_ENV, 1, f"not JSON: {e.msg}") from None
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise SpecError(REPORT_OPTIONS_ENV, 1, "not a JSON list of strings")
    return value


def claim_lines(claim: str, inputs: Inputs) -> tuple[int, list[str]]:
    """The status and the lines of one claim's test."""
    return claim_status(judge(inputs, only={claim}, out=False), claim)


def claim_status(j: Judged, claim: str) -> tuple[int, list[str]]:
    """The status and the lines of one claim's test, of claims judged."""
    verdict = next(v for v in j.verdicts if v.claim.id == claim)
    held = {h.platform: h for h in j.held if h.claim == claim}
    failed, evaluated, lines = False, False, []
    for platform in j.evidence.platform_env:
        pv, h = verdict.on(platform), held.get(platform)
        if h is not None and h.status == "unexpected":
            failed = True
            lines += [*h.lines(), *h.suggested.splitlines()]
        elif pv.verdict == Ruling.ERROR:
            failed = True
            lines.append(f"ERROR {claim} on {platform}: {known.one_line(pv.reason)}")
        elif pv.verdict == Ruling.NOT_EVALUATED or pv.withheld:
            lines.append(f"NOT EVALUATED {claim} on {platform}: {known.one_line(pv.reason)}"
                         + (f" ({h.why})" if h is not None else ""))
            continue
        else:
            lines.append(f"{claim} on {platform}: {h.why if h is not None else pv.verdict + ': ' + known.one_line(pv.reason)}")
        evaluated = True
    if not j.evidence.platform_env:
        lines.append(f"NOT EVALUATED {claim}: no evidence was recorded in this run")
    return (1 if failed else 0 if evaluated else SKIP), lines


def model_lines(inputs: Inputs) -> tuple[int, list[str]]:
    """The status and the lines of the model's test: every disagreement of
    the model with PyTorch without a known reason fails it."""
    j = judge(inputs, only=set(), out=False)
    c = summarize(j.evidence)
    if not c["cases"]:
        return SKIP, ["NOT EVALUATED model: no conformance case recorded its model and PyTorch sides in this run"]
    unexplained = [d for d in c["disagreements"] if not d["why"]]
    lines = [disagreement_line(d) for d in unexplained]
    known_reasons = len(c["disagreements"]) - len(unexplained)
    lines.append(f"model against PyTorch: {c['cases']} case(s), {len(unexplained)} disagreement(s) without a known "
                 f"reason, {known_reasons} with one")
    return (1 if unexplained else 0), lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="backendcheck-claim-test", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--claims", required=True, type=Path)
    parser.add_argument("--manifest", required=True, type=Path)
    parser.add_argument("--known", action="append", default=[], type=Path)
    parser.add_argument("--partial", action="store_true",
                        help="the build has only some cases (a tier below nightly, a user's matrix)")
    parser.add_argument("--evidence", type=Path, help="the run's evidence directory (default: the tests')")
    which = parser.add_mutually_exclusive_group(required=True)
    which.add_argument("--claim", help="the claim's id")
    which.add_argument("--model", action="store_true", help="the model against PyTorch")
    which.add_argument("--report", type=Path, metavar="DIR", help="write the page (BACKENDCHECK_REPORT_DIR, else DIR)")
    args = parser.parse_args(argv)
    if args.report is not None:
        try:
            evidence = evidence_dir(args.evidence)
        except SpecError as e:
            print(str(e), file=sys.stderr)
            return 1
        out = Path(os.environ.get(REPORT_ENV) or args.report)
        try:
            more = report_options(os.environ.get(REPORT_OPTIONS_ENV, ""))
        except SpecError as e:
            print(str(e), file=sys.stderr)
            return 1
        return report_main(["--claims", str(args.claims), "--manifest", str(args.manifest), "--out", str(out),
                            *(["--partial"] if args.partial else []), *[f"--known={k}" for k in args.known],
                            *more, str(evidence)])
    try:
        inputs = Inputs(claims=args.claims, manifest=args.manifest, out=Path("."), partial=args.partial,
                        evidence=[evidence_dir(args.evidence)],
                        known=known.sources(args.known, os.environ.get(known.ENVIRONMENT, "")))
        status, lines = model_lines(inputs) if args.model else claim_lines(args.claim, inputs)
    except SpecError as e:
        print(str(e), file=sys.stderr)
        return 1
    for line in lines:
        print(line)
    return status


if __name__ == "__main__":
    sys.exit(main())
