"""reports.tools.agree: two reports that differ only in measured numbers and in
changes set aside as noise agree; a verdict, a card line or a real change
that differs is named, and the exit status says so."""

from __future__ import annotations

import copy
import json
import tempfile
import unittest
from pathlib import Path

from reports.tools import agree


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


if __name__ == "__main__":
    unittest.main()
