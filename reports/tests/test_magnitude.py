"""A claim of a magnitude ("Without cuDNN, training is about twice as
slow": disabled-2x) holds inside the band its words allow (N/1.5 to N x 1.5
of the stated factor, reports/statistics.py ABOUT_SPREAD), is refuted
outside it whichever way, shows the measured factor beside the claimed one,
and the card gives the measured gain whatever the claim's verdict. Judged on
Compare records as suites/pytorch_python_test.cc writes them for
cudnn_choices.py's cudnn_disabled_f32 and _f16, whose reps carry the
per-rep noise of a recorded comparison."""

from __future__ import annotations

import json
import statistics
import tempfile
import unittest
from pathlib import Path

from inputs.errors import SpecError
from reports.catalog import load_catalog, stated_factor
from reports.evidence import read_evidence
from reports.pipeline import Report
from reports.page.render import write_report
from reports.statistics import ABOUT_SPREAD, band_of
from reports.tests.test_cudnn_claims import ProbeClaimsCase, environment, samples, write
from reports.verdicts import judge_all
from reports.page.folds import unfolded

ROOT = Path(__file__).resolve().parents[2]
# A recorded comparison (PyTorch 2.15's oneDNN convolution on and off, on
# the CPU): its A side and its per-rep ratios give the constructed ones
# their noise.
RECORDED = ROOT / "reports" / "tests" / "data" / "two-torch" / "torch-2.15.0" / "recorded-1.jsonl"
TESTS = ("TorchPython.CudnnDisabledTrainingSpeedF32", "TorchPython.CudnnDisabledTrainingSpeedF16")


def recorded_pair() -> tuple[list[float], list[float]]:
    """The first recorded Compare: A's steady times, and its per-rep ratios
    over their median (each about 1)."""
    for line in RECORDED.read_text().splitlines():
        r = json.loads(line)
        if "compare" in r:
            a = [float(x) for x in r["compare"]["a"]["steady_ns"]]
            ratios = [float(y) / x for x, y in zip(a, r["compare"]["b"]["steady_ns"])]
            mid = statistics.median(ratios)
            return a, [q / mid for q in ratios]
    raise AssertionError(f"{RECORDED} holds no Compare record")


def disabled(speedup: float) -> dict[str, tuple[dict, dict]]:
    """The two probes' records where cuDNN makes the training step
    `speedup` times faster: A (cudnn.enabled False) as recorded, B = A /
    speedup with the recorded rep-to-rep noise."""
    a, noise = recorded_pair()
    out = {}
    for test in TESTS:
        probe = "cudnn_disabled_" + test[-3:].lower()
        check = {"name": probe, "outcome": "passed", "detail": "measured"}
        out[test] = ({"repro": f"torch_backends.py {probe}", "system": "pytorch", "checks": [check],
                      "compare": {"a": samples(f"torch_backends.py {probe} cudnn.enabled=False", a),
                                  "b": samples(f"torch_backends.py {probe} cudnn.enabled=True",
                                               [x / speedup * q for x, q in zip(a, noise)]),
                                  "versus_flags": {"enabled": True}, "reps": len(a), "others_cpu": 0.01}},
                     {"outcome": "passed", "message": ""})
    return out


class MagnitudeTest(ProbeClaimsCase):

    def verdict(self, speedup: float, name: str):
        run = write(Path(self.tmp.name) / name, environment(True), disabled(speedup))
        ev = read_evidence([run])
        (v,) = judge_all([self.claims["disabled-2x"]], [], ev, partial=True)
        return v, Report.of([v], [], ev)

    def test_the_band_is_read_from_the_statement(self) -> None:
        c = self.claims["disabled-2x"]
        self.assertEqual(c.statement, "Without cuDNN, training is about twice as slow.")
        self.assertEqual(c.factor, 2.0)
        self.assertEqual(c.band, band_of(2.0, "below"))
        self.assertAlmostEqual(c.band[0], 1 / (2 * ABOUT_SPREAD))   # cuDNN 3x faster: B/A 1/3
        self.assertAlmostEqual(c.band[1], ABOUT_SPREAD / 2)         # 1.33x faster: B/A 3/4
        self.assertEqual(c.prediction.band, c.band, "the model's prediction is held to the same words")
        for statement, factor in (("about twice as slow", 2), ("about 3x faster", 3), ("about three times", 3),
                                  ("about 1.5× the memory", 1.5), ("about 4 times longer", 4),
                                  ("about the same", 0), ("about 10 mantissa bits", 0), ("twice as slow", 0)):
            self.assertEqual(stated_factor(statement), factor, statement)
        stated = [c for c in self.claims.values() if stated_factor(c.statement)]
        self.assertTrue(stated and all(c.band for c in stated), "every claim of a magnitude has its band")

    def test_a_factor_far_beyond_the_claimed_one_refutes_it_with_both_figures(self) -> None:
        v, report = self.verdict(3.9, "far")
        self.assertEqual(v.verdict, "refuted", v.reason)
        self.assertEqual(v.decided_by, "pytorch")
        self.assertIn("0 of 2 decisively for, 2 against", v.reason)
        self.assertRegex(v.reason, r"B/A = 0\.256 .*: measured A/B 3\.9x \[[\d.]+x, [\d.]+x\]")
        self.assertIn("against about 2x claimed (1.33x to 3x)", v.reason)
        (card,) = report.cards.values()
        (line,) = [x for s in card["sections"] for x in s["lines"]]
        # The setting is still the faster one: the card recommends it, and
        # gives the measured gain beside the claim's refuted magnitude.
        self.assertEqual((line["goal"], line["says"], line["verdict"]), ("speed", "for speed: faster here", "supported"))
        self.assertEqual(line["claims"], [{"id": "disabled-2x", "verdict": "refuted"}])
        (gain,) = line["figures"]
        self.assertTrue(gain["text"].startswith("3.9× faster (median) on 2 of 2 shapes;"), gain["text"])
        self.assertIn("the claim's magnitude refuted: measured A/B 3.9", gain["text"])
        self.assertAlmostEqual(gain["timing"]["median"], 1 / 3.9, delta=0.01)
        page = unfolded(write_report(Path(self.tmp.name) / "page", report).read_text())
        self.assertIn("band 0.333", page, "the interval plot draws the band's two edges")
        self.assertIn("band 0.75", page)

    def test_a_factor_about_the_claimed_one_supports_it(self) -> None:
        v, report = self.verdict(2.1, "about")
        self.assertEqual(v.verdict, "supported", v.reason)
        self.assertRegex(v.reason, r"measured A/B 2\.1x \[[\d.]+x, [\d.]+x\] against about 2x claimed")
        (card,) = report.cards.values()
        (line,) = [x for s in card["sections"] for x in s["lines"]]
        self.assertEqual((line["says"], line["claims"][0]["verdict"]), ("for speed: faster here", "supported"))

    def test_no_gain_refutes_it_and_the_card_says_so(self) -> None:
        """The positive control of the band's other edge: cuDNN no faster
        than the native kernels refutes "about twice" as a 3.9x gain does,
        and the card then does not recommend it for speed."""
        v, report = self.verdict(1.0, "none")
        self.assertEqual(v.verdict, "refuted", v.reason)
        self.assertIn("measured A/B 1", v.reason)
        (card,) = report.cards.values()
        (line,) = [x for s in card["sections"] for x in s["lines"]]
        self.assertEqual(line["says"], "no measurable difference in time here")

    def test_a_factor_at_the_band_s_edge_is_not_decided(self) -> None:
        v, _ = self.verdict(3.0, "edge")
        self.assertEqual(v.verdict, "inconclusive", v.reason)


class MagnitudeCatalogTest(unittest.TestCase):
    CLAIM = ('[[claim]]\nid = "a"\nstatement = "{statement}"\nsource = "s"\nkind = "folklore"\nabout = "any"\n'
             '[claim.evidence]\nrule = "{rule}"\nsystem = "any"\n{extra}tests = ["T.*"]\n')

    def load(self, statement: str, rule: str, extra: str) -> list:
        with tempfile.TemporaryDirectory() as tmp:
            p = Path(tmp) / "claims.toml"
            p.write_text(self.CLAIM.format(statement=statement, rule=rule, extra=extra))
            return load_catalog(p)

    def test_a_magnitude_above_one_side(self) -> None:
        (c,) = self.load("B takes about three times as long", "ratio",
                         'metric = "steady_ns"\nsupports_when = "above"\n')
        self.assertEqual((c.factor, c.band), (3.0, (2.0, 4.5)))

    def test_a_bound_beside_a_magnitude_or_a_magnitude_without_a_ratio_is_refused_with_its_line(self) -> None:
        for statement, rule, extra, field, line in (
                ("about twice as slow", "ratio", 'metric = "steady_ns"\nbound = 0.67\nsupports_when = "below"\n',
                 "remove bound", 11),
                ("about twice as slow", "fact", "", 'rule = "ratio"', 8)):
            with self.subTest(rule=rule), self.assertRaises(SpecError) as e:
                self.load(statement, rule, extra)
            self.assertRegex(str(e.exception), rf"claims\.toml:{line}:")
            self.assertIn(field, str(e.exception))


if __name__ == "__main__":
    unittest.main()
