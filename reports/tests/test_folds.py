"""The page's folds, loaded when they open (reports/page/folds.py): the
bodies set aside are the ones put back, in their places, byte for byte."""

from __future__ import annotations

import re
import tempfile
import unittest
from pathlib import Path

from reports.page.folds import ATTRIBUTE, Folds, bodies, unfolded


class FoldsTest(unittest.TestCase):
    def page(self, *parts: str) -> tuple[str, str]:
        """A page of folds with these bodies, and the page written whole."""
        folds = Folds()
        folded = "".join(f'<details class="x"{folds.put(b)}><summary>s{i}</summary></details>'
                         for i, b in enumerate(parts))
        whole = "".join(f'<details class="x"><summary>s{i}</summary>{b}</details>' for i, b in enumerate(parts))
        return f"<body>{folded}{folds.payload()}<script>1</script></body>", f"<body>{whole}<script>1</script></body>"

    def test_put_back_whole_in_place(self) -> None:
        parts = ["<p>a</p>", "<table><tr><td>ü &amp; &lt;</td></tr></table>", "<details><summary>in</summary>b</details>"]
        folded, whole = self.page(*parts)
        self.assertEqual(bodies(folded), parts)
        self.assertEqual(unfolded(folded), whole)
        self.assertNotIn(ATTRIBUTE, unfolded(folded))
        for b in parts[:2]:
            self.assertNotIn(b, folded, "a body is not written where it shows")

    def test_the_command_prints_the_page_unfolded(self) -> None:
        import contextlib
        import io
        from reports.page.folds import main
        folded, whole = self.page("<p>a</p>", "<p>b</p>")
        with tempfile.TemporaryDirectory() as tmp:
            (Path(tmp) / "index.html").write_text(folded, encoding="utf-8")
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                self.assertEqual(main([str(Path(tmp) / "index.html")]), 0)
        self.assertEqual(out.getvalue(), whole)

    def test_a_page_without_folds_is_itself(self) -> None:
        self.assertEqual(bodies("<body></body>"), [])
        self.assertEqual(unfolded("<body><details><summary>s</summary>b</details></body>"),
                         "<body><details><summary>s</summary>b</details></body>")

    def test_one_report_one_page(self) -> None:
        self.assertEqual(self.page("<p>same</p>" * 50), self.page("<p>same</p>" * 50))

    def test_the_report_folds_its_evidence(self) -> None:
        """A rendered report sets its folds' bodies aside, a fraction of
        their size, and carries every one of them."""
        from reports.page.render import write_report
        from reports.pipeline import Report
        from reports.tests.test_reports import claim, evidence, judge_all
        c = claim(id="c", statement="s", tests=["T.a"])
        ev = evidence(**{"T.a": "passed"})
        manifest = [{"id": "1", "test": "T.a", "repro": "r", "suite": "T", "axes": {"device": "cpu"}}]
        with tempfile.TemporaryDirectory() as tmp:
            html = write_report(Path(tmp), Report.of(judge_all([c], manifest, ev), manifest, ev)).read_text()
        folds = re.findall(r'<details[^>]*' + ATTRIBUTE + r'="(\d+)"', html)
        self.assertEqual(sorted(map(int, folds)), list(range(len(bodies(html)))))
        self.assertIn('class="evidence"', html)
        self.assertNotIn('class="evidence-table"', html)
        self.assertIn('class="evidence-table"', unfolded(html))


if __name__ == "__main__":
    unittest.main()
