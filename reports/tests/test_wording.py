"""Reasons in the reader's terms (reports/wording.py): shown catching the
call sites that evidence recorded before the fix, and passing clean ones;
and the reason lines, fact first (reports/observe.py), held to the checks
the browser makes of the page, each shown failing on the old shape of a
line that issue 57 quotes."""

from __future__ import annotations

import unittest
from pathlib import Path

from reports import wording
from reports.evidence import read_evidence, read_manifest
from reports.pipeline import Report
from reports.catalog import load_catalog
from reports.observe import cut
from reports.tests.recorded import H100, H100_CALLS
from reports.page.render import GRID_CHARS, to_json
from reports.verdicts import judge_all

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "reports" / "tests" / "data" / "two-torch"


class WordingTest(unittest.TestCase):
    def test_every_forbidden_shape_is_caught_where_a_user_reads_it_and_plain_words_pass(self) -> None:
        plain = "with mkldnn.enabled=True: 0.098–0.84× the time without it; 15 shapes: 14 decisively for the claim"
        for text in ("defaults {'fp32_precision': 'none'}", "digest 8ae04aee7b1ed0b3 via x", "steady_ns 0.97×",
                     "median 1; B: deterministic_algorithms=True", "5 runs of reference:owner",
                     "positive control caught after 2 runs", "the model predicts supported",
                     "no case of this run's matrix addresses this claim", "Rule: fact", "x" * 201):
            for data in ({"claims": [{"id": "c", "grid_line": text, "rows": [{"platforms": [], "line": plain}]}]},
                         {"claims": [{"id": "c", "grid_line": plain, "rows": [{"platforms": ["p"], "line": text}]}]},
                         {"card": {"p": {"sections": [{"lines": [{"says": "set", "setting": "s",
                                                                  "cost": [{"text": text}]}]}]}}},
                         {"card": {"p": {"not_evaluated": [{"why": text}]}}},
                         {"attention": [{"claim": "c", "line": text}]},
                         {"changes_grouped": {"upgrades": [text]}}):
                with self.subTest(text=text, where=next(iter(data))):
                    self.assertEqual(len(wording.forbidden(data)), 1, wording.forbidden(data))
        self.assertEqual(wording.forbidden({"claims": [{"id": "c", "grid_line": plain, "rows": []}]}), [])

    def test_plain_words_for_what_probes_print(self) -> None:
        for text, said in (("absent: ['a.b', 'c']", "absent: a.b, c"),
                           ("defaults {'x': 'none', 'y': True}", "defaults x=none, y=True"),
                           ("set {'x': {'a': 1}} here", "set (in the evidence) here"),
                           ("digest 8ae04aee7b1ed0b3 via A vs B 8ae04aee7b1ed0b3", "the same bits via A as with B"),
                           ("digest 8ae04aee7b1ed0b3 via A vs B 1234567812345678", "different bits via A as with B"),
                           ("1 distinct digest(s) in 5 runs of reference:owner",
                            "1 different result(s) in 5 runs of the harness's reference kernel (owner)")):
            with self.subTest(text=text):
                self.assertEqual(wording.plain(text), said)
                self.assertEqual(wording.forbidden({"attention": [{"claim": "c", "line": wording.plain(text)}]}), [])

    def test_call_sites_and_source_files_are_caught(self) -> None:
        for text in ("prepared->Init() at backends/pytorch/pytorch.cc:516: ApplyFlags(flags_) at x.cc:352: no",
                     "probe failed: AttributeError (torch_backends.py:448, in main)",
                     "cudaGetDeviceCount(&n) at /tmp/base/backends/cuda/device.cc:40 returned 35",
                     "all 1 evaluated fact(s) hold"):
            with self.subTest(text=text):
                self.assertEqual(len(wording.problems({"claims": [{"id": "x", "reason": text}]})), 1)

    def test_the_facts_themselves_pass(self) -> None:
        for text in ("PyTorch 1.13.0 has no torch.backends.cudnn.conv.fp32_precision: not evaluated",
                     "TorchPython.OpenmpIsAvailable held: PyTorch 1.13.0a0 (/usr/bin/python3): "
                     "torch.backends.openmp.is_available() = True",
                     "needs a CUDA device: cudaGetDeviceCount returned 35 (cudaErrorInsufficientDriver)",
                     "2 tests held (TorchPython: TorchPython.A, TorchPython.B)", "torch==2.15.0 at 2.7x"):
            with self.subTest(text=text):
                self.assertEqual(wording.problems({"claims": [{"id": "x", "reason": text}]}), [])

    def test_the_report_of_recorded_evidence_speaks_the_readers_terms(self) -> None:
        claims = load_catalog(ROOT / "catalog" / "claims.toml")
        ev = read_evidence([DATA / "torch-1.13.0a0", DATA / "torch-2.15.0"])
        manifest = read_manifest(DATA / "cases.json")
        data = to_json(Report.of(judge_all(claims, manifest, ev, partial=True), manifest, ev))
        self.assertGreater(len(wording.reasons(data)), 100)
        self.assertEqual(wording.problems(data), [])
        defaults = next(c for c in data["claims"] if c["id"] == "defaults")
        self.assertIn("TorchPython.DefaultsAreTheDocumentedOnes held: PyTorch", defaults["reason"])


# Lines as the report wrote them before they said the fact first (quoted
# from the two-torch report of a fresh clone of 03bd2db).
OLD_NOT_EVALUATED = ("Ran 1 test(s): 1 not evaluated; e.g. TorchPython.CudnnBenchmarkKeepsTheFastestPlanItTimed: "
                     "/home/ci/.cache/backendcheck/torch-2.15.0/bin/python: needs a CUDA device: PyTorch 2.15.0+cu132 "
                     "sees none (probe cudnn_bench_fastest): not evaluated")
OLD_REFUTED = ("Ran 2 test(s): 1 passed, 1 not evaluated; e.g. TorchPython.InvarianceGrid: PyTorch 2.15.0+cu132 "
               "(/home/ci/.cache/backendcheck/torch-2.15.0/bin/python): PyTorch 2.15.0+cu132: 63 operation and flag "
               "rows; not invariant at some in-process level: addmm, conv1d, conv2d, linear, mm")
OLD_RULE = ("TorchPython.MatmulPrecisionAffectsCudaOnly held: PyTorch 2.15.0+cu132 (/…/python): 'medium' changed the "
            "bits of a CPU fp32 matmul (against 'highest')")


class ReasonLineTest(unittest.TestCase):
    def test_a_line_that_opens_with_what_ran_or_a_test_name_is_not_fact_first(self) -> None:
        self.assertIn("opens with what ran", wording.fact_first(OLD_NOT_EVALUATED, ["needs a CUDA device"], []))
        self.assertIn("opens with what ran", wording.fact_first(cut(OLD_REFUTED, 160), ["mm"], []))
        said = wording.fact_first(OLD_RULE, ["'medium' changed the bits of a CPU fp32 matmul"],
                                  ["TorchPython.MatmulPrecisionAffectsCudaOnly"])
        self.assertIn("'TorchPython.MatmulPrecisionAffectsCudaOnly' before its first fact", said)
        # A path before the fact, with no test name: caught as well.
        self.assertIn("before its first fact", wording.fact_first(
            "/usr/bin/python3: PyTorch 1.13.0a0 sees no CUDA device", ["PyTorch 1.13.0a0 sees no CUDA device"], []))

    def test_the_fact_first_passes_with_what_follows_it(self) -> None:
        for shown, named in (("needs a CUDA device: PyTorch 2.15.0+cu132 sees none", ["needs a CUDA device"]),
                             ("mm, addmm, linear: 85.1–91.1% of elements differ across the thread count", ["mm"]),
                             ("cblas_sgemm from /lib/x86_64-linux-gnu/libblas.so.3 held", ["cblas_sgemm from"]),
                             ("the docs: see https://github.com/pytorch/pytorch/issues", ["the docs"])):
            with self.subTest(shown=shown):
                self.assertEqual(wording.fact_first(shown, named, ["TorchPython.InvarianceGrid"]), "")

    def test_a_refuted_line_must_name_what_differed(self) -> None:
        named = ["mm", "addmm", "linear"]
        self.assertEqual(wording.names_what_differed("mm, addmm, linear: 85.1–91.1% of elements differ", named,
                                                     whole=True), "")
        self.assertIn("'mm'", wording.names_what_differed(cut(OLD_REFUTED, 160), named, whole=False))
        self.assertIn("does not name", wording.names_what_differed("1 of 1 tests refute the claim", named, whole=True))
        self.assertIn("names nothing", wording.names_what_differed("refuted", [], whole=True))

    def test_a_sentence_said_twice_is_found_but_rows_of_a_table_may_share_one(self) -> None:
        rule = ("TorchPython.X held: not in this build: []; 20 flags at their documented defaults; "
                "mkldnn.deterministic exists: True")
        said = "20 flags at their documented defaults; mkldnn.deterministic exists: True"
        self.assertEqual(wording.repeated([("p 1", said), ("p 2", rule)]),
                         ["20 flags at their documented defaults", "mkldnn.deterministic exists: True"])
        self.assertEqual(wording.repeated([("p 1", f"{said}; {said}")]), wording.sentences(said), "twice in one")
        self.assertEqual(wording.repeated([("table 0 column 3", said), ("table 0 column 3", said),
                                           ("list 0", "the same engine on every row"),
                                           ("list 0", "the same engine on every row")]), [])

    def test_the_lines_of_recorded_evidence_say_the_fact_first(self) -> None:
        claims = load_catalog(ROOT / "catalog" / "claims.toml")
        refuted = 0
        for dirs, manifest in (([DATA / "torch-1.13.0a0", DATA / "torch-2.15.0"], read_manifest(DATA / "cases.json")),
                               ([H100 / call / "evidence" for call in H100_CALLS],
                                read_manifest(H100 / "conformance-1" / "cases.json"))):
            ev = read_evidence(dirs)
            data = to_json(Report.of(judge_all(claims, manifest, ev, partial=True), manifest, ev))
            refuted += self.held_to_the_checks(data)
        self.assertGreater(refuted, 0, "a refutation among them (the H100's cublas-config), or it proves nothing")
        # The same lines put back in their old shape fail.
        c = next(c for c in data["claims"] if c["id"] == "cublas-config")
        for p in c["platform_lines"]:
            c["platform_lines"][p] = OLD_RULE.replace("/…/", "/home/ci/.cache/backendcheck/torch-2.15.0/bin/")
        self.assertTrue([p for p in wording.problems(data) if "shows the interpreter's path" in p])

    def test_evidence_of_no_named_platform_keeps_its_line_in_the_section(self) -> None:
        from reports.tests.test_reports import claim, evidence
        ev = evidence(**{"T.a": "failed", "T.b": "passed"})
        c = to_json(Report.of(judge_all([claim()], [], ev), [], ev))["claims"][0]
        self.assertEqual(c["rows"], [{"platforms": [], "verdict": "refuted", "line": c["line"], "whole": c["line"],
                                      "known": None, "snippet": ""}])
        self.assertEqual(c["line"], "T.a said failed, 1 of 2 tests refutes the claim")

    def held_to_the_checks(self, data: dict) -> int:
        """The browser's checks of the reason lines, on report.json's own
        lines: fact first in the grid, a refutation naming what differed, no
        path. Returns how many refuted lines it held."""
        refuted = 0
        for c in data["claims"]:
            gravest = c["gravest_platform"]
            self.assertEqual(c["line"], c["platform_lines"][gravest], c["id"])
            self.assertEqual(c["line_named"], c["named"][gravest], c["id"])
            self.assertEqual(wording.fact_first(c["grid_line"], c["line_named"], [f["test"] for f in c["facts"]]),
                             "", c["id"])
            self.assertLessEqual(len(c["grid_line"]), GRID_CHARS + 1, c["id"])
            for p, verdict in c["platforms"].items():
                if verdict == "refuted":
                    refuted += 1
                    self.assertEqual(wording.names_what_differed(c["platform_lines"][p], c["named"][p], True), "",
                                     (c["id"], p))
        self.assertEqual(wording.problems(data), [])
        return refuted


if __name__ == "__main__":
    unittest.main()


class GlossaryTest(unittest.TestCase):
    def test_every_term_is_linked_from_the_page_and_defined_on_it(self) -> None:
        """Each glossary entry is linked where its term shows (the page's
        template), and each link of a rendered page leads to its entry."""
        import re
        import tempfile
        from reports.evidence import Evidence
        from reports.page.folds import unfolded
        from reports.page.render import TEMPLATES, write_report
        template = (Path(TEMPLATES) / "report.html.j2").read_text()
        self.assertEqual(sorted(set(re.findall(r'term\("([\w-]+)"', template))), sorted(wording.GLOSSARY))
        with tempfile.TemporaryDirectory() as tmp:
            page = unfolded(write_report(Path(tmp), Report.of([], [], Evidence())).read_text())
        for key in wording.GLOSSARY:
            self.assertIn(f'<dt id="glossary-{key}">', page)
        for key in re.findall(r'href="#glossary-([\w-]+)"', page):
            self.assertIn(key, wording.GLOSSARY)
