"""The kit's pre-flight (probes/preflight.py): what a machine lacks
for the GPU probes, one line each, and a probe whose need is missing not
evaluated with that line. The compiler and Python.h are tried as Triton
builds its launcher, with the real compiler and headers here and with a
PATH, a CC and an include directory that lack them; the pre-flight run here
names what this machine lacks, one line each."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path
from types import SimpleNamespace
from unittest import mock

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import preflight  # noqa: E402
from common import NotHere, need_device  # noqa: E402

PROBES = Path(__file__).resolve().parents[1]


class BuildTest(unittest.TestCase):
    def setUp(self) -> None:
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        self.t = Path(tmp.name)

    def test_a_compiler_and_python_h_build_an_extension_as_triton_builds_its_launcher(self) -> None:
        include = preflight.python_include()
        if not (include / "Python.h").is_file() or not preflight.c_compiler():
            self.skipTest(f"this machine has no compiler or no {include}/Python.h to build with")
        found = preflight.check_build()
        self.assertEqual((found["compiler"][0], found["python-headers"]),
                         (preflight.MET, (preflight.MET, str(include / "Python.h"))))

    def test_what_is_missing_is_named_one_line_each(self) -> None:
        bare = {"PATH": str(self.t)}  # no gcc, no clang, no CC
        found = preflight.check_build(bare, self.t)  # and no Python.h
        self.assertEqual(found["compiler"], (preflight.MISSING, "no C compiler: CC is not set and neither gcc nor "
                                                                "clang is on PATH (torch.compile on CUDA builds "
                                                                "Triton's launcher with one)"))
        self.assertEqual(found["python-headers"][0], preflight.MISSING)
        self.assertIn(f"no Python.h for {sys.executable} at {self.t}", found["python-headers"][1])
        broken = self.t / "cc"
        broken.write_text("#!/bin/sh\necho 'launcher.c:1:10: fatal error: cannot open output file' >&2\nexit 1\n")
        broken.chmod(0o755)
        (self.t / "Python.h").write_text("/* a header */\n")
        found = preflight.check_build({"PATH": os.environ["PATH"], "CC": str(broken)}, self.t)
        self.assertEqual(found["python-headers"][0], preflight.MET)
        self.assertEqual(found["compiler"], (preflight.MISSING, f"{broken} could not build an extension that "
                                                                "includes Python.h (as Triton builds its launcher): "
                                                                "launcher.c:1:10: fatal error: cannot open output "
                                                                "file"))

    def test_no_writable_temporary_directory(self) -> None:
        self.assertEqual(preflight.check_temp()[0], preflight.MET)
        nowhere = FileNotFoundError(2, "No usable temporary directory found in ['/tmp', '/var/tmp']")
        with mock.patch.object(preflight.tempfile, "gettempdir", side_effect=nowhere):
            state, why = preflight.check_temp()
        self.assertEqual(state, preflight.MISSING)
        self.assertIn("no writable temporary directory", why)
        self.assertIn("No usable temporary directory found", why)


class RequireTest(unittest.TestCase):
    def setUp(self) -> None:
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        self.file = Path(tmp.name) / "preflight.json"
        needs = {n: {"state": preflight.MET, "why": "here", "for": w} for n, w in preflight.NEEDS.items()}
        needs["compiler"] = {"state": preflight.MISSING, "why": "no C compiler: CC is not set",
                             "for": preflight.NEEDS["compiler"]}
        needs["cudnn-log"] = {"state": preflight.NOT_CHECKED, "why": "no CUDA device", "for": preflight.NEEDS["cudnn-log"]}
        needs["driver"] = {"state": preflight.MISSING, "why": "no NVIDIA driver here (nvidia-smi not found)",
                           "for": preflight.NEEDS["driver"]}
        self.file.write_text(json.dumps({"schema": 1, "needs": needs}))
        patch = mock.patch.dict(os.environ, {preflight.VARIABLE: str(self.file)})
        patch.start()
        self.addCleanup(patch.stop)

    def test_a_probe_whose_need_is_missing_is_not_evaluated_with_the_finding(self) -> None:
        self.assertEqual(preflight.lacking("compiled_cuda_eager", "compiler", "python-headers", "temp"),
                         "this machine lacks a C compiler (Triton builds torch.compile's CUDA launcher with it): "
                         "no C compiler: CC is not set (probe compiled_cuda_eager)")
        self.assertEqual(preflight.lacking("cudnn_bench_cache", "cudnn-log", "temp"), "",
                         "not checked: the probe finds out itself")
        with mock.patch.dict(os.environ, {preflight.VARIABLE: ""}):
            self.assertEqual(preflight.lacking("compiled_cuda_eager", "compiler"), "", "no pre-flight: nothing known")

    def test_a_gpu_probe_reads_the_driver_before_the_device(self) -> None:
        torch = SimpleNamespace(__version__="2.11.0+cu130", cuda=SimpleNamespace(is_available=lambda: False))
        with self.assertRaises(NotHere) as e:
            need_device(torch, "cuda_sdpa_repeatable")
        self.assertIn("lacks an NVIDIA driver for PyTorch's CUDA runtime: no NVIDIA driver here", str(e.exception))
        with mock.patch.dict(os.environ, {preflight.VARIABLE: ""}), self.assertRaises(NotHere) as e:
            need_device(torch, "cuda_sdpa_repeatable")
        self.assertEqual(str(e.exception), "needs a CUDA device: PyTorch 2.11.0+cu130 sees none (probe "
                                           "cuda_sdpa_repeatable)")

    def test_findings_that_do_not_read_are_the_harness_s_error(self) -> None:
        self.file.write_text("{not json")
        with self.assertRaises(RuntimeError) as e:
            preflight.lacking("compiled_cuda_eager", "compiler")
        self.assertIn(f"{self.file}: the pre-flight's findings do not read", str(e.exception))


class ThisMachineTest(unittest.TestCase):
    def test_the_pre_flight_names_what_this_machine_lacks_one_line_each(self) -> None:
        """With this interpreter (the build's Python, without torch on a
        machine that keeps the tests torch-free): a line for each need not
        met, PyTorch's own not checked where it cannot be imported, and on
        a machine without an NVIDIA driver the driver missing (not checked
        where the torch is a build without CUDA)."""
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "preflight.json"
            r = subprocess.run([sys.executable, str(PROBES / "preflight.py"), "--out", str(out)], capture_output=True,
                               text=True, timeout=600)
            self.assertEqual(r.returncode, 0, r.stderr)
            findings = json.loads(out.read_text())
        self.assertEqual(set(findings["needs"]), set(preflight.NEEDS))
        lines = r.stdout.splitlines()
        short = [n for n, x in findings["needs"].items() if x["state"] != preflight.MET]
        self.assertEqual(len(lines), len(short) + 1, r.stdout)
        for need, line in zip(short, lines):
            x = findings["needs"][need]
            self.assertEqual(line, f"pre-flight: {x['state']}: {need} ({preflight.NEEDS[need]}): {x['why']}")
        self.assertEqual(findings["needs"]["temp"]["state"], preflight.MET)
        try:
            import torch
        except ImportError:
            for need in ("device", "driver", "cudnn-log"):
                self.assertEqual(findings["needs"][need]["state"], preflight.NOT_CHECKED)
                self.assertIn(f"{sys.executable} cannot import torch", findings["needs"][need]["why"])
            return
        if torch.version.cuda is None:  # a build without CUDA (Debian's 1.13): no runtime to hold a driver to
            self.assertEqual(findings["needs"]["device"]["state"], preflight.MISSING)
            self.assertEqual(findings["needs"]["driver"]["state"], preflight.NOT_CHECKED)
            self.assertIn("a build without CUDA", findings["needs"]["driver"]["why"])
        elif shutil.which("nvidia-smi") is None:
            self.assertEqual(findings["needs"]["driver"]["state"], preflight.MISSING)
            self.assertIn("no NVIDIA driver here (nvidia-smi not found)", findings["needs"]["driver"]["why"])


if __name__ == "__main__":
    unittest.main()
