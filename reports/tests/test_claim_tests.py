"""Every claim a ctest test (reports/tools/claim_tests.py): one `claim.<id>` per
claim of the catalog, labelled claims, its device and every tier, skipped
with 77, requiring the fixture its evidence sets up; the patterns match at
ctest time what the report's fnmatch matches; generated cases carry their
tier and every larger one."""

from __future__ import annotations

import contextlib
import fnmatch
import io
import json
import re
import tempfile
import unittest
from pathlib import Path

from inputs.tiers import tier_labels
from reports.catalog import load_catalog
from reports.tools.claim_tests import MODEL_TEST, REPORT_TEST, cmake_tests, evidence_of, glob_regex, main

ROOT = Path(__file__).resolve().parents[2]
CLAIMS = ROOT / "catalog" / "claims.toml"
# Names as gtest gives them, and patterns of every shape fnmatch reads.
NAMES = ["Flags.DefaultsMirrorPyTorch", "TorchPython.CudnnDisabledTrainingSpeedFwd", "TorchPython.CudnnDisabled",
         "GpuTf32Conv/Compare.SideBySide/Fwd_A", "GpuTf32Conv/Compare.SideBySideX/Fwd", "a.b", "axb", "a+b(c)",
         "Cpu/Determinism.Bitwise/Fwd_Onednn_T1_Small", "x[1]", "x1", "x!", "Sel/Selector.Case^$|{2}"]
PATTERNS = ["Flags.*", "TorchPython.CudnnDisabledTrainingSpeedF*", "GpuTf32Conv/Compare.SideBySide/*", "a.b", "a?b",
            "a+b(c)", "*Determinism.Bitwise/*_T[12]_*", "x[!a-z]", "x[1]", "Sel/Selector.Case^$|{2}", "*"]


class Claims(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.claims = load_catalog(CLAIMS)
        cls.manifest = json.loads((ROOT / "reports" / "tests" / "data" / "two-torch" / "cases.json").read_text())["cases"]
        cls.text = cmake_tests(cls.claims, cls.manifest, python="/usr/bin/python3", source=ROOT,
                               manifest_path=Path("/b/generated/cases.json"), build=Path("/b"), partial=True)

    def test_patterns_match_what_fnmatch_matches(self) -> None:
        patterns = PATTERNS + [p for c in self.claims for b in (c, c.prediction) if b for p in b.tests]
        for pattern in patterns:
            regex = re.compile(glob_regex(pattern))
            for name in NAMES + [c["test"] for c in self.manifest]:
                self.assertEqual(bool(regex.search(name)), fnmatch.fnmatchcase(name, pattern), (pattern, name))

    def test_every_claim_is_a_test(self) -> None:
        added = re.findall(r"^add_test\(\[==\[([^]]+)\]==\]", self.text, re.M)
        self.assertEqual(added, [f"claim.{c.id}" for c in self.claims] + [MODEL_TEST, REPORT_TEST])
        self.assertEqual(len(self.claims), 74)
        for claim in self.claims:
            props = re.search(rf"set_tests_properties\(\[==\[claim\.{re.escape(claim.id)}\]==\] PROPERTIES (.*)\)$",
                              self.text, re.M)
            self.assertIsNotNone(props, claim.id)
            device = "gpu" if claim.scope.get("device") == "cuda" else "cpu"
            self.assertIn(f'LABELS "claims;{device};smoke;ci;nightly"', props.group(1))
            self.assertIn("SKIP_RETURN_CODE 77", props.group(1))
            self.assertIn(f"FIXTURES_REQUIRED [==[claim.{claim.id}]==]", props.group(1))
        self.assertRegex(self.text, r"--claim\]==\] \[==\[cublas-config\]==\]\)")
        self.assertIn("[==[--partial]==]", self.text)

    def test_evidence_is_the_claims_tests_and_cases(self) -> None:
        claim = next(c for c in self.claims if c.id == "cpu-noop")
        patterns, cases = evidence_of(claim, self.manifest)
        self.assertTrue(cases)
        self.assertTrue(all("CpuNoop" in t for t in cases))
        defaults = next(c for c in self.claims if c.id == "defaults")
        self.assertEqual(evidence_of(defaults, self.manifest),
                         (["TorchPython.DefaultsAreTheDocumentedOnes", "Flags.DefaultsMirrorPyTorch"], []))
        out_of_scope = next(c for c in self.claims if c.rule == "out-of-scope")
        self.assertEqual(evidence_of(out_of_scope, self.manifest), ([], []))
        # a test that is evidence of several claims sets up each fixture
        self.assertIn('list(APPEND "bc_fixtures_${bc_test}" [==[claim.cpu-noop]==])', self.text)
        self.assertIn('FIXTURES_SETUP "${bc_fixtures_${bc_test}}"', self.text)

    def test_the_report_runs_after_every_claim(self) -> None:
        props = re.search(r"set_tests_properties\(\[==\[report\]==\] PROPERTIES (.*)\)$", self.text, re.M).group(1)
        depends = re.search(r'DEPENDS "([^"]*)"', props).group(1).split(";")
        self.assertEqual(depends, [f"claim.{c.id}" for c in self.claims] + [MODEL_TEST])
        self.assertIn('LABELS "report;cpu;smoke;ci;nightly"', props)

    def test_bad_input_is_one_line_and_fails(self) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            bad = Path(tmp) / "cases.json"
            bad.write_text('{"cases": 3}')
            err = io.StringIO()
            with contextlib.redirect_stderr(err):
                status = main(["--claims", str(CLAIMS), "--manifest", str(bad), "--cmake", str(Path(tmp) / "out"),
                               "--python", "python3", "--source", str(ROOT), "--build", tmp])
        self.assertEqual(status, 1)
        self.assertEqual(err.getvalue(), f"{bad}:1: not a backendcheck manifest (no 'cases' list of objects with a 'test')\n")

    def test_a_suite_carries_its_tier_and_every_larger_one(self) -> None:
        self.assertEqual(tier_labels("smoke"), ("smoke", "ci", "nightly"))
        self.assertEqual(tier_labels("ci"), ("ci", "nightly"))
        self.assertEqual(tier_labels("nightly"), ("nightly",))


if __name__ == "__main__":
    unittest.main()
