"""What changed since the last run (reports/baseline.py) and the claims'
JUnit (render.write_junit), on the recorded runs of an AVX-512 BF16 CPU
(both torches) merged with the H100 kit's: a report of them is the
baseline; a second report, whose evidence moved one verdict on one
platform, or lacks a platform, is compared with it."""

from __future__ import annotations

import contextlib
import io
import json
import re
import tempfile
import unittest
import xml.etree.ElementTree as ET
from pathlib import Path

from inputs.errors import SpecError
from reports import baseline
from reports.__main__ import main
from reports.tests.recorded import ZEN5_STATUS, RecordedRuns

ROOT = Path(__file__).resolve().parents[2]
KNOWN = ROOT / "catalog" / "known_findings.toml"
SEED = "TorchPython.ManualSeedIsNotABackendFlag"
VM_215 = "vm (amd-avx512_bf16-2t-torch2.15.0_cu132)"
CONFORMANCE = "ConformanceModels/Conformance.ModelVersusPytorch/Fwd_R50B8L13x3"


class Ran:
    """One report of the recorded runs: its exit status, output and files."""

    def __init__(self, runs: RecordedRuns, out: str, *args: str, evidence: list[Path] | None = None) -> None:
        self.out = runs.root / out
        stdout, stderr = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
            self.status = main(["--claims", str(ROOT / "catalog" / "claims.toml"), "--manifest", str(runs.manifest),
                                "--out", str(self.out), "--partial", "--known", str(KNOWN), *args,
                                *map(str, evidence if evidence is not None else runs.evidence())])
        self.stdout, self.stderr = stdout.getvalue(), stderr.getvalue()
        page = self.out / "report.json"
        self.json = json.loads(page.read_text()) if page.is_file() else {}

    def junit(self) -> dict[str, ET.Element]:
        """testcase name -> testcase of claims-junit.xml."""
        suite = ET.parse(self.out / "claims-junit.xml").getroot()
        return {case.get("name"): case for case in suite.iter("testcase")}


class SinceTheBaselineTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.runs = RecordedRuns()
        cls.addClassCleanup(cls.runs.close)
        cls.base = Ran(cls.runs, "base")
        # A team's file that accepts either verdict of seed-not-backends: a
        # move between them is as known, and only --fail-on-change sees it.
        cls.either = cls.runs.root / "either.toml"
        cls.either.write_text('[[finding]]\nclaim = "seed-not-backends"\nverdict = ["supported", "refuted"]\n'
                              'reason = "either"\nfirst_seen = 2026-11-28\n')

    def move_seed(self) -> None:
        """The 2.15.0 run's seed test fails: seed-not-backends moves on that platform only (undone after)."""
        ev = self.runs.cpu["2.15.0"] / "evidence"
        self.runs.edit(ev, SEED, '"outcome":"passed"', '"outcome":"failed"')
        self.addCleanup(self.runs.edit, ev, SEED, '"outcome":"failed"', '"outcome":"passed"')

    def test_the_baseline_report_passes_and_records_its_run(self) -> None:
        self.assertEqual(self.base.status, ZEN5_STATUS, self.base.stderr)
        run = self.base.json["run"]
        self.assertEqual(set(run), {"commit", "ci", "ci_run_id", "ci_run_url", "time"})
        self.assertEqual(run["time"], self.base.json["generated"])
        if (ROOT / ".git").exists():
            self.assertRegex(run["commit"], r"^[0-9a-f]{40}$", "the checkout's commit")
        self.assertEqual(self.base.json["missing_platforms"], [])

    def test_an_unchanged_run_passes_fail_on_change(self) -> None:
        """The control: the same evidence against its own report."""
        ran = Ran(self.runs, "same", "--known", str(self.either), "--baseline", str(self.base.out / "report.json"),
                  "--fail-on-change", "--expect-platform", "h100", "--expect-platform", "vm-torch2.15.0")
        self.assertEqual(ran.status, ZEN5_STATUS, ran.stderr)
        self.assertEqual((ran.json["baseline"]["changed"], ran.json["missing_platforms"]), ([], []))
        self.assertNotIn("CHANGED", ran.stdout + ran.stderr)
        self.assertIn("0 verdict(s) moved on a platform", ran.stdout)

    def test_a_verdict_moved_on_one_platform_fails_naming_claim_and_platform(self) -> None:
        self.move_seed()
        args = ("--known", str(self.either), "--baseline", str(self.base.out / "report.json"))
        ran = Ran(self.runs, "moved", *args, "--fail-on-change")
        self.assertEqual(ran.status, baseline.EXIT_CHANGED, ran.stderr)
        said = [line for line in ran.stderr.splitlines() if line.startswith(("CHANGED", "MISSING"))]
        self.assertEqual(said, [f"CHANGED seed-not-backends on {VM_215}: supported -> refuted"])
        self.assertEqual(ran.json["baseline"]["changed"],
                         [{"claim": "seed-not-backends", "platform": VM_215, "old": "supported", "new": "refuted"}])
        # Without --fail-on-change the move is shown and the status is the verdicts'.
        shown = Ran(self.runs, "moved-shown", *args, "--expect-platform", "a100")
        self.assertEqual(shown.status, ZEN5_STATUS, shown.stderr)
        self.assertIn(f"  CHANGED seed-not-backends on {VM_215}: supported -> refuted", shown.stdout.splitlines())
        self.assertNotIn("CHANGED", shown.stderr)
        page = (shown.out / "index.html").read_text()
        self.assertIn("seed-not-backends</a> on <span class=\"mono\">" + VM_215, page)
        # An expected platform that never reported: page, report.json and summary.
        self.assertEqual(shown.json["missing_platforms"],
                         [{"platform": "a100", "why": "expected, and no evidence of it in this run"}])
        self.assertIn("  MISSING PLATFORM a100: expected, and no evidence of it in this run", shown.stdout.splitlines())
        self.assertIn('id="missing-platforms"', page)
        self.assertIn('<span class="mono">a100</span>: expected', page)

    def test_a_platform_of_the_baseline_that_did_not_report_is_missing(self) -> None:
        h100 = next(p for p in self.base.json["platforms"] if p.startswith("h100 "))
        cpu_only = [run / "evidence" for run in self.runs.cpu.values()]
        ran = Ran(self.runs, "no-gpu", "--baseline", str(self.base.out / "report.json"), "--fail-on-change",
                  evidence=cpu_only)
        self.assertEqual(ran.status, baseline.EXIT_CHANGED, ran.stderr)
        said = [line for line in ran.stderr.splitlines() if line.startswith(("CHANGED", "MISSING"))]
        self.assertRegex(said[-1], rf"^MISSING PLATFORM {re.escape(h100)}: in the baseline \(.*\), and no evidence "
                                   r"of it in this run$")
        # Without the GPU, the claim across CPU and GPU is not evaluated on the CPU's platforms: a move too.
        self.assertEqual(said[:-1], [f"CHANGED cpu-gpu-differ on {p}: supported -> not evaluated"
                                     for p in self.base.json["platforms"] if p.startswith("vm ")])
        self.assertEqual([m["platform"] for m in ran.json["missing_platforms"]], [h100])
        self.assertIn('id="missing-platforms"', (ran.out / "index.html").read_text())

    def test_the_junit_skips_known_findings_and_fails_the_unexpected(self) -> None:
        cases = self.base.junit()
        cublas = next(c for n, c in cases.items() if n.startswith("cublas-config [h100 "))
        skipped = cublas.find("skipped")
        self.assertIsNotNone(skipped, "a known finding is skipped")
        self.assertRegex(skipped.get("message"), r"^refuted, known since 2026-11-26: PyTorch 2.10 removed .*"
                                                 r"\(catalog/known_findings.toml:\d+\)$")
        self.assertIsNone(cases[f"openmp-available [{VM_215}]"].find("*[@message]"), "an expected verdict passes")
        self.assertFalse([n for n, c in cases.items() if c.find("failure") is not None])
        # The seed test moved (unexpected), and the model and PyTorch now
        # disagree on a case's alert with no known reason.
        self.move_seed()
        ev = self.runs.cpu["2.15.0"] / "evidence"
        self.runs.edit(ev, CONFORMANCE, '"same_alert":true', '"same_alert":false')
        self.addCleanup(self.runs.edit, ev, CONFORMANCE, '"same_alert":false', '"same_alert":true')
        ran = Ran(self.runs, "unexpected")
        self.assertEqual(ran.status, 5, ran.stderr)
        cases = ran.junit()
        failure = cases[f"seed-not-backends [{VM_215}]"].find("failure")
        self.assertIsNotNone(failure)
        self.assertRegex(failure.get("message"), rf"^UNEXPECTED seed-not-backends on {re.escape(VM_215)}"
                                                 r".*: the folklore verdict moved .*expected supported, got refuted")
        self.assertIn(failure.get("message"), ran.stderr.splitlines())
        disagreement = cases[f"{CONFORMANCE} [alert]"].find("failure")
        self.assertIsNotNone(disagreement, "a disagreement without a known reason fails its own testcase")
        self.assertTrue(disagreement.get("message").startswith(f"UNEXPLAINED DISAGREEMENT in alert: {CONFORMANCE}"))
        explained = [c for n, c in cases.items() if c.get("classname") == "conformance" and c.find("failure") is None]
        self.assertTrue(explained and all(c.find("skipped").get("message").startswith("known reason: ")
                                          for c in explained), "a disagreement with a known reason is skipped")
        suite = ET.parse(ran.out / "claims-junit.xml").getroot()
        self.assertEqual(int(suite.get("failures")), sum(c.find("failure") is not None for c in cases.values()))


class RunAndExpectedTest(unittest.TestCase):
    def test_the_ci_run_is_recorded_where_the_ci_names_it(self) -> None:
        github = baseline.this_run({"GITHUB_RUN_ID": "42", "GITHUB_SERVER_URL": "https://github.com",
                                    "GITHUB_REPOSITORY": "o/r"})
        self.assertEqual((github["ci"], github["ci_run_id"], github["ci_run_url"]),
                         ("github", "42", "https://github.com/o/r/actions/runs/42"))
        gitlab = baseline.this_run({"CI_PIPELINE_ID": "7", "CI_PIPELINE_URL": "https://gitlab.example/o/r/-/pipelines/7"})
        self.assertEqual((gitlab["ci"], gitlab["ci_run_id"], gitlab["ci_run_url"]),
                         ("gitlab", "7", "https://gitlab.example/o/r/-/pipelines/7"))
        self.assertEqual(baseline.this_run({})["ci"], "")

    def test_no_commit_outside_a_checkout(self) -> None:
        with tempfile.TemporaryDirectory() as d:
            self.assertEqual(baseline.this_run({}, Path(d))["commit"], "")

    def test_expected_names_match_a_platform_its_machine_or_machine_and_torch(self) -> None:
        env = {"vm (amd-2t-torch2.15.0_cu132)": {"machine": "vm", "torch": {"version": "2.15.0+cu132"}}}
        for name, expected in (("vm", True), ("vm (amd-2t-torch2.15.0_cu132)", True), ("vm-torch2.15.0", True),
                               ("vm-torch2.15", True), ("vm-torch2.11.0", False), ("a100", False), ("v", False)):
            with self.subTest(name=name):
                self.assertEqual(baseline.present(name, env), expected)

    def test_the_expected_file_one_name_a_line(self) -> None:
        with tempfile.TemporaryDirectory() as d:
            f = Path(d) / "platforms.txt"
            f.write_text("# the nightly matrix\nh100-torch2.15.0\n\na100-torch2.15.0  # two\nh100-torch2.15.0\n")
            self.assertEqual(baseline.read_expected(["l4"], [f]), ["l4", "h100-torch2.15.0", "a100-torch2.15.0"])
            f.write_text("h100\nh100 a100\n")
            with self.assertRaises(SpecError) as e:
                baseline.read_expected([], [f])
            self.assertEqual(str(e.exception).split(": ", 1)[0], f"{f}:2")


if __name__ == "__main__":
    unittest.main()
