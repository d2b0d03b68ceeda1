"""The "What to set on this stack" card, derived from recorded evidence:
reports/tests/data/two-torch holds, for torch 1.13.0a0 (Debian) and
2.15.0+cu132 (PyPI) on one 2-thread AVX-512 machine, the records of the
mkldnn speed comparisons, the TorchPython probes and one CPU no-op case, as
`./backendcheck test` wrote them (recorded-1.jsonl), and of the comparisons
with and without use_deterministic_algorithms (recorded-2.jsonl)."""

from __future__ import annotations

import json
import random
import statistics
import tempfile
import unittest
from pathlib import Path

from inputs.errors import SpecError
from reports.card import cards
from reports.catalog import load_catalog
from reports.evidence import read_evidence
from reports.statistics import paired_ratios
from reports.tests.test_reports import claim, environment, write_run
from reports.verdicts import judge_all

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "reports" / "tests" / "data" / "two-torch"


def _line(card: dict, goal: str, setting_starts: str) -> dict:
    found = [x for s in card["sections"] for x in s["lines"]
             if x["goal"] == goal and x["setting"].startswith(setting_starts)]
    assert len(found) == 1, (goal, setting_starts, card)
    return found[0]


def _compare_medians(run: Path, name: str = "recorded-1.jsonl") -> list[float]:
    """Each comparison's median paired ratio B/A, read straight from the
    records (not through the verdict engine)."""
    out = []
    for line in (run / name).read_text().splitlines():
        r = json.loads(line)
        if r.get("kind") == "case" and "compare" in r:
            out.append(statistics.median(paired_ratios(r["compare"]["a"]["steady_ns"], r["compare"]["b"]["steady_ns"])))
    return out


class RecordedCardTest(unittest.TestCase):
    def setUp(self) -> None:
        manifest = json.loads((DATA / "cases.json").read_text())["cases"]
        self.ev = read_evidence([DATA / "torch-1.13.0a0", DATA / "torch-2.15.0"])
        self.verdicts = judge_all(load_catalog(ROOT / "catalog" / "claims.toml"), manifest, self.ev, partial=True)
        self.cards = cards(self.verdicts, list(self.ev.platforms))
        self.by_torch = {p.rsplit("torch", 1)[-1].rstrip(")"): c for p, c in self.cards.items()}

    def test_one_card_per_platform_and_torch(self) -> None:
        self.assertEqual(sorted(self.by_torch), ["1.13.0a0", "2.15.0_cu132"])

    def test_reproducibility_lines_name_their_claims_and_their_measured_cost(self) -> None:
        for torch, run in (("1.13.0a0", "torch-1.13.0a0"), ("2.15.0_cu132", "torch-2.15.0")):
            det = _line(self.by_torch[torch], "reproducibility", "torch.use_deterministic_algorithms(True)")
            self.assertEqual((det["heading"], det["says"]), ("set", "for bitwise reproducibility"))
            self.assertEqual(sorted(c["id"] for c in det["claims"]), ["det-alg-raises", "det-only-conv"],
                             "claims naming one setting share its line")
            [cost] = det["cost"]
            self.assertEqual(cost["claim"], "det-alg-slower")
            medians = _compare_medians(DATA / run, "recorded-2.jsonl")
            self.assertEqual(cost["timing"]["comparisons"], len(medians))
            self.assertAlmostEqual(cost["timing"]["median"], statistics.median(medians))
            self.assertTrue(cost["timing"]["setting_is_b"], "deterministic_algorithms=True is the B side")
            self.assertRegex(cost["text"], r"^no measurable difference \(\d+ shapes, all within noise: [\d.]+–[\d.]+× "
                                           r"the time\)$", "the cost as a user says it")

    def test_speed_gain_is_the_measured_ratio(self) -> None:
        """The gain is each comparison's median ratio, as the records give it;
        the verdict follows the rule of many comparisons per torch."""
        for torch, run, says in (("1.13.0a0", "torch-1.13.0a0", "for speed: faster here"),
                                 ("2.15.0_cu132", "torch-2.15.0", None)):
            line = _line(self.by_torch[torch], "speed", "torch.backends.mkldnn.enabled = True")
            self.assertEqual([c["id"] for c in line["claims"]], ["mkldnn-accel"])
            t = line["figures"][0]["timing"]
            medians = _compare_medians(DATA / run)
            self.assertEqual(t["comparisons"], len(medians))
            self.assertAlmostEqual(t["median"], statistics.median(medians))
            self.assertAlmostEqual(t["low"], min(medians))
            self.assertAlmostEqual(t["high"], max(medians))
            self.assertTrue(t["setting_is_b"], "mkldnn.enabled=True is the Compare's B side")
            self.assertEqual(t["b"], "mkldnn.enabled=True")
            pv = next(v for v in self.verdicts if v.claim.id == "mkldnn-accel").platforms
            verdict = next(v.verdict for p, v in pv.items() if p.endswith(torch + ")"))
            if says:
                self.assertEqual(line["verdict"], verdict)
                self.assertEqual(line["says"], says)
            faster = sum(f.figures.get("outcome") == "supported" for v in pv.values() if v.verdict == verdict
                         for f in v.facts if "ratio" in f.figures)
            self.assertEqual(t["faster"], faster)
        # On these records torch 1.13 is decisively faster with mkldnn in a
        # majority of comparisons and never slower: supported.
        self.assertEqual(_line(self.by_torch["1.13.0a0"], "speed", "torch.backends.mkldnn")["verdict"], "supported")

    def test_no_effect_lines_and_what_could_not_be_evaluated(self) -> None:
        for card in self.cards.values():
            noop = _line(card, "no effect", "torch.backends flags, to choose the device")
            self.assertEqual((noop["heading"], noop["says"], [c["id"] for c in noop["claims"]]),
                             ("no effect", "no effect here", ["no-gpu-switch"]))
            waiting = {c["id"] for w in card["not_evaluated"] for c in w["claims"]}
            self.assertIn("det-bitwise", waiting)
            # These recordings predate the search for counter-examples: "no
            # effect" everywhere is not said on the generated cases alone.
            self.assertEqual([w["why"] for w in card["not_evaluated"] if any(c["id"] == "cpu-noop" for c in w["claims"])],
                             ["not evaluated: no search for a counter-example ran"])
            lined = {c["id"] for s in card["sections"] for x in s["lines"] for c in x["claims"]}
            self.assertFalse(waiting & lined, "a claim is either on a line or waiting, not both")
            carded = {c.id for c in load_catalog(ROOT / "catalog" / "claims.toml") if c.card}
            self.assertEqual(waiting | lined, carded, "every carded claim shows on every card")

    def test_a_failing_no_op_case_says_the_flags_have_an_effect(self) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            altered = Path(tmp) / "torch-2.15.0"
            altered.mkdir()
            text = (DATA / "torch-2.15.0" / "recorded-1.jsonl").read_text()
            lines = [json.loads(x) for x in text.splitlines()]
            for r in lines:
                if r.get("kind") == "result" and r["test"].startswith("PytorchNoop/"):
                    r["outcome"], r["message"] = "failed", "digests differ"
            (altered / "recorded-1.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines))
            manifest = json.loads((DATA / "cases.json").read_text())["cases"]
            ev = read_evidence([altered])
            verdicts = judge_all(load_catalog(ROOT / "catalog" / "claims.toml"), manifest, ev, partial=True)
            card = next(iter(cards(verdicts, list(ev.platforms)).values()))
        noop = _line(card, "no effect", "torch.backends.cudnn flags")
        self.assertEqual((noop["verdict"], noop["heading"], noop["says"]), ("refuted", "do not set", "it has an effect here"))
        self.assertEqual([h["claim"] for h in noop["harm"]], ["cpu-noop"], "the harm is the refuting line")


class CostTest(unittest.TestCase):
    """A reproducibility line priced by its cost claim's comparisons, on
    either side of the Compare."""

    def run_of(self, factor: float, tmp: Path) -> Path:
        rng = random.Random(5)
        records = {}
        for shape in ("S1", "S2", "S3"):
            a = [1000 * rng.lognormvariate(0, 0.01) for _ in range(9)]
            b = [x * factor * rng.lognormvariate(0, 0.01) for x in a]
            records[f"X/Compare.SideBySide/{shape}"] = [{"repro": shape, "compare": {
                "a": {"repro": shape, "steady_ns": a}, "b": {"repro": shape, "steady_ns": b},
                "versus_flags": {"cudnn.deterministic": True}}}]
        records["D.Bitwise"] = [{"repro": "d"}]
        return write_run(tmp / f"run-{factor}", environment("m1"), records)

    def test_the_cost_is_the_setting_over_the_other_side(self) -> None:
        det = claim(id="det", tests=["D.*"], card={"goal": "reproducibility", "setting": "deterministic = True",
                                                   "cost": "slower"})
        for supports_when, factor, expect in (("above", 1.5, 1.5), ("below", 0.5, 2.0)):
            slower = claim(id="slower", rule="ratio", metric="steady_ns", supports_when=supports_when,
                           tests=["X/*"])
            with tempfile.TemporaryDirectory() as tmp:
                ev = read_evidence([self.run_of(factor, Path(tmp))])
            card = next(iter(cards(judge_all([det, slower], [], ev), list(ev.platforms)).values()))
            line = _line(card, "reproducibility", "deterministic = True")
            self.assertEqual(line["heading"], "set")
            cost = line["cost"][0]
            self.assertEqual((cost["claim"], cost["verdict"]), ("slower", "supported"))
            self.assertAlmostEqual(cost["timing"]["median"], expect, delta=0.05)
            self.assertEqual(cost["timing"]["slower"], 3, cost["text"])
            self.assertEqual(cost["timing"]["setting_is_b"], supports_when == "above")

    def test_an_unmeasured_cost_says_why(self) -> None:
        det = claim(id="det", tests=["D.*"], card={"goal": "reproducibility", "setting": "s", "cost": "slower"})
        slower = claim(id="slower", rule="ratio", metric="steady_ns", supports_when="above", tests=["Gpu/*"])
        with tempfile.TemporaryDirectory() as tmp:
            ev = read_evidence([write_run(Path(tmp) / "r", environment("m1"), {"D.Bitwise": [{"repro": "d"}]})])
        card = next(iter(cards(judge_all([det, slower], [], ev, partial=True), list(ev.platforms)).values()))
        cost = _line(card, "reproducibility", "s")["cost"][0]
        self.assertEqual(cost["verdict"], "not evaluated")
        self.assertIn("not measured here", cost["text"])


class ErrorTest(unittest.TestCase):
    """A speed line of a reduced precision names its measured error: the
    error against fp64 that the claims its card names recorded."""

    def test_the_error_is_the_probes_record(self) -> None:
        fast = claim(id="fast", rule="ratio", metric="steady_ns", supports_when="below", tests=["X/*"],
                     card={"goal": "speed", "setting": "bf16", "error": "precise"})
        precise = claim(id="precise", tests=["P.*"])
        run = {"matmul": {"setting": "mkldnn.matmul.fp32_precision", "precision": "bf16", "bound": 0.0171,
                          "error": {"none": 3.02e-07, "bf16": 2.1e-03}}}
        rng = random.Random(3)
        records = {f"X/Compare.SideBySide/S{i}": [{"repro": f"s{i}", "compare": {
            "a": {"repro": f"s{i}", "steady_ns": a}, "b": {"repro": f"s{i}", "steady_ns": [x * 0.5 for x in a]},
            "versus_flags": {"mkldnn.fp32_precision": "bf16"}}}]
            for i, a in enumerate([[1000 * rng.lognormvariate(0, 0.01) for _ in range(9)] for _ in range(3)])}
        records["P.Bf16"] = [{"repro": "p", "checks": [{"name": "p", "outcome": "passed", "detail": "d",
                                                         "observed": {"runs": run}}]}]
        with tempfile.TemporaryDirectory() as tmp:
            ev = read_evidence([write_run(Path(tmp) / "r", environment("m1"), records)])
        card = next(iter(cards(judge_all([fast, precise], [], ev), list(ev.platforms)).values()))
        line = _line(card, "speed", "bf16")
        [error] = line["error"]
        self.assertEqual(error["claim"], "precise")
        self.assertIn("error against fp64 0.0021 (fp32 3.02e-07, bound 0.0171)", error["text"])
        self.assertEqual(line["figures"][0]["timing"]["faster"], 3)


class CardCatalogTest(unittest.TestCase):
    BASE = ('[[claim]]\nid = "a"\nstatement = "s"\nsource = "s"\nkind = "folklore"\nabout = "any"\n'
            '[claim.evidence]\nrule = "{rule}"\nsystem = "any"\n{extra}tests = ["T.*"]\n[claim.card]\n{card}')

    def load(self, card: str, rule: str = "fact", extra: str = "") -> list:
        with tempfile.TemporaryDirectory() as tmp:
            p = Path(tmp) / "claims.toml"
            p.write_text(self.BASE.format(rule=rule, extra=extra, card=card))
            return load_catalog(p)

    def test_a_card_is_read(self) -> None:
        c = self.load('goal = "no effect"\nsetting = "x = 1"\n')[0]
        self.assertEqual(c.card, {"goal": "no effect", "setting": "x = 1"})

    def test_bad_cards_name_the_line_and_field(self) -> None:
        ratio = 'metric = "steady_ns"\nsupports_when = "below"\n'
        for card, rule, extra, field in (('goal = "fast"\nsetting = "x"\n', "fact", "", "goal"),
                                         ('goal = "speed"\nsetting = "x"\n', "fact", "", "goal"),
                                         ('goal = "speed"\nsetting = ""\n', "ratio", ratio, "setting"),
                                         ('goal = "speed"\nsetting = "x"\ncost = "a"\n', "ratio", ratio, "cost"),
                                         ('goal = "reproducibility"\nsetting = "x"\ncost = "b"\n', "fact", "", "cost"),
                                         ('goal = "no effect"\nsetting = "x"\nwhy = "y"\n', "fact", "", "why"),
                                         ('goal = "no effect"\nsetting = "x"\nerror = "a"\n', "fact", "", "error"),
                                         ('goal = "speed"\nsetting = "x"\nerror = "zz"\n', "ratio", ratio, "error")):
            with self.subTest(card=card), self.assertRaises(SpecError) as e:
                self.load(card, rule, extra)
            text = str(e.exception)
            self.assertRegex(text, r"claims\.toml:\d+:")
            self.assertIn(field, text)


if __name__ == "__main__":
    unittest.main()


class HeadingTest(unittest.TestCase):
    """Where a line goes: a speed setting by what its timed shapes say, a
    reduced precision by whether its bits changed, an error under not
    measured."""

    def speed_card(self, factors: list[float]) -> dict:
        """The card of a speed claim over shapes whose time with the setting
        (B) is `factor` times the time without it."""
        rng = random.Random(11)
        records = {}
        for i, factor in enumerate(factors):
            a = [1000 * rng.lognormvariate(0, 0.005) for _ in range(15)]
            records[f"X/Compare.SideBySide/S{i}"] = [{"repro": f"s{i}", "compare": {
                "a": {"repro": f"s{i}", "steady_ns": a},
                "b": {"repro": f"s{i}", "steady_ns": [x * factor * rng.lognormvariate(0, 0.005) for x in a]},
                "versus_flags": {"mkldnn.enabled": True}}}]
        fast = claim(id="fast", rule="ratio", metric="steady_ns", supports_when="below", tests=["X/*"],
                     card={"goal": "speed", "setting": "mkldnn on"})
        with tempfile.TemporaryDirectory() as tmp:
            ev = read_evidence([write_run(Path(tmp) / "r", environment("m1"), records)])
        return _line(next(iter(cards(judge_all([fast], [], ev), list(ev.platforms)).values())), "speed", "mkldnn on")

    def test_a_speed_setting_goes_where_most_of_its_shapes_do(self) -> None:
        for factors, heading in (([0.5] * 4 + [1.5], "set"), ([1.5] * 4 + [0.5], "do not set"),
                                 ([1.0] * 5, "no effect"), ([0.5, 0.5, 1.5, 1.5, 1.0], "undecided")):
            line = self.speed_card(factors)
            self.assertEqual(line["heading"], heading, (factors, line["figures"][0]["text"]))
        self.assertRegex(self.speed_card([0.5] * 4 + [1.5])["figures"][0]["text"],
                         r"^2× faster \(median\) on 4 of 5 shapes, slower on 1$")
        self.assertEqual(self.speed_card([1.5] * 5)["harm"][0]["claim"], "fast", "slower: the harm is its line")

    def precision_card(self, changed: bool, error: float, verdict_passes: bool) -> dict:
        run = {"conv": {"setting": "mkldnn.conv.fp32_precision", "precision": "bf16", "bound": 0.0132,
                        "changed": changed, "error": {"none": 4.27e-07, "bf16": error}}}
        bf16 = claim(id="bf16", tests=["P.*"], card={"goal": "precision", "setting": "conv in bf16"})
        records = {"P.Bf16": [{"repro": "p", "checks": [{"name": "p", "outcome": "passed" if verdict_passes else "failed",
                                                          "detail": "d", "observed": {"runs": run}}]}]}
        with tempfile.TemporaryDirectory() as tmp:
            ev = read_evidence([write_run(Path(tmp) / "r", environment("m1"), records,
                                          outcomes={"P.Bf16": "passed" if verdict_passes else "failed"})])
        return _line(next(iter(cards(judge_all([bf16], [], ev), list(ev.platforms)).values())), "precision", "conv")

    def test_a_reduced_precision_that_changes_nothing_has_no_effect_and_one_past_its_bound_is_not_to_set(self) -> None:
        line = self.precision_card(changed=True, error=2e-3, verdict_passes=True)
        self.assertEqual((line["heading"], line["verdict"]), ("set", "supported"))
        self.assertIn("error against fp64 0.002 (fp32 4.27e-07, bound 0.0132)", line["error"][0]["text"])
        line = self.precision_card(changed=False, error=4.27e-07, verdict_passes=False)
        self.assertEqual((line["heading"], line["verdict"]), ("no effect", "refuted"))
        line = self.precision_card(changed=True, error=0.5, verdict_passes=False)
        self.assertEqual((line["heading"], line["verdict"]), ("do not set", "refuted"))
        self.assertEqual(line["harm"][0]["claim"], "bf16")

    def test_an_error_is_not_measured_with_why(self) -> None:
        det = claim(id="det", tests=["D.*"], card={"goal": "reproducibility", "setting": "deterministic"})
        with tempfile.TemporaryDirectory() as tmp:
            ev = read_evidence([write_run(Path(tmp) / "r", environment("m1"), {"D.Bitwise": [{"repro": "d"}]},
                                          outcomes={"D.Bitwise": "crashed"})])
        card = next(iter(cards(judge_all([det], [], ev), list(ev.platforms)).values()))
        self.assertEqual(card["sections"], [])
        self.assertEqual([(w["why"], w["settings"]) for w in card["not_evaluated"]],
                         [("the harness could not decide it (an error: see the claim)", ["deterministic"])])
