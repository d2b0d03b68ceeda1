"""Lists spelled in two places, pinned to each other: the fixtures of
generators/fixtures.py against suites/fixtures.h, the TEST_Ps and CMake's
test binaries and labels; the probes of suites/probes/torch_backends.py
against the tests of suites/pytorch_python_test.cc; and inputs/repro.py's
split of a repro string against the C++ that owns it (bc_problem)."""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import unittest
from pathlib import Path

from generators.fixtures import BINARIES, FIXTURES
from inputs.repro import split_repro

ROOT = Path(__file__).resolve().parents[2]


def _cmake_binaries() -> dict[str, tuple[str, ...]]:
    """Test binary -> its ctest labels: bc_test_binary's label, then the
    labels of the directory that declares it."""
    out = {}
    for path in (ROOT / "suites" / "cpu" / "CMakeLists.txt", ROOT / "suites" / "gpu" / "CMakeLists.txt"):
        text = path.read_text(encoding="utf-8")
        directory = re.findall(r"set_property\(DIRECTORY PROPERTY LABELS ([\w ]+)\)", text)
        for name, label in re.findall(r"^bc_test_binary\((\w+) (\w+)", text, re.MULTILINE):
            out[name] = (label, *directory[-1].split()) if directory else (label,)
    return out


def _probes(module: str = "torch_backends") -> set[str]:
    """The keys of a probe module's PROBES, read without importing torch; a
    `**other.PROBES` in it brings in that module's."""
    tree = ast.parse((ROOT / "suites" / "probes" / f"{module}.py").read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "PROBES" for t in node.targets):
            keys = {k.value for k in node.value.keys if k is not None}
            for key, value in zip(node.value.keys, node.value.values):
                if key is None and isinstance(value, ast.Attribute) and isinstance(value.value, ast.Name):
                    keys |= _probes(value.value.id)
            return keys
    raise AssertionError(f"{module}.py has no PROBES")


class FixturesTest(unittest.TestCase):
    def test_every_fixture_is_declared_in_the_header_and_defines_its_test(self) -> None:
        header = (ROOT / "suites" / "fixtures.h").read_text(encoding="utf-8")
        declared = set(re.findall(r"class (\w+) : public testing::TestWithParam<CaseRow>", header))
        self.assertEqual(declared, set(FIXTURES))
        sources = "".join(p.read_text(encoding="utf-8") for p in (ROOT / "suites").glob("*_test.cc"))
        for f in FIXTURES.values():
            self.assertIn(f"TEST_P({f.name}, {f.test})", sources, f"fixture {f.name}'s test {f.test}")

    def test_the_binaries_and_their_labels_are_cmakes(self) -> None:
        cmake = _cmake_binaries()
        listed = re.search(r"set\(BC_TEST_BINARIES ([\w ]+)\)", (ROOT / "CMakeLists.txt").read_text()).group(1)
        self.assertEqual(set(listed.split()), set(BINARIES))
        for name, labels in BINARIES.items():
            self.assertEqual(cmake.get(name), labels, f"{name}'s labels")
        for f in FIXTURES.values():
            self.assertLessEqual(set(f.binaries.values()), set(BINARIES), f.name)

    def test_a_mismatch_would_be_seen(self) -> None:
        # The control: the reading finds what it pins (a label dropped from
        # CMake would change this tuple).
        self.assertEqual(_cmake_binaries()["gpu_tests"], ("determinism", "gpu", "cudnn"))


class ProbesTest(unittest.TestCase):
    def test_every_probe_has_its_test_and_every_test_its_probe(self) -> None:
        tests = (ROOT / "suites" / "pytorch_python_test.cc").read_text(encoding="utf-8")
        run = set(re.findall(r'RunTorchProbe\("(\w+)"\)', tests))
        # A probe run by a test of its own making (the guard's bare interpreter).
        own = {name for name in re.findall(r'"(\w+)"', tests) if name in _probes()} - run
        self.assertTrue(run, "no RunTorchProbe call found: the reading is broken")
        self.assertEqual(run | own, _probes())
        self.assertEqual(own, {"same_torch"})


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
