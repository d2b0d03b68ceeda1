"""The search for counter-examples, judged and shown from recorded evidence:
reports/tests/data/search/ holds TorchPython.InvarianceGrid (grid.jsonl)
and TorchPython.CounterExampleSearch (search.jsonl, probes/counterexamples.py,
the ci tier's budget) as ctest wrote them on a 2-core AMD EPYC with AVX-512
BF16, for torch 2.15.0+cu132 (PyPI, oneMKL's generic branch) and Debian's
1.13.0a0 (OpenBLAS), with their environment records. There the grid's one
shape per operation holds its bits across the thread count under the
deterministic mode, and the search finds counter-examples."""

from __future__ import annotations

import copy
import json
import re
import sys
import tempfile
import unittest
import xml.etree.ElementTree as ET
from pathlib import Path

from reports import invariance
from reports.catalog import load_catalog
from reports.evidence import read_evidence
from reports.known import judge as judge_known
from reports.known import load_all
from reports.page.render import write_junit, write_report
from reports.pipeline import Report
from reports.verdicts import judge_all

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "probes"))
from search import Case, Level, program  # noqa: E402
from search_ops import OPS  # noqa: E402

DATA = ROOT / "reports" / "tests" / "data" / "search"
CLAIM = "det-alg-thread-invariant"


def evidence(edit=None):
    """Both installs' recorded runs; each search observation through edit()."""
    ev = read_evidence(sorted(DATA.glob("torch-*")))
    if edit is not None:
        for records in ev.cases.values():
            for r in records:
                for c in r.get("checks", []):
                    if isinstance(c.get("observed"), dict) and "searches" in c["observed"]:
                        edit(c["observed"])
    return ev


def thread_claim(ev):
    claims = [c for c in load_catalog(ROOT / "catalog" / "claims.toml") if c.id == CLAIM]
    [v] = judge_all(claims, [], ev, partial=True)
    return v


def found_nothing(seen: dict) -> None:
    for one in seen["searches"].values():
        one["counterexamples"] = []
        one["corpus"] = [dict(c, state="no longer seen") for c in one["corpus"]]
    for lever in seen["levers"]:
        lever["held"], lever["not_held"] = [], []


class SearchVerdictTest(unittest.TestCase):
    def test_the_grids_one_shape_held_and_the_search_refutes_with_a_snippet(self) -> None:
        v = thread_claim(evidence())
        self.assertEqual(len(v.platforms), 2)
        for platform, pv in v.platforms.items():
            self.assertEqual(pv.verdict, "refuted", platform)
            self.assertIn("the search found", pv.reason)
            self.assertNotIn("operations of the grid do not hold", pv.reason, "the grid held here; the search refutes")
            lines = pv.snippet.splitlines()
            self.assertTrue(2 < len(lines) <= 10, pv.snippet)
            self.assertIn("torch.use_deterministic_algorithms(True)", pv.snippet)
            self.assertIn("torch.set_num_threads(side)", pv.snippet)
            compile(pv.snippet, platform, "exec")

    def test_the_reason_line_leads_with_the_counter_example_or_the_coverage(self) -> None:
        from reports.observe import reading
        for pv in thread_claim(evidence()).platforms.values():
            said = reading(pv)
            self.assertRegex(said.line, r"^\w[\w ()-]* at n=\d+, \w+, \w+, \w+ and \d+ more: the search's "
                                        r"counter-examples across the thread count, under "
                                        r"torch.use_deterministic_algorithms\(True\)$")
            self.assertTrue(said.line.startswith(said.named[0]))
        for pv in thread_claim(evidence(found_nothing)).platforms.values():
            said = reading(pv).line
            self.assertTrue(said.startswith("all "), said)
            self.assertIn("; the search found no counter-example in ", said)

    def test_a_search_that_found_nothing_supports_with_its_coverage(self) -> None:
        v = thread_claim(evidence(found_nothing))
        for platform, pv in v.platforms.items():
            self.assertEqual(pv.verdict, "supported", (platform, pv.reason))
            self.assertRegex(pv.reason, r"no counter-example in \d+ operations x \d+ sizes \(n 1 to [\d,]+\), "
                                        r".*float32.*forward.*1 and 2 threads; \d+ cases in [\d.]+ s of search "
                                        r"\(seed \d+")
            self.assertEqual(pv.snippet, "")

    def test_missed_planted_controls_leave_found_nothing_inconclusive(self) -> None:
        def missed(seen: dict) -> None:
            found_nothing(seen)
            seen["controls"]["threads"]["trusted"] = False
            seen["controls"]["threads"]["why"] = "the planted threshold operation was not found"
        v = thread_claim(evidence(missed))
        for pv in v.platforms.values():
            self.assertEqual(pv.verdict, "inconclusive")
            self.assertIn("the planted threshold operation was not found", pv.reason)

    def test_a_counter_example_beside_a_missed_control_decides_nothing(self) -> None:
        """A holding control flagged: the harness saw differences where none
        can be, so the search's counter-examples are not a refutation."""
        def flagged(seen: dict) -> None:
            seen["controls"]["threads"]["trusted"] = False
            seen["controls"]["threads"]["why"] = "the holding one was flagged"
        for pv in thread_claim(evidence(flagged)).platforms.values():
            self.assertEqual(pv.verdict, "inconclusive", pv.reason)
            self.assertIn("the holding one was flagged", pv.reason)
            self.assertEqual(pv.snippet, "")

    def test_a_search_that_evaluated_no_case_supports_nothing(self) -> None:
        def empty(seen: dict) -> None:
            found_nothing(seen)
            for one in seen["searches"].values():
                one["corpus"] = []
                one["coverage"] = dict(one["coverage"], ops=["sum"], refused={"sum": "RuntimeError: no"}, cases=1)
        for pv in thread_claim(evidence(empty)).platforms.values():
            self.assertEqual(pv.verdict, "inconclusive", pv.reason)
            self.assertIn("the search evaluated no case", pv.reason)
            self.assertIn("PyTorch refused every case of sum", pv.reason)

    def test_every_record_of_a_search_counts(self) -> None:
        """Two records of one search (a resumed run): a counter-example in
        the second refutes, whatever the first found."""
        ev = evidence()
        for platform_ev in ev.platforms.values():
            records = platform_ev.cases[invariance.SEARCH_TEST]
            clean = copy.deepcopy(next(r for r in records if r.get("checks")))
            found_nothing(clean["checks"][0]["observed"])
            records.insert(0, clean)
            self.assertEqual(sum(bool(r.get("checks")) for r in records), 2)
        for pv in thread_claim(ev).platforms.values():
            self.assertEqual(pv.verdict, "refuted", pv.reason)

    def test_a_passing_scope_fact_with_no_observation_supports_nothing(self) -> None:
        ev = evidence()
        for records in ev.cases.values():
            for r in records:
                if r.get("test") == "TorchPython.CudnnFlagsScopeSetsAndRestores":
                    r["checks"] = []
        claims = [c for c in load_catalog(ROOT / "catalog" / "claims.toml") if c.id == "flags-scope"]
        [v] = judge_all(claims, [], ev, partial=True)
        for pv in v.platforms.values():
            self.assertEqual(pv.verdict, "not evaluated", pv.reason)

    def test_without_a_search_a_grid_that_held_is_not_evaluated(self) -> None:
        ev = evidence()
        for records in ev.cases.values():
            records[:] = [r for r in records if r.get("test") != invariance.SEARCH_TEST]
        for platform_ev in ev.platforms.values():
            platform_ev.cases.pop(invariance.SEARCH_TEST, None)
        v = thread_claim(ev)
        for pv in v.platforms.values():
            self.assertEqual(pv.verdict, "not evaluated", pv.reason)
            self.assertIn("no search for a counter-example ran", pv.reason)

    def test_the_snippet_reaches_the_unexpected_line_the_junit_and_the_page(self) -> None:
        ev = evidence()
        verdicts = judge_all(load_catalog(ROOT / "catalog" / "claims.toml"), [], ev, partial=True)
        with tempfile.TemporaryDirectory() as tmp:
            team = Path(tmp) / "team.toml"
            team.write_text(f'[[finding]]\nclaim = "{CLAIM}"\nverdict = "supported"\nreason = "we hold it"\n'
                            'first_seen = 2026-12-07\n')
            findings = load_all([ROOT / "catalog" / "known_findings.toml", team], {v.claim.id for v in verdicts})
            held = [h for h in judge_known(findings, verdicts, ev, partial=True) if h.claim == CLAIM]
            self.assertTrue(held and all(h.status == "unexpected" for h in held))
            lines = held[0].lines()
            self.assertTrue(lines[0].startswith(f"UNEXPECTED {CLAIM}"))
            self.assertIn("counter-example follows", lines[0])
            self.assertEqual(lines[1], "import torch; F = torch.nn.functional")
            report = Report.of(verdicts, [], ev, held=held)
            write_junit(Path(tmp) / "claims.xml", report)
            failures = [f.get("message") for f in ET.parse(Path(tmp) / "claims.xml").iter("failure")]
            self.assertTrue(any("torch.set_num_threads(side)" in m for m in failures), failures)
            page = write_report(Path(tmp) / "page", report).read_text()
        self.assertIn(", as Python to run</summary>", page)
        self.assertIn("torch.set_num_threads(side)", page)


class OtherUniversalClaimsTest(unittest.TestCase):
    def verdicts(self, ev) -> dict:
        claims = load_catalog(ROOT / "catalog" / "claims.toml")
        return {v.claim.id: v for v in judge_all(claims, [], ev, partial=True)}

    def test_cudnn_flags_on_the_cpu_state_what_their_search_covered(self) -> None:
        """The recorded search found no cuDNN flag that moves CPU bits: the
        claim is not decided by the generated cases alone (none ran here),
        and the search's coverage is said."""
        v = self.verdicts(evidence())["cpu-noop"]
        for platform, pv in v.platforms.items():
            self.assertIn(pv.verdict, ("supported", "not evaluated"), (platform, pv.reason))
            if pv.verdict == "supported":
                self.assertIn("no counter-example in", pv.reason.lower())

    def test_a_cudnn_flag_that_moved_cpu_bits_refutes(self) -> None:
        def planted(seen: dict) -> None:
            one = seen["searches"]["cudnn | defaults"]
            one["counterexamples"] = [{"op": "sum", "words": "sum at n=40001, float32, contiguous, forward",
                                       "case": {"op": "sum", "n": 40001}, "snippet": "import torch\nprint(False)"}]
        v = self.verdicts(evidence(planted))["cpu-noop"]
        for pv in v.platforms.values():
            self.assertEqual(pv.verdict, "refuted")
            self.assertIn("the search found 1 counter-example: sum at n=40001", pv.reason)
            self.assertEqual(pv.snippet, "import torch\nprint(False)")

    def test_the_flags_scope_entered_from_a_documented_state_is_refuted_and_known(self) -> None:
        ev = evidence()
        verdicts = judge_all(load_catalog(ROOT / "catalog" / "claims.toml"), [], ev, partial=True)
        v = next(v for v in verdicts if v.claim.id == "flags-scope")
        findings = load_all([ROOT / "catalog" / "known_findings.toml"], {v.claim.id for v in verdicts})
        held = {h.platform: h for h in judge_known(findings, verdicts, ev, partial=True) if h.claim == "flags-scope"}
        for platform, pv in v.platforms.items():
            if "2.15" in platform:
                self.assertEqual(pv.verdict, "refuted", pv.reason)
                self.assertIn("PyTorch refuses the scope", pv.reason)
                self.assertIn("torch.backends.mkldnn.fp32_precision = 'bf16'", pv.reason)
                self.assertIn("torch.backends.cudnn.conv.fp32_precision = 'ieee'", pv.reason)
                self.assertEqual(held[platform].status, "known")
            else:
                self.assertEqual(pv.verdict, "supported", pv.reason)
                self.assertIn("starting states", pv.reason)


# The GPU levels, on constructed data: the record CudaCounterExampleSearch
# writes on a CUDA device (probes/counterexamples.py run_cuda), built from
# the 2.15 CPU record's controls and coverage, its counter-examples' snippets
# the programs search.program() writes for the CUDA levels.
CUDA_TEST = "TorchPython.CudaCounterExampleSearch"
CUDA_RUN = Level("cuda-run", (1, 2), "torch.cuda.synchronize()", "False here: two calls on the GPU gave other bits",
                 device="cuda")
CUDA_BATCH = Level("batch", (None, 1), "@BATCHED, = (t[:side] for t in whole)",
                   "False here: a sample's result depends on the batch it is computed in", "len(x)", slices=True,
                   device="cuda")
DETERMINISTIC = ("import os; os.environ['CUBLAS_WORKSPACE_CONFIG'] = ':4096:8'",
                 "torch.use_deterministic_algorithms(True)")


def found_on_cuda(op: str, n: int, level: Level, claim_state=()) -> dict:
    case = Case(op, n)
    return {"op": op, "case": case.to_json(), "found": case.to_json(), "words": case.words(), "fraction": 0.25,
            "max_rel": 1e-6, "shrink_tries": 12, "snippet": program(OPS[op], case, level, claim_state)}


def cuda_evidence(edit=None, skipped: str = ""):
    """The 2.15 platform's recorded runs with a CUDA search record beside
    them: one cuda-run counter-example (index_add under the mode), none
    across streams, one across the batch (linear); `edit` changes the
    observation; `skipped`, the record of a machine without a device."""
    lines = [json.loads(line) for line in (DATA / "torch-2.15.0" / "search.jsonl").read_text().splitlines()]
    cpu = next(r for r in lines if r.get("kind") == "case")["checks"][0]["observed"]
    one = cpu["searches"]["run | deterministic"]
    like = lambda level, found: dict(copy.deepcopy(one), level=level, device="cuda", threads=[],  # noqa: E731
                                      corpus=[], counterexamples=found)
    seen = {"torch": cpu["torch"], "device": "NVIDIA H100 80GB HBM3", "seed": cpu["seed"], "budget_s": 45.0,
            "controls": {"cuda-run": cpu["controls"]["run"], "cuda-streams": cpu["controls"]["run"],
                         "batch": cpu["controls"]["batch"]},
            "searches": {"cuda-run | deterministic": like("cuda-run", [found_on_cuda("index_add", 4097, CUDA_RUN,
                                                                                     DETERMINISTIC)]),
                         "cuda-streams | defaults": like("cuda-streams", []),
                         "batch | defaults": like("batch", [found_on_cuda("linear", 3, CUDA_BATCH)])}}
    if edit is not None:
        edit(seen)
    check = ({"name": "cuda_counterexamples", "outcome": "skipped", "detail": skipped} if skipped else
             {"name": "cuda_counterexamples", "outcome": "passed", "detail": "constructed", "observed": seen})
    case = {"kind": "case", "schema": 1, "system": "pytorch", "test": CUDA_TEST, "checks": [check],
            "repro": "cuda_questions.py cuda_counterexamples", **({"skip_reason": skipped} if skipped else {})}
    result = {"kind": "result", "schema": 1, "test": CUDA_TEST, "outcome": "skipped" if skipped else "passed",
              "elapsed_ms": 80000.0, "message": skipped}
    tmp = tempfile.TemporaryDirectory()
    folder = Path(tmp.name) / "torch-2.15.0"
    folder.mkdir()
    (folder / "search.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines + [case, result]))
    ev = read_evidence([folder])
    tmp.cleanup()
    return ev


class CudaSearchTest(unittest.TestCase):
    def verdict(self, claim: str, ev):
        [v] = judge_all([c for c in load_catalog(ROOT / "catalog" / "claims.toml") if c.id == claim], [], ev,
                        partial=True)
        [pv] = v.platforms.values()
        return pv

    def test_a_counter_example_run_to_run_on_the_gpu_refutes_the_mode_with_its_cuda_snippet(self) -> None:
        pv = self.verdict("det-alg-cuda-run", cuda_evidence())
        self.assertEqual(pv.verdict, "refuted", pv.reason)
        self.assertIn("the search found 1 counter-example: index_add at n=4097", pv.reason)
        self.assertIn("torch.set_default_device('cuda')", pv.snippet)
        self.assertIn("CUBLAS_WORKSPACE_CONFIG", pv.snippet)
        self.assertLessEqual(len(pv.snippet.splitlines()), 10)

    def test_no_counter_example_across_streams_is_supported_with_what_was_searched_on_the_gpu(self) -> None:
        pv = self.verdict("cuda-stream-invariant", cuda_evidence())
        self.assertEqual(pv.verdict, "supported", pv.reason)
        self.assertRegex(pv.reason, r"^No counter-example in \d+ operations x \d+ sizes .* on the GPU; ")

    def test_missed_gpu_controls_decide_nothing(self) -> None:
        def missed(seen: dict) -> None:
            seen["controls"]["cuda-streams"] = {"trusted": False, "why": "the planted threshold operation was not found"}
        pv = self.verdict("cuda-stream-invariant", cuda_evidence(missed))
        self.assertEqual(pv.verdict, "inconclusive", pv.reason)
        self.assertIn("planted threshold operation was not found", pv.reason)

    def test_without_a_device_the_gpu_claims_are_not_evaluated_with_the_reason(self) -> None:
        said = "needs a CUDA device: PyTorch 2.15.0+cu132 sees none (probe cuda_counterexamples)"
        for claim in ("det-alg-cuda-run", "cuda-stream-invariant"):
            pv = self.verdict(claim, cuda_evidence(skipped=said))
            self.assertEqual(pv.verdict, "not evaluated", pv.reason)
            self.assertIn("sees none", pv.reason)

    def test_the_gpus_batch_search_joins_the_cpus_for_the_batch_claim(self) -> None:
        pv = self.verdict("batch-invariant", cuda_evidence())
        self.assertEqual(pv.verdict, "refuted", pv.reason)
        [v] = judge_all([c for c in load_catalog(ROOT / "catalog" / "claims.toml") if c.id == "batch-invariant"], [],
                        evidence(), partial=True)
        cpu = next(p for name, p in v.platforms.items() if "2.15" in name)
        count = lambda reason: int(re.search(r"the search found (\d+) counter-example", reason).group(1))  # noqa: E731
        self.assertEqual(count(pv.reason), count(cpu.reason) + 1, (pv.reason, cpu.reason))


class SearchCardTest(unittest.TestCase):
    def lines(self, ev):
        return {p: {(l["says"], l["level"]): l for l in lines} for p, lines in
                ((p, invariance.card_lines(g)) for p, g in invariance.judge(ev).items())}

    def test_a_refuted_operation_is_never_invariant_here_and_the_lever_is_named_for_what_it_holds(self) -> None:
        for platform, lines in self.lines(evidence()).items():
            differ = lines[("Not invariant here", "thread count")]
            self.assertIn("layer_norm at n=", differ["ops"], platform)
            same = lines.get(("Invariant here", "thread count"))
            if same:
                self.assertNotIn("layer_norm", same["ops"].split(", "))
                self.assertRegex(same["searched"], r"^the grid's one shape each; the search found no counter-example "
                                                   r"for [\w, ]+ in \d+ operations")
            self.assertNotIn(("Invariant with", "thread count"), lines, "the lever holds no counter-example")

    def test_the_card_says_the_same_whatever_order_the_search_found_its_counter_examples(self) -> None:
        """Two runs find the same counter-examples in another order (the
        search is timed): the card's lines are the same."""
        def reversed_order(seen: dict) -> None:
            for one in seen["searches"].values():
                one["counterexamples"].reverse()
            for lever in seen["levers"]:
                lever["held"].reverse()
                lever["not_held"].reverse()
        self.assertEqual(self.lines(evidence(reversed_order)), self.lines(evidence()))

    def test_a_lever_that_holds_every_counter_example_is_named(self) -> None:
        def held_all(seen: dict) -> None:
            for lever in seen["levers"]:
                lever["held"], lever["not_held"] = lever["held"] + lever["not_held"], []
        for platform, lines in self.lines(evidence(held_all)).items():
            grid_differs = lines[("Not invariant here", "thread count")]
            line = lines.get(("Invariant with", "thread count")) or lines.get(("Holds some", "thread count"))
            self.assertIsNotNone(line, (platform, lines))

    def test_a_lever_that_holds_some_says_what_it_does_not_and_what_holds_them_all(self) -> None:
        def held_one(seen: dict) -> None:
            for lever in seen["levers"]:
                lever["held"], lever["not_held"] = lever["not_held"][:1], lever["not_held"][1:]
        for platform, lines in self.lines(evidence(held_one)).items():
            line = lines[("Holds some", "thread count")]
            self.assertTrue(line["not_held"])
            self.assertIn("the same thread count", line["holds_all"])
            self.assertIn("not measured", line["cost"], "a cost timed in another process is not a cost")


if __name__ == "__main__":
    unittest.main()
