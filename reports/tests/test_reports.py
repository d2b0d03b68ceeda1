"""Tests of the catalog loader, the evidence reader, the verdict engine and
the rendered page."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

from generators.errors import SpecError
from reports.catalog import Claim, load_catalog
from reports.evidence import Evidence, read_evidence, read_junit
from reports.render import write_report
from reports.verdicts import judge, judge_all, refuted_guarantees

ROOT = Path(__file__).resolve().parents[2]


def claim(**kw) -> Claim:
    base = dict(id="c", statement="s", source="src", kind="guarantee", scope={}, rule="fact",
                polarity="supports", tests=["T.*"])
    base.update(kw)
    return Claim(**base)


def evidence(**outcomes: str) -> Evidence:
    ev = Evidence()
    for test, outcome in outcomes.items():
        ev.results[test] = {"kind": "result", "test": test, "outcome": outcome, "message": f"{test} said {outcome}"}
    return ev


class VerdictTest(unittest.TestCase):
    def test_passing_facts_support(self) -> None:
        v = judge(claim(), [], evidence(**{"T.a": "passed", "T.b": "passed"}))
        self.assertEqual(v.verdict, "supported")
        self.assertEqual(len(v.facts), 2)

    def test_a_failing_fact_refutes(self) -> None:
        v = judge(claim(), [], evidence(**{"T.a": "passed", "T.b": "failed"}))
        self.assertEqual(v.verdict, "refuted")
        self.assertIn("T.b", v.reason)
        self.assertEqual(refuted_guarantees([v]), [v])

    def test_refuting_polarity(self) -> None:
        self.assertEqual(judge(claim(polarity="refutes"), [], evidence(**{"T.a": "passed"})).verdict, "refuted")
        self.assertEqual(judge(claim(polarity="refutes"), [], evidence(**{"T.a": "failed"})).verdict, "supported")

    def test_skipped_facts_are_not_evaluated_with_their_reason(self) -> None:
        v = judge(claim(), [], evidence(**{"T.a": "skipped"}))
        self.assertEqual(v.verdict, "not evaluated")
        self.assertIn("T.a said skipped", v.reason)

    def test_mistrusted_evidence_cannot_support(self) -> None:
        ev = evidence(**{"T.a": "passed"})
        ev.cases["T.a"] = [{"kind": "case", "checks": [{"name": "bitwise", "outcome": "mistrusted"}]}]
        self.assertEqual(judge(claim(), [], ev).verdict, "inconclusive")

    def test_crash_without_result_is_an_error(self) -> None:
        ev = evidence(**{"T.a": "passed"})
        ev.ctest["T.b"] = "fail"
        v = judge(claim(), [], ev)
        self.assertEqual(v.verdict, "error")
        self.assertIn("T.b", v.reason)

    def test_selectors_matching_nothing_is_an_error(self) -> None:
        self.assertEqual(judge(claim(tests=["Nothing.*"]), [], evidence(**{"T.a": "passed"})).verdict, "error")

    def test_registered_test_that_did_not_run_is_not_evaluated(self) -> None:
        ev = evidence(**{"Other.a": "passed"})
        ev.registered = {"T.a", "Other.a"}
        v = judge(claim(), [], ev)
        self.assertEqual(v.verdict, "not evaluated")
        self.assertIn("did not run", v.reason)

    def test_case_selector_uses_manifest_axes(self) -> None:
        manifest = [{"test": "P/F.T/A", "fixture": "F", "positive_control": False, "axes": {"engine": "reference:atomic"}},
                    {"test": "P/F.T/B", "fixture": "F", "positive_control": False, "axes": {"engine": "onednn"}}]
        ev = evidence(**{"P/F.T/A": "failed", "P/F.T/B": "passed"})
        self.assertEqual(judge(claim(tests=[], cases={"engine": "onednn"}), manifest, ev).verdict, "supported")
        self.assertEqual(judge(claim(tests=[], cases={"engine": "reference"}), manifest, ev).verdict, "refuted")

    def test_out_of_scope(self) -> None:
        v = judge(claim(rule="out-of-scope", kind="out-of-scope", reason="not a flag"), [], Evidence())
        self.assertEqual(v.verdict, "not evaluated")
        self.assertIn("not a flag", v.reason)


class EvidenceReaderTest(unittest.TestCase):
    def setUp(self) -> None:
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)
        self.dir = Path(self.tmp.name)

    def test_corrupt_lines_are_reported_and_skipped(self) -> None:
        lines = [json.dumps({"kind": "environment", "machine": "m"}),
                 json.dumps({"kind": "result", "test": "T.a", "outcome": "passed"}),
                 '{"kind": "result", "test": "T.b", "outc',
                 json.dumps({"kind": "result", "test": "T.c", "outcome": "failed"})]
        (self.dir / "a-1.jsonl.part").write_text("\n".join(lines) + "\n")
        ev = read_evidence([self.dir])
        self.assertEqual(set(ev.results), {"T.a", "T.c"})
        self.assertEqual(len(ev.problems), 1)
        self.assertRegex(ev.problems[0], r"a-1\.jsonl\.part:3: unreadable record")
        self.assertIn("m", ev.environments)
        self.assertEqual(ev.results["T.a"]["machine"], "m")

    def test_junit_statuses(self) -> None:
        (self.dir / "j.xml").write_text(
            '<testsuite><testcase name="A" status="run"/><testcase name="B" status="fail"><failure/></testcase>'
            '<testcase name="C" status="notrun"/></testsuite>')
        ev = Evidence()
        read_junit(self.dir / "j.xml", ev)
        self.assertEqual(ev.ctest, {"A": "run", "B": "fail", "C": "notrun"})


class CatalogTest(unittest.TestCase):
    def test_repository_catalog_loads(self) -> None:
        claims = load_catalog(ROOT / "suites" / "claims.toml")
        self.assertGreaterEqual(len(claims), 8)
        self.assertGreaterEqual(sum(c.kind == "out-of-scope" for c in claims), 3)
        for c in claims:
            self.assertTrue(c.source and c.statement)

    def test_bad_catalog_names_the_line(self) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "claims.toml"
            path.write_text('[[claim]]\nid = "x"\nstatement = "s"\nsource = "s"\nkind = "rumour"\n'
                            '[claim.evidence]\nrule = "fact"\ntests = ["A"]\n')
            with self.assertRaises(SpecError) as ctx:
                load_catalog(path)
            self.assertEqual(ctx.exception.line, 5)


class RenderTest(unittest.TestCase):
    def test_strings_are_escaped_and_json_written(self) -> None:
        hostile = "<script>alert(1)</script>"
        c = claim(id="hostile", statement=hostile, tests=[hostile])
        ev = evidence(**{hostile: "failed"})
        ev.environments["m"] = {"machine": "m", "cpu_model": hostile, "backends": {}}
        manifest = [{"id": "1", "test": hostile, "repro": hostile, "suite": "s", "axes": {"device": "cpu"}}]
        with tempfile.TemporaryDirectory() as tmp:
            page = write_report(Path(tmp), judge_all([c], manifest, ev), manifest, ev)
            html = page.read_text()
            self.assertNotIn(hostile, html)
            self.assertIn("&lt;script&gt;alert(1)&lt;/script&gt;", html)
            data = json.loads((Path(tmp) / "report.json").read_text())
            self.assertEqual(data["claims"][0]["verdict"], "refuted")
            self.assertEqual(data["summary"], {"refuted": 1})

    def test_cli_exit_status_for_refuted_guarantee(self) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            t = Path(tmp)
            (t / "claims.toml").write_text('[[claim]]\nid = "g"\nstatement = "s"\nsource = "s"\nkind = "guarantee"\n'
                                           '[claim.evidence]\nrule = "fact"\ntests = ["T.a"]\n')
            (t / "cases.json").write_text('{"cases": []}')
            (t / "ev").mkdir()
            (t / "ev" / "x-1.jsonl").write_text(json.dumps({"kind": "result", "test": "T.a", "outcome": "failed"}) + "\n")
            env = {**os.environ, "PYTHONPATH": str(ROOT)}
            r = subprocess.run([sys.executable, "-m", "reports", "--claims", str(t / "claims.toml"), "--manifest",
                                str(t / "cases.json"), "--out", str(t / "out"), str(t / "ev")],
                               cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
            self.assertEqual(r.returncode, 3, r.stderr)
            self.assertIn("REFUTED GUARANTEE g", r.stderr)
            self.assertTrue((t / "out" / "index.html").exists())


if __name__ == "__main__":
    unittest.main()


class RuleTest(unittest.TestCase):
    def compare_evidence(self, a: list[float], b: list[float]) -> Evidence:
        ev = evidence(**{"P/Compare.SideBySide/X": "passed"})
        ev.cases["P/Compare.SideBySide/X"] = [{"kind": "case", "compare": {
            "a": {"repro": "A", "steady_ns": a}, "b": {"repro": "B", "steady_ns": b}, "versus_flags": {}}}]
        return ev

    def ratio_claim(self, when: str) -> Claim:
        return claim(rule="ratio", metric="steady_ns", supports_when=when, tests=["P/Compare.*"])

    def test_ratio_decides_only_outside_the_interval(self) -> None:
        fast = [10.0 + i * 0.1 for i in range(9)]
        slow = [20.0 + i * 0.1 for i in range(9)]
        self.assertEqual(judge(self.ratio_claim("below"), [], self.compare_evidence(slow, fast)).verdict, "supported")
        self.assertEqual(judge(self.ratio_claim("above"), [], self.compare_evidence(slow, fast)).verdict, "refuted")
        same = judge(self.ratio_claim("below"), [], self.compare_evidence(fast, list(reversed(fast))))
        self.assertEqual(same.verdict, "inconclusive")
        self.assertIn("B/A", same.reason)

    def test_ratio_needs_nine_reps(self) -> None:
        v = judge(self.ratio_claim("below"), [], self.compare_evidence([20.0] * 5, [10.0] * 5))
        self.assertEqual(v.verdict, "inconclusive")

    def test_distribution_varies_or_is_inconclusive(self) -> None:
        c = claim(rule="distribution", count="distinct_choices", supports_when="varies", tests=["X.*"])
        ev = evidence(**{"X.a": "passed"})
        ev.cases["X.a"] = [{"kind": "case", "distinct_choices": 3, "choice_distribution": {"p": 5, "q": 3, "r": 2},
                            "processes": [{}] * 10}]
        self.assertEqual(judge(c, [], ev).verdict, "supported")
        ev.cases["X.a"][0]["distinct_choices"] = 1
        v = judge(c, [], ev)
        self.assertEqual(v.verdict, "inconclusive")
        self.assertIn("does not show it cannot happen", v.reason)

    def test_check_facts_use_the_named_check(self) -> None:
        ev = evidence(**{"S.a": "passed", "S.b": "passed"})
        ev.cases["S.a"] = [{"kind": "case", "checks": [{"name": "searches", "outcome": "passed", "detail": "1"}]}]
        ev.cases["S.b"] = [{"kind": "case", "checks": [{"name": "other", "outcome": "passed"}]}]
        v = judge(claim(tests=["S.*"], check="searches"), [], ev)
        self.assertEqual(v.verdict, "supported")
        self.assertEqual([f.outcome for f in v.facts], ["passed", "not run"])


class StatisticsTest(unittest.TestCase):
    def test_mann_whitney(self) -> None:
        from reports.statistics import mann_whitney_p
        self.assertLess(mann_whitney_p(list(range(10)), list(range(100, 110))), 0.001)
        self.assertGreater(mann_whitney_p(list(range(10)), list(range(10))), 0.9)

    def test_bootstrap_interval_contains_the_ratio(self) -> None:
        from reports.statistics import bootstrap_ratio_ci, ratio_of_medians
        a, b = [10.0, 11, 12, 10, 11, 13, 12, 10, 11], [20.0, 22, 21, 23, 20, 22, 21, 24, 20]
        lo, hi = bootstrap_ratio_ci(a, b)
        self.assertLessEqual(lo, ratio_of_medians(a, b))
        self.assertGreaterEqual(hi, ratio_of_medians(a, b))
        self.assertEqual(bootstrap_ratio_ci(a, b), (lo, hi), "seeded: reproducible")


class CatalogSelectorsTest(unittest.TestCase):
    """Every claim of the catalog addresses some test of the full (nightly)
    default matrix or some TEST() of the suites, so a typo cannot hide behind
    runs that build only part of the matrix."""

    def test_every_claim_selects_something(self) -> None:
        import re
        from generators.expand import expand
        from generators.flags import load_flags
        from generators.spec import load_spec
        from reports.verdicts import _case_matches

        flags = load_flags()
        specs = [load_spec(p, flags) for p in sorted((ROOT / "suites" / "matrices").glob("*.toml"))]
        cases = [{"test": c.test, "fixture": c.fixture, "suite": c.suite, "binary": c.binary,
                  "positive_control": c.positive_control, "axes": c.axes} for c in expand(specs, flags, "nightly")]
        names = {c["test"] for c in cases}
        for source in (ROOT / "suites").glob("*.cc"):
            for suite, name in re.findall(r"^TEST(?:_F)?\((\w+), (\w+)\)", source.read_text(), re.M):
                names.add(f"{suite}.{name}")
        import fnmatch
        for claim in load_catalog(ROOT / "suites" / "claims.toml"):
            if claim.rule == "out-of-scope":
                continue
            matched = [t for pattern in claim.tests for t in names if fnmatch.fnmatchcase(t, pattern)]
            matched += [c["test"] for c in cases if claim.cases and _case_matches(c, claim.cases)]
            self.assertTrue(matched, f"claim {claim.id} selects no test")
            for pattern in claim.tests:
                self.assertTrue(any(fnmatch.fnmatchcase(t, pattern) for t in names),
                                f"claim {claim.id}: pattern {pattern} matches no test")
