"""GPU tests in parallel, one resource group per GPU, in real ctest (no GPU
needed): a tiny project gives its tests the properties the real GPU tests
get, from the same code (cmake/GpuResources.cmake's bc_gpu_test, with the
build's spec read by bc_gpu_resources_configure; suites/gpu/gpu_resources.cmake
for the GPU test binary's tests; the probes' CMake text from `python3 -m
generators probes`), and runs `ctest -j4` on it. Each test command writes
when it ran and the GPU ctest gave it; the checks read those times."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SLEEP_S = 1.5

# Two tests of the GPU binary (gpu_tests: each alone on its GPU), and three
# GPU probes: one serial (its timings are evidence: alone on its GPU), two
# that share a GPU.
BINARY_TESTS = ["Gpu.A", "Gpu.B"]
PROBES = '''\
[[probe]]
name = "speed"
test = "Speed"
module = "m"
device = "gpu"
serial = true

[[probe]]
name = "count_one"
test = "CountOne"
module = "m"
device = "gpu"

[[probe]]
name = "count_two"
test = "CountTwo"
module = "m"
device = "gpu"
lock = "child"
'''
PROBE_TESTS = ["TorchPython.Speed", "TorchPython.CountOne", "TorchPython.CountTwo"]
ALONE = {"Gpu.A", "Gpu.B", "TorchPython.Speed"}

# What each test runs: its start, end and GPU (CTEST_RESOURCE_GROUP_0_GPUS).
STAMP = '''\
import json, os, sys, time
start = time.time()
time.sleep(float(sys.argv[2]))
with open(sys.argv[1], "w") as f:
    json.dump({"start": start, "end": time.time(), "gpu": os.environ.get("CTEST_RESOURCE_GROUP_0_GPUS"),
               "groups": os.environ.get("CTEST_RESOURCE_GROUP_COUNT")}, f)
'''

PROJECT = '''\
cmake_minimum_required(VERSION 3.25)
project(gpu_resources NONE)
enable_testing()
set(BC_GENERATED_DIR ${{CMAKE_BINARY_DIR}}/generated)
include({root}/cmake/GpuResources.cmake)
bc_gpu_resources_configure()
# As gtest_discover_tests' script does, read by ctest before the properties:
# the tests, and the GPU binary's in gpu_tests_TESTS.
set(discovered "set(gpu_tests_TESTS {binary})\\n")
foreach(t {tests})
  string(APPEND discovered "add_test(${{t}} {python} {stamp} {out}/${{t}}.json {sleep})\\n")
endforeach()
file(WRITE ${{CMAKE_BINARY_DIR}}/discovered.cmake "${{discovered}}")
set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES ${{CMAKE_BINARY_DIR}}/discovered.cmake
  ${{BC_GENERATED_DIR}}/gpu_resources.cmake {root}/suites/gpu/gpu_resources.cmake ${{BC_GENERATED_DIR}}/probes.cmake)
'''


def spec(gpus: int, slots: int) -> dict:
    return {"version": {"major": 1, "minor": 0},
            "local": [{"gpus": [{"id": str(i), "slots": slots} for i in range(gpus)]}]}


class GpuResourcesTest(unittest.TestCase):
    def setUp(self) -> None:
        if shutil.which("cmake") is None or shutil.which("ctest") is None:
            self.skipTest("no cmake/ctest on PATH")
        self.tmp = Path(tempfile.mkdtemp())
        self.addCleanup(shutil.rmtree, self.tmp)

    def build(self, spec_json: dict | None, via_env: bool = False) -> Path:
        """Configures the project with the spec (None: without one; via_env:
        named by BACKENDCHECK_RESOURCE_SPEC, as ./backendcheck sets it,
        rather than -D) and generates the probes' CMake text into its
        generated folder."""
        src, build, out = self.tmp / "src", self.tmp / "build", self.tmp / "out"
        for d in (src, build, out):
            shutil.rmtree(d, ignore_errors=True)
            d.mkdir()
        (src / "stamp.py").write_text(STAMP)
        (src / "declared.toml").write_text(PROBES)
        (src / "CMakeLists.txt").write_text(PROJECT.format(
            root=ROOT, python=sys.executable, stamp=src / "stamp.py", out=out, sleep=SLEEP_S,
            tests=" ".join(BINARY_TESTS + PROBE_TESTS), binary=";".join(BINARY_TESTS)))
        args = ["cmake", "-S", str(src), "-B", str(build)]
        env = {k: v for k, v in os.environ.items() if k != "BACKENDCHECK_RESOURCE_SPEC"}
        if spec_json is not None:
            (src / "spec.json").write_text(json.dumps(spec_json))
            if via_env:
                env["BACKENDCHECK_RESOURCE_SPEC"] = str(src / "spec.json")
            else:
                args.append(f"-DBACKENDCHECK_GPU_RESOURCE_SPEC={src / 'spec.json'}")
        r = subprocess.run(args, capture_output=True, text=True, env=env, check=False)
        self.assertEqual(r.returncode, 0, r.stderr)
        cache = (build / "CMakeCache.txt").read_text()
        self.assertEqual(f"CTEST_RESOURCE_SPEC_FILE:INTERNAL={src / 'spec.json'}" in cache, spec_json is not None,
                         "the spec the build uses is in its cache (ci/kit_steps.py reads it there)")
        r = subprocess.run([sys.executable, "-m", "generators", "probes", "--inc", str(build / "generated" / "p.inc"),
                            "--cmake", str(build / "generated" / "probes.cmake"), str(src / "declared.toml")],
                           cwd=ROOT, capture_output=True, text=True, check=False)
        self.assertEqual(r.returncode, 0, r.stderr)
        return build

    def run_ctest(self, build: Path) -> dict[str, dict]:
        """ctest -j4, as a user runs it (no --resource-spec-file: the
        configured spec is ctest's own): each test's stamp."""
        env = {k: v for k, v in os.environ.items() if not k.startswith("CTEST_")}
        r = subprocess.run(["ctest", "--test-dir", str(build), "-j4", "--output-on-failure"], capture_output=True,
                           text=True, env=env, timeout=120, check=False)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        out = self.tmp / "out"
        return {t: json.loads((out / f"{t}.json").read_text()) for t in BINARY_TESTS + PROBE_TESTS}

    @staticmethod
    def overlaps(stamps: dict[str, dict]) -> set[frozenset[str]]:
        names = sorted(stamps)
        return {frozenset((a, b)) for i, a in enumerate(names) for b in names[i + 1:]
                if stamps[a]["start"] < stamps[b]["end"] and stamps[b]["start"] < stamps[a]["end"]}

    @staticmethod
    def gpu(stamp: dict) -> str:
        return stamp["gpu"].split(",")[0].removeprefix("id:")

    def test_two_gpus_run_two_gpu_tests_at_once_and_a_timing_test_alone_on_its_gpu(self) -> None:
        stamps = self.run_ctest(self.build(spec(2, 2)))
        for t, s in stamps.items():
            self.assertEqual(s["groups"], "1", t)
            slots = "2" if t in ALONE else "1"
            self.assertRegex(s["gpu"], rf"^id:[01],slots:{slots}$", t)
        both = self.overlaps(stamps)
        self.assertIn(frozenset(BINARY_TESTS), both, "the GPU binary's two tests run at once, one per GPU")
        self.assertNotEqual(self.gpu(stamps["Gpu.A"]), self.gpu(stamps["Gpu.B"]))
        for pair in both:
            a, b = sorted(pair)
            if ALONE & pair:
                self.assertNotEqual(self.gpu(stamps[a]), self.gpu(stamps[b]),
                                    f"{a} and {b} ran at once on one GPU, one of them a timing test")

    def test_one_gpu_runs_one_at_a_time(self) -> None:
        # The control: the same tests with one GPU of one slot never overlap.
        stamps = self.run_ctest(self.build(spec(1, 1), via_env=True))
        self.assertEqual({self.gpu(s) for s in stamps.values()}, {"0"})
        self.assertEqual(self.overlaps(stamps), set())

    def test_without_a_spec_a_timing_test_runs_alone(self) -> None:
        # ctest ignores resource groups without a spec: the tests alone on
        # their GPU are RUN_SERIAL, and the probes that share one overlap.
        stamps = self.run_ctest(self.build(None))
        self.assertTrue(all(s["gpu"] is None for s in stamps.values()))
        both = self.overlaps(stamps)
        self.assertFalse(any(ALONE & pair for pair in both), both)
        self.assertIn(frozenset(("TorchPython.CountOne", "TorchPython.CountTwo")), both)

    def test_a_spec_with_unequal_gpus_is_refused_at_configure(self) -> None:
        bad = spec(2, 2)
        bad["local"][0]["gpus"][1]["slots"] = 1
        src = self.tmp / "src"
        src.mkdir()
        (src / "spec.json").write_text(json.dumps(bad))
        (src / "CMakeLists.txt").write_text(
            f"cmake_minimum_required(VERSION 3.25)\nproject(p NONE)\nset(BC_GENERATED_DIR ${{CMAKE_BINARY_DIR}})\n"
            f"include({ROOT}/cmake/GpuResources.cmake)\nbc_gpu_resources_configure()\n")
        r = subprocess.run(["cmake", "-S", str(src), "-B", str(self.tmp / "b"),
                            f"-DBACKENDCHECK_GPU_RESOURCE_SPEC={src / 'spec.json'}"],
                           capture_output=True, text=True, check=False,
                           env={k: v for k, v in os.environ.items() if k != "BACKENDCHECK_RESOURCE_SPEC"})
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("local[0].gpus[1].slots: 1, but GPU 0 has", r.stderr)


if __name__ == "__main__":
    unittest.main()
