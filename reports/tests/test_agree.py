"""reports.tools.agree: two reports that differ only in measured numbers and in
changes set aside as noise agree; a verdict, a card line or a real change
that differs is named, and the exit status says so; a report reduced to what
the comparison reads compares as the whole report does.

And the harness's own changes of how cases run do not move a verdict: this
machine's two-torch reports (reports/tests/data/agree/: one process per
case, cases in batches, and in batches with PyTorch's probes forked) give
the same verdicts, but for claims judged by a timed ratio, which may move
between decided and inconclusive run to run (their flip rates,
reports/tools/flip_rates.py), never from one side to the other."""

from __future__ import annotations

import copy
import json
import tempfile
import unittest
from pathlib import Path

from reports.catalog import load_catalog
from reports.tools import agree

ROOT = Path(__file__).resolve().parents[2]
AGREE = ROOT / "reports" / "tests" / "data" / "agree"
# One process per case, then in batches (d6cbd2d), then in batches with the
# probes forked by one interpreter (see the folder's README).
HOW_CASES_RAN = ("one-process.json", "batched.json", "batched-forked.json")


def report() -> dict:
    figure = {"claim": "mkldnn-accel", "text": "steady_ns with / without the setting: median 0.528",
              "timing": {"median": 0.528}}
    line = {"goal": "speed", "setting": "torch.backends.mkldnn.enabled = True", "says": "set: faster here",
            "verdict": "supported", "claims": [{"id": "mkldnn-accel", "verdict": "supported"}],
            "figures": [figure], "cost": [], "error": []}
    change = {"kind": "kernel", "what": "Cpu/D.B/Fwd: kernel", "cause": "the model's oneDNN: 2.6.3 against 3.2.0",
              "noise": "", "sides": [{"observed": "jit:avx2"}, {"observed": "brg:avx2"}]}
    noise = {"kind": "speed", "what": "S/C/Fwd moved down", "cause": "a speed ratio", "noise": "stayed below 1"}
    return {"claims": [{"id": "mkldnn-accel", "verdict": "supported", "platforms": {"vm (avx2)": "supported"},
                        "prediction": {"verdict": "supported", "reason": "median 0.41"}}],
            "card": {"vm (avx2)": {"sections": [{"goal": "speed", "lines": [line]}],
                                   "invariance": [{"level": "batch size", "says": "Invariant here", "ops": "sum"}],
                                   "not_evaluated": []}},
            "changes_grouped": {"groups": [{"cause": change["cause"], "changes": [change]},
                                           {"cause": "a speed ratio", "changes": [noise]}]}}


class AgreeTest(unittest.TestCase):
    def test_measured_numbers_and_noise_do_not_count(self) -> None:
        a, b = report(), report()
        b["card"]["vm (avx2)"]["sections"][0]["lines"][0]["figures"][0]["text"] = "median 0.611"
        b["claims"][0]["prediction"]["reason"] = "median 0.47"
        b["changes_grouped"]["groups"][0]["changes"][0]["sides"][0]["observed"] = "jit:avx2 (other digits)"
        b["changes_grouped"]["groups"][1]["changes"] = []
        self.assertEqual(agree.differences(a, b), [])

    def test_a_verdict_a_card_line_and_a_real_change_are_named(self) -> None:
        a = report()
        b = copy.deepcopy(a)
        b["claims"][0]["platforms"]["vm (avx2)"] = "inconclusive"
        b["card"]["vm (avx2)"]["sections"][0]["lines"][0]["says"] = "mixed or within noise here"
        b["changes_grouped"]["groups"][0]["changes"].append(
            {"kind": "census", "what": "OpInfo census: sgn", "cause": "a finding of the OpInfo census", "noise": ""})
        found = agree.differences(a, b)
        self.assertEqual(len(found), 4, found)
        self.assertTrue(found[0].startswith("verdict mkldnn-accel [vm (avx2)]: supported against inconclusive"))
        self.assertTrue(any(x.startswith("card line only in the first") for x in found))
        self.assertTrue(any(x.startswith("real change only in this one: census: OpInfo census: sgn") for x in found))

    def test_exit_status(self) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            paths = [Path(tmp) / f"{i}.json" for i in range(3)]
            changed = report()
            changed["claims"][0]["verdict"] = "refuted"
            for path, r in zip(paths, (report(), report(), changed)):
                path.write_text(json.dumps(r))
            self.assertEqual(agree.main([str(p) for p in paths[:2]]), 0)
            self.assertEqual(agree.main([str(p) for p in paths]), 1)
            (Path(tmp) / "bad.json").write_text("{")
            self.assertEqual(agree.main([str(paths[0]), str(Path(tmp) / "bad.json")]), 2)

    def test_a_reduced_report_compares_as_the_whole(self) -> None:
        a, b = report(), report()
        b["claims"][0]["platforms"]["vm (avx2)"] = "inconclusive"
        b["card"]["vm (avx2)"]["sections"][0]["lines"][0]["says"] = "mixed or within noise here"
        self.assertEqual(agree.differences(agree.reduced(a), agree.reduced(b)), agree.differences(a, b))
        self.assertNotIn("figures", json.dumps(agree.reduced(a)["claims"]))
        self.assertNotIn("median 0.41", json.dumps(agree.reduced(a)), "no measured number is kept")


def unexplained(first: dict, other: dict, timed: set[str]) -> list[str]:
    """The verdicts that differ between two reports other than a timed
    ratio's move between decided and inconclusive."""
    va, vb = agree.verdicts(first), agree.verdicts(other)
    out = []
    for key in sorted(set(va) | set(vb)):
        a, b = va.get(key, "absent"), vb.get(key, "absent")
        if a != b and not (key.split(" ", 1)[0] in timed and "inconclusive" in (a, b) and "absent" not in (a, b)):
            out.append(f"{key}: {a} against {b}")
    return out


class HowCasesRunTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.timed = {c.id for c in load_catalog(ROOT / "catalog" / "claims.toml") if c.rule == "ratio"}
        cls.reports = {name: json.loads((AGREE / name).read_text()) for name in HOW_CASES_RAN}

    def test_the_same_verdicts_however_the_cases_ran(self) -> None:
        first = self.reports[HOW_CASES_RAN[0]]
        self.assertGreater(len(agree.verdicts(first)), 200)
        self.assertEqual(len(first["card"]), 2, "two torch installs")
        for name in HOW_CASES_RAN[1:]:
            with self.subTest(report=name):
                self.assertEqual(unexplained(first, self.reports[name], self.timed), [])

    def test_a_verdict_that_moved_is_caught(self) -> None:
        first = copy.deepcopy(self.reports[HOW_CASES_RAN[0]])
        ratio = next(c for c in first["claims"] if c["id"] in self.timed)
        ratio["verdict"] = "supported"
        moved = copy.deepcopy(first)
        claim = next(c for c in moved["claims"] if c["id"] not in self.timed and c["verdict"] == "supported")
        claim["verdict"] = "refuted"
        next(c for c in moved["claims"] if c["id"] == ratio["id"])["verdict"] = "refuted"
        self.assertEqual(unexplained(first, moved, self.timed),
                         sorted([f"{claim['id']}: supported against refuted", f"{ratio['id']}: supported against "
                                 "refuted"]), "a timed ratio that changes sides is caught too")


if __name__ == "__main__":
    unittest.main()
