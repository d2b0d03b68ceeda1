"""The report in headless Chromium: a hostile report (every string a
<script>) runs no script and shows the strings as text; the full catalog's
report renders every claim and its filters work; on recorded evidence of two
torch installs it shows a card per platform, and its first screen holds the
summary, the cards and the claims grid (a page pushed down fails). The first
screen holds for any mix of verdicts: on the synthetic worst case
(reports/tests/worst_case.py: every claim refuted on four platforms of long
names, every install failed, every list above the grid at its longest, which
without its bounds pushes the grid off the screen) and on the recorded run of
an AVX-512 BF16 CPU whose page once failed it. The reasons say the fact
first, on the recorded runs of an Intel Xeon whose 2.15 is rewritten to be
unexpected: no grid line shows a path or a test name before its fact, every
refuted or unexpected line names what differed, no claim's section says a
sentence twice, and the page does not scroll sideways; each check fails on
a page built to break it; a page past its weight, folds that cannot load and
a link that leads nowhere each fail. One browser serves every page. Run by
ctest as report.browser; needs chromium,
chromium-driver and python3-selenium, which ./backendcheck test installs."""

from __future__ import annotations

import copy
import json
import os
import tempfile
import unittest
from pathlib import Path

from inputs import install_state
from reports.tools.browser import PAGE_BYTES, WAIT_S, check, first_screen, reasons, shared
from reports.catalog import load_catalog
from reports.evidence import read_evidence
from reports.pipeline import Inputs, Report, build
from reports.observe import cut
from reports.page.render import GRID_CHARS, write_page, write_report
from reports.ruling import Ruling
from reports.tests import scratch, worst_case
from reports.tests.recorded import XEON, unpack_zen5
from reports.tests.test_machines import build_config, rewrite
from reports.tests.test_reports import claim, environment, write_run
from reports.verdicts import judge_all

ROOT = Path(__file__).resolve().parents[2]
HOSTILE = "<script>alert(1)</script>"
ARTIFACTS = Path(os.environ.get("BACKENDCHECK_ARTIFACTS", scratch.OUTSIDE or tempfile.gettempdir()))
# What bounds the lists above the grid, lifted: every list at its full length.
UNBOUNDED = ("<style>.card, .bounded, #unexpected ul, #problems ul { max-height: none !important; } "
             ".clamp1, .clamp2 { display: block !important; }</style>")


def setUpModule() -> None:
    """One browser for every page of these tests (reports.tools.browser.shared)."""
    session = shared()
    session.__enter__()
    unittest.addModuleCleanup(session.__exit__, None, None, None)


class BrowserTest(unittest.TestCase):
    def setUp(self) -> None:
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)
        self.t = Path(self.tmp.name)

    def test_hostile_strings_render_as_text(self) -> None:
        test = f"Cpu/Determinism.Bitwise/{HOSTILE}"
        manifest = [{"id": HOSTILE, "test": test, "repro": HOSTILE, "suite": HOSTILE, "fixture": "Determinism",
                     "positive_control": False, "binary": "b", "axes": {"device": HOSTILE, "engine": HOSTILE}}]
        run = write_run(self.t / "ev", {**environment(HOSTILE), "cpu_model": HOSTILE},
                        {test: [{"repro": HOSTILE, "device": "cpu", "digest": HOSTILE, "engine": HOSTILE,
                                 "implementation": "<img src=x onerror=alert(2)>", "distinct_digests": 1}]})
        claims = [claim(id="hostile", statement=HOSTILE, source=HOSTILE, kind="folklore",
                        scope={"device": HOSTILE}, tests=["Cpu/*"], card={"goal": "no effect", "setting": HOSTILE})]
        ev = read_evidence([run])
        write_report(self.t / "out", Report.of(judge_all(claims, manifest, ev), manifest, ev))
        self.assertEqual(check(self.t / "out", ARTIFACTS / "report-hostile.png"), [])

    def test_catalog_report_renders_and_filters(self) -> None:
        claims = load_catalog(ROOT / "catalog" / "claims.toml")
        manifest = [{"id": "1", "test": "Flags.DefaultsMirrorPyTorch", "repro": "", "suite": "", "axes": {}}]
        run = write_run(self.t / "ev", environment("ci"), {"Flags.DefaultsMirrorPyTorch": []})
        ev = read_evidence([run])
        write_report(self.t / "out", Report.of(judge_all(claims, manifest, ev, partial=True), manifest, ev))
        self.assertEqual(check(self.t / "out", ARTIFACTS / "report-catalog.png"), [])

    def test_recorded_report_shows_the_cards_on_its_first_screen(self) -> None:
        import json
        data = ROOT / "reports" / "tests" / "data" / "two-torch"
        manifest = json.loads((data / "cases.json").read_text())["cases"]
        ev = read_evidence([data / "torch-1.13.0a0", data / "torch-2.15.0"])
        verdicts = judge_all(load_catalog(ROOT / "catalog" / "claims.toml"), manifest, ev, partial=True)
        page = write_report(self.t / "out", Report.of(verdicts, manifest, ev))
        self.assertEqual(check(self.t / "out", ARTIFACTS / "report-two-torch.png"), [])
        self.assertEqual(page.read_text().count('class="card"'), 2)
        # The same page pushed down by a screen of raw evidence fails the check.
        html = page.read_text()
        page.write_text(html.replace('<h2 id="what-to-set">', '<div style="height: 2000px">raw</div>'
                                     '<h2 id="what-to-set">', 1))
        failures = check(self.t / "out", None)
        self.assertTrue(any("below the first" in f for f in failures), failures)
        self.assertTrue(any("first claims end" in f for f in failures), failures)
        # A claim's section gone, a decided claim's observation gone and the
        # first claim's grid row gone: each is caught.
        data = json.loads((self.t / "out" / "report.json").read_text())
        decided = [c["id"] for c in data["claims"][1:] if c["verdict"] in ("supported", "refuted")]
        gone, unobserved = decided[0], decided[1]
        cell = html.index('<td class="observation"', html.index(f'data-claim="{unobserved}">'))
        broken = html[:cell] + '<td class="observation-gone"' + html[cell + len('<td class="observation"'):]
        broken = broken.replace(f'id="claim-{gone}"', f'id="claim-{gone}-gone"', 1)
        broken = broken.replace('<tr class="claim-row"', '<tr class="claim-gone"', 1)
        # Folds whose bodies cannot be inflated, and a page past its weight.
        start = broken.index('id="folds">') + len('id="folds">')
        broken = broken[:start] + "AAAA" + broken[broken.index("</script>", start):]
        page.write_text(broken + "<!-- " + "x" * PAGE_BYTES + " -->")
        failures = check(self.t / "out", None)
        self.assertTrue(any(f.startswith("the page weighs") for f in failures), failures)
        self.assertIn(f"folds: an evidence fold opened and its body did not load in {WAIT_S} s", failures)
        self.assertTrue(any(f.startswith("folds: loading the folds failed") for f in failures), failures)
        self.assertTrue(any("lead nowhere: #claim-" + gone in f for f in failures), failures)
        self.assertIn(f"claim {gone}: its statement is not rendered as text", failures)
        self.assertTrue(any(f.startswith(f"claim {unobserved}: no observation sentence") for f in failures), failures)
        self.assertTrue(any(f.startswith("claim rows differ from report.json") for f in failures), failures)


    def test_the_first_screen_holds_on_the_worst_case(self) -> None:
        inputs = worst_case.write(self.t)
        report = build(inputs)
        # The worst case it claims to be: every claim refuted on every one of
        # four platforms named at length, every install failed with a long
        # CMake error, every list above the grid long.
        self.assertEqual({pv.verdict for v in report.verdicts for pv in v.platforms.values()}, {Ruling.REFUTED})
        self.assertEqual(len(report.evidence.platforms), 4)
        self.assertTrue(all(len(p) > 150 for p in report.evidence.platforms), list(report.evidence.platforms))
        self.assertEqual([i["status"] for i in report.installs], ["error"] * len(worst_case.INSTALLS))
        self.assertTrue(all("Couldn't find the CUDA runtime" in i["why"] and len(i["why"]) > 500
                            for i in report.installs), report.installs)
        self.assertGreater(len(report.unexpected), 100)
        write_report(inputs.out, report)
        data = json.loads((inputs.out / "report.json").read_text())
        self.assertEqual(len(data["baseline"]["changed"]), 5, "the most changed verdicts whose list opens")
        self.assertGreaterEqual(data["coverage"]["missing_count"], worst_case.UNRUN)
        self.assertEqual(len(data["problems"]), len(report.evidence.platforms), "a torn record in each run")
        self.assertEqual(check(inputs.out, ARTIFACTS / "report-worst-case.png"), [])
        # The same page with its lists unbounded does not hold: the bounds do.
        page = inputs.out / "index.html"
        page.write_text(page.read_text().replace("</head>", UNBOUNDED + "</head>", 1))
        failures = first_screen(inputs.out)
        self.assertTrue(any("first claims end" in f for f in failures), failures)

    def test_the_first_screen_holds_on_a_recorded_cpu_run_of_two_torches(self) -> None:
        # The AVX-512 BF16 CPU's ./backendcheck test, reported as it was (its
        # page's first claims ended at 1587px, below the first screen): both
        # installs, whose tests failed, with their ctest lists, and the known
        # findings.
        runs = unpack_zen5(self.t / "recorded")
        states = []
        for version, run in sorted(runs.items()):
            states.append(self.t / f"install-{version}.state")
            install_state.write(states[-1], {"torch": version, "version": version, "build_dir": str(run),
                                             "run_dir": str(run / "evidence"), "stage": "done", "exit": 8,
                                             "log": str(self.t / f"install-{version}.log")})
        inputs = Inputs(claims=ROOT / "catalog" / "claims.toml", manifest=runs["2.15.0"] / "cases.json",
                        out=self.t / "out", partial=True, known=ROOT / "catalog" / "known_findings.toml",
                        installs=states)
        report = build(inputs)
        self.assertEqual([i["status"] for i in report.installs], ["tests failed"] * 2)
        self.assertEqual(len(report.evidence.platforms), 2)
        write_report(inputs.out, report)
        self.assertEqual(check(inputs.out, ARTIFACTS / "report-zen5-two-torch.png"), [])


if __name__ == "__main__":
    unittest.main()


class ReasonLinesTest(unittest.TestCase):
    """The reason lines on the recorded two-torch runs of the Intel Xeon
    (reports/tests/data/xeon-avx512fp16/), its 2.15 rewritten as if its
    torch called OpenBLAS: the oneMKL refutation of det-alg-thread-invariant
    is then unexpected there under the GEMM cause's entries
    (reports/tests/data/gemm-cause-findings.toml, test_machines.py). One report,
    checked as built and on a copy of its data broken once per check."""

    @classmethod
    def setUpClass(cls) -> None:
        cls.tmp = tempfile.TemporaryDirectory(prefix="backendcheck-reasons-")
        cls.addClassCleanup(cls.tmp.cleanup)
        root = Path(cls.tmp.name)
        runs = unpack_zen5(root / "xeon", XEON)
        manifest = unpack_zen5(root / "zen5")["2.15.0"] / "cases.json"

        def openblas(r: dict) -> None:
            observed = build_config(r)
            if observed is not None:
                observed["config"] = observed["config"].replace("BLAS_INFO=mkl", "BLAS_INFO=open")
        rewrite(runs["2.15.0"] / "evidence", openblas)
        cls.out = root / "out"
        report = build(Inputs(claims=ROOT / "catalog" / "claims.toml", manifest=manifest, out=cls.out, partial=True,
                              known=[ROOT / "catalog" / "known_findings.toml",
                                     ROOT / "reports" / "tests" / "data" / "gemm-cause-findings.toml"],
                              evidence=[runs["2.15.0"] / "evidence", runs["1.13.0a0"] / "evidence"]))
        write_report(cls.out, report)
        cls.data = json.loads((cls.out / "report.json").read_text())
        cls.claims = {c["id"]: c for c in cls.data["claims"]}

    def test_the_lines_say_the_fact_first(self) -> None:
        self.assertEqual(reasons(self.out), [])
        new = next(p for p in self.claims["det-alg-thread-invariant"]["platforms"] if "2.15.0" in p)
        self.assertEqual(self.claims["det-alg-thread-invariant"]["known"][new]["status"], "unexpected")
        # The grid's line of a refutation that is known, one that is
        # unexpected, and a claim not evaluated here, as the page shows them.
        grid = {c: self.claims[c]["grid_line"]
                for c in ("batch-invariant", "det-alg-thread-invariant", "bench-fastest")}
        self.assertEqual(grid, {
            "batch-invariant": "mm, addmm, conv1d, linear: 86–93.8% of elements differ across the batch size, with "
                               "the defaults, 4 of 21 operations",
            "det-alg-thread-invariant": "mm, addmm, linear: 85.1–91.1% of elements differ across the thread count "
                                        "(2 threads against 1), under torch.use_deterministic_algorithms(True), 3 "
                                        "of 21…",
            "bench-fastest": "needs a CUDA device: PyTorch 2.15.0+cu132 sees none"})
        # Words match outcomes: the probe passed, its finding refutes.
        only = self.claims["matmul-precision-cuda-only"]
        self.assertTrue(only["grid_line"].startswith("'medium' changed the bits of a CPU fp32 matmul"),
                        only["grid_line"])
        self.assertEqual([(f["test_outcome"], f["bearing"]) for f in only["facts"]], [("passed", "refutes the claim")])
        # The interpreter is named in the environment section, once per platform.
        page = (self.out / "index.html").read_text()
        environment = page[page.index('<h2 id="environment">'):page.index('<h2 id="cases">')]
        for env in self.data["platform_env"].values():
            self.assertEqual(environment.count(f"interpreter: <span class=\"mono\">{env['torch']['python']}<"), 1)

    def test_each_check_fails_on_a_page_built_to_break_it(self) -> None:
        # Every line back in its old shape: what ran first, then a test's
        # name and the interpreter's path, before the fact.
        data = copy.deepcopy(self.data)
        for c in data["claims"]:
            if c["facts"]:
                f = c["facts"][0]
                old = {p: f"Ran {len(c['facts'])} test(s); e.g. {f['test']}: {f['message'] or r}"
                       for p, r in c["platform_reasons"].items()}
                c["platform_lines"], c["line"] = old, old[c["gravest_platform"]]
                c["grid_line"] = cut(c["line"], GRID_CHARS)
                for row in c["rows"]:
                    row["line"] = old[row["platforms"][0]]
        failures = self.broken(data)
        first = {f.split(":")[0].removeprefix("claim ") for f in failures if "its grid line" in f}
        self.assertGreater(len(first), 30, failures)
        self.assertIn("bench-fastest", first)
        self.assertTrue(any(f.startswith("claim matmul-precision-cuda-only on") and "does not name" in f
                            for f in failures), failures)
        # A refuted line that counts instead of naming; a section that says
        # its line again as the model's; the wide tables let out of their box.
        data = copy.deepcopy(self.data)
        only = data["claims"][[c["id"] for c in data["claims"]].index("matmul-precision-cuda-only")]
        for p, v in only["platforms"].items():
            if v == "refuted":
                only["platform_lines"][p] = only["line"] = only["grid_line"] = "1 of 1 tests refute the claim"
                for row in only["rows"]:
                    row["line"] = "1 of 1 tests refute the claim" if p in row["platforms"] else row["line"]
        said = data["claims"][[c["id"] for c in data["claims"]].index("det-alg-raises")]
        said["rows"][0]["line"] = "PyTorch raised its alert for put_ here; the alert names put_ and what it set."
        said["prediction"]["line"] = said["rows"][0]["line"]
        failures = self.broken(data, "<style>.scroll { overflow-x: visible !important; }</style>")
        self.assertEqual(sorted({f.split(" ")[1 if f.startswith("claim ") else 0].rstrip(":") for f in failures}),
                         ["claim-det-alg-raises", "matmul-precision-cuda-only", "the"], failures)
        self.assertTrue(any("does not name" in f for f in failures), failures)
        self.assertTrue(any(f.startswith("claim-det-alg-raises: says twice") for f in failures), failures)
        self.assertTrue(any(f.startswith("the page scrolls sideways") for f in failures), failures)

    def broken(self, data: dict, style: str = "") -> list[str]:
        """The checks of the reason lines on a page of `data` (with `style`)."""
        out = Path(tempfile.mkdtemp(dir=self.tmp.name))
        page = write_page(out, data)
        page.write_text(page.read_text().replace("</head>", style + "</head>", 1))
        return reasons(out)
