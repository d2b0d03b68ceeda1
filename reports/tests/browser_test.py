"""The report in headless Chromium: a hostile report (every string a
<script>) runs no script and shows the strings as text; the full catalog's
report renders every claim and its filters work; on recorded evidence of two
torch installs it shows a card per platform, and its first screen holds the
summary, the cards and the claims grid (a page pushed down fails). Run by ctest as
report.browser; needs chromium, chromium-driver and python3-selenium, which
./backendcheck test installs."""

from __future__ import annotations

import os
import tempfile
import unittest
from pathlib import Path

from reports.browser import check
from reports.catalog import load_catalog
from reports.evidence import read_evidence
from reports.pipeline import Report
from reports.render import write_report
from reports.tests.test_reports import claim, environment, write_run
from reports.verdicts import judge_all

ROOT = Path(__file__).resolve().parents[2]
HOSTILE = "<script>alert(1)</script>"
ARTIFACTS = Path(os.environ.get("BACKENDCHECK_ARTIFACTS", tempfile.gettempdir()))


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
        claims = load_catalog(ROOT / "suites" / "claims.toml")
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
        verdicts = judge_all(load_catalog(ROOT / "suites" / "claims.toml"), manifest, ev, partial=True)
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


if __name__ == "__main__":
    unittest.main()
