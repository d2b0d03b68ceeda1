"""PyTorch's probes declared once (probes/declared.toml): the TEST
lines and the ctest properties generated from the declarations are the ones
suites/pytorch_python_test.cc and suites/cpu/pytorch_test_properties.cmake
spelled by hand before (their text at 3fb1313, kept under data/), and a bad
declaration is one line FILE:LINE: field with a non-zero exit."""

from __future__ import annotations

import re
import subprocess
import sys
import tempfile
import unittest
from dataclasses import replace
from pathlib import Path

from generators.probes import cmake_properties, test_lines
from inputs.errors import SpecError
from inputs.probes import DECLARED, load_declared

ROOT = Path(__file__).resolve().parents[2]
DATA = Path(__file__).resolve().parent / "data"
HAND_TESTS = DATA / "pytorch_python_tests-3fb1313.cc"  # the probes' TEST lines as written by hand
HAND_PROPERTIES = DATA / "pytorch_test_properties-3fb1313.cmake"
# The probes declared since those files were written (their tests are held
# to the declarations alone).
ADDED_SINCE = {"CounterExampleSearch", "CudaCounterExampleSearch", "Workload"}


def tests_in(cc: str) -> list[tuple[str, str, bool]]:
    """Each TEST(TorchPython, ...) running a probe, in order: (test, probe,
    whether it passes the build's tier to the probe)."""
    return [(test, probe, "setenv(\"BACKENDCHECK_TIER\", BC_TIER, 1);" in body)
            for test, body, probe in re.findall(r'TEST\(TorchPython, (\w+)\) \{(.*?)RunTorchProbe\("(\w+)"\);\s*\}',
                                                cc, re.S)]


def properties_in(cmake: str) -> dict[str, dict[str, str]]:
    """Test -> property -> value, over a CMake file's set_tests_properties
    calls (a later call's value replaces an earlier one, as in CMake)."""
    out: dict[str, dict[str, str]] = {}
    for names, props in re.findall(r"set_tests_properties\((.*?)PROPERTIES(.*?)\)", cmake, re.S):
        given = dict(re.findall(r'(\w+)\s+("[^"]*"|\S+)', props))
        for name in re.findall(r"\[==\[([\w.]+)\]==\]", names):
            out.setdefault(name, {}).update(given)
    # A GPU probe's bc_gpu_test, read as cmake/GpuResources.cmake sets it
    # without a resource spec (ci/tests/test_gpu_resources.py runs it in ctest).
    for name, kind, lock in re.findall(r"bc_gpu_test\(\[==\[([\w.]+)\]==\] (ALONE|SHARED)(?: LOCK ([\w.-]+))?\)", cmake):
        given = {"RESOURCE_GROUPS": '"gpus:1"'}
        if kind == "ALONE":
            given["RUN_SERIAL"] = "TRUE"
        if lock:
            given["RESOURCE_LOCK"] = lock
        out.setdefault(name, {}).update(given)
    return out


class GeneratedTest(unittest.TestCase):
    def setUp(self) -> None:
        self.declared = load_declared(DECLARED)

    def test_the_tests_are_those_written_by_hand(self) -> None:
        hand = tests_in(HAND_TESTS.read_text())
        self.assertEqual(len(hand), 61, "the reading of the hand-written tests is broken")
        generated = tests_in(test_lines(self.declared))
        self.assertEqual(ADDED_SINCE - {t for t, _, _ in generated}, set(), "a probe added since is declared")
        self.assertEqual([t for t in generated if t[0] not in ADDED_SINCE], hand)

    def test_the_properties_are_those_written_by_hand(self) -> None:
        hand = properties_in(HAND_PROPERTIES.read_text())
        self.assertEqual(len(hand), 29, "the reading of the hand-written properties is broken")
        # Since then, every GPU probe also asks for one GPU (a resource group).
        for props in hand.values():
            if props.get("LABELS") == '"pytorch;gpu"':
                props["RESOURCE_GROUPS"] = '"gpus:1"'
        generated = properties_in(cmake_properties(self.declared))
        self.assertEqual({k: v for k, v in generated.items() if k.removeprefix("TorchPython.") not in ADDED_SINCE},
                         hand)

    def test_a_changed_declaration_is_seen(self) -> None:
        # The controls: the comparisons see a timeout, a lock, a device and
        # a tier changed, and a test renamed.
        hand_props = properties_in(HAND_PROPERTIES.read_text())
        hand_tests = tests_in(HAND_TESTS.read_text())
        for i, change in ((3, {"timeout": 601}), (50, {"lock": "another"}), (0, {"device": "gpu"}),
                          (2, {"serial": True}), (13, {"processors": None})):
            changed = list(self.declared)
            changed[i] = replace(changed[i], **change)
            self.assertNotEqual(properties_in(cmake_properties(changed)), hand_props, change)
        for i, change in ((12, {"tier": False}), (5, {"test": "Renamed"}), (7, {"name": "other"})):
            changed = list(self.declared)
            changed[i] = replace(changed[i], **change)
            self.assertNotEqual(tests_in(test_lines(changed)), hand_tests, change)

    def test_the_build_writes_both_files_and_rewrites_only_a_change(self) -> None:
        with tempfile.TemporaryDirectory() as d:
            inc, cmake = Path(d) / "include" / "probes.inc", Path(d) / "probes.cmake"
            argv = [sys.executable, "-m", "generators", "probes", "--inc", str(inc), "--cmake", str(cmake),
                    str(DECLARED)]
            subprocess.run(argv, cwd=ROOT, check=True)
            self.assertEqual(inc.read_text(), test_lines(self.declared))
            self.assertEqual(cmake.read_text(), cmake_properties(self.declared))
            before = inc.stat().st_mtime_ns
            subprocess.run(argv, cwd=ROOT, check=True)
            self.assertEqual(inc.stat().st_mtime_ns, before, "an unchanged file is left alone (nothing recompiles)")


GOOD = '''\
[[probe]]
name = "build_config"
test = "BuildConfiguration"
module = "torch_backends"
'''


class BadDeclarationTest(unittest.TestCase):
    """Each bad declaration: one line naming FILE:LINE: the field, exit 1."""

    CASES = [
        (GOOD + 'timeout = true\n', 5, "probe: timeout must be seconds, a positive integer"),
        (GOOD + 'timeout = 0\n', 5, "probe: timeout must be seconds, a positive integer"),
        (GOOD + 'device = "tpu"\n', 5, "probe: device must be one of cpu, gpu"),
        (GOOD + 'labels = ["gpu"]\n', 5, "probe: unknown field 'labels'"),
        (GOOD + 'lock = "a b"\n', 5, "probe: lock must be"),
        (GOOD.replace('test = "BuildConfiguration"\n', ''), 1, "probe: test missing"),
        (GOOD.replace('"BuildConfiguration"', '"build_configuration"'), 3, "probe: test must be"),
        (GOOD + "\n" + GOOD.replace('"build_config"', '"other"'), 8,
         "probe: test 'BuildConfiguration' declared twice (first at line 3)"),
        (GOOD + "\n" + GOOD.replace('"BuildConfiguration"', '"Other"'), 7, "probe: name 'build_config' declared twice"),
        ('[probes]\nname = "x"\n', 1, "unknown top-level key 'probes'"),
        ("", 1, "no [[probe]] declared"),
        (GOOD + 'serial = "yes"\n', 5, "probe: serial must be true or false"),
    ]

    def test_each_bad_declaration_is_one_line_naming_its_line(self) -> None:
        with tempfile.TemporaryDirectory() as d:
            path = Path(d) / "declared.toml"
            for text, line, message in self.CASES:
                with self.subTest(message=message):
                    path.write_text(text)
                    with self.assertRaises(SpecError) as caught:
                        load_declared(path)
                    self.assertEqual(caught.exception.line, line, str(caught.exception))
                    self.assertIn(message, caught.exception.message)

    def test_the_command_says_it_in_one_line_and_fails(self) -> None:
        with tempfile.TemporaryDirectory() as d:
            path = Path(d) / "declared.toml"
            path.write_text(GOOD + 'timeout = "long"\n')
            r = subprocess.run([sys.executable, "-m", "generators", "probes", "--inc", str(Path(d) / "p.inc"),
                                "--cmake", str(Path(d) / "p.cmake"), str(path)], cwd=ROOT, capture_output=True,
                               text=True)
            self.assertEqual(r.returncode, 1)
            self.assertEqual(r.stderr, f"{path}:5: probe: timeout must be seconds, a positive integer\n")
            self.assertFalse((Path(d) / "p.inc").exists())

    def test_a_good_declaration_loads(self) -> None:
        # The control of the table above: the text they spoil is accepted.
        with tempfile.TemporaryDirectory() as d:
            path = Path(d) / "declared.toml"
            path.write_text(GOOD + 'device = "gpu"\ntimeout = 600\nlock = "cuda-questions-child"\n')
            (probe,) = load_declared(path)
            self.assertEqual(probe.properties(), [("LABELS", '"pytorch;gpu"'), ("TIMEOUT", "600")])
            self.assertEqual(probe.gpu_call(),
                             "bc_gpu_test([==[TorchPython.BuildConfiguration]==] SHARED LOCK cuda-questions-child)")


if __name__ == "__main__":
    unittest.main()
