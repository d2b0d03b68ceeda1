"""Every claim of the catalog as a ctest test, from the catalog
(catalog/claims.toml) and the manifest (cases.json): ctest reads the file this
writes after every test binary's discovery, as the last of its includes.

    python3 -m reports.tools.claim_tests --claims catalog/claims.toml --manifest BUILD/generated/cases.json \
        --cmake BUILD/generated/claim_tests.cmake --python PYTHON --source REPOSITORY --build BUILD [--partial]

The build writes it (CMakeLists.txt) whenever the catalog or the manifest
changes. It resolves each claim's evidence as the report does (the catalog,
reports/verdicts.py's selection), which is why it lives beside the report
and not in generators/, which never reads the report's code.

- `claim.<id>` judges that one claim from the run's evidence against the
  known findings (reports/tools/claim_test.py): it passes when the verdict is what
  is known for the platform, fails with the UNEXPECTED line when not, and is
  skipped (SKIP_RETURN_CODE 77) with the reason when not evaluated here.
- `model.conformance` holds the model to PyTorch: a disagreement without a
  known reason fails it. One test, not a claim's: a disagreement belongs to a
  conformance case, which no claim owns, and it fails the run (the report's
  status 5) whichever claims are judged.
- `report` writes the page after all of them.

The evidence is wired with CTest fixtures. Each evidence test of claim X
(its `tests` patterns and `cases` selectors, the model's prediction's too,
as the report resolves them) is a setup of the fixture `claim.X`, and
`claim.X` requires it: ctest adds a selected test's required fixtures' setup
tests, not the reverse, so `ctest -R claim.X` runs the evidence again and then
judges it, and a full run judges each claim once all its evidence has run.
A test that is evidence of several claims sets up each of their fixtures.
The price of that layout: where an evidence test fails (a harness failure:
crash, timeout), ctest does not run the claim's test and says so, rather
than judging the claim without it.

Patterns are matched at ctest time, against the test names the discovery of
each test binary lists (its TEST_LIST variable, bc_tests_*), as the report's
fnmatch matches them; a `cases` selector is resolved here, on the manifest.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from inputs import labels
from inputs import workloads as workload_files
from inputs.errors import SpecError
from inputs.tiers import TIERS

from ..catalog import WORKLOAD_KIND, Claim, load_claims
from ..evidence import Evidence, read_manifest
from ..verdicts import select_tests

SKIP_RETURN_CODE = 77  # reports/tools/claim_test.py SKIP: not evaluated here
LABEL, MODEL_TEST, REPORT_TEST = labels.CLAIMS, labels.MODEL_TEST, labels.REPORT_TEST
TIMEOUT = 300  # seconds: a claim's test reads the run's evidence (about 3 s cold, 0.4 s cached, on 860 files)


def glob_regex(pattern: str) -> str:
    """fnmatch's pattern as a CMake regular expression (which Python's re
    also reads): `*` any run, `?` one character, `[...]` and `[!...]` a
    class, anything else itself."""
    out, i = "", 0
    while i < len(pattern):
        ch = pattern[i]
        i += 1
        if ch == "*":
            out += ".*"
        elif ch == "?":
            out += "."
        elif ch == "[" and (end := pattern.find("]", i + (pattern[i:i + 1] in ("!", "]")))) != -1:
            body = pattern[i:end]
            i = end + 1
            out += "[" + ("^" + body[1:] if body.startswith("!") else body) + "]"
        else:
            out += "\\" + ch if ch in "\\^$.|+()[]{}" else ch
    return f"^{out}$"


def evidence_of(claim: Claim, manifest: list[dict[str, Any]]) -> tuple[list[str], list[str]]:
    """The claim's evidence: its patterns (the prediction's too) and the
    manifest's tests its `cases` selectors choose."""
    if claim.kind == WORKLOAD_KIND:
        # A team's workload: its test (Workload.<id>) is the build's own,
        # not discovered from a test binary, and named as it is.
        return [], list(claim.tests)
    patterns: list[str] = []
    cases: list[str] = []
    for block in (claim, claim.prediction):
        if block is None or block.rule in ("out-of-scope", ""):
            continue
        patterns += block.tests
        if block.cases:
            cases += select_tests([], block.cases, manifest, Evidence())
    return list(dict.fromkeys(patterns)), list(dict.fromkeys(cases))


def device_label(claim: Claim) -> str:
    return "gpu" if claim.scope.get("device") == "cuda" else "cpu"


def _q(text: str) -> str:
    """A CMake bracket argument: the text as it is."""
    return f"[==[{text}]==]"


def _command(python: str, source: Path, manifest: Path, partial: bool, *args: str) -> str:
    known = source / "catalog" / "known_findings.toml"
    words = [python, "-m", "reports.tools.claim_test", "--claims", str(source / "catalog" / "claims.toml"),
             "--manifest", str(manifest), "--known", str(known), *(["--partial"] if partial else []), *args]
    return " ".join(_q(w) for w in words)


def _properties(test: str, labels: list[str], source: Path, build: Path, *more: str) -> str:
    # A team's workloads (BACKENDCHECK_CLAIMS, as the build was configured)
    # are claims of these tests too.
    claims = os.environ.get(workload_files.ENVIRONMENT, "")
    env = ";".join([f"BACKENDCHECK_DEFAULT_EVIDENCE_DIR={build / 'evidence'}",
                    f"BACKENDCHECK_RECORD_CACHE={build / 'claims-cache'}", "PYTHONDONTWRITEBYTECODE=1",
                    *([f"{workload_files.ENVIRONMENT}={claims}"] if claims else [])])
    return (f"set_tests_properties({_q(test)} PROPERTIES LABELS \"{';'.join(labels)}\" WORKING_DIRECTORY "
            f"{_q(str(source))} ENVIRONMENT {_q(env)} TIMEOUT {TIMEOUT} " + " ".join(more) + ")\n")


def _fixture(name: str, patterns: list[str], tests: list[str]) -> str:
    """The lines that make each test matching `patterns`, and each of
    `tests`, a setup of the fixture `name`."""
    out = []
    if patterns:
        out.append("set(bc_matched ${bc_registered})\n")
        out.append(f"list(FILTER bc_matched INCLUDE REGEX {_q('|'.join(glob_regex(p) for p in patterns))})\n")
    else:
        out.append("set(bc_matched)\n")
    for chunk in range(0, len(tests), 50):
        out.append("list(APPEND bc_matched " + " ".join(_q(t) for t in tests[chunk:chunk + 50]) + ")\n")
    out.append(f"foreach(bc_test IN LISTS bc_matched)\n  list(APPEND \"bc_fixtures_${{bc_test}}\" {_q(name)})\n"
               "  list(APPEND bc_setups \"${bc_test}\")\nendforeach()\n")
    return "".join(out)


def cmake_tests(claims: list[Claim], manifest: list[dict[str, Any]], *, python: str, source: Path,
                manifest_path: Path, build: Path, partial: bool) -> str:
    """The ctest script: the claim tests, the model's, the report's, and the
    fixtures that tie each to its evidence."""
    tiers = list(TIERS)  # not tiered: in every tier
    out = ["# Generated from catalog/claims.toml and the manifest by `python3 -m reports.tools.claim_tests`"
           " (reports/tools/claim_tests.py): edit those.\n",
           "# Every test discovered so far: each test binary's TEST_LIST (bc_tests_*).\n",
           "get_cmake_property(bc_lists VARIABLES)\n",
           "list(FILTER bc_lists INCLUDE REGEX \"^bc_tests_\")\n",
           "set(bc_registered)\nforeach(bc_list IN LISTS bc_lists)\n  list(APPEND bc_registered ${${bc_list}})\n"
           "endforeach()\nset(bc_setups)\n"]
    names = []
    for claim in claims:
        test = f"{labels.CLAIM_PREFIX}{claim.id}"
        names.append(test)
        out.append(f"\n# {claim.id}: {' '.join(claim.statement.split())[:100]}\n")
        out.append(f"add_test({_q(test)} {_command(python, source, manifest_path, partial, '--claim', claim.id)})\n")
        out.append(_properties(test, [LABEL, device_label(claim), *tiers], source, build,
                               f"SKIP_RETURN_CODE {SKIP_RETURN_CODE}", f"FIXTURES_REQUIRED {_q(test)}"))
        out.append(_fixture(test, *evidence_of(claim, manifest)))
    conformance = [c["test"] for c in manifest if c.get("fixture") == "Conformance"]
    out.append("\n# The model against PyTorch, after the conformance cases.\n")
    out.append(f"add_test({_q(MODEL_TEST)} {_command(python, source, manifest_path, partial, '--model')})\n")
    out.append(_properties(MODEL_TEST, ["model", "cpu", *tiers], source, build,
                           f"SKIP_RETURN_CODE {SKIP_RETURN_CODE}", f"FIXTURES_REQUIRED {_q(MODEL_TEST)}"))
    out.append(_fixture(MODEL_TEST, [], conformance))
    names.append(MODEL_TEST)
    out.append("\n# The page, after the claims (ordering only: alone it reports on the evidence there is).\n")
    out.append(f"add_test({_q(REPORT_TEST)} {_command(python, source, manifest_path, partial, '--report', str(build / 'report'))})\n")
    out.append(_properties(REPORT_TEST, ["report", "cpu", *tiers], source, build, f"DEPENDS \"{';'.join(names)}\""))
    out.append("\n# Each evidence test sets up the fixture of every claim it is evidence of.\n"
               "list(REMOVE_DUPLICATES bc_setups)\nforeach(bc_test IN LISTS bc_setups)\n"
               "  set_tests_properties(\"${bc_test}\" PROPERTIES FIXTURES_SETUP \"${bc_fixtures_${bc_test}}\")\n"
               "endforeach()\n")
    return "".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="backendcheck-claim-tests", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--claims", required=True, type=Path)
    parser.add_argument("--manifest", required=True, type=Path)
    parser.add_argument("--cmake", required=True, type=Path, help="the ctest script to write")
    parser.add_argument("--python", required=True, help="the interpreter the claim tests run")
    parser.add_argument("--source", required=True, type=Path, help="the repository")
    parser.add_argument("--build", required=True, type=Path, help="the build directory")
    parser.add_argument("--partial", action="store_true",
                        help="the build has only some cases (a tier below nightly, a user's matrix)")
    args = parser.parse_args(argv)
    try:
        text = cmake_tests(load_claims(args.claims), read_manifest(args.manifest), python=args.python,
                           source=args.source.resolve(), manifest_path=args.manifest.resolve(),
                           build=args.build.resolve(), partial=args.partial)
    except SpecError as e:
        print(str(e), file=sys.stderr)
        return 1
    # Rewritten only when its text changed.
    if not args.cmake.exists() or args.cmake.read_text() != text:
        args.cmake.parent.mkdir(parents=True, exist_ok=True)
        args.cmake.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
