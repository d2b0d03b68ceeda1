"""ctest is the gate: the claims as ctest sees them in a configured build.

    python3 -m reports.tests.claim_ctest BUILD_DIR [CTEST]

- `ctest -N -L claims` lists one `claim.<id>` per claim of the catalog, and
  `ctest -N -R '^claim\\.ID$'` adds the claim's evidence (its fixture's
  setup tests);
- the claim tests, run by ctest on a recorded run (the AVX-512 BF16 CPU's
  torch 2.15 evidence, BACKENDCHECK_EVIDENCE_DIR) without their evidence
  (-FS), with a team's findings file (BACKENDCHECK_KNOWN) that expects
  otherwise for one claim: exactly that claim's test fails, and
  `--output-junit` holds it as a failure with its UNEXPECTED line, a known
  verdict as passed and a claim not evaluated here as skipped with why;
- tiers: `ctest -N -L '^T$'` (without the setups the claims' fixtures add,
  -FS) selects what a build of tier T runs: every test but the generated
  cases of a larger tier (`python3 -m generators list --tier T`).

Exit 0 when all hold, 1 with a line per failure; 77 when the build has no
test binaries (nothing discovered).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

from reports.catalog import load_catalog
from reports.tests.recorded import unpack_zen5
from reports.tests.test_claim_test import MUTATED

ROOT = Path(__file__).resolve().parents[2]
TIERS = ("smoke", "ci", "nightly")
FAILS, PASSES, SKIPS = "mkldnn-conv-bf16", "mkldnn-rnn-bf16", "cublas-config"


def scratch(build: Path, into: Path) -> Path:
    """A test directory of `into` that holds the build's tests: ctest run
    there writes its logs (Testing/) there, not over those of the ctest that
    runs this test in the build."""
    into.mkdir(parents=True, exist_ok=True)
    (into / "CTestTestfile.cmake").write_text(f'subdirs("{build}")\n')
    return into


def listed(ctest: str, build: Path, *args: str) -> list[str]:
    with tempfile.TemporaryDirectory(prefix="backendcheck-claim-ctest-") as tmp:
        out = subprocess.run([ctest, "--test-dir", str(scratch(build, Path(tmp))), "-N", *args], capture_output=True,
                             text=True, check=True).stdout
    return re.findall(r"^\s*Test\s+#\d+: (.*)$", out, re.M)


def cache_value(build: Path, name: str) -> str:
    found = re.search(rf"^{name}:[A-Z]+=(.*)$", (build / "CMakeCache.txt").read_text(), re.M)
    return found.group(1) if found else ""


def check_claims(ctest: str, build: Path) -> list[str]:
    ids = [c.id for c in load_catalog(ROOT / "catalog" / "claims.toml")]
    problems = []
    claims = [t for t in listed(ctest, build, "-L", "^claims$", "-FS", ".") if t.startswith("claim.")]
    if sorted(claims) != sorted(f"claim.{i}" for i in ids):
        problems.append(f"ctest -N -L claims lists {len(claims)} claim tests, the catalog has {len(ids)} claims")
    one = listed(ctest, build, "-R", "^claim\\.defaults$")
    if sorted(one) != sorted(["claim.defaults", "Flags.DefaultsMirrorPyTorch", "TorchPython.DefaultsAreTheDocumentedOnes"]):
        problems.append(f"ctest -R claim.defaults does not rerun its evidence: it selects {one}")
    return problems


def check_junit(ctest: str, build: Path) -> list[str]:
    problems = []
    with tempfile.TemporaryDirectory(prefix="backendcheck-claim-ctest-") as tmp:
        run = unpack_zen5(Path(tmp))["2.15.0"]
        team = Path(tmp) / "team.toml"
        team.write_text(MUTATED)
        junit = Path(tmp) / "junit.xml"
        env = {**os.environ, "BACKENDCHECK_EVIDENCE_DIR": str(run / "evidence"), "BACKENDCHECK_KNOWN": str(team)}
        tests = scratch(build, Path(tmp) / "tests")
        subprocess.run([ctest, "--test-dir", str(tests), "-R", f"^claim\\.({FAILS}|{PASSES}|{SKIPS})$", "-FS", ".",
                        "--output-junit", str(junit)], env=env, capture_output=True, text=True)
        cases = {tc.get("name"): tc for tc in ET.parse(junit).getroot().iter("testcase")}
    want = {f"claim.{FAILS}": "fail", f"claim.{PASSES}": "run", f"claim.{SKIPS}": "notrun"}
    for name, status in want.items():
        tc = cases.get(name)
        if tc is None:
            problems.append(f"junit: no testcase {name}")
            continue
        if tc.get("status") != status:
            problems.append(f"junit: {name} has status {tc.get('status')}, expected {status}")
        out = "".join(e.text or "" for e in tc.iter("system-out"))
        said = {"fail": f"UNEXPECTED {FAILS} on ", "run": f"{PASSES} on ", "notrun": f"NOT EVALUATED {SKIPS} on "}[status]
        if said not in out:
            problems.append(f"junit: {name}'s output lacks {said!r}: {out[:300]!r}")
        if status == "fail" and tc.find("failure") is None:
            problems.append(f"junit: {name} has no <failure>")
        if status == "notrun" and tc.find("skipped") is None:
            problems.append(f"junit: {name} has no <skipped>")
    return problems


def batched(ctest: str, build: Path) -> dict[str, set[str]]:
    """batch.<binary>.<n> -> its cases (those whose DEPENDS names it)."""
    with tempfile.TemporaryDirectory(prefix="backendcheck-claim-ctest-") as tmp:
        data = json.loads(subprocess.run([ctest, "--test-dir", str(scratch(build, Path(tmp))), "--show-only=json-v1"],
                                         capture_output=True, text=True, check=True).stdout)
    out: dict[str, set[str]] = {}
    for t in data.get("tests", []):
        if t["name"].startswith("batch."):
            out.setdefault(t["name"], set())
        for prop in t.get("properties", []):
            if prop.get("name") == "DEPENDS":
                for d in prop.get("value", []):
                    if d.startswith("batch."):
                        out.setdefault(d, set()).add(t["name"])
    return out


def check_tiers(ctest: str, build: Path) -> list[str]:
    registered = set(listed(ctest, build))
    built = {c["test"] for c in json.loads((build / "generated" / "cases.json").read_text())["cases"]}
    # A batch is in a tier's build where one of its cases is.
    batches = batched(ctest, build)
    specs = cache_value(build, "BACKENDCHECK_SPECS").split(";")
    env = {**os.environ, "BACKENDCHECK_PROBLEM_TOOL": str(build / "bc_problem")}
    problems = []
    for tier in TIERS:
        out = subprocess.run([sys.executable, "-m", "generators", "list", "--tier", tier, *specs], cwd=ROOT, env=env,
                             capture_output=True, text=True, check=True).stdout
        in_tier = set(re.findall(r"^[0-9a-f]{16}  (\S+)$", out, re.M))
        expected = registered - (built - in_tier) - {b for b, cases in batches.items() if not cases & in_tier}
        got = set(listed(ctest, build, "-L", f"^{tier}$", "-FS", "."))
        for name in sorted(expected - got)[:10]:
            problems.append(f"tier {tier}: {name} is in a {tier} build but ctest -L {tier} leaves it out")
        for name in sorted(got - expected)[:10]:
            problems.append(f"tier {tier}: ctest -L {tier} selects {name}, which a {tier} build does not have")
    return problems


def main(argv: list[str]) -> int:
    build = Path(argv[1]).resolve()
    ctest = argv[2] if len(argv) > 2 else "ctest"
    if not any(t.startswith("claim.") for t in listed(ctest, build, "-L", "^claims$", "-FS", ".")):
        print(f"not evaluated: {build} has no claim tests (not built yet)")
        return 77
    problems = check_claims(ctest, build) + check_junit(ctest, build) + check_tiers(ctest, build)
    for line in problems:
        print(line)
    print(f"{len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
