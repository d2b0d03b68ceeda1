"""A team's workloads as claims of the report (reports/catalog.py
load_claims, inputs/workloads.py): each is a claim decided by its ctest test
Workload.<id>, judged by the same rule as the catalog's facts. Refuted
without a known finding, it is unexpected (exit 3), as a guarantee is; known
by the team, it is not; its probe's error is the claim's error; an id the
catalog has already is refused at its line."""

from __future__ import annotations

import json
import os
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from inputs.errors import SpecError
from inputs.workloads import ENVIRONMENT
from reports.catalog import WORKLOAD_KIND, load_claims
from reports.pipeline import Inputs, build
from reports.tests.test_reports import environment, write_run

ROOT = Path(__file__).resolve().parents[2]
CATALOG = ROOT / "catalog" / "claims.toml"
DECLARED = '''path = "steps"

[[workload]]
id = "team-step"
statement = "Our step gives the same bits on 1 and 2 threads."
callable = "step:make"
levels = ["run", "threads"]
'''
DETAIL = ("run: the same bits (3 tensors); threads: grad.w moved, first at operation 12 aten.mm.default (backward "
          "(MmBackward0); torch.float32 [8, 8]): File \"steps/step.py\", line 9, in step: out = x @ w; held by "
          "mkldnn=False")


class WorkloadClaimsTest(unittest.TestCase):
    def setUp(self) -> None:
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        self.t = Path(tmp.name)
        (self.t / "steps").mkdir()
        (self.t / "steps" / "step.py").write_text("def make(batch):\n    return lambda: {}\n")
        self.declared = self.t / "team.toml"
        self.declared.write_text(DECLARED)
        (self.t / "manifest.json").write_text(json.dumps({"cases": []}))

    def report(self, outcome: str, known: list[Path] | None = None):
        run = write_run(self.t / f"run-{outcome}-{len(known or [])}", environment("m1"), {"Workload.team-step": [{
            "repro": "torch_backends.py workload", "system": "pytorch",
            "checks": [{"name": "workload", "outcome": outcome, "detail": DETAIL}]}]})
        return build(Inputs(claims=CATALOG, manifest=self.t / "manifest.json", out=self.t / "out", evidence=[run],
                            partial=True, workloads=[self.declared],
                            known=[ROOT / "catalog" / "known_findings.toml", *(known or [])]))

    def test_a_workload_is_a_claim_its_test_decides(self) -> None:
        claims = {c.id: c for c in load_claims(CATALOG, [self.declared])}
        c = claims["team-step"]
        self.assertEqual((c.kind, c.rule, c.tests, c.about), (WORKLOAD_KIND, "fact", ["Workload.team-step"], "pytorch"))
        self.assertEqual(c.source, f"{self.declared.resolve()}:3")
        with mock.patch.dict(os.environ, {ENVIRONMENT: str(self.declared)}):
            self.assertIn("team-step", {c.id for c in load_claims(CATALOG)}, "BACKENDCHECK_CLAIMS names the files")
        self.assertNotIn("team-step", {c.id for c in load_claims(CATALOG, [])})

    def test_held_supported_moved_refuted_and_unexpected_until_known(self) -> None:
        held = self.report("passed")
        self.assertEqual(next(v for v in held.verdicts if v.claim.id == "team-step").verdict, "supported")
        self.assertEqual(held.exit_code(), 0)
        moved = self.report("failed")
        v = next(v for v in moved.verdicts if v.claim.id == "team-step")
        self.assertEqual(v.verdict, "refuted")
        self.assertIn("aten.mm.default", v.reason)
        self.assertEqual([h.claim for h in moved.unexpected], ["team-step"])
        self.assertEqual(moved.exit_code(), 3)
        finding = self.t / "ours.toml"
        finding.write_text('[[finding]]\nclaim = "team-step"\nverdict = "refuted"\nwhen = "threads >= 2"\n'
                           'reason = "layer norm\'s backward splits by thread"\nfirst_seen = 2026-12-08\n')
        known = self.report("failed", [finding])
        self.assertEqual(known.unexpected, [])
        self.assertEqual(known.exit_code(), 0)

    def test_the_card_names_the_levers_that_hold_it_with_their_cost_or_that_none_does(self) -> None:
        levels = {"run": {"held": True}, "threads": {"held": False, "first_divergence": {"op": "aten.mm.default"},
                                                     "levers": {"held_by": {"mkldnn": False}, "tried": [{}]}}}
        a = [1000.0 + i for i in range(9)]
        check = {"name": "workload", "outcome": "failed", "detail": DETAIL,
                 "observed": {"workload": {"hold": ["run", "threads"]}, "levels": levels}}
        compare = {"a": {"repro": "a", "steady_ns": a}, "b": {"repro": "b", "steady_ns": [x * 1.5 for x in a]},
                   "versus_flags": {"mkldnn": False}}
        run = write_run(self.t / "run-card", environment("m1"), {"Workload.team-step": [{
            "repro": "torch_backends.py workload", "system": "pytorch", "checks": [check], "compare": compare}]})
        report = build(Inputs(claims=CATALOG, manifest=self.t / "manifest.json", out=self.t / "out",
                              evidence=[run], partial=True, workloads=[self.declared]))
        [line] = next(iter(report.cards.values()))["workloads"]
        self.assertEqual((line["claim"], line["level"], line["heading"], line["setting"]),
                         ("team-step", "threads", "set", "mkldnn=False"))
        self.assertRegex(line["cost"], r"^1\.5× the time \(1\.5–1\.5, 9 paired runs\)$")
        levels["threads"]["levers"] = {"held_by": None, "tried": [{}, {}, {}],
                                       "still_moves": {"op": "aten.native_layer_norm_backward.default"}}
        run = write_run(self.t / "run-none", environment("m1"), {"Workload.team-step": [{
            "repro": "torch_backends.py workload", "system": "pytorch", "checks": [check]}]})
        report = build(Inputs(claims=CATALOG, manifest=self.t / "manifest.json", out=self.t / "out",
                              evidence=[run], partial=True, workloads=[self.declared]))
        [line] = next(iter(report.cards.values()))["workloads"]
        self.assertEqual((line["heading"], line["tried"], line["op"]),
                         ("undecided", 3, "aten.native_layer_norm_backward.default"))

    def test_its_claim_test_waits_for_its_workload_test(self) -> None:
        """claim.<id> is set up by Workload.<id>, a test the build adds by
        name (no test binary discovers it), so the claim's test and the
        report run after it."""
        from reports.tools.claim_tests import cmake_tests, evidence_of
        claim = next(c for c in load_claims(CATALOG, [self.declared]) if c.id == "team-step")
        self.assertEqual(evidence_of(claim, []), ([], ["Workload.team-step"]))
        text = cmake_tests([claim], [], python="python3", source=ROOT, manifest_path=self.t / "m.json",
                           build=self.t, partial=True)
        self.assertIn('list(APPEND bc_matched "Workload.team-step")', text.replace("[==[", '"').replace("]==]", '"'))

    def test_a_workload_that_raised_is_an_error(self) -> None:
        r = self.report("error")
        self.assertEqual(next(v for v in r.verdicts if v.claim.id == "team-step").verdict, "error")

    def test_an_id_of_the_catalog_is_refused_at_its_line(self) -> None:
        self.declared.write_text(DECLARED.replace('id = "team-step"', 'id = "defaults"'))
        with self.assertRaises(SpecError) as caught:
            load_claims(CATALOG, [self.declared])
        self.assertEqual(caught.exception.line, 3)
        self.assertIn("is a claim of the catalog", caught.exception.message)


if __name__ == "__main__":
    unittest.main()
