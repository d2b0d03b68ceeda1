"""reports/tools/skips.py --require DEVICE: a GPU run in which no GPU test ran fails;
a test labelled for both devices (a PyTorch probe with CUDA entries, which
runs its CPU entries anywhere) proves nothing about either."""

from __future__ import annotations

import json
import tempfile
import unittest
from pathlib import Path

from reports.evidence import Evidence
from reports.tools.skips import required_ran


def tests_json(path: Path, labels: dict[str, list[str]]) -> Path:
    path.write_text(json.dumps({"kind": "ctestInfo", "tests": [
        {"name": name, "properties": [{"name": "LABELS", "value": value}]} for name, value in labels.items()]}))
    return path


class RequireTest(unittest.TestCase):
    def setUp(self) -> None:
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        self.tests = tests_json(Path(tmp.name) / "tests.json", {
            "Gpu/Determinism.Bitwise/A": ["determinism", "gpu"],
            "TorchPython.DocumentedDeterminismList": ["pytorch", "gpu", "cpu"],
            "Cpu/Determinism.Bitwise/A": ["determinism", "cpu"]})

    def test_a_test_of_both_devices_does_not_make_a_gpu_run(self) -> None:
        ev = Evidence()
        ev.results = {"Gpu/Determinism.Bitwise/A": {"outcome": "skipped", "message": "no CUDA device"},
                      "TorchPython.DocumentedDeterminismList": {"outcome": "passed"},
                      "Cpu/Determinism.Bitwise/A": {"outcome": "passed"}}
        why = required_ran(ev, self.tests, "cuda")
        self.assertIsNotNone(why)
        self.assertIn("none of the 1 cuda tests ran, e.g. Gpu/Determinism.Bitwise/A: no CUDA device", why)
        self.assertIsNone(required_ran(ev, self.tests, "cpu"))
        ev.results["Gpu/Determinism.Bitwise/A"] = {"outcome": "passed"}
        self.assertIsNone(required_ran(ev, self.tests, "cuda"))


if __name__ == "__main__":
    unittest.main()
