"""run leaves out the tests labelled selftest; the check that no claim's
evidence does is shown catching one that would."""

from __future__ import annotations

import unittest

from reports.catalog import Claim
from reports.evidence import Evidence
from reports.run_selection import SELFTEST_LABEL, lost, run_leaves_out, script_label


def evidence() -> Evidence:
    ev = Evidence()
    ev.registered = {"Flags.DefaultsMirrorPyTorch", "Tensor.DigestIsStable", "Cpu/Determinism.Bitwise/Fwd"}
    ev.labels = {"Flags.DefaultsMirrorPyTorch": ["model", "cpu"], "Tensor.DigestIsStable": [SELFTEST_LABEL, "cpu"],
                 "Cpu/Determinism.Bitwise/Fwd": ["determinism", "cpu", "ci"]}
    return ev


class RunSelectionTest(unittest.TestCase):
    def test_run_leaves_out_the_selftests_only(self) -> None:
        self.assertEqual(run_leaves_out(evidence()), {"Tensor.DigestIsStable"})

    def test_a_claim_on_a_selftest_is_caught(self) -> None:
        fine = Claim(id="a", statement="", source="", kind="folklore", scope={}, rule="fact", tests=["Flags.*"])
        self.assertEqual(lost([fine], [], evidence()), [])
        bad = Claim(id="b", statement="", source="", kind="folklore", scope={}, rule="fact", tests=["Tensor.*"])
        self.assertEqual(len(lost([fine, bad], [], evidence())), 1)
        fine.prediction = Claim(id="a", statement="", source="", kind="folklore", scope={}, rule="fact",
                                tests=["Tensor.DigestIsStable"])
        self.assertIn("a: Tensor.DigestIsStable", lost([fine], [], evidence())[0])

    def test_the_script_leaves_out_the_same_label(self) -> None:
        self.assertEqual(script_label(), SELFTEST_LABEL)


if __name__ == "__main__":
    unittest.main()
