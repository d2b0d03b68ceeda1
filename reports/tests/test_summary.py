"""The terminal summary of run and test, on constructed verdicts: counts per
torch, not-evaluated reasons grouped one line each, the report's path last."""

from __future__ import annotations

import unittest
from pathlib import Path

from reports.page.summary import reason_group, verdict_lines
from reports.tests.test_reports import claim
from reports.verdicts import Verdict


def verdict(cid: str, per: dict[str, tuple[str, str]]) -> Verdict:
    c = claim(id=cid)
    platforms = {p: Verdict(c, v, why, []) for p, (v, why) in per.items()}
    worst = next(iter(platforms.values()))
    return Verdict(c, worst.verdict, "; ".join(f"{p}: {v.verdict}" for p, v in platforms.items()) + ". " + worst.reason,
                   [], platforms=platforms)


class SummaryTest(unittest.TestCase):
    def test_counts_per_torch_then_grouped_reasons_then_the_page(self) -> None:
        gpu = "cudnn unavailable: cudaGetDeviceCount returned 35 (cudaErrorInsufficientDriver)"
        vs = [verdict("a", {"m-2.15": ("supported", "x"), "m-1.13": ("supported", "x")}),
              verdict("b", {"m-2.15": ("not evaluated", gpu), "m-1.13": ("not evaluated", gpu)}),
              verdict("c", {"m-2.15": ("not evaluated", "needs cudnn evidence; the model predicts supported: ..."),
                            "m-1.13": ("not evaluated", "needs cudnn evidence; the model predicts supported: ...")}),
              verdict("d", {"m-2.15": ("not evaluated", "/usr/bin/python3: PyTorch 2.15.0 sees no CUDA device"),
                            "m-1.13": ("not evaluated", "out of scope: not a backend flag")}),
              verdict("e", {"m-2.15": ("inconclusive", "x"), "m-1.13": ("not evaluated", "out of scope: y")})]
        out = verdict_lines(vs, {"m-2.15": "2.15.0", "m-1.13": "1.13.0a0"}, Path("/r/index.html"))
        self.assertEqual(out[0], "torch 2.15.0 (m-2.15): 1 supported, 1 inconclusive, 3 not evaluated")
        self.assertEqual(out[1], "torch 1.13.0a0 (m-1.13): 1 supported, 4 not evaluated")
        self.assertEqual(out[2], "  2 claim(s) need a CUDA device")
        self.assertTrue(out[3].startswith("  1 claim(s) need a CUDA device (the GPU library itself decides them"))
        self.assertEqual(out[-1], "report: /r/index.html", "the page last")
        self.assertEqual(len(out), 5, "one line per group, not per claim")

    def test_an_unknown_reason_keeps_its_first_clause(self) -> None:
        self.assertEqual(reason_group("the probe timed out: 120 s"), "not evaluated: the probe timed out")
        self.assertEqual(reason_group("out of scope: ONNX"), "are out of scope")


if __name__ == "__main__":
    unittest.main()
