"""Lists spelled in two places, pinned to each other: the fixtures of
generators/fixtures.py against suites/fixtures.h, the TEST_Ps and CMake's
test binaries and labels; the probes of probes/ against their
declarations (probes/declared.toml) and the claims' tests; and inputs/repro.py's
split of a repro string against the C++ that owns it (bc_problem)."""

from __future__ import annotations

import ast
import fnmatch
import json
import os
import re
import subprocess
import unittest
from dataclasses import replace
from pathlib import Path

from generators.fixtures import BINARIES, FIXTURES
from inputs.probes import DECLARED, Probe, load_declared
from inputs.repro import split_repro
from reports.catalog import load_catalog

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
    tree = ast.parse((ROOT / "probes" / f"{module}.py").read_text(encoding="utf-8"))
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


def _own_probes(module: str) -> dict[str, str]:
    """The keys of the PROBES dict a probe module writes itself (its
    `**other.PROBES` aside), each with the name of the function it runs
    where that function is defined or imported in the module ("" where
    not), read without importing torch."""
    tree = ast.parse((ROOT / "probes" / f"{module}.py").read_text(encoding="utf-8"))
    defined = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    defined |= {(a.asname or a.name).split(".")[0] for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))
                for a in n.names}
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "PROBES" for t in node.targets):
            return {k.value: (v.id if isinstance(v, ast.Name) and v.id in defined else "")
                    for k, v in zip(node.value.keys, node.value.values) if k is not None}
    return {}


def _undeclared(declared: list[Probe]) -> list[str]:
    """What the declarations say that their modules do not: a probe its
    module's PROBES lacks, or whose entry runs no function of the module."""
    wrong = []
    for p in declared:
        own = _own_probes(p.module)
        if p.name not in own:
            wrong.append(f"{p.full_name}: {p.module}.py's PROBES has no {p.name}")
        elif not own[p.name]:
            wrong.append(f"{p.full_name}: {p.module}.py's PROBES runs no function of its own for {p.name}")
    return wrong


def _hand_written_tests() -> set[str]:
    """The TorchPython tests suites/pytorch_python_test.cc writes itself
    (those that run no declared probe)."""
    text = (ROOT / "suites" / "pytorch_python_test.cc").read_text(encoding="utf-8")
    return {f"TorchPython.{t}" for t in re.findall(r"^TEST\(TorchPython, (\w+)\)", text, re.MULTILINE)}


class ProbesTest(unittest.TestCase):
    """PyTorch's probes are declared once (probes/declared.toml): each
    declaration names a probe its module runs, every probe is declared, and
    every claim's TorchPython test is one."""

    def setUp(self) -> None:
        self.declared = load_declared(DECLARED)

    def test_every_declared_probe_is_a_function_of_its_modules_probes(self) -> None:
        self.assertEqual(_undeclared(self.declared), [])

    def test_a_wrong_declaration_would_be_seen(self) -> None:
        # The control: a name no module registers, and one in another module.
        wrong = [replace(self.declared[0], name="no_such_probe"), replace(self.declared[0], module="settings")]
        self.assertEqual(len(_undeclared(wrong)), 2, _undeclared(wrong))

    def test_every_probe_is_declared_once(self) -> None:
        run = {p.name for p in self.declared}
        self.assertEqual(len(run), len(self.declared))
        # A probe run by a test of its own making (the guard's bare interpreter).
        own = _probes() - run
        self.assertEqual(own, {"same_torch"})
        self.assertIn('"same_torch"', (ROOT / "suites" / "pytorch_python_test.cc").read_text(encoding="utf-8"))

    def test_the_test_file_runs_no_probe_but_the_declared_ones(self) -> None:
        text = (ROOT / "suites" / "pytorch_python_test.cc").read_text(encoding="utf-8")
        self.assertTrue('#include "pytorch_python_probes.inc"' in text, "the test file includes no generated tests")
        self.assertEqual(re.findall(r'RunTorchProbe\("(\w+)"\)', text), [])
        self.assertEqual(_hand_written_tests() & {p.full_name for p in self.declared}, set())

    def test_every_claims_pytorch_test_is_declared(self) -> None:
        tests = {p.full_name for p in self.declared} | _hand_written_tests()
        named = [(c.id, pattern) for c in load_catalog(ROOT / "catalog" / "claims.toml") for pattern in c.tests
                 if pattern.startswith("TorchPython.")]
        self.assertGreater(len(named), 40, "the reading of the claims is broken")
        missing = [(cid, pattern) for cid, pattern in named if not fnmatch.filter(tests, pattern)]
        self.assertEqual(missing, [])
        # The control: a test no declaration names is seen.
        self.assertEqual(fnmatch.filter(tests, "TorchPython.NoSuchProbe*"), [])


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
