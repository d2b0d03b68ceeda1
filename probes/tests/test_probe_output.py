"""The probe output's schema (probes/probe_output.schema.json) holds
real outputs: a few cheap probes run as the TorchPython tests run them
(torch_backends.py PROBE, in a fresh interpreter), with the managed torch
and with the system's (skipped, with why, where one is missing); and it
refuses outputs that its reader (suites/pytorch_python_test.cc) would
misread."""

from __future__ import annotations

import copy
import json
import os
import sys
import unittest
from pathlib import Path

PROBES = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(PROBES))
import children  # noqa: E402

try:
    import jsonschema
except ImportError:
    jsonschema = None

SCHEMA = json.loads((PROBES / "probe_output.schema.json").read_text())
# The interpreters under test: the torch the harness installs, and the
# system's (Debian's torch 1.13 on Python 3.11).
TORCHES = {"managed": Path.home() / ".cache/backendcheck/torch-2.15.0/bin/python", "system": Path("/usr/bin/python3")}
# Cheap probes with each form of output: results (defaults, flags_scope,
# mkldnn_available), one that an old torch lacks (fp32_precision: not
# evaluated on 1.13), one that needs a CUDA device (not evaluated here),
# and no such probe.
CHEAP = ("defaults", "flags_scope", "mkldnn_available", "fp32_precision", "cudnn_bench_limit", "no_such_probe")
# What each exit status prints (torch_backends.py's docstring).
FORM = {0: "result", 1: "error", 3: "error", 4: "error"}

RESULT = {"passed": True, "detail": "defaults as flags.def says", "torch": "2.15.0+cu132",
          "observed": {"flags": {"cudnn.benchmark": False}}, "harness_error": False, "mistrusted": "",
          "compare": {"repro_a": "a", "repro_b": "b", "a": [{"steady_ns": 1.0, "total_ns": 20}],
                      "b": [{"steady_ns": 2.0, "total_ns": 40, "chosen": "engine 3"}]},
          "cross_process": {"processes": [{"env": "", "chosen": "engine 3", "digest": "d", "threads": 2}]}}


def _errors(output) -> list[str]:
    return [e.message for e in jsonschema.Draft202012Validator(SCHEMA).iter_errors(output)]


@unittest.skipIf(jsonschema is None, f"{sys.executable} has no jsonschema")
class SchemaTest(unittest.TestCase):
    def test_the_schema_is_a_draft_2020_12_schema(self) -> None:
        jsonschema.Draft202012Validator.check_schema(SCHEMA)

    def test_it_holds_each_form(self) -> None:
        self.assertEqual(_errors(RESULT), [])
        self.assertEqual(_errors({"error": "PyTorch 1.13.0a0 has no X: not evaluated", "torch": "1.13.0a0"}), [])
        self.assertEqual(_errors({"error": "usage: torch_backends.py {defaults}"}), [])

    def test_it_refuses_what_the_reader_would_misread(self) -> None:
        broken = {
            "passed as a word": dict(RESULT, passed="true"),
            "no torch": {k: v for k, v in RESULT.items() if k != "torch"},
            "a key no reader knows": dict(RESULT, verdict="holds"),
            "mistrusted not a text": dict(RESULT, mistrusted=None),
            "an empty error": {"error": ""},
            "a result and an error": dict(RESULT, error="x"),
            "a sample field the reader refuses": dict(RESULT, compare=dict(RESULT["compare"], a=[{"steady": 1}])),
            "no samples": dict(RESULT, compare=dict(RESULT["compare"], b=[])),
            "no processes": dict(RESULT, cross_process={"processes": []}),
            "threads not a whole number": dict(RESULT, cross_process={"processes": [{"threads": 1.5}]}),
        }
        for name, output in broken.items():
            with self.subTest(name):
                self.assertNotEqual(_errors(output), [], name)
        self.assertEqual(_errors(copy.deepcopy(RESULT)), [], "the controls' base holds")


@unittest.skipIf(jsonschema is None, f"{sys.executable} has no jsonschema")
class RealOutputTest(unittest.TestCase):
    def check(self, which: str) -> None:
        python = TORCHES[which]
        if not python.exists():
            self.skipTest(f"no {which} torch: {python} is missing")
        if children.run([str(python), "-c", "import torch"], timeout=120).failure:
            self.skipTest(f"{python} cannot import torch")
        env = {k: v for k, v in os.environ.items() if k != "BACKENDCHECK_PROBE_FAULT"}
        for probe in CHEAP:
            with self.subTest(probe=probe):
                ran = children.run([str(python), str(PROBES / "torch_backends.py"), probe], env, timeout=300)
                self.assertIn(ran.code, FORM, ran.failure)
                line = json.loads(ran.stdout.strip().splitlines()[-1])
                self.assertEqual(_errors(line), [], line)
                self.assertEqual("passed" in line, FORM[ran.code] == "result", line)
                if ran.code == 3:
                    self.assertTrue(line["error"].endswith(": not evaluated"), line)
        # The probe's own failure (exit 4), injected as the harness's tests do.
        ran = children.run([str(python), str(PROBES / "torch_backends.py"), "defaults"],
                           dict(env, BACKENDCHECK_PROBE_FAULT="defaults"), timeout=300)
        self.assertEqual(ran.code, 4, ran.failure)
        self.assertEqual(_errors(json.loads(ran.stdout)), [])

    def test_the_managed_torch(self) -> None:
        self.check("managed")

    def test_the_system_torch(self) -> None:
        self.check("system")


if __name__ == "__main__":
    unittest.main()
