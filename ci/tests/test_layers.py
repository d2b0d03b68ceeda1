"""The floors: no C++ include and no Python import runs up a floor, and
generators/ and reports/ never import each other, and no module of reports/
imports one that imports it (ci/import_graph.py)."""

from __future__ import annotations

import unittest
from collections import Counter

from ci import import_graph


class LayersTest(unittest.TestCase):
    def test_no_import_runs_up_a_floor(self) -> None:
        for language, (edges, bad) in import_graph.graph().items():
            with self.subTest(language=language):
                self.assertTrue(edges, f"no {language} import found: the scan is broken")
                self.assertEqual(bad, [])

    def test_the_case_runner_is_one_folder_above_the_engines(self) -> None:
        cpp = import_graph.cpp_edges()
        self.assertGreater(cpp[("runner", "backends")], 0)
        self.assertEqual(cpp[("backends", "runner")], 0)
        self.assertEqual(cpp[("selection", "backends")], 0)

    def test_an_upward_import_is_caught(self) -> None:
        # The control: the checker must see what it exists to catch.
        edges = Counter({("backends", "runner"): 1, ("harness", "selection"): 2, ("reports", "generators"): 1,
                         ("runner", "backends"): 3})
        bad = import_graph.against_floors(edges, import_graph.CPP_FLOORS | {"reports": 5, "generators": 5})
        self.assertEqual(len(bad), 3, bad)
        self.assertTrue(any(line.startswith("backends -> runner") for line in bad))

    def test_no_module_of_reports_imports_a_module_that_imports_it(self) -> None:
        imports = import_graph.module_imports("reports")
        self.assertIn("pipeline", imports["page.summary"], "an import under TYPE_CHECKING is an import")
        self.assertIn("card", imports["pipeline"])
        self.assertIn("page.summary", imports["tools.claim_test"], "a relative import from a subpackage resolves")
        self.assertIn("benchmarks", imports["tools.bench_smoke"])
        self.assertEqual(import_graph.cycles(imports), [])

    def test_only_the_reports_tests_import_their_package(self) -> None:
        """Importing reports.tests moves the process's temporary files to its
        session's scratch directory: no module outside it does."""
        import ast
        from pathlib import Path
        root = Path(__file__).resolve().parents[2]
        tests = root / "reports" / "tests"
        found = []
        for path in root.glob("*/**/*.py"):
            if tests in path.parents or any(part.startswith(".") or part == "build" for part in path.parts):
                continue
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                names = ([a.name for a in node.names] if isinstance(node, ast.Import) else
                         [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
                found += [f"{path.relative_to(root)}: {n}" for n in names if n.startswith("reports.tests")]
        self.assertEqual(found, [])

    def test_reports_layers_hold(self) -> None:
        self.assertEqual(import_graph.report_layer_breaks(import_graph.module_imports("reports")), [])

    def test_an_import_up_the_reports_layers_is_caught(self) -> None:
        # The control: the verdicts importing the page, the page a tool; the report's command line may write the page.
        imports = {"pipeline": {"page.render", "ruling"}, "page.render": {"tools.agree", "ruling"},
                   "__main__": {"page.render", "pipeline"}, "tools.agree": {"page.render", "pipeline"}, "ruling": set()}
        self.assertEqual(import_graph.report_layer_breaks(imports),
                         ["reports/page/render.py imports reports/tools/agree.py, a layer above it",
                          "reports/pipeline.py imports reports/page/render.py, a layer above it"])

    def test_a_circle_of_imports_is_caught(self) -> None:
        # The control: the circle that reports/ had (card -> summary -> pipeline -> card).
        imports = {"card": {"summary", "ruling"}, "summary": {"pipeline"}, "pipeline": {"card", "ruling"},
                   "ruling": set(), "a": {"b"}, "b": {"a"}}
        self.assertEqual(import_graph.cycles(imports), [["a", "b", "a"], ["card", "summary", "pipeline", "card"]])


if __name__ == "__main__":
    unittest.main()
