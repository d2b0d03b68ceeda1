"""Reasons in the reader's terms (reports/wording.py): shown catching the
call sites that evidence recorded before the fix, and passing clean ones."""

from __future__ import annotations

import unittest
from pathlib import Path

from reports import wording
from reports.evidence import read_evidence, read_manifest
from reports.pipeline import Report
from reports.catalog import load_catalog
from reports.render import to_json
from reports.verdicts import judge_all

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "reports" / "tests" / "data" / "two-torch"


class WordingTest(unittest.TestCase):
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
        claims = load_catalog(ROOT / "suites" / "claims.toml")
        ev = read_evidence([DATA / "torch-1.13.0a0", DATA / "torch-2.15.0"])
        manifest = read_manifest(DATA / "cases.json")
        data = to_json(Report.of(judge_all(claims, manifest, ev, partial=True), manifest, ev))
        self.assertGreater(len(wording.reasons(data)), 100)
        self.assertEqual(wording.problems(data), [])
        defaults = next(c for c in data["claims"] if c["id"] == "defaults")
        self.assertIn("TorchPython.DefaultsAreTheDocumentedOnes held: PyTorch", defaults["reason"])


if __name__ == "__main__":
    unittest.main()
