"""Lists and readings spelled in two places, pinned to each other:
inputs/repro.py's split of a repro string against the C++ that owns it
(bc_problem)."""

from __future__ import annotations

import json
import os
import subprocess
import unittest
from pathlib import Path

from inputs.repro import split_repro

ROOT = Path(__file__).resolve().parents[2]


class ReproTest(unittest.TestCase):
    """split_repro reads a case's repro as harness/case.cc formats it."""

    def cases(self) -> list[str]:
        manifest = json.loads((ROOT / "reports" / "tests" / "data" / "two-torch" / "cases.json").read_text())
        repros = [c["repro"] for c in manifest["cases"]]
        return repros + ["conv2d:fwd:f32:mb2ic8ih14oc8kh3*3,matmul:f32:m64n48k96 device=cpu engine=reference "
                         "algo=atomic threads=2 cudnn.benchmark=true env.ONEDNN_MAX_CPU_ISA=AVX2"]

    def test_the_split_is_the_cs(self) -> None:
        tool = os.environ.get("BACKENDCHECK_PROBLEM_TOOL", "")
        if not tool or not Path(tool).exists():
            self.skipTest("bc_problem is not built (BACKENDCHECK_PROBLEM_TOOL)")
        cases = self.cases()
        request = "".join(json.dumps({"case": r}) + "\n" for r in cases)
        answers = subprocess.run([tool], input=request, capture_output=True, text=True, check=True).stdout.splitlines()
        self.assertEqual(len(answers), len(cases))
        for repro, line in zip(cases, answers):
            answer = json.loads(line)
            self.assertNotIn("error", answer, repro)
            with self.subTest(repro=answer["repro"]):
                schedule, settings = split_repro(answer["repro"])
                self.assertEqual(schedule, answer["schedule"])
                self.assertEqual(list(settings.items()), [tuple(kv) for kv in answer["settings"]])
        self.assertTrue(any("env." in r for r in cases) and any("," in r.split(" ")[0] for r in cases))


if __name__ == "__main__":
    unittest.main()
