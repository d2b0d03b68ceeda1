"""Command line of the report.

    python3 -m reports --claims suites/claims.toml --manifest build/default/generated/cases.json \
        [--junit ctest-junit.xml] [--tests ctest-tests.json] [--baseline OLD/report.json] \
        [--expectations suites/expectations [--check-expectations | --write-expectations]] \
        --out DIR EVIDENCE_DIR...

Each EVIDENCE_DIR is one run (of one machine); several are merged, each
claim judged per platform, and the cross-platform claims on all of them.
--install STATE (repeatable) names one torch install of a run across
versions (./backendcheck run --torch A --torch B): its key=value state file
gives its run directory, build directory (ctest's JUnit and test list) and
how far it got; an install that failed is shown as an error, the others'
verdicts stand. Platforms that differ only in their torch are compared:
report.json's `changes` and the "Changed between versions" section.
Writes DIR/index.html, DIR/report.json and DIR/claims-junit.xml, prints the
page's path and the verdict counts. Exit status: 0; 3 when a guarantee is
refuted; 4 when --check-expectations finds a changed verdict; 1 on bad input
(one line, FILE:LINE: message).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from inputs.errors import SpecError, read_regular

from . import documented, expectations
from .catalog import load_catalog
from .evidence import (MAX_FILE_BYTES, Evidence, read_evidence, read_junit, read_manifest, read_registered,
                       torch_of)
from .changes import between_versions
from .conformance import summarize as conformance_summary
from .render import write_junit, write_report
from .summary import lines as summary_lines
from .verdicts import judge_all, refuted_guarantees

EXIT_REFUTED_GUARANTEE = 3
MAX_SHOWN = 20  # refused records listed on stderr
EXIT_EXPECTATION_CHANGED = 4
# A model-versus-PyTorch disagreement without a known reason.
EXIT_UNEXPLAINED_DISAGREEMENT = 5


def _baseline(path: Path) -> dict[str, Any]:
    """claim id -> {"verdict", "platforms": {platform: verdict}} of an earlier report.json."""
    try:
        data = json.loads(read_regular(path, "the baseline", MAX_FILE_BYTES))
    except (ValueError, RecursionError) as e:
        raise SpecError(str(path), 1, f"cannot read the baseline: {str(e)[:100]}") from None
    claims = data.get("claims") if isinstance(data, dict) else None
    if not isinstance(claims, list) or not all(isinstance(c, dict) and isinstance(c.get("id"), str) and
                                               isinstance(c.get("verdict", ""), str) and
                                               isinstance(c.get("platforms", {}), dict) for c in claims):
        raise SpecError(str(path), 1, "cannot read the baseline: not a backendcheck report.json "
                                      "(no 'claims' list of id, verdict, platforms)")
    return {c["id"]: {"verdict": c.get("verdict", ""), "platforms": c.get("platforms", {}),
                      "generated": str(data.get("generated", ""))} for c in claims}


def _read_install(path: Path) -> dict[str, Any]:
    """One torch install's state file (./backendcheck writes key=value lines
    as it goes: torch, version, stage, build_dir, run_dir, log, exit)."""
    try:
        text = read_regular(path, "the install state", 1 << 20).decode("utf-8", errors="replace")
    except OSError as e:
        raise SpecError(str(path), 1, f"cannot read the install state: {e.strerror or e}") from None
    state: dict[str, str] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        if line.strip():
            key, sep, value = line.partition("=")
            if not sep or not key.isidentifier():
                raise SpecError(str(path), number, f"not a key=value line: {line[:80]!r}")
            state[key] = value
    if "torch" not in state:
        raise SpecError(str(path), 1, "no 'torch=' line: not an install state of ./backendcheck")
    stage, code = state.get("stage", "setup"), state.get("exit", "")
    if stage == "done" and code == "0":
        status, why = "ok", ""
    elif stage == "done":
        status, why = "tests failed", f"ctest exit {code}; its verdicts stand, see {state.get('log', '')}"
    else:
        status = "error"
        said = _failure_lines(Path(state["log"])) if state.get("log") else ""
        why = (f"stopped during {stage}" + (f" (exit {code})" if code else "") + (f": {said}" if said else "") +
               "; nothing of this install is judged" + (f"; see {state['log']}" if state.get("log") else ""))
    return {"torch": state["torch"], "version": state.get("version", ""), "status": status, "why": why,
            "stage": stage, "build_dir": state.get("build_dir", ""),
            "run_dir": state.get("run_dir", "") if stage in ("tests", "done") else "", "log": state.get("log", "")}


def _failure_lines(log: Path) -> str:
    """What a failed install's log says went wrong: its first CMake error,
    with the message under it, and the script's last word."""
    try:
        lines = read_regular(log, "the install log", 16 << 20).decode("utf-8", errors="replace").splitlines()
    except OSError:
        return ""
    said = []
    for i, line in enumerate(lines):
        if line.startswith("CMake Error"):
            message = []
            for follow in lines[i + 1:]:
                if not follow.startswith("  ") or follow.startswith("Call Stack"):
                    break
                message.append(follow.strip())
            said.append(" ".join(message) or line)
            break
    last = [line for line in lines if line.startswith("backendcheck: ")]
    if last:
        said.append(last[-1].removeprefix("backendcheck: "))
    return "; ".join(said)[:500]


def _check_out(out: Path) -> str | None:
    """Why the report cannot be written to `out`, or None."""
    if out.exists() and not out.is_dir():
        return f"{out}:1: --out must name a directory; this is a file"
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        return f"{out}:1: cannot create the report directory: {e.strerror or e}"
    if not os.access(out, os.W_OK | os.X_OK):
        return f"{out}:1: cannot write the report there: permission denied"
    return None


def _coverage(evidence: Evidence, manifest: list[dict[str, Any]]) -> dict[str, Any]:
    """How many tests the run was expected to have (ctest's list, else the
    manifest) and how many left a result (a record, or ctest's status)."""
    expected = sorted(evidence.registered) or sorted({str(c["test"]) for c in manifest})
    got = set(evidence.results) | set(evidence.ctest)
    missing = [t for t in expected if t not in got]
    return {"expected": len(expected), "got": len(got & set(expected)) if expected else len(got),
            "source": "ctest's test list" if evidence.registered else "the manifest", "missing": missing[:50],
            "missing_count": len(missing)}


def main(argv: list[str] | None = None) -> int:
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
    parser.add_argument("--expectations", type=Path, help="directory of per-platform expectation files")
    parser.add_argument("--check-expectations", action="store_true",
                        help="exit 4 when a verdict differs from its platform's expectation file")
    parser.add_argument("--write-expectations", action="store_true",
                        help="record this run's folklore and advice verdicts as the expectations")
    parser.add_argument("--install", action="append", default=[], type=Path,
                        help="the state file of one torch install of a run across versions (repeatable)")
    parser.add_argument("evidence", nargs="*", type=Path)
    args = parser.parse_args(argv)
    try:
        installs = [_read_install(p) for p in args.install]
    except SpecError as e:
        print(str(e), file=sys.stderr)
        return 1
    args.evidence += [Path(i["run_dir"]) for i in installs if i["run_dir"]]
    if not args.evidence:
        print(f"{args.install[0] if args.install else 'reports'}:1: no evidence: no EVIDENCE_DIR, and no "
              "install got as far as its tests", file=sys.stderr)
        return 1
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
    except SpecError as e:
        print(str(e), file=sys.stderr)
        return 1
    baseline = None
    if args.baseline:
        try:
            baseline = _baseline(args.baseline)
        except SpecError as e:
            print(str(e), file=sys.stderr)
            return 1
    missing = [d for d in args.evidence if not d.exists()]
    if missing:
        print(f"{missing[0]}:1: no such evidence directory or file", file=sys.stderr)
        return 1
    if (why := _check_out(args.out)) is not None:
        print(why, file=sys.stderr)
        return 1
    evidence = read_evidence(args.evidence)
    if evidence.refused:
        for line in evidence.refused[:MAX_SHOWN]:
            print(line, file=sys.stderr)
        more = len(evidence.refused) - MAX_SHOWN
        print(f"report: not written: {len(evidence.refused)} evidence record(s) or file(s) refused"
              + (f" ({more} more not shown)" if more > 0 else "") + "; fix or remove them", file=sys.stderr)
        return 1
    # ctest's view: --junit/--tests belong to the first run; an install's own
    # are in its build directory. Each is merged into its platform and the whole.
    first = next(iter(evidence.platforms), "")
    views = [(first, args.junit, args.tests)] if args.junit or args.tests else []
    views += [(evidence.run_platform.get(str(Path(i["run_dir"])), ""), Path(i["build_dir"]) / "ctest-junit.xml",
               Path(i["build_dir"]) / "ctest-tests.json") for i in installs if i["run_dir"] and i["build_dir"]]
    for platform, junit, tests in views:
        ctest = Evidence(problems=evidence.problems)
        if junit and junit.exists():
            read_junit(junit, ctest)
        if tests and tests.exists():
            read_registered(tests, ctest)
        if platform:
            evidence.platforms[platform].merge(ctest, platform)
        evidence.merge(ctest, platform)
    for problem in dict.fromkeys(evidence.problems):
        print(f"warning: {problem}", file=sys.stderr)
    verdicts = judge_all(claims, manifest, evidence, partial=args.partial)

    changes: list[expectations.Change] = []
    no_expectations: list[str] = []
    if args.expectations and args.write_expectations:
        for path in expectations.write(args.expectations, verdicts, evidence):
            print(f"expectations: wrote {path}")
    elif args.expectations:
        try:
            changes, no_expectations = expectations.compare(args.expectations, verdicts, evidence, args.partial)
        except SpecError as e:
            print(str(e), file=sys.stderr)
            return 1
    coverage = _coverage(evidence, manifest)
    listed = documented.judge(evidence)
    between = between_versions(verdicts, evidence, listed)
    page = write_report(args.out, verdicts, manifest, evidence, baseline=baseline, changes=changes,
                        no_expectations=no_expectations, coverage=coverage, installs=installs, between=between,
                        listed=listed)
    write_junit(args.out / "claims-junit.xml", verdicts, changes)
    counts = Counter(v.verdict for v in verdicts)
    print(f"tests: {coverage['expected']} expected ({coverage['source']}), {coverage['got']} left a result"
          + (f"; none from {coverage['missing_count']}, e.g. {coverage['missing'][0]}" if coverage["missing"] else ""))
    print("claims: " + ", ".join(f"{n} {v}" for v, n in sorted(counts.items())))
    decided = Counter(v.decided_by for v in verdicts if v.decided_by)
    print("decided by: " + (", ".join(f"{s} {n}" for s, n in sorted(decided.items())) or "none"))
    cf = conformance_summary(evidence)
    if cf["cases"]:
        versions = cf["onednn_versions"]
        print(f"model versus PyTorch: {cf['cases']} cases, {len(cf['disagreements'])} disagreement(s), "
              f"{cf['unexplained']} not explained; oneDNN: model {', '.join(versions['model']) or '-'}, "
              f"PyTorch {', '.join(versions['pytorch']) or '-'}")
        for d in [d for d in cf["disagreements"] if not d["why"]][:MAX_SHOWN]:
            print(f"UNEXPLAINED DISAGREEMENT in {d['aspect']}: {d['test']}: model {d['model'].get('implementation')}"
                  f" {d['model'].get('digest')}, PyTorch {d['pytorch'].get('implementation')} "
                  f"{d['pytorch'].get('digest')}", file=sys.stderr)
    for platform, d in listed.items():
        found = [b["op"] for b in d["beyond"] if "undocumented" in b["finding"]]
        print(f"documented list of torch {d['torch'] or platform}: {len(d['entries'])} entries ("
              + ", ".join(f"{n} {v}" for v, n in sorted(d["counts"].items())) + f"; {d['not_understood']} not "
              f"understood); beyond the list: {len(found)} undocumented nondeterminism(s)"
              + (f" ({', '.join(found)})" if found else ""))
    for i in installs:
        print(f"torch install {i['version'] or i['torch']}: {i['status']}" + (f" ({i['why']})" if i["why"] else ""))
    if len(evidence.platforms) > 1:
        kinds = Counter(c["kind"] for c in between)
        print(f"changed between versions: {len(between)}" +
              (" (" + ", ".join(f"{n} {k}" for k, n in sorted(kinds.items())) + ")" if kinds else ""))
    torches = {p: torch_of(env) for p, env in evidence.platform_env.items()}
    for line in summary_lines(verdicts, torches, page):  # the verdicts per torch, the reasons, the page last
        print(line)
    for c in changes:
        print(f"EXPECTATION CHANGED {c.claim} on {c.platform}: expected {c.expected}, got {c.got}", file=sys.stderr)
    bad = refuted_guarantees(verdicts)
    for v in bad:
        print(f"REFUTED GUARANTEE {v.claim.id}: {v.reason}", file=sys.stderr)
    if bad:
        return EXIT_REFUTED_GUARANTEE
    if cf["unexplained"]:
        # A disagreement nobody can explain is a bug of the model (or of the
        # capture): it fails the run, it is not a finding to read past.
        return EXIT_UNEXPLAINED_DISAGREEMENT
    return EXIT_EXPECTATION_CHANGED if changes and args.check_expectations else 0


if __name__ == "__main__":
    sys.exit(main())
