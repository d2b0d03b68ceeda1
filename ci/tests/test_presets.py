"""CMakePresets.json: one build tree per preset and torch, the torch taken
from BACKENDCHECK_TORCH_PYTHON, test presets for the tiers, the claims and
the GPU, a workflow preset that configures, builds and tests, and no job
count pinned. Read by CMake itself (`cmake --list-presets`, which refuses a
malformed file) and by `json`."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PRESETS = ROOT / "CMakePresets.json"
TIERS = ("smoke", "ci", "nightly")


def presets() -> dict:
    return json.loads(PRESETS.read_text())


def by_name(kind: str) -> dict[str, dict]:
    return {p["name"]: p for p in presets().get(kind, [])}


def resolved(kind: str, name: str, key: str):
    """A preset's `key`, following `inherits` as CMake does (first parent wins)."""
    table = by_name(kind)
    todo = [name]
    while todo:
        p = table[todo.pop(0)]
        if key in p:
            return p[key]
        parents = p.get("inherits", [])
        todo[:0] = [parents] if isinstance(parents, str) else parents
    return None


def cache_variables(name: str) -> dict:
    """A configure preset's cache variables, merged over its parents' as CMake merges them."""
    p = by_name("configurePresets")[name]
    parents = p.get("inherits", [])
    merged: dict = {}
    for parent in reversed([parents] if isinstance(parents, str) else parents):
        merged.update(cache_variables(parent))
    merged.update(p.get("cacheVariables", {}))
    return merged


class PresetsTest(unittest.TestCase):
    def test_cmake_reads_them(self):
        if not shutil.which("cmake"):
            self.skipTest("no cmake on PATH")
        r = subprocess.run(["cmake", "--list-presets=all"], cwd=ROOT, capture_output=True, text=True, check=False)
        self.assertEqual(r.returncode, 0, r.stderr)
        for name in ("ci", "smoke", "nightly", "gpu", "claims", "run"):
            self.assertIn(f'"{name}"', r.stdout)

    def test_one_tree_per_preset_and_torch(self):
        for name in by_name("configurePresets"):
            binary = resolved("configurePresets", name, "binaryDir")
            self.assertIn("${presetName}", binary, name)
            self.assertIn("$env{BACKENDCHECK_TORCH_PYTHON}", binary, name)
            cache = cache_variables(name)
            self.assertEqual(cache["BACKENDCHECK_TORCH_PYTHON"], "$env{BACKENDCHECK_TORCH_PYTHON}")

    def test_no_job_count_pinned(self):
        for kind in ("buildPresets", "testPresets"):
            for name, p in by_name(kind).items():
                self.assertNotIn("jobs", p, f"{kind} {name}")
                self.assertNotIn("jobs", p.get("execution", {}), f"{kind} {name}")

    def test_tier_and_gpu_test_presets_select_their_label(self):
        for label in (*TIERS, "gpu", "claims"):
            f = resolved("testPresets", label, "filter")
            self.assertEqual(f["include"]["label"], f"^{label}$")  # -L is a regex: "ci" matches "precision"
        for tier in TIERS:  # the tier's tests alone, not the larger tiers' evidence of their claims
            self.assertEqual(resolved("testPresets", tier, "filter")["exclude"]["fixtures"], {"setup": "."})
        self.assertEqual(resolved("testPresets", "nightly", "configurePreset"), "nightly")
        self.assertEqual(cache_variables("nightly")["BACKENDCHECK_TIER"], "nightly")

    def test_workflow_configures_builds_and_tests(self):
        wf = by_name("workflowPresets")["ci"]
        self.assertEqual([s["type"] for s in wf["steps"]], ["configure", "build", "test"])
        configure = wf["steps"][0]["name"]
        for step in wf["steps"][1:]:
            kind = {"build": "buildPresets", "test": "testPresets"}[step["type"]]
            self.assertEqual(resolved(kind, step["name"], "configurePreset"), configure)
        # What ./backendcheck run runs: everything but the project's own tests.
        self.assertIn("selftest", resolved("testPresets", wf["steps"][2]["name"], "filter")["exclude"]["label"])

    def test_tree_matches_the_command_line(self):
        try:
            from cli import builds
        except ImportError:
            self.skipTest("the command line's package is not here")
        torch = "/usr/bin/python3"
        binary = resolved("configurePresets", "default", "binaryDir")
        want = binary.replace("${sourceDir}", str(ROOT)).replace("${presetName}", "default") \
                     .replace("$env{BACKENDCHECK_TORCH_PYTHON}", torch)
        self.assertEqual(str(builds.tree(ROOT, "default", torch)), os.path.normpath(want))


if __name__ == "__main__":
    unittest.main()
