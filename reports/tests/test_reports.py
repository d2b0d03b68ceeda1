"""Tests of the catalog loader, the evidence reader, the verdict engine and
the rendered page."""

from __future__ import annotations

import json
import random
import math
import os
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

from inputs import install_state
from inputs.errors import SpecError
from reports.catalog import Claim, load_catalog
from reports.evidence import Evidence, read_evidence, read_junit
from reports.page.folds import unfolded
from reports.pipeline import Report, read_self_bench
from reports.page.render import write_report
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

    def test_a_probe_whose_control_did_not_vary_says_so(self) -> None:
        ev = evidence(**{"T.a": "failed"})
        ev.cases["T.a"] = [{"kind": "case", "checks": [{
            "name": "mha_fastpath", "outcome": "mistrusted",
            "detail": "PyTorch 2.15.0: same bits; mistrusted: the positive control (x) gave the same bits"}]}]
        v = judge(claim(), [], ev)
        self.assertEqual(v.verdict, "inconclusive")
        self.assertIn("the positive control (x) gave the same bits", v.reason)

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

    def test_an_engine_selector_with_an_algorithm_selects_that_algorithm_only(self) -> None:
        """atomics-cudnn is about one algorithm: its selector names it, and the
        engine's other controls are not its evidence."""
        from reports.verdicts import select_tests
        manifest = [{"test": f"P/F.T/{a}", "axes": {"engine": f"cudnn:{a}"}} for a in ("algo_0", "algo_3")]
        manifest.append({"test": "P/F.T/S", "axes": {"engine": "select:onednn"}})
        self.assertEqual(select_tests([], {"engine": "cudnn:algo_0"}, manifest, Evidence()), ["P/F.T/algo_0"])
        self.assertEqual(select_tests([], {"engine": "cudnn"}, manifest, Evidence()), ["P/F.T/algo_0", "P/F.T/algo_3"])
        self.assertEqual(select_tests([], {"engine": "select:onednn"}, manifest, Evidence()), ["P/F.T/S"])
        [atomics] = [c for c in load_catalog(ROOT / "catalog" / "claims.toml") if c.id == "atomics-cudnn"]
        self.assertEqual((atomics.cases["engine"], atomics.cases["direction"]), ("cudnn:algo_0", "bwd_weights"))

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
        # A process killed mid-write leaves a torn last line: skipped with a warning.
        lines = [json.dumps({"kind": "environment", "schema": 1, "machine": "m"}),
                 json.dumps({"kind": "result", "schema": 1, "test": "T.a", "outcome": "passed"}),
                 json.dumps({"kind": "result", "schema": 1, "test": "T.c", "outcome": "failed"}),
                 '{"kind": "result", "test": "T.b", "outc']
        (self.dir / "a-1.jsonl.part").write_text("\n".join(lines) + "\n")
        ev = read_evidence([self.dir])
        self.assertEqual(set(ev.results), {"T.a", "T.c"})
        self.assertEqual(len(ev.problems), 1)
        self.assertFalse(ev.refused)
        self.assertRegex(ev.problems[0], r"a-1\.jsonl\.part:4: unreadable record")
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
        claims = load_catalog(ROOT / "catalog" / "claims.toml")
        self.assertGreaterEqual(len(claims), 8)
        self.assertGreaterEqual(sum(c.kind == "out-of-scope" for c in claims), 3)
        for c in claims:
            self.assertTrue(c.source and c.statement)

    def test_bad_catalog_names_the_line(self) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "claims.toml"
            path.write_text('[[claim]]\nid = "x"\nstatement = "s"\nsource = "s"\nkind = "rumour"\n'
                            'about = "any"\n[claim.evidence]\nrule = "fact"\nsystem = "any"\ntests = ["A"]\n')
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
            page = write_report(Path(tmp), Report.of(judge_all([c], manifest, ev), manifest, ev))
            html = unfolded(page.read_text())  # the folds' bodies too
            self.assertIn('class="evidence-table"', html)
            self.assertNotIn(hostile, html)
            self.assertIn("&lt;script&gt;alert(1)&lt;/script&gt;", html)
            data = json.loads((Path(tmp) / "report.json").read_text())
            self.assertEqual(data["claims"][0]["verdict"], "refuted")
            self.assertEqual(data["summary"], {"refuted": 1})

    def test_the_harness_s_own_speed_is_shown_with_the_environment(self) -> None:
        speed = {"date": "2026-12-07", "commit": "abc1234", "machine": "AMD EPYC (avx2), 2 cores",
                 "warm_run_s": 363.0, "warm_run_rc": 0, "overhead": {"median_s": 0.044, "cases": 657, "batched": True}}
        with tempfile.TemporaryDirectory() as tmp:
            t = Path(tmp)
            (t / "self-bench.json").write_text(json.dumps(speed))
            read = read_self_bench(t / "self-bench.json")
            page = write_report(t / "out", Report.of([], [], Evidence(), self_bench=read))
            html = page.read_text()
            self.assertIn("warm run 363 s, per-case overhead of the evidence tests 0.044 s (657 cases, in batches) "
                          "(median), test not measured; measured 2026-12-07 on a fresh clone of abc1234, AMD EPYC "
                          "(avx2), 2 cores", html)
            self.assertEqual(json.loads((t / "out" / "report.json").read_text())["self_bench"]["line"], read["line"])
            self.assertNotIn("harness-speed", write_report(t / "none", Report.of([], [], Evidence())).read_text())
            (t / "bad.json").write_text('{"date": "2026-12-07",\n "machine": }')
            with self.assertRaises(SpecError) as e:
                read_self_bench(t / "bad.json")
            self.assertTrue(str(e.exception).startswith(f"{t / 'bad.json'}:2: the harness's own speed: "), e.exception)
            (t / "other.json").write_text('{"a": 1}')
            with self.assertRaises(SpecError) as e:
                read_self_bench(t / "other.json")
            self.assertIn("not bench --self's record", str(e.exception))

    def test_an_error_verdict_exits_1_and_is_never_known(self) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            t = Path(tmp)
            (t / "claims.toml").write_text('[[claim]]\nid = "g"\nstatement = "s"\nsource = "s"\nkind = "folklore"\n'
                                           'about = "any"\n[claim.evidence]\nrule = "fact"\nsystem = "any"\n'
                                           'tests = ["T.a"]\n')
            (t / "cases.json").write_text('{"cases": []}')
            (t / "ev").mkdir()
            (t / "ev" / "x-1.jsonl").write_text(json.dumps({
                "kind": "case", "schema": 1, "test": "T.a", "repro": "torch_backends.py a", "system": "pytorch",
                "checks": [{"name": "a", "outcome": "error", "detail": "the probe raised AttributeError"}]}) + "\n"
                + json.dumps({"kind": "result", "schema": 1, "test": "T.a", "outcome": "failed"}) + "\n")
            (t / "known.toml").write_text('[[finding]]\nclaim = "g"\nverdict = "refuted"\nreason = "seen before"\n'
                                          'first_seen = 2026-11-26\n')
            env = {**os.environ, "PYTHONPATH": str(ROOT)}
            r = subprocess.run([sys.executable, "-m", "reports", "--claims", str(t / "claims.toml"), "--manifest",
                                str(t / "cases.json"), "--out", str(t / "out"), "--known", str(t / "known.toml"),
                                str(t / "ev")], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
            self.assertEqual(r.returncode, 1, r.stderr)
            self.assertIn("ERROR g on unknown (unknown): the harness could not decide it: ", r.stderr)
            data = json.loads((t / "out" / "report.json").read_text())
            self.assertEqual((data["claims"][0]["verdict"], data["exit_status"]), ("error", 1))
            self.assertEqual(data["known"]["held"], [], "an error is neither known nor a known finding not seen")
            self.assertNotIn("a known finding, not evaluated here", (t / "out" / "index.html").read_text())

    def test_cli_exit_status_for_refuted_guarantee(self) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            t = Path(tmp)
            (t / "claims.toml").write_text('[[claim]]\nid = "g"\nstatement = "s"\nsource = "s"\nkind = "guarantee"\n'
                                           'about = "any"\n[claim.evidence]\nrule = "fact"\nsystem = "any"\ntests = ["T.a"]\n')
            (t / "cases.json").write_text('{"cases": []}')
            (t / "ev").mkdir()
            (t / "ev" / "x-1.jsonl").write_text(json.dumps({"kind": "result", "schema": 1, "test": "T.a",
                                                            "outcome": "failed"}) + "\n")
            env = {**os.environ, "PYTHONPATH": str(ROOT)}
            r = subprocess.run([sys.executable, "-m", "reports", "--claims", str(t / "claims.toml"), "--manifest",
                                str(t / "cases.json"), "--out", str(t / "out"), str(t / "ev")],
                               cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
            self.assertEqual(r.returncode, 3, r.stderr)
            self.assertIn("UNEXPECTED g on unknown (unknown): a guarantee refuted with no known finding: expected "
                          "supported, got refuted", r.stderr)
            self.assertTrue((t / "out" / "index.html").exists())
            # Known: the run passes and says so; --strict fails on it all the same.
            (t / "known.toml").write_text('[[finding]]\nclaim = "g"\nverdict = "refuted"\nreason = "seen before"\n'
                                          'first_seen = 2026-11-26\n')
            args = [sys.executable, "-m", "reports", "--claims", str(t / "claims.toml"), "--manifest",
                    str(t / "cases.json"), "--out", str(t / "out"), "--known", str(t / "known.toml"), str(t / "ev")]
            r = subprocess.run(args, cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIn("refuted, known: g on unknown (unknown) (since 2026-11-26)", r.stdout)
            self.assertIn(", known</span>", (t / "out" / "index.html").read_text())
            r = subprocess.run(args + ["--strict"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
            self.assertEqual(r.returncode, 3, r.stderr)
            self.assertIn("REFUTED GUARANTEE g (--strict)", r.stderr)


class RuleTest(unittest.TestCase):
    def compare_evidence(self, a: list[float], b: list[float], others_cpu: float | None = None) -> Evidence:
        ev = evidence(**{"P/Compare.SideBySide/X": "passed"})
        ev.cases["P/Compare.SideBySide/X"] = [{"kind": "case", "compare": {
            "a": {"repro": "A", "steady_ns": a}, "b": {"repro": "B", "steady_ns": b}, "versus_flags": {}}}]
        if others_cpu is not None:
            ev.cases["P/Compare.SideBySide/X"][0]["compare"]["others_cpu"] = others_cpu
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

    def test_a_ratio_timed_on_a_busy_machine_is_withheld(self) -> None:
        from reports.statistics import LOAD_LIMIT
        fast = [10.0 + i * 0.1 for i in range(9)]
        slow = [20.0 + i * 0.1 for i in range(9)]
        quiet = judge(self.ratio_claim("below"), [], self.compare_evidence(slow, fast, others_cpu=LOAD_LIMIT / 2))
        self.assertEqual((quiet.verdict, quiet.withheld), ("supported", False))
        busy = judge(self.ratio_claim("below"), [], self.compare_evidence(slow, fast, others_cpu=0.48))
        self.assertEqual((busy.verdict, busy.withheld), ("not evaluated", True))
        self.assertIn("took up to 48% of the machine's CPU time", busy.reason)
        self.assertIn("rerun on a quiet machine", busy.reason)
        from reports.observe import line
        self.assertEqual(line(busy), "timed while other processes took up to 48% of the machine's CPU time "
                                     "(1 of 1 comparisons): rerun on a quiet machine", "the load first, then the count")

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

    def test_a_tolerance_no_bound_covers_is_not_evaluated_never_failed(self) -> None:
        ev = evidence(**{"G.a": "passed", "G.b": "passed"})
        ev.cases["G.a"] = [{"kind": "case", "checks": [
            {"name": "tolerance", "outcome": "not_applicable", "detail": "not evaluated: the kernel's WINOGRAD"}]}]
        ev.cases["G.b"] = [{"kind": "case", "checks": [
            {"name": "tolerance", "outcome": "not_applicable", "detail": "step 0: not evaluated"},
            {"name": "tolerance", "outcome": "passed", "detail": "step 1: within"}]}]
        v = judge(claim(tests=["G.*"], check="tolerance"), [], ev)
        self.assertEqual([f.outcome for f in v.facts], ["skipped", "passed"])
        self.assertIn("WINOGRAD", v.facts[0].message)
        self.assertNotEqual(v.verdict, "refuted")


class StatisticsTest(unittest.TestCase):
    def test_ratios_are_paired_by_rep(self) -> None:
        from reports.statistics import paired_ratios
        self.assertEqual(paired_ratios([1.0, 2.0, 0.0, 0.0], [2.0, 2.0, 0.0, 3.0]), [2.0, 1.0, 1.0, math.inf])

    def test_bootstrap_interval_contains_the_median_and_is_seeded(self) -> None:
        from reports.statistics import bootstrap_median_ci
        r = [1.9, 2.0, 2.1, 2.0, 1.95, 2.05, 2.2, 1.8, 2.0]
        lo, hi = bootstrap_median_ci(r)
        self.assertLessEqual(lo, 2.0)
        self.assertGreaterEqual(hi, 2.0)
        self.assertEqual(bootstrap_median_ci(r), (lo, hi), "seeded: reproducible")

    def test_the_bootstrap_draws_as_random_choice_and_statistics_median_would(self) -> None:
        """The interval is the one of its plain statement (choice and median
        per resample, from the seed), for odd and even counts and ties."""
        import random
        import statistics
        from reports.statistics import BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED, LEVEL, _bootstrap
        def plain(values):
            rng = random.Random(BOOTSTRAP_SEED)
            m = sorted(statistics.median([rng.choice(values) for _ in values]) for _ in range(BOOTSTRAP_RESAMPLES))
            return m[int((1 - LEVEL) / 2 * (len(m) - 1))], m[int((1 + LEVEL) / 2 * (len(m) - 1))]
        gen = random.Random(7)
        for values in [(1.0,), (1.0, 3.0), (2.0, 2.0, 1.0, 5.0)] + \
                [tuple(gen.random() for _ in range(n)) for n in (3, 6, 9, 16)]:
            self.assertEqual(_bootstrap.__wrapped__(values, LEVEL), plain(values), values)

    def test_a_drifting_machine_is_cancelled_by_pairing(self) -> None:
        """The two speed states of a shared host: each side's samples are
        bimodal, B is 15% slower in every rep. Pooled medians cannot see it;
        the paired rule does."""
        from reports.statistics import decide_ratio
        state = [1.0, 1.0, 1.3, 1.3, 1.0, 1.3, 1.0, 1.3, 1.3]
        a = [s * (1 + 0.005 * i) for i, s in enumerate(state)]
        b = [x * 1.15 for x in a]
        self.assertEqual(decide_ratio(a, b, 1.0, "above")[0], "supported")

    def test_a_shift_within_the_margin_is_not_decisive(self) -> None:
        from reports.statistics import decide_ratio
        a = [1.0 + 0.001 * i for i in range(9)]
        self.assertEqual(decide_ratio(a, [x * 1.02 for x in a], 1.0, "above")[0], "inconclusive")
        self.assertEqual(decide_ratio(a, [x * 1.05 for x in a], 1.0, "above")[0], "supported")
        self.assertEqual(decide_ratio(a, [x / 1.05 for x in a], 1.0, "above")[0], "refuted")


# Every row of the project's claim table (CLAIMS.md), out-of-scope rows included.
CLAIM_TABLE = (
    "defaults flags-scope no-gpu-switch cpu-noop bench-fastest bench-cache bench-fixed-faster bench-varying-slower "
    "bench-memory bench-unstable heuristic-stable bench-limit det-bitwise det-slower det-overrides-bench "
    "det-bench-leaks det-bench-cross-run atomics fixed-algo-nondet det-only-conv det-alg-raises det-alg-implies-cudnn "
    "cublas-config seed-not-backends disabled-no-cudnn disabled-2x disable-excludes disable-debug tf32-speed "
    "tf32-precision cpu-gpu-differ no-cross-arch mkldnn-accel mkldnn-available mkldnn-det openmp-available "
    "mps-available autograd-profiler set-deterministic onnx-export").split()


def environment(machine: str, isa: str = "avx512_core", threads: int = 2, gpu: str = "") -> dict:
    backends = {"cudnn": {"available": bool(gpu), "built": True, "version": "cuDNN 9.19.0, CUDA runtime 13.0",
                          "reason": f"1 device(s); device 0: {gpu} (sm_90), driver API 13.0" if gpu else "no GPU"}}
    env = {"kind": "environment", "schema": 1, "machine": machine, "onednn_isa": isa, "omp_max_threads": threads,
           "backends": backends, "versions": {"cudnn": "9.19.0"} if gpu else {}}
    if gpu:
        env["gpu"] = {"name": gpu, "arch": "sm_90", "count": 1, "driver": "13.0"}
    return env


def write_run(directory: Path, env: dict, records: dict[str, list[dict]],
              outcomes: dict[str, str] | None = None) -> Path:
    """One run's evidence directory: a file per test, environment first,
    each test passed unless `outcomes` says otherwise."""
    directory.mkdir(parents=True)
    for i, (test, recs) in enumerate(records.items()):
        lines = [env] + [{"kind": "case", "schema": 1, "test": test, **r} for r in recs] + \
                [{"kind": "result", "schema": 1, "test": test, "outcome": (outcomes or {}).get(test, "passed")}]
        (directory / f"t-{i}.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    return directory


class CatalogCoverageTest(unittest.TestCase):
    def test_catalog_covers_every_row_of_the_claim_table(self) -> None:
        ids = {c.id for c in load_catalog(ROOT / "catalog" / "claims.toml")}
        self.assertEqual(sorted(set(CLAIM_TABLE) - ids), [], "claims without a catalog entry")
        self.assertGreaterEqual(len(ids), 35)

    def test_every_catalog_entry_has_an_evidence_mapping(self) -> None:
        # The loader refuses an entry without a mapping (or an out-of-scope one
        # without its reason), so loading the repository's catalog is the check.
        load_catalog(ROOT / "catalog" / "claims.toml")
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "claims.toml"
            for evidence, message in (('rule = "fact"\n', "a fact rule needs 'tests' or 'cases'"),
                                      ('rule = "out-of-scope"\n', "an out-of-scope claim needs a reason")):
                path.write_text('[[claim]]\nid = "x"\nstatement = "s"\nsource = "s"\nkind = "folklore"\n'
                                f'about = "any"\n[claim.evidence]\nsystem = "any"\n{evidence}')
                with self.assertRaises(SpecError) as ctx:
                    load_catalog(path)
                self.assertEqual(ctx.exception.message, message)


class EngineSystemsTest(unittest.TestCase):
    """The systems a claim, a record and the report may name are those of
    backends/engines.def, and the model: one list, nowhere spelled again."""

    def test_systems_come_from_the_engine_lines(self) -> None:
        from inputs.engines import ENGINES_DEF, engines, harness_system, systems
        from reports import records
        from reports.catalog import ABOUT, SYSTEMS
        listed = {e.system for e in engines().values()}
        self.assertEqual(set(systems()), listed | {"model"})
        self.assertEqual(set(SYSTEMS), set(systems()) | {"any"})
        self.assertNotIn("model", ABOUT, "no claim is about the model")
        self.assertEqual(set(records.contract()["$defs"]["system"]["enum"]), set(systems()))
        self.assertTrue(harness_system("model") and harness_system("reference"))
        self.assertFalse(harness_system("pytorch") or harness_system("cudnn"))
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "engines.def"
            path.write_text(ENGINES_DEF.read_text() +
                            'BC_ENGINE("miopen", MiopenEngineInstance, cuda, "conv2d", true, "MIOpen", "miopen", "")\n')
            self.assertIn("miopen", systems(path), "a new engine line brings its system")

    def test_platform_facts_are_read_where_the_engines_put_them(self) -> None:
        from reports.evidence import platform_fact, platform_of
        new = {"machine": "m", "platform": {"onednn_isa": "avx2"}, "omp_max_threads": 2}
        old = {"machine": "m", "onednn_isa": "avx2", "omp_max_threads": 2}
        self.assertEqual(platform_fact(new, "onednn_isa"), "avx2")
        self.assertEqual(platform_of(new), platform_of(old), "records written before 'platform' keep their platform")
        self.assertIsNone(platform_fact({}, "onednn_isa"))

    def test_the_smoke_benchmarks_expect_every_available_cpu_engine_from_the_engine_lines(self) -> None:
        from inputs.engines import engines
        from reports.tools.bench_smoke import benchmarked_cpu_engines
        everything = {f"engine.{name}": "available; v; why" for name in engines()}
        expected = [e.name for e in engines().values() if e.device == "cpu" and (e.serves("conv2d") or e.serves("matmul"))]
        self.assertEqual(benchmarked_cpu_engines(everything), expected)
        self.assertIn("reference", expected, "the oracle is placed too")
        one_missing = dict(everything, **{f"engine.{expected[0]}": "unavailable; ; no library"})
        self.assertEqual(benchmarked_cpu_engines(one_missing), expected[1:])


class MergeTest(unittest.TestCase):
    """Two runs of different platforms: per-platform verdicts and the
    cross-environment claims."""

    REPRO = "conv2d:bwd_weights:f32:mb2ic8ih14iw14oc8kh3kw3sh1sw1ph1pw1dh1dw1g1 device=cpu engine=onednn threads=2"

    def setUp(self) -> None:
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)
        self.t = Path(self.tmp.name)
        self.manifest = [{"id": "1", "test": "Cpu/Determinism.Bitwise/X", "repro": self.REPRO, "suite": "s",
                          "fixture": "Determinism", "positive_control": False, "binary": "determinism_tests",
                          "axes": {"device": "cpu", "engine": "onednn"}}]
        self.across = claim(id="no-cross-arch", rule="across", across="platform", supports_when="differs", tests=[],
                            cases={"fixture": "Determinism", "positive_control": False})

    def runs(self, digest_b: str, outcome_b: str = "passed") -> Evidence:
        rec = lambda d: [{"repro": self.REPRO, "device": "cpu", "digest": d, "distinct_digests": 1}]
        a = write_run(self.t / "a", environment("m1", "avx512_core_vnni", 2), {"Cpu/Determinism.Bitwise/X": rec("aaaa")})
        b = write_run(self.t / "b", environment("m1", "avx2", 1), {"Cpu/Determinism.Bitwise/X": rec(digest_b)})
        if outcome_b != "passed":
            f = b / "t-0.jsonl"
            f.write_text(f.read_text().replace('"outcome": "passed"', f'"outcome": "{outcome_b}"'))
        return read_evidence([a, b])

    def test_runs_of_two_platforms_stay_apart(self) -> None:
        ev = self.runs("bbbb", outcome_b="failed")
        self.assertEqual(sorted(ev.platforms), ["m1 (avx2-1t)", "m1 (avx512_core_vnni-2t)"])
        v = judge_all([claim(tests=["Cpu/*"])], self.manifest, ev)[0]
        self.assertEqual(v.platforms["m1 (avx512_core_vnni-2t)"].verdict, "supported")
        self.assertEqual(v.platforms["m1 (avx2-1t)"].verdict, "refuted")
        self.assertEqual(v.verdict, "refuted", "the gravest platform verdict")

    def test_different_bits_across_platforms_support_no_cross_arch(self) -> None:
        v = judge_all([self.across], self.manifest, self.runs("bbbb"))[0]
        self.assertEqual(v.verdict, "supported", v.reason)
        self.assertIn("aaaa", v.reason)

    def test_equal_bits_are_inconclusive(self) -> None:
        v = judge_all([self.across], self.manifest, self.runs("aaaa"))[0]
        self.assertEqual(v.verdict, "inconclusive")

    def test_one_platform_is_not_evaluated(self) -> None:
        a = write_run(self.t / "a", environment("m1"), {"Cpu/Determinism.Bitwise/X": [
            {"repro": self.REPRO, "device": "cpu", "digest": "aaaa", "distinct_digests": 1}]})
        v = judge_all([self.across], self.manifest, read_evidence([a]))[0]
        self.assertEqual(v.verdict, "not evaluated")
        self.assertIn("./backendcheck report DIR1 DIR2", v.reason)

    def test_one_platform_tests_thread_counts_and_isa_caps(self) -> None:
        """On one machine, the case's own threads= and ONEDNN_MAX_CPU_ISA are
        sides of a computation: the verdict names each part it could test,
        and the parts it could not."""
        base = self.REPRO.rsplit(" ", 1)[0]
        repros = {"T1": f"{base} threads=1", "T2": f"{base} threads=2",
                  "Avx2": f"{base} threads=2 env.ONEDNN_MAX_CPU_ISA=AVX2"}
        digests = {"T1": "aaaa", "T2": "bbbb", "Avx2": "bbbb"}
        manifest = [{"id": n, "test": f"Cpu/Determinism.Bitwise/{n}", "repro": r, "suite": "s",
                     "fixture": "Determinism", "positive_control": False, "binary": "determinism_tests",
                     "axes": {"device": "cpu", "engine": "onednn"}} for n, r in repros.items()]
        a = write_run(self.t / "a", environment("m1"), {
            f"Cpu/Determinism.Bitwise/{n}": [{"repro": r, "device": "cpu", "digest": digests[n], "distinct_digests": 1}]
            for n, r in repros.items()})
        v = judge_all([self.across], manifest, read_evidence([a]))[0]
        self.assertEqual(v.verdict, "supported", v.reason)
        parts = v.facts[0].figures["parts"]
        self.assertEqual(parts["thread counts"], {"compared": 1, "differ": 1, "example": parts["thread counts"]["example"]})
        self.assertIn("aaaa", parts["thread counts"]["example"])
        self.assertEqual((parts["CPU ISAs"]["compared"], parts["CPU ISAs"]["differ"]), (1, 0))
        self.assertEqual(sorted(v.facts[0].figures["untested"]), ["GPU architectures", "library versions"])
        self.assertIn("not tested by this evidence: GPU architectures", v.reason)

    def test_a_difference_seen_only_across_several_parts_still_supports(self) -> None:
        """Two machines (ISA and threads differ) whose bits differ, while each
        machine's threads=1 and threads=2 agree: the claim is supported by the
        difference between machines, which is named as several parts at once."""
        base = self.REPRO.rsplit(" ", 1)[0]
        manifest = [{"id": n, "test": f"Cpu/Determinism.Bitwise/{n}", "repro": f"{base} threads={n[-1]}", "suite": "s",
                     "fixture": "Determinism", "positive_control": False, "binary": "determinism_tests",
                     "axes": {"device": "cpu", "engine": "onednn"}} for n in ("T1", "T2")]
        runs = [write_run(self.t / m, environment(m, isa, threads), {
            f"Cpu/Determinism.Bitwise/{n}": [{"repro": f"{base} threads={n[-1]}", "device": "cpu", "digest": d,
                                              "distinct_digests": 1}] for n in ("T1", "T2")})
            for m, isa, threads, d in (("m1", "avx512_core", 2, "aaaa"), ("m2", "avx2", 1, "bbbb"))]
        v = judge_all([self.across], manifest, read_evidence(runs))[0]
        self.assertEqual(v.verdict, "supported", v.reason)
        self.assertIn("thread counts (0 of 1 computation(s) differ)", v.reason)
        self.assertIn("several parts at once (1 of 1 computation(s) differ)", v.reason)

    def test_two_torch_installs_are_library_versions(self) -> None:
        rec = lambda d: {"Cpu/Determinism.Bitwise/X": [{"repro": self.REPRO, "device": "cpu", "digest": d,
                                                       "distinct_digests": 1}]}
        old = write_run(self.t / "a", {**environment("m1"), "torch": {"version": "1.13.0a0"}}, rec("aaaa"))
        new = write_run(self.t / "b", {**environment("m1"), "torch": {"version": "2.15.0"}}, rec("aaaa"))
        v = judge_all([self.across], self.manifest, read_evidence([old, new]))[0]
        self.assertEqual(v.verdict, "inconclusive", v.reason)
        self.assertEqual(list(v.facts[0].figures["parts"]), ["library versions"])
        self.assertIn("library versions (0 of 1 computation(s) differ)", v.reason)

    def test_cpu_and_gpu_digests_of_one_problem(self) -> None:
        problem = self.REPRO.split(" ")[0]
        gpu = f"{problem} device=cuda engine=cudnn"
        manifest = self.manifest + [{"id": "2", "test": "Gpu/Determinism.Bitwise/X", "repro": gpu, "suite": "g",
                                     "fixture": "Determinism", "positive_control": False, "binary": "gpu_tests",
                                     "axes": {"device": "cuda", "engine": "cudnn"}}]
        a = write_run(self.t / "a", environment("h", gpu="NVIDIA H100"), {
            "Cpu/Determinism.Bitwise/X": [{"repro": self.REPRO, "device": "cpu", "digest": "aaaa", "distinct_digests": 1}],
            "Gpu/Determinism.Bitwise/X": [{"repro": gpu, "device": "cuda", "digest": "cccc", "distinct_digests": 1}]})
        c = claim(id="cpu-gpu-differ", rule="across", across="device", supports_when="differs", tests=[],
                  cases={"fixture": "Determinism"})
        ev = read_evidence([a])
        self.assertEqual(list(ev.platforms), ["h (avx512_core-2t-nvidia_h100-sm_90-cudnn9.19.0)"])
        self.assertEqual(judge_all([c], manifest, ev)[0].verdict, "supported")

    def cli(self, *args: str) -> subprocess.CompletedProcess:
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        return subprocess.run([sys.executable, "-m", "reports", "--claims", str(self.t / "claims.toml"),
                               "--manifest", str(self.t / "cases.json"), "--out", str(self.t / "out"), *args],
                              cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)

    def test_a_folklore_verdict_is_held_to_its_known_finding(self) -> None:
        """A folklore verdict is held to the entry whose condition holds for
        its platform; one that moves fails with one line, exit 4."""
        (self.t / "claims.toml").write_text('[[claim]]\nid = "f"\nstatement = "s"\nsource = "s"\nkind = "folklore"\n'
                                            'about = "any"\n[claim.evidence]\nrule = "fact"\nsystem = "any"\ntests = ["Cpu/*"]\n')
        (self.t / "cases.json").write_text(json.dumps({"cases": self.manifest}))
        rec = [{"repro": self.REPRO, "device": "cpu", "digest": "aaaa", "distinct_digests": 1}]
        run = write_run(self.t / "a", {**environment("m1", "avx2", 1), "torch": {"version": "2.15.0+cu132"}},
                        {"Cpu/Determinism.Bitwise/X": rec})
        known = self.t / "known.toml"
        entry = '[[finding]]\nclaim = "f"\nverdict = "{v}"\nwhen = \'{w}\'\nreason = "r"\nfirst_seen = 2026-11-26\n'
        known.write_text(entry.format(v="supported", w='onednn_isa == "avx2" and torch >= "2.9"'))
        self.assertEqual(self.cli("--known", str(known), str(run)).returncode, 0)
        self.assertIn("supported, known since 2026-11-26: r", (self.t / "out" / "claims-junit.xml").read_text())
        known.write_text(entry.format(v="refuted", w='onednn_isa == "avx2"'))
        r = self.cli("--known", str(known), str(run))
        self.assertEqual(r.returncode, 4, r.stderr)
        self.assertRegex(r.stderr, r"UNEXPECTED f on m1 \(avx2-1t-torch2.15.0_cu132\): known finding no longer seen; "
                                   r"narrow or remove the entry \(.*known.toml:1\): expected refuted, got supported")
        self.assertIn("known finding no longer seen", (self.t / "out" / "claims-junit.xml").read_text())
        self.assertIn("1 unexpected verdict(s)", (self.t / "out" / "index.html").read_text())
        # An entry for another torch or CPU does not apply: nothing is held.
        for when in ('torch < "2.9"', "avx512_bf16", "cuda"):
            with self.subTest(when=when):
                known.write_text(entry.format(v="refuted", w=when))
                self.assertEqual(self.cli("--known", str(known), str(run)).returncode, 0)
        known.write_text('[[finding]]\nclaim = "nope"\nverdict = "supported"\nreason = "r"\nfirst_seen = 2026-11-26\n')
        r = self.cli("--known", str(known), str(run))
        self.assertEqual((r.returncode, r.stderr.strip()),
                         (1, f"{known}:2: claim: no claim 'nope' in the catalog"))

    def test_baseline_shows_changed_verdicts(self) -> None:
        (self.t / "claims.toml").write_text('[[claim]]\nid = "f"\nstatement = "s"\nsource = "s"\nkind = "folklore"\n'
                                            'about = "any"\n[claim.evidence]\nrule = "fact"\nsystem = "any"\ntests = ["Cpu/*"]\n')
        (self.t / "cases.json").write_text(json.dumps({"cases": self.manifest}))
        old = self.t / "old.json"
        old.write_text(json.dumps({"generated": "2026-01-01", "claims": [{"id": "f", "verdict": "refuted"}]}))
        run = write_run(self.t / "a", environment("m1"), {"Cpu/Determinism.Bitwise/X": [
            {"repro": self.REPRO, "device": "cpu", "digest": "aaaa", "distinct_digests": 1}]})
        r = self.cli("--baseline", str(old), str(run))
        self.assertEqual(r.returncode, 0, r.stderr)
        data = json.loads((self.t / "out" / "report.json").read_text())
        # A baseline without verdicts per platform: the claim's overall verdict is compared.
        self.assertEqual(data["baseline"]["changed"], [{"claim": "f", "platform": "", "old": "refuted",
                                                        "new": "supported"}])
        self.assertIn("CHANGED f on all platforms: refuted -> supported", r.stdout)
        old.write_text("[1, 2]")
        r = self.cli("--baseline", str(old), str(run))
        self.assertEqual(r.returncode, 1)
        self.assertTrue(r.stderr.startswith(f"{old}:1: cannot read the baseline"), r.stderr)


class VersionsTest(unittest.TestCase):
    """Two torch installs on one machine: two platforms, paired, and every
    difference of their evidence listed, whatever the values are."""

    REPRO = "conv2d:fwd:f32:mb1ic3ih8iw8oc4kh3kw3sh1sw1ph1pw1dh1dw1g1 device=cpu engine=pytorch threads=2"

    def setUp(self) -> None:
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)
        self.t = Path(self.tmp.name)

    def install(self, name: str, version: str, observed: dict, digest: str, kernel: str,
                fact_passes: bool = True) -> Path:
        env = environment("m1")
        env["torch"] = {"version": version, "build": "cpu", "onednn": "x", "python": f"/venv-{name}/bin/python"}
        fact = {"repro": "torch_backends.py defaults", "system": "pytorch",
                "checks": [{"name": "defaults", "outcome": "passed" if fact_passes else "failed", "detail": "d",
                            "observed": observed}]}
        case = {"repro": self.REPRO, "device": "cpu", "digest": digest, "distinct_digests": 1, "engine": "pytorch",
                "system": "pytorch", "implementation": f"PyTorch {version.split('+')[0]} at::convolution [{kernel}]"}
        run = write_run(self.t / name, env, {"TorchPython.DefaultsAreTheDocumentedOnes": [fact],
                                             "PytorchNoop/CpuNoop.X/Fwd": [case]})
        if not fact_passes:
            f = run / "t-0.jsonl"
            f.write_text(f.read_text().replace('"outcome": "passed"', '"outcome": "failed"'))
        return run

    def test_every_difference_is_listed_with_both_sides(self) -> None:
        from reports.changes import pairs
        a = self.install("old", "1.13.0a0", {"attributes": {"mkldnn.deterministic": False}, "same": 1},
                         "aaaa", "ConvBackend::Mkldnn")
        b = self.install("new", "2.15.0+cu132", {"attributes": {"mkldnn.deterministic": True}, "same": 1},
                         "bbbb", "ConvBackend::Slow2d", fact_passes=False)
        ev = read_evidence([b, a])
        self.assertEqual(len(ev.platforms), 2, "one machine, two torch installs: two platforms")
        older, newer = pairs(ev)[0]
        self.assertIn("torch1.13.0a0", older, "paired in version order, whatever the order given")
        facts = claim(id="defaults", tests=["TorchPython.*"])
        changes = Report.of(judge_all([facts], [], ev), [], ev).between
        kinds = {(c["kind"], c.get("claim") or c.get("test")) for c in changes}
        self.assertIn(("verdict", "defaults"), kinds)
        self.assertIn(("observed", "TorchPython.DefaultsAreTheDocumentedOnes"), kinds)
        self.assertIn(("bits", "PytorchNoop/CpuNoop.X/Fwd"), kinds)
        self.assertNotIn(("kernel", "PytorchNoop/CpuNoop.X/Fwd"), kinds, "one row a case: its bits and kernels")
        case = next(c for c in changes if c["kind"] == "bits")
        self.assertEqual(case["kernels"], ["at::convolution [ConvBackend::Mkldnn]", "at::convolution [ConvBackend::Slow2d]"])
        self.assertIn("ConvBackend::Slow2d", case["sides"][1]["observed"])
        observed = next(c for c in changes if c["kind"] == "observed")
        self.assertEqual(observed["what"], "TorchPython.DefaultsAreTheDocumentedOnes: attributes",
                         "only the key that differs")
        self.assertEqual([s["torch"] for s in observed["sides"]], ["1.13.0a0", "2.15.0+cu132"])
        self.assertIn("/venv-new/bin/python probes/torch_backends.py defaults", observed["sides"][1]["repro"])
        self.assertTrue(all(s["evidence"] for s in observed["sides"]))
        bits = next(c for c in changes if c["kind"] == "bits")
        self.assertIn(f"--torch /venv-old/bin/python --case '{self.REPRO}'", bits["sides"][0]["repro"])

    def test_changes_group_by_cause_and_noise_is_set_aside(self) -> None:
        """A case's bits and kernel change with what ran them (here PyTorch's
        mkldnn path: oneDNN inside PyTorch); a positive control's bits and a
        choice made by timing are run-to-run noise, set aside."""
        from reports.changes import grouped
        runs = []
        for name, version, onednn, digest in (("old", "1.13.0a0", "2.6.3", "aaaa"), ("new", "2.15.0+cu132", "3.13.3",
                                                                                     "bbbb")):
            env = {**environment("m1"), "torch": {"version": version, "python": f"/venv-{name}/bin/python",
                                                  "onednn": onednn}}
            case = {"repro": self.REPRO, "engine": "pytorch", "digest": digest, "distinct_digests": 1,
                    "implementation": f"PyTorch {version.split('+')[0]} at::convolution [ConvBackend::Mkldnn]"}
            control = {"repro": self.REPRO.replace("engine=pytorch", "engine=reference algo=atomic"),
                       "engine": "reference", "system": "reference", "digest": digest,
                       "checks": [{"name": "bitwise", "outcome": "passed", "detail": "caught",
                                   "positive_control": True}]}
            timed = {"repro": self.REPRO.replace("engine=pytorch", "engine=select") + " cudnn.benchmark=true",
                     "engine": "select", "system": "cudnn", "digest": digest,
                     "implementation": f"{name}-kernel",
                     "selection": {"chosen": f"{name}-kernel", "candidates": [], "eligible": [], "cache": "miss",
                                   "chosen_determinism": "deterministic", "reason": "fastest timed",
                                   "search_ns": 3.0, "time_ns": {"a": 1.0, "b": 2.0}}}
            # The harness's model of PyTorch: what it predicts is no change of the installs.
            model = {"repro": self.REPRO.replace("engine=pytorch", "engine=onednn"), "engine": "onednn",
                     "system": "model", "digest": digest, "implementation": f"{name}-model-kernel"}
            runs.append(write_run(self.t / name, env, {"P/D.B/Fwd": [case], "C/D.B/Control": [control],
                                                       "S/D.B/Timed": [timed], "M/D.B/Fwd": [model]}))
        ev = read_evidence(runs)
        changes = Report.of(judge_all([], [], ev), [], ev).between
        self.assertEqual([c for c in changes if c.get("test") == "M/D.B/Fwd"], [], "the model never appears")
        g = grouped(changes)
        [group] = g["groups"]
        self.assertEqual((group["cause"], group["count"]), ("oneDNN inside PyTorch: oneDNN 2.6.3 \u2192 3.13.3", 1))
        self.assertEqual(group["section"], "bits and kernels that changed")
        self.assertEqual(g["real"], 1, "the kernel's name is the same once versions are left out")
        why = {c["what"]: c["noise"] for c in g["set_aside"]}
        self.assertEqual(why["C/D.B/Control: digest"], "a positive control, which varies by design")
        self.assertIn("chosen by timing", why["S/D.B/Timed: digest"])
        self.assertEqual(g["noise"], 2, "a case's bits and kernel are one row")
        self.assertEqual(g["upgrades"], ["Upgrading torch 1.13.0a0 \u2192 2.15.0+cu132 on this machine changes 0 claim "
                                         "verdicts, 0 defaults or documented entries and the bits of 1 operation "
                                         "(oneDNN 2.6.3 \u2192 3.13.3)."])

    def test_a_speed_ratio_that_moved_beyond_its_noise(self) -> None:
        """The paired ratio of each install's Compare: listed when the newer
        interval clears the older one by the margin, not when it stays within;
        set aside as run-to-run noise, however far it moved: each install ran
        once."""
        rng = random.Random(3)

        def run(name: str, version: str, factors: dict[str, float]) -> Path:
            env = {**environment("m1"), "torch": {"version": version, "python": f"/venv-{name}/bin/python"}}
            records = {}
            for test, factor in factors.items():
                a = [1000 * rng.lognormvariate(0, 0.02) for _ in range(9)]
                b = [x * factor * rng.lognormvariate(0, 0.02) for x in a]
                records[test] = [{"repro": self.REPRO, "compare": {"a": {"repro": self.REPRO, "steady_ns": a},
                                                                    "b": {"repro": self.REPRO, "steady_ns": b}}}]
            return write_run(self.t / name, env, records)

        old = run("old", "2.7.1+cu126", {"S/Compare.SideBySide/Moved": 0.5, "S/Compare.SideBySide/Same": 0.8,
                                          "S/Compare.SideBySide/Crossed": 0.7, "S/Compare.SideBySide/Near": 0.85})
        new = run("new", "2.15.0+cu132", {"S/Compare.SideBySide/Moved": 0.7, "S/Compare.SideBySide/Same": 0.8,
                                          "S/Compare.SideBySide/Crossed": 1.4, "S/Compare.SideBySide/Near": 1.2})
        ev = read_evidence([old, new])
        ratio = claim(id="faster", rule="ratio", metric="steady_ns", bound=1.0, supports_when="below",
                      tests=["S/*"])
        speed = [c for c in Report.of(judge_all([ratio], [], ev), [], ev).between if c["kind"] == "speed"]
        self.assertEqual([(c["test"], c["moved"], c["claim"]) for c in speed],
                         [("S/Compare.SideBySide/Crossed", "up", "faster"), ("S/Compare.SideBySide/Moved", "up", "faster"),
                          ("S/Compare.SideBySide/Near", "up", "faster")])
        self.assertEqual([s["torch"] for s in speed[0]["sides"]], ["2.7.1+cu126", "2.15.0+cu132"])
        self.assertTrue(all("paired reps" in s["observed"] and s["evidence"] for s in speed[0]["sides"]))
        self.assertTrue(all(c["noise"].startswith("each install ran once") for c in speed),
                        "from below 1 to above it too: one run per install")
        self.assertIn("2.07x", speed[0]["noise"])
        from reports.changes import grouped
        g = grouped(speed)
        self.assertEqual((g["real"], g["noise"]), (0, 3))

    def test_gpu_platforms_pair_although_each_wheel_brings_its_cudnn(self) -> None:
        from reports.changes import pairs
        runs = []
        for name, version, cudnn in (("old", "2.11.0+cu130", "9.10.2"), ("new", "2.15.0+cu132", "9.26.0")):
            env = environment("h100", gpu="NVIDIA H100")
            env["versions"], env["torch"] = {"cudnn": cudnn}, {"version": version}
            runs.append(write_run(self.t / name, env, {"T.x": [{"repro": self.REPRO}]}))
        ev = read_evidence(runs)
        self.assertEqual(len(ev.platforms), 2)
        self.assertEqual(len(pairs(ev)), 1, "the same GPU machine, two torch installs")

    def test_identical_installs_list_nothing(self) -> None:
        a = self.install("old", "2.7.1+cu126", {"x": 1}, "aaaa", "ConvBackend::Mkldnn")
        b = self.install("new", "2.15.0+cu132", {"x": 1}, "aaaa", "ConvBackend::Mkldnn")
        ev = read_evidence([a, b])
        self.assertEqual(Report.of(judge_all([claim(tests=["TorchPython.*"])], [], ev), [], ev).between, [])

    def test_a_failed_install_is_an_error_and_the_other_is_judged(self) -> None:
        a = self.install("new", "2.15.0+cu132", {"x": 1}, "aaaa", "ConvBackend::Mkldnn")
        ok = self.t / "ok.state"
        install_state.write(ok, {"torch": "pinned", "version": "2.15.0+cu132", "build_dir": str(self.t),
                                 "run_dir": str(a), "stage": "done", "exit": 0, "log": "x.log"})
        bad = self.t / "bad.state"
        log = self.t / "install-2.log"
        log.write_text("-- Caffe2: Found gflags\nCMake Error at cmake/Dependencies.cmake:172 (message):\n"
                       "  libtorch 1.13.0 (/usr) is not the torch 2.99.0 that\n  /x/python imports\n"
                       "Call Stack (most recent call first):\n  CMakeLists.txt:17 (include)\n"
                       "backendcheck: configure failed\n")
        install_state.write(bad, {"torch": "/x/python", "version": "2.99.0", "stage": "configure", "exit": 1,
                                  "log": str(log)})
        manifest = self.t / "cases.json"
        manifest.write_text(json.dumps({"cases": [{"id": "1", "test": "PytorchNoop/CpuNoop.X/Fwd", "repro": self.REPRO,
                                                   "suite": "s", "fixture": "CpuNoop", "axes": {}}]}))
        claims = self.t / "claims.toml"
        claims.write_text('[[claim]]\nid = "defaults"\nstatement = "s"\nsource = "x"\nkind = "guarantee"\n'
                          'about = "pytorch"\n[claim.evidence]\nrule = "fact"\nsystem = "pytorch"\n'
                          'polarity = "supports"\ntests = ["TorchPython.*"]\n')
        out = self.t / "report"
        r = subprocess.run([sys.executable, "-m", "reports", "--claims", str(claims), "--manifest", str(manifest),
                            "--out", str(out), "--partial", "--install", str(ok), "--install", str(bad)],
                           cwd=ROOT, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
        self.assertEqual(r.returncode, 0, r.stderr)
        data = json.loads((out / "report.json").read_text())
        self.assertEqual([i["status"] for i in data["installs"]], ["ok", "error"])
        self.assertTrue(data["installs"][1]["why"].startswith(
            "stopped during configure (exit 1): libtorch 1.13.0 (/usr) is not the torch 2.99.0 that /x/python "
            "imports; configure failed; nothing of this install is judged"), data["installs"][1]["why"])
        self.assertEqual(data["installs"][1]["version"], "2.99.0")
        self.assertEqual(data["claims"][0]["verdict"], "supported", "the built install's verdicts stand")
        self.assertIn("torch install 2.99.0: error", r.stdout)
        page = (out / "index.html").read_text()
        self.assertIn("Torch installs", page)


class DocumentedListTest(unittest.TestCase):
    """use_deterministic_algorithms's own list, judged from the probe's
    observations (synthetic here: the rule, not what PyTorch answers)."""

    def setUp(self) -> None:
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)
        self.t = Path(self.tmp.name)

    @staticmethod
    def entry(entry_id: str, kind: str, devices: dict, understood: bool = True) -> dict:
        op = entry_id.split(":")[1]
        return {"id": entry_id, "list": kind, "text": f":func:`{op}` text of {entry_id}", "ops": [op],
                "devices": list(devices), "backward": False, "conditions": {}, "understood": understood,
                "leftover": "" if understood else "in some cases",
                "result": {"id": entry_id, "devices": devices} if understood else None}

    def observed(self, control_distinct: int = 5, drop_put: bool = False) -> dict:
        repeat = lambda n: {"runs": 5, "digests": {"1": ["a"] * 1, "2": ["a", "b"][:n]}, "distinct": n, "error": ""}
        alert = {"digest": "", "error": "put_ does not have a deterministic implementation", "warnings": [],
                 "names_op": True}
        entries = [
            self.entry("throws:torch.Tensor.put_:any:accumulate=False", "throws", {
                "cpu": {"torch.Tensor.put_": {"mode_true": alert,
                                              "warn_only": {"digest": "d", "error": "", "warnings": ["put_ does not"]},
                                              "mode_false": {"digest": "d", "error": "", "warnings": []}}},
                "cuda": {"not_evaluated": "no CUDA device on this machine"}}),
            self.entry("throws:torch.nn.MaxUnpool1d:any", "throws", {
                "cpu": {"torch.nn.MaxUnpool1d": {"mode_true": {"digest": "d", "error": "", "warnings": []},
                                                 "warn_only": {"digest": "d", "error": "", "warnings": []},
                                                 "mode_false": {"digest": "d", "error": "", "warnings": []}}}}),
            self.entry("deterministic:torch.Tensor.index_put:cpu:accumulate=True", "deterministic", {
                "cpu": {"torch.Tensor.index_put": {"mode_true": repeat(1), "control": repeat(1)}}}),
            self.entry("deterministic:torch.Tensor.index_copy:cpu/cuda", "deterministic", {
                "cpu": {"torch.Tensor.index_copy": {"mode_true": repeat(1), "control": repeat(2)}},
                "cuda": {"not_evaluated": "no CUDA device on this machine"}}),
            self.entry("deterministic:torch.nn.Conv1d:cuda", "deterministic", {
                "cuda": {"not_evaluated": "no CUDA device on this machine"}}),
            self.entry("throws:not-understood:abc", "throws", {}, understood=False),
        ]
        if drop_put:
            entries = entries[1:]
        beyond = [{"id": "beyond:torch.histc", "devices": {"cpu": {"torch.histc": {"mode_false": repeat(1)}}}},
                  {"id": "beyond:torch.bincount", "devices": {"cpu": {"torch.bincount": {"mode_false": repeat(2)}}}}]
        settings = {"fill_uninitialized_memory": {"default": True, "doc": "d", "empty": {
            "True": {"float_all_nan": True, "int_all_max": True}, "False": {"float_all_nan": False, "int_all_max": False}}}}
        return {"torch": "x", "entries": entries, "beyond": beyond, "settings": settings,
                "control": {"runs": 5, "digests": {}, "distinct": control_distinct, "error": ""}}

    def run_of(self, name: str, version: str, observed: dict) -> Path:
        env = {**environment("m1"), "torch": {"version": version, "python": f"/venv-{name}/bin/python"}}
        record = {"repro": "torch_backends.py documented", "system": "pytorch",
                  "checks": [{"name": "documented", "outcome": "passed", "detail": "d", "observed": observed}]}
        return write_run(self.t / name, env, {"TorchPython.DocumentedDeterminismList": [record]})

    def test_each_entry_judged_with_its_control(self) -> None:
        from reports import documented
        ev = read_evidence([self.run_of("new", "2.15.0", self.observed())])
        [(platform, d)] = documented.judge(ev).items()
        rows = {e["id"]: e for e in d["entries"]}
        put = rows["throws:torch.Tensor.put_:any:accumulate=False"]
        self.assertEqual(put["verdict"], "supported", put["reason"])
        self.assertIn("warn_only=True it warned", put["reason"])
        self.assertIn("CUDA: not evaluated (no CUDA device on this machine)", put["reason"])
        self.assertEqual(rows["throws:torch.nn.MaxUnpool1d:any"]["verdict"], "refuted")
        index_put = rows["deterministic:torch.Tensor.index_put:cpu:accumulate=True"]
        self.assertEqual((index_put["verdict"], index_put["control"]),
                         ("supported", "deterministic here even without the mode"))
        self.assertTrue(rows["deterministic:torch.Tensor.index_copy:cpu/cuda"]["control"].startswith("caught"))
        self.assertEqual(rows["deterministic:torch.nn.Conv1d:cuda"]["verdict"], "not evaluated")
        vague = rows["throws:not-understood:abc"]
        self.assertEqual(vague["verdict"], "not evaluated")
        self.assertTrue(vague["reason"].startswith("not understood (in some cases)"), vague["reason"])
        self.assertIn("/venv-new/bin/python probes/documented.py run", put["repro"])
        self.assertEqual([(x["setting"], x["verdict"]) for x in d["settings"]],
                         [("torch.utils.deterministic.fill_uninitialized_memory", "supported")])
        self.assertEqual({b["op"]: b["finding"] for b in d["beyond"]},
                         {"torch.histc": "deterministic here", "torch.bincount": "nondeterministic (undocumented)"})

    def test_a_missed_control_trusts_no_verdict(self) -> None:
        from reports import documented
        ev = read_evidence([self.run_of("new", "2.15.0", self.observed(control_distinct=1))])
        [(_, d)] = documented.judge(ev).items()
        decided = {e["verdict"] for e in d["entries"]} - {"not evaluated"}
        self.assertEqual(decided, {"inconclusive"})
        self.assertFalse(d["control"]["caught"])

    def test_entries_added_or_removed_between_versions(self) -> None:
        ev = read_evidence([self.run_of("old", "1.13.0a0", self.observed(drop_put=True)),
                            self.run_of("new", "2.15.0", self.observed())])
        changed = [c for c in Report.of([], [], ev).between if c["kind"] == "documented"]
        self.assertEqual([c["what"] for c in changed],
                         ["documented entry throws:torch.Tensor.put_:any:accumulate=False"])
        self.assertEqual(changed[0]["sides"][0]["observed"], "not in this version's list")
        # index_copy's control was caught on both here; a control caught on one
        # version only is the load's doing as much as the version's: not listed.
        old = self.observed()
        old["entries"][3]["result"]["devices"]["cpu"]["torch.Tensor.index_copy"]["control"]["distinct"] = 1
        ev = read_evidence([self.run_of("old2", "1.13.0a0", old), self.run_of("new2", "2.15.0", self.observed())])
        self.assertEqual([c for c in Report.of([], [], ev).between if c["kind"] == "documented"], [])

    def test_the_page_shows_the_list_and_the_findings(self) -> None:
        from reports.page.render import write_report
        ev = read_evidence([self.run_of("new", "2.15.0", self.observed())])
        page = unfolded(write_report(self.t / "out", Report.of([], [], ev)).read_text())
        self.assertIn("use_deterministic_algorithms's own list", page)
        self.assertEqual(page.count('class="documented-entry"'), 6)
        self.assertIn("nondeterministic (undocumented)", page)


class RecordedEvidenceTest(unittest.TestCase):
    """The verdict engine on evidence recorded by the test binaries of a real
    run (reports/tests/data/recorded: oneDNN determinism, a positive control,
    a GPU case skipped without a GPU, a side-by-side Compare, fresh-process
    choices), and on copies altered the way a failure would alter them."""

    DATA = ROOT / "reports" / "tests" / "data" / "recorded"

    def setUp(self) -> None:
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)
        self.det = claim(id="det", tests=["Cpu/Determinism.*"])

    def altered(self, old: str, new: str, name: str = "determinism_tests-16484.jsonl") -> Path:
        d = Path(self.tmp.name) / "run"
        if not d.exists():
            d.mkdir()
            for f in self.DATA.iterdir():
                (d / f.name).write_text(f.read_text())
        f = d / name
        self.assertIn(old, f.read_text())
        f.write_text(f.read_text().replace(old, new))
        return d

    def test_each_verdict_kind(self) -> None:
        ev = read_evidence([self.DATA])
        self.assertEqual(len(ev.platforms), 1)
        self.assertEqual(judge_all([self.det], [], ev)[0].verdict, "supported")
        control = judge_all([claim(tests=["CpuControl/*"], check="bitwise")], [], ev)[0]
        self.assertEqual(control.verdict, "refuted", "a caught control is a failing 'bitwise' fact")
        gpu = judge_all([claim(tests=["Gpu/*"])], [], ev)[0]
        self.assertEqual(gpu.verdict, "not evaluated")
        self.assertIn("cudaGetDeviceCount", gpu.reason)
        # A bound inside the measured interval cannot be decided.
        ratio = claim(rule="ratio", metric="steady_ns", supports_when="below", tests=["CpuBenchmark/Compare.*"])
        first = judge_all([ratio], [], ev)[0]
        ratio.bound = first.facts[0].figures["ratio"]
        v = judge_all([ratio], [], ev)[0]
        self.assertEqual(v.verdict, "inconclusive", v.reason)
        self.assertIn("B/A", v.reason)
        from reports.observe import line
        self.assertRegex(line(v), r"^with \S+=\S+: [\d.]+× the time without it \(median of paired runs\); "
                                  r"1 shape: 1 within noise$", "the setting and its ratio first")
        # Degenerate output is mistrusted and never supports.
        mistrusted = read_evidence([self.altered('"name":"bitwise","outcome":"passed"', '"name":"bitwise","outcome":"mistrusted"')])
        self.assertEqual(judge_all([self.det], [], mistrusted)[0].verdict, "inconclusive")

    def test_a_refuted_guarantee_fails_the_run(self) -> None:
        run = self.altered('"outcome":"passed","schema":1,"test":"Cpu/', '"outcome":"failed","schema":1,"test":"Cpu/')
        refuted = judge_all([self.det], [], read_evidence([run]))[0]
        self.assertEqual(refuted.verdict, "refuted")
        # The facts did not hold; "failed" is the tests' own word, which each fact keeps.
        self.assertIn("fact(s) did not hold, e.g. Cpu/", refuted.reason)
        self.assertEqual({f.test_outcome for f in refuted.facts if f.outcome == "failed"}, {"failed"})
        t = Path(self.tmp.name)
        (t / "claims.toml").write_text('[[claim]]\nid = "det"\nstatement = "s"\nsource = "s"\nkind = "guarantee"\n'
                                       'about = "any"\n[claim.evidence]\nrule = "fact"\nsystem = "any"\ntests = ["Cpu/Determinism.*"]\n')
        (t / "cases.json").write_text('{"cases": []}')
        r = subprocess.run([sys.executable, "-m", "reports", "--claims", str(t / "claims.toml"), "--manifest",
                            str(t / "cases.json"), "--out", str(t / "out"), str(run)],
                           cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True,
                           timeout=60)
        self.assertEqual(r.returncode, 3, r.stderr)
        self.assertIn("UNEXPECTED det on vm (intel-avx512_vnni-2t): a guarantee refuted with no known finding", r.stderr)

    def test_a_crash_is_an_error(self) -> None:
        ev = read_evidence([self.DATA])
        junit = Path(self.tmp.name) / "junit.xml"
        junit.write_text('<testsuite><testcase name="Cpu/Determinism.Bitwise/Crashed" status="fail">'
                         '<failure message="SEGFAULT"/></testcase></testsuite>')
        read_junit(junit, next(iter(ev.platforms.values())))
        v = judge_all([self.det], [], ev)[0]
        self.assertEqual(v.verdict, "error")
        self.assertIn("Crashed", v.reason)


class H100EvidenceTest(unittest.TestCase):
    """The catalog on the H100 kit's recorded calls (reports/tests/data/h100,
    its README: driver 580.159.04, cuDNN 9.19.0, cuBLAS 13.1.0, PyTorch
    2.11.0+cu130; the model against PyTorch, PyTorch's GPU probes, the claim
    tests and the ci tier's gpu label), merged as one run's calls are."""

    DATA = ROOT / "reports" / "tests" / "data" / "h100"
    CALLS = ("conformance-1", "torchpython-1", "claims-1", "tier-1")

    def setUp(self) -> None:
        self.manifest = json.loads((self.DATA / "conformance-1" / "cases.json").read_text())["cases"]
        self.ev = read_evidence([self.DATA / call / "evidence" for call in self.CALLS])
        self.verdicts = {v.claim.id: v for v in judge_all(load_catalog(ROOT / "catalog" / "claims.toml"),
                                                           self.manifest, self.ev, partial=True)}

    def test_the_verdicts_it_decides(self) -> None:
        decided = {k: (v.verdict, v.decided_by) for k, v in self.verdicts.items() if v.verdict != "not evaluated"}
        self.assertEqual(decided, {"det-bitwise": ("supported", "cudnn"), "atomics-cudnn": ("supported", "cudnn"),
                                   "tf32-precision": ("supported", "cudnn"), "cublas-config": ("refuted", "pytorch")})

    def test_cudnn_decides_its_atomics_on_the_controls_that_fired(self) -> None:
        v = self.verdicts["atomics-cudnn"]
        self.assertEqual(v.verdict, "supported", v.reason)
        self.assertEqual(v.decided_by, "cudnn")
        self.assertEqual([f.test for f in v.facts], ["GpuControl/Determinism.Bitwise/CudnnAlgo0_R50Conv2",
                                                     "GpuControl/Determinism.Bitwise/CudnnAlgo0_R50Conv4"],
                         "BWD_FILTER_ALGO_0 only: the other nondeterministic controls are not what it says")

    def test_pytorch_convolutions_are_not_cudnn_evidence(self) -> None:
        # GpuPytorch records are PyTorch's: they never decide what cuDNN does.
        v = self.verdicts["det-bitwise"]
        self.assertFalse([f.test for f in v.facts if f.test.startswith("GpuPytorch/")], v.reason)
        self.assertNotIn("records come from", v.reason)

    def test_pytorch_decides_the_cublas_rule_and_the_harness_mirror_only_predicts(self) -> None:
        # PyTorch 2.11 raises no alert without CUBLAS_WORKSPACE_CONFIG: its own
        # probe refutes the rule; the harness's mirror of the alert (the model)
        # still predicts it, beside the verdict.
        v = self.verdicts["cublas-config"]
        self.assertEqual((v.verdict, v.decided_by), ("refuted", "pytorch"))
        self.assertIsNotNone(v.prediction)
        self.assertEqual(v.prediction.verdict, "supported")

    def test_no_claim_is_an_error(self) -> None:
        self.assertFalse({k: v.reason for k, v in self.verdicts.items() if v.verdict == "error"})

    def test_every_decided_claim_says_what_was_observed(self) -> None:
        from reports.observe import line
        decided = {k: v for k, v in self.verdicts.items() if v.verdict != "not evaluated"}
        self.assertGreaterEqual(len(decided), 2)
        for k, v in decided.items():
            for said in [line(v)] + [line(pv) for pv in v.platforms.values()]:
                self.assertTrue(said.strip(), k)
                self.assertNotIn("fact(s) hold", said, k)
                self.assertNotIn("evaluated fact", said, k)
                self.assertNotRegex(said, r"^(Ran|Timed|Compared) ", k)
        said = line(self.verdicts["atomics-cudnn"])
        self.assertRegex(said, r"^the check's control varied after 2 runs: 10 different result\(s\) in 10 runs of "
                               r"CUDNN_CONVOLUTION_BWD_FILTER_ALGO_0", "what cuDNN did, in its own words, first")
        self.assertTrue(said.endswith(", 2 of 2 tests support the claim"), "the count after the fact")
        # The refutation names what PyTorch did: it ran, and gave equal bits,
        # with no CUBLAS_WORKSPACE_CONFIG.
        self.assertTrue(line(self.verdicts["cublas-config"]).startswith(
            "CUBLAS_WORKSPACE_CONFIG unset: ran; 10 runs bitwise equal"), line(self.verdicts["cublas-config"]))


class TrustTest(unittest.TestCase):
    """A missed control, records that do not fit, duplicates and conflicts."""

    DATA = ROOT / "reports" / "tests" / "data" / "recorded"

    def setUp(self) -> None:
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)
        self.run_dir = Path(self.tmp.name) / "run"
        self.run_dir.mkdir()
        for f in self.DATA.iterdir():
            (self.run_dir / f.name).write_text(f.read_text())

    def edit(self, name: str, old: str, new: str) -> None:
        f = self.run_dir / name
        self.assertIn(old, f.read_text())
        f.write_text(f.read_text().replace(old, new))

    def test_a_missed_control_makes_its_claims_inconclusive_not_refuted(self) -> None:
        self.edit("determinism_tests-16433.jsonl", '"name":"bitwise","outcome":"caught"',
                  '"name":"bitwise","outcome":"missed"')
        self.edit("determinism_tests-16433.jsonl", '"outcome":"passed","schema":1,"test":"CpuControl/',
                  '"outcome":"failed","schema":1,"test":"CpuControl/')
        ev = read_evidence([self.run_dir])
        control = judge_all([claim(tests=["CpuControl/*"])], [], ev)[0]
        self.assertEqual(control.verdict, "inconclusive", control.reason)
        self.assertIn("control missed", control.reason)
        det = judge_all([claim(tests=["Cpu/Determinism.*"])], [], ev)[0]
        self.assertEqual(det.verdict, "inconclusive", det.reason)
        self.assertIn("control missed: ", det.reason)
        self.assertIn("(CpuControl/", det.reason, "the control named after what it saw")
        # Without the miss, the same evidence decides.
        fresh = read_evidence([self.DATA])
        self.assertEqual(judge_all([claim(tests=["CpuControl/*"])], [], fresh)[0].verdict, "supported")

    def refused(self, old: str, new: str, name: str = "determinism_tests-16484.jsonl") -> list[str]:
        self.edit(name, old, new)
        return read_evidence([self.run_dir]).refused

    def test_unknown_kind_schema_type_or_outcome_is_refused_with_file_and_line(self) -> None:
        for old, new, why in (('"kind":"result"', '"kind":"verdict"', "unknown record kind"),
                              ('"schema":1', '"schema":2', "evidence schema 2"),
                              ('"outcome":"passed","schema":1', '"outcome":"maybe","schema":1',
                               "'outcome': unknown outcome 'maybe'"),
                              ('"name":"bitwise","outcome":"passed"', '"name":"bitwise","outcome":"great"',
                               "'checks[0].outcome': unknown outcome 'great'"),
                              ('"cpu_isa_flags":[', '"cpu_isa_flags":[1,', "'cpu_isa_flags[0]' must be string"),
                              ('"times_ns":[', '"times_ns":["x",', "'times_ns[0]' must be number"),
                              ('"degenerate":false', '"degenerat":false', "'degenerat' was unexpected")):
            with self.subTest(why=why):
                self.setUp()
                lines = self.refused(old, new)
                self.assertTrue(lines, why)
                self.assertRegex(lines[0], r"determinism_tests-16484\.jsonl:\d+: ")
                self.assertIn(why, lines[0])

    def test_conflicting_results_decide_nothing_and_are_named(self) -> None:
        f = self.run_dir / "determinism_tests-16484.jsonl"
        line = next(x for x in f.read_text().splitlines() if '"kind":"result"' in x and '"outcome":"passed"' in x)
        test = json.loads(line)["test"]
        f.write_text(f.read_text() + line.replace('"outcome":"passed"', '"outcome":"failed"') + "\n")
        ev = read_evidence([self.run_dir])
        self.assertIn(test, ev.conflicts())
        self.assertTrue(any("conflicting result records of " + test in p for p in ev.problems), ev.problems)
        v = judge_all([claim(tests=[test])], [], ev)[0]
        self.assertEqual(v.verdict, "inconclusive", v.reason)
        self.assertIn("conflicting", v.reason)

    def test_a_duplicate_that_agrees_is_named_and_counted_once(self) -> None:
        f = self.run_dir / "determinism_tests-16484.jsonl"
        line = next(x for x in f.read_text().splitlines() if '"kind":"result"' in x)
        f.write_text(f.read_text() + line + "\n")
        ev = read_evidence([self.run_dir])
        self.assertFalse(ev.conflicts())
        self.assertTrue(any("2 result records of" in p for p in ev.problems), ev.problems)

    def test_a_torn_last_line_is_skipped_but_a_torn_middle_line_is_refused(self) -> None:
        f = self.run_dir / "determinism_tests-16484.jsonl"
        f.write_text(f.read_text() + '{"kind":"case","te')
        ev = read_evidence([self.run_dir])
        self.assertFalse(ev.refused)
        self.assertTrue(any("unreadable record skipped" in p for p in ev.problems))
        f.write_text('{"kind":"case","te\n' + f.read_text())
        self.assertTrue(read_evidence([self.run_dir]).refused)


class SystemsTest(unittest.TestCase):
    """Only evidence from the system a claim is about decides it."""

    def test_model_evidence_alone_leaves_a_pytorch_claim_not_evaluated_with_its_prediction(self) -> None:
        c = claim(about="pytorch", system="model")
        v = judge_all([c], [], evidence(**{"T.a": "passed"}))[0]
        self.assertEqual(v.verdict, "not evaluated")
        self.assertIn("needs pytorch evidence; the model predicts supported", v.reason)
        self.assertEqual(v.prediction.verdict, "supported")
        self.assertEqual(v.decided_by, "")

    def test_pytorch_evidence_decides_and_the_model_is_shown_beside(self) -> None:
        c = claim(about="pytorch", system="pytorch", tests=["P.*"])
        c.prediction = claim(about="pytorch", system="model", tests=["M.*"])
        v = judge_all([c], [], evidence(**{"P.a": "failed", "M.a": "passed"}))[0]
        self.assertEqual(v.verdict, "refuted")
        self.assertEqual(v.decided_by, "pytorch")
        self.assertEqual(v.prediction.verdict, "supported")

    def test_records_from_another_system_than_the_catalog_says_decide_nothing(self) -> None:
        ev = evidence(**{"P.a": "passed"})
        ev.cases["P.a"] = [{"kind": "case", "system": "model", "checks": []}]
        v = judge_all([claim(about="pytorch", system="pytorch", tests=["P.*"])], [], ev)[0]
        self.assertEqual(v.verdict, "inconclusive")
        self.assertIn("records come from model", v.reason)

    def test_the_repository_catalog_decides_at_least_twelve_claims_by_pytorch(self) -> None:
        claims = load_catalog(ROOT / "catalog" / "claims.toml")
        self.assertGreaterEqual(sum(c.about == "pytorch" and c.system == "pytorch" for c in claims), 12)


class ConformanceTest(unittest.TestCase):
    def test_every_disagreement_is_listed_and_only_known_ones_are_explained(self) -> None:
        from reports.conformance import summarize
        side = {"engine": "", "algorithm": "", "implementation": "", "digest": "", "alert": "", "error": ""}
        ev = Evidence()
        ev.cases["C.a"] = [{"kind": "case", "repro": "a", "conformance": {
            "model": dict(side, kernel_class="native", digest="1"), "pytorch": dict(side, kernel_class="native",
                                                                                      digest="2"),
            "same_kernel_class": True, "same_onednn_kernel": True, "same_bits": False, "same_alert": True}}]
        ev.cases["C.b"] = [{"kind": "case", "repro": "b", "conformance": {
            "model": dict(side, kernel_class="mkldnn", digest="1"), "pytorch": dict(side, kernel_class="native",
                                                                                      digest="2"),
            "same_kernel_class": False, "same_onednn_kernel": True, "same_bits": False, "same_alert": True}}]
        s = summarize(ev)
        self.assertEqual(s["cases"], 2)
        self.assertEqual([(d["repro"], d["aspect"]) for d in s["disagreements"]],
                         [("a", "bits"), ("b", "kernel class"), ("b", "bits")])
        self.assertEqual(s["unexplained"], 2)
        self.assertIn("by design", s["disagreements"][0]["why"])
        # Grouped by what differs, the kernel classes and why: unexplained first.
        self.assertEqual([(k["aspect"], k["model_kernel_class"], k["pytorch_kernel_class"], len(k["rows"]), bool(k["why"]))
                          for k in s["classes"]],
                         [("bits", "mkldnn", "native", 1, False), ("kernel class", "mkldnn", "native", 1, False),
                          ("bits", "native", "native", 1, True)])
        self.assertEqual(sum(len(k["rows"]) for k in s["classes"]), len(s["disagreements"]))

    def test_the_cudnn_choice_is_compared_and_a_benchmark_search_explains_a_difference(self) -> None:
        """On the GPU the two sides' cuDNN engine (graph API) or algorithm
        (legacy API) are compared: a difference without benchmark mode is a
        model bug to fix; with it, two searches' own timings explain it. A
        record written before the comparison existed agrees where neither
        side names one."""
        from reports.conformance import summarize
        side = {"engine": "", "algorithm": "", "implementation": "", "alert": "", "error": "", "kernel_class": "cudnn",
                "digest": "1"}
        ev = Evidence()
        for name, repro in {"G.pinned": "conv2d:fwd:f16:x device=cuda engine=auto cudnn.benchmark=false",
                            "G.bench": "conv2d:fwd:f16:x device=cuda engine=auto cudnn.benchmark=true"}.items():
            ev.cases[name] = [{"kind": "case", "repro": repro, "conformance": {
                "model": dict(side, cudnn_choice="engine 38"), "pytorch": dict(side, cudnn_choice="engine 70"),
                "same_kernel_class": True, "same_onednn_kernel": True, "same_cudnn_choice": False, "same_bits": True,
                "same_alert": True}}]
        ev.cases["C.old"] = [{"kind": "case", "repro": "conv2d:fwd:f32:x device=cpu", "conformance": {
            "model": dict(side, kernel_class="native"), "pytorch": dict(side, kernel_class="native"),
            "same_kernel_class": True, "same_onednn_kernel": True, "same_bits": True, "same_alert": True}}]
        s = summarize(ev)
        self.assertEqual(s["agree"]["cuDNN engine or algorithm"], 1, "the older record agrees: neither side named one")
        why = {d["test"]: d["why"] for d in s["disagreements"]}
        self.assertEqual(set(why), {"G.pinned", "G.bench"})
        self.assertEqual(why["G.pinned"], "", "without benchmark mode a different engine is not explained")
        self.assertIn("benchmark mode", why["G.bench"])
        self.assertEqual(s["unexplained"], 1)

    def test_the_cudnn_paths_known_differences_are_named_classes_on_the_page(self) -> None:
        """What the model's cuDNN path does otherwise than PyTorch's and is not
        mended is listed by name, with both sides and when it shows, in the
        conformance section, with or without conformance cases."""
        from reports.conformance import GPU_PATH_DIFFERENCES, summarize
        self.assertEqual([k["name"] for k in summarize(Evidence())["gpu_path_differences"]],
                         [k["name"] for k in GPU_PATH_DIFFERENCES])
        self.assertTrue(all(k["pytorch"] and k["model"] and k["shows"] for k in GPU_PATH_DIFFERENCES))
        with tempfile.TemporaryDirectory() as tmp:
            page = write_report(Path(tmp), Report.of([], [], Evidence())).read_text()
        self.assertEqual(page.count('class="gpu-path-difference"'), len(GPU_PATH_DIFFERENCES))
        self.assertIn("out of memory on a cached plan", page)

    def test_different_onednn_versions_explain_kernel_and_bits_and_are_named(self) -> None:
        from reports.conformance import summarize
        side = {"engine": "", "algorithm": "", "implementation": "", "alert": "", "error": "",
                "kernel_class": "mkldnn"}
        ev = Evidence()
        for name, (mv, pv) in {"C.diff": ("2.6.3", "3.13.3"), "C.same": ("3.13.3", "3.13.3")}.items():
            ev.cases[name] = [{"kind": "case", "repro": name, "conformance": {
                "model": dict(side, onednn_kernel="jit:avx2", onednn_version=mv, digest="1"),
                "pytorch": dict(side, onednn_kernel="brg_conv_fwd:avx2", onednn_version=pv, digest="2"),
                "same_kernel_class": True, "same_onednn_kernel": False, "same_bits": False, "same_alert": True}}]
        s = summarize(ev)
        why = {(d["repro"], d["aspect"]): d["why"] for d in s["disagreements"]}
        self.assertIn("different oneDNN versions", why[("C.diff", "oneDNN kernel")])
        self.assertIn("2.6.3", why[("C.diff", "bits")])
        # The same version explains nothing: those two stay unexplained.
        self.assertEqual(why[("C.same", "oneDNN kernel")], "")
        self.assertEqual(why[("C.same", "bits")], "")
        self.assertEqual(s["unexplained"], 2)
        self.assertEqual(s["onednn_versions"], {"model": ["2.6.3", "3.13.3"], "pytorch": ["3.13.3"]})
