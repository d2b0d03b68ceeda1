"""The invariance grid, judged and shown from recorded evidence:
reports/tests/data/invariance holds the records of TorchPython.InvarianceGrid
(suites/probes/invariance.py) as ctest wrote them on a 2-core AVX2 machine,
for torch 1.13.0a0 (Debian) and 2.15.0+cu132 (PyPI), each with its
environment record."""

from __future__ import annotations

import json
import tempfile
import unittest
from pathlib import Path

from reports import invariance
from reports.catalog import load_catalog
from reports.evidence import read_evidence
from reports.pipeline import Report
from reports.render import write_report
from reports.verdicts import judge_all

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "reports" / "tests" / "data" / "invariance"
STATES = {"invariant", "differs", "not evaluated", "untrusted", "error"}


class RecordedGridTest(unittest.TestCase):
    def setUp(self) -> None:
        self.ev = read_evidence([DATA / "torch-1.13.0a0", DATA / "torch-2.15.0"])
        self.grids = invariance.judge(self.ev)
        self.by_torch = {g["torch"].split("+")[0]: g for g in self.grids.values()}

    def test_one_grid_per_torch_with_every_operation(self) -> None:
        self.assertEqual(sorted(self.by_torch), ["1.13.0a0", "2.15.0"])
        for g in self.by_torch.values():
            ops = {k.split(" | ")[0] for k in g["rows"]}
            for op in ("mm", "bmm", "addmm", "linear", "matmul", "matmul bf16", "conv1d", "conv2d", "softmax",
                       "log_softmax", "layer_norm", "rms_norm", "group_norm", "sdpa math", "sdpa flash", "sum",
                       "mean", "cumsum", "embedding_bag", "index_add", "scatter_add"):
                self.assertIn(op, ops)
            for cells in g["rows"].values():
                self.assertTrue({c["state"] for c in cells.values()} <= STATES, cells)

    def test_every_level_has_a_control_that_varied(self) -> None:
        for g in self.by_torch.values():
            self.assertEqual(sorted(g["controls"]), sorted(invariance.RECORDED))
            self.assertTrue(all(c["varied"] for c in g["controls"].values()), g["controls"])

    def test_batch_dependence_of_mm_is_a_cell_with_its_k_and_kernel(self) -> None:
        for g in self.by_torch.values():
            cell = g["rows"]["mm | defaults"]["batch"]
            self.assertEqual(cell["state"], "differs")
            self.assertIn("1", cell["at"])
            self.assertGreater(cell["fraction"], 0)
            self.assertIn("k = 1", cell["why"])
        self.assertIn("SGEMM", self.by_torch["2.15.0"]["kernels"]["mm"]["k=1"]["path"])

    def test_an_operation_a_version_lacks_is_not_evaluated_naming_it(self) -> None:
        cell = self.by_torch["1.13.0a0"]["rows"]["rms_norm | defaults"]["batch"]
        self.assertEqual(cell["state"], "not evaluated")
        self.assertIn("1.13.0a0 has no torch.nn.functional.rms_norm", cell["why"])

    def test_release_level_compares_the_two_installs(self) -> None:
        g = self.by_torch["2.15.0"]
        self.assertEqual(g["inputs_digest"], self.by_torch["1.13.0a0"]["inputs_digest"])
        states = {k: r["release"]["state"] for k, r in g["rows"].items() if k.endswith("| defaults")}
        self.assertIn("differs", states.values())
        self.assertEqual(states["rms_norm | defaults"], "not evaluated")

    def test_a_missed_control_untrusts_invariant_cells_only(self) -> None:
        raw = invariance._observed(next(iter(self.ev.platforms.values())))
        cell = invariance._cell("threads", {"per": {"1": {"same": True}}}, False, raw)
        self.assertEqual(cell["state"], "untrusted")
        cell = invariance._cell("threads", {"per": {"1": {"same": False, "fraction": .5, "max_rel": 1e-7}}}, False, raw)
        self.assertEqual(cell["state"], "differs")

    def test_the_report_shows_the_section_the_card_lines_and_the_changes(self) -> None:
        verdicts = judge_all(load_catalog(ROOT / "suites" / "claims.toml"), [], self.ev, partial=True)
        report = Report.of(verdicts, [], self.ev)
        lines = {(p, l["says"], l["level"]): l["ops"] for p, c in report.cards.items() for l in c["invariance"]}
        self.assertTrue(any(says == "Not invariant here" and level == "batch size" and "mm" in ops.split(", ")
                            for (_, says, level), ops in lines.items()), lines)
        kinds = [c for c in report.between if c["kind"] == "invariance"]
        self.assertTrue(kinds, "cells whose state differs between the releases are changes")
        self.assertFalse([c for c in report.between if c.get("test") == invariance.TEST],
                         "the grid's raw record is not diffed beside its cells")
        with tempfile.TemporaryDirectory() as tmp:
            page = write_report(Path(tmp), report).read_text()
            data = json.loads((Path(tmp) / "report.json").read_text())
        self.assertIn('id="invariance"', page)
        self.assertEqual(page.count('class="invariance-grid"'), 2)
        self.assertIn("Not invariant here", page)
        self.assertEqual(sorted(data["invariance"]["levels"]), sorted(invariance.LEVELS))


if __name__ == "__main__":
    unittest.main()
