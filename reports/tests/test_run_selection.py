"""run leaves out the tests labelled selftest; the check that no claim's
evidence does is shown catching one that would. A test labelled torch-free
(run on the first install only) that could depend on the install is caught."""

from __future__ import annotations

import unittest
from pathlib import Path

from reports.catalog import Claim
from reports.evidence import Evidence
from reports.tools.run_selection import (SELFTEST_LABEL, TORCH_FREE_LABEL, lost, not_torch_free, run_leaves_out)


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

    def test_a_torch_free_test_that_could_depend_on_the_install_is_caught(self) -> None:
        build, python = Path("/b/default-torch-2.15.0"), "/usr/bin/python3"

        def test(name, command, labels=(SELFTEST_LABEL, TORCH_FREE_LABEL), env=()):
            return {"name": name, "command": command,
                    "properties": [{"name": "LABELS", "value": list(labels)},
                                   {"name": "ENVIRONMENT", "value": list(env)}]}
        fine = test("python.reports", ["/usr/bin/python3", "-m", "unittest"],
                    env=[f"BACKENDCHECK_PROBLEM_TOOL={build}/bc_problem"])
        unlabelled = test("TorchPython.Defaults", [f"{build}/suites/cpu/pytorch_python_tests"], labels=("pytorch",))
        self.assertEqual(not_torch_free([fine, unlabelled], build, python), [])
        bad = [test("a", ["/usr/bin/python3"], labels=(TORCH_FREE_LABEL,)),
               test("b", ["/venv/bin/python", "-m", "x"]),
               test("c", ["/usr/bin/python3", "-m", "reports.tools.bench_smoke", f"{build}/backend_benchmarks"]),
               test("d", ["/usr/bin/python3"], env=[f"BACKENDCHECK_TORCH={build}/lib/libbc_pytorch.so"])]
        found = not_torch_free(bad, build, python)
        self.assertEqual([line.split(":")[0] for line in found], ["a", "b", "c", "d"])
        self.assertIn("not selftest", found[0])
        self.assertIn("not the build's own python3", found[1])
        self.assertIn("backend_benchmarks", found[2])


if __name__ == "__main__":
    unittest.main()
