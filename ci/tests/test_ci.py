"""The nightly pipelines: the workflow files parse, have the shape their CI
systems need, reference scripts that exist, and those scripts run here with
--dry-run; the GPU resource spec comes out right from nvidia-smi's output."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
GITHUB = ROOT / ".github" / "workflows" / "nightly-gpu.yml"
GITLAB = ROOT / ".gitlab-ci.yml"


def scripts_in(commands: list[str]) -> list[str]:
    return [m for c in commands for m in re.findall(r"(?:^|\s)((?:ci/|\./)[\w./-]+)", c)]


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(list(args), cwd=ROOT, capture_output=True, text=True, timeout=60, check=False)


def pinned_torch() -> str:
    return re.search(r"^torch==(\S+)", (ROOT / "requirements" / "torch.txt").read_text(), re.M).group(1)


class GithubWorkflowTest(unittest.TestCase):
    def setUp(self) -> None:
        self.doc = yaml.safe_load(GITHUB.read_text())

    def test_shape(self) -> None:
        on = self.doc.get("on", self.doc.get(True))  # YAML 1.1 reads a bare `on` as true
        self.assertIn("schedule", on)
        self.assertTrue(all("cron" in s for s in on["schedule"]))
        jobs = self.doc["jobs"]
        gpu, merge = jobs["gpu"], jobs["merge"]
        self.assertGreaterEqual(len(gpu["strategy"]["matrix"]["gpu"]), 2, "a matrix over GPU types")
        self.assertIn("self-hosted", gpu["runs-on"])
        self.assertIn("${{ matrix.gpu }}", gpu["runs-on"])
        self.assertEqual(merge["needs"], "gpu")
        self.assertEqual(merge["if"], "always()")
        for name, job in jobs.items():
            for step in job["steps"]:
                self.assertTrue(("uses" in step) != ("run" in step), f"{name}: a step uses an action or runs")
        self.assertIn(pinned_torch(), gpu["strategy"]["matrix"]["torch"], "the pinned release is in the matrix")
        self.assertGreaterEqual(len(gpu["strategy"]["matrix"]["torch"]), 2, "a matrix over torch versions")
        runs = [s["run"] for s in gpu["steps"] if "run" in s]
        self.assertTrue(any('--torch "${{ matrix.torch }}"' in r for r in runs))
        uploads = [s for s in gpu["steps"] if s.get("uses", "").startswith("actions/upload-artifact")]
        self.assertEqual(len(uploads), 1)
        self.assertIn("${{ matrix.gpu }}-torch${{ matrix.torch }}", uploads[0]["with"]["name"])
        self.assertEqual(uploads[0]["with"]["path"], "ci-out/${{ matrix.gpu }}-torch${{ matrix.torch }}",
                         "the folder ci/nightly-gpu.sh writes")
        downloads = [s for s in merge["steps"] if s.get("uses", "").startswith("actions/download-artifact")]
        self.assertEqual(downloads[0]["with"]["pattern"], "evidence-*")
        self.assertTrue(any(s.get("uses", "").startswith("actions/upload-artifact") for s in merge["steps"]))

    def test_scripts_exist(self) -> None:
        commands = [s["run"] for job in self.doc["jobs"].values() for s in job["steps"] if "run" in s]
        found = scripts_in(commands)
        self.assertIn("ci/nightly-gpu.sh", found)
        self.assertIn("ci/merge-reports.sh", found)
        for script in found:
            self.assertTrue((ROOT / script).is_file(), f"{script} does not exist")


class GitlabPipelineTest(unittest.TestCase):
    def test_shape_and_scripts(self) -> None:
        doc = yaml.safe_load(GITLAB.read_text())
        self.assertEqual(doc["stages"], ["nightly", "merge"])
        gpu, merge = doc["gpu"], doc["merge"]
        self.assertEqual(gpu["stage"], "nightly")
        self.assertGreaterEqual(len(gpu["parallel"]["matrix"][0]["GPU"]), 2)
        self.assertIn(pinned_torch(), gpu["parallel"]["matrix"][0]["TORCH"])
        self.assertGreaterEqual(len(gpu["parallel"]["matrix"][0]["TORCH"]), 2)
        self.assertIn("$GPU", gpu["tags"])
        self.assertTrue(any('--torch "$TORCH"' in c for c in gpu["script"]))
        self.assertIn("ci-out/$GPU-torch$TORCH", gpu["artifacts"]["paths"])
        self.assertEqual(merge["needs"][0]["job"], "gpu")
        for job in (gpu, merge):
            self.assertTrue(any("schedule" in r["if"] for r in job["rules"]))
            for script in scripts_in(job["script"]):
                self.assertTrue((ROOT / script).is_file(), f"{script} does not exist")


def write_machine_folder(folder: Path, machine: str, version: str, digest: str) -> None:
    """A nightly folder as ci/nightly-gpu.sh writes it (evidence/, cases.json)
    of one case on MACHINE with torch VERSION, its output's DIGEST."""
    repro = "conv2d:fwd:f32:mb1ic3ih8iw8oc4kh3kw3sh1sw1ph1pw1dh1dw1g1 device=cpu engine=pytorch threads=2"
    test = "Pytorch/Determinism.Bitwise/X"
    (folder / "evidence").mkdir(parents=True)
    env = {"kind": "environment", "schema": 1, "machine": machine, "onednn_isa": "avx512_core",
           "omp_max_threads": 2, "backends": {}, "versions": {}, "torch": {"version": version}}
    lines = [env, {"kind": "case", "schema": 1, "test": test, "repro": repro, "device": "cpu",
                   "digest": digest, "distinct_digests": 1},
             {"kind": "result", "schema": 1, "test": test, "outcome": "passed"}]
    (folder / "evidence" / "t-1.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    (folder / "cases.json").write_text(json.dumps({"cases": [
        {"id": "1", "test": test, "repro": repro, "suite": "s", "fixture": "Determinism",
         "positive_control": False, "axes": {"device": "cpu", "engine": "pytorch"}}]}))


class ScriptsTest(unittest.TestCase):
    def test_nightly_dry_run(self) -> None:
        r = run("ci/nightly-gpu.sh", "--name", "h100", "--out", "/tmp/ci-out", "--dry-run")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("+ ./backendcheck run --tier nightly", r.stdout)
        self.assertIn("build/nightly/h100/evidence", r.stdout)
        self.assertNotEqual(run("ci/nightly-gpu.sh", "--name", "a b", "--out", "x", "--dry-run").returncode, 0)

    def test_nightly_on_a_cpu_node(self) -> None:
        # A CPU node of the Slurm recipe: no driver check, every CPU test must
        # not skip, and its evidence apart from another run's in one checkout.
        r = run("ci/nightly-gpu.sh", "--name", "xeon", "--require", "cpu", "--out", "/tmp/ci-out", "--dry-run")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertNotIn("cuda-driver-check", r.stdout)
        self.assertIn("--require cpu --out build/nightly/xeon/report", r.stdout)
        self.assertIn("cp -rL build/nightly/xeon/evidence/latest /tmp/ci-out/xeon/evidence", r.stdout)
        bad = run("ci/nightly-gpu.sh", "--name", "xeon", "--require", "tpu", "--out", "x", "--dry-run")
        self.assertEqual(bad.returncode, 2)
        self.assertIn("--require tpu: cpu or cuda", bad.stderr)

    def test_nightly_of_one_torch_release(self) -> None:
        r = run("ci/nightly-gpu.sh", "--name", "h100", "--torch", "2.11.0", "--out", "/tmp/ci-out", "--dry-run")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("+ ./backendcheck run --torch torch==2.11.0 --tier nightly", r.stdout)
        self.assertIn("artifacts in /tmp/ci-out/h100-torch2.11.0", r.stdout)
        bad = run("ci/nightly-gpu.sh", "--name", "h100", "--torch", "latest", "--out", "x", "--dry-run")
        self.assertEqual(bad.returncode, 2)
        self.assertIn("--torch latest: not a release number", bad.stderr)

    def test_nightly_checks_the_driver_first(self) -> None:
        r = run("ci/nightly-gpu.sh", "--name", "h100", "--out", "/tmp/ci-out", "--dry-run")
        check = r.stdout.index("+ python3 ci/cuda-driver-check.py")
        self.assertLess(check, r.stdout.index("+ ./backendcheck run"))

    def test_driver_check(self) -> None:
        smi = ("| NVIDIA-SMI 550.54.15   Driver Version: 550.54.15   CUDA Version: 12.4 |\n"
               "|   0  NVIDIA H100 80GB HBM3          On  |\n")
        with tempfile.TemporaryDirectory() as tmp:
            saved = Path(tmp) / "smi.txt"
            saved.write_text(smi)
            home = Path(tmp) / "cuda"
            (home / "include").mkdir(parents=True)
            (home / "include" / "cuda_runtime_api.h").write_text("#define CUDART_VERSION  13000\n")
            check = [sys.executable, "ci/cuda-driver-check.py", "--from", str(saved)]
            old = run(*check, "--cuda-home", str(home))
            self.assertEqual(old.returncode, 1)
            self.assertIn("the driver supports CUDA 12.4 but the build uses the CUDA 13.0 runtime", old.stderr)
            self.assertEqual(run(*check, "--runtime", "12040").returncode, 0)
            minor = run(*check, "--runtime", "12060")
            self.assertEqual(minor.returncode, 0, minor.stderr)
            self.assertIn("minor version compatibility", minor.stdout)
            self.assertEqual(run(*check, "--runtime", "11080").returncode, 0)
            saved.write_text("no such line\n")
            self.assertEqual(run(*check, "--runtime", "12040").returncode, 1)
        env = {**os.environ, "PATH": "/nonexistent"}
        missing = subprocess.run([sys.executable, "ci/cuda-driver-check.py", "--runtime", "13000"], cwd=ROOT,
                                 capture_output=True, text=True, env=env)
        self.assertEqual(missing.returncode, 1)
        self.assertIn("no NVIDIA driver here", missing.stderr)

    def test_merge_dry_run(self) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            for m in ("h100", "a100"):
                (Path(tmp) / m / "evidence").mkdir(parents=True)
                (Path(tmp) / m / "cases.json").write_text('{"cases": []}')
            r = run("ci/merge-reports.sh", "--in", tmp, "--out", f"{tmp}/report", "--dry-run")
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIn(f"{tmp}/a100/evidence {tmp}/h100/evidence", r.stdout)
            self.assertIn("--manifest", r.stdout)
            self.assertNotEqual(run("ci/merge-reports.sh", "--in", f"{tmp}/none", "--out", "x").returncode, 0)

    def test_merge_of_two_torch_versions_on_one_gpu(self) -> None:
        """Two nightly folders of one GPU type and two torch releases: one
        report, two platforms, paired, with what differs between them."""
        with tempfile.TemporaryDirectory() as tmp:
            for version, digest in (("2.11.0+cu130", "aaaa"), ("2.15.0+cu132", "bbbb")):
                write_machine_folder(Path(tmp) / f"h100-torch{version.split('+')[0]}", "h100", version, digest)
            r = run("ci/merge-reports.sh", "--in", tmp, "--out", f"{tmp}/report")
            self.assertIn(r.returncode, (0, 3), r.stderr)
            report = json.loads((Path(tmp) / "report" / "report.json").read_text())
            self.assertEqual(len(report["platforms"]), 2)
            bits = [c for c in report["changes"] if c["kind"] == "bits"]
            self.assertEqual([c["versions"] for c in bits], [["2.11.0+cu130", "2.15.0+cu132"]])

    def test_resource_spec(self) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            csv = Path(tmp) / "smi.csv"
            csv.write_text("0, NVIDIA H100 80GB HBM3\n1, NVIDIA H100 80GB HBM3\n")
            out = Path(tmp) / "spec.json"
            r = run(sys.executable, "ci/gpu-resource-spec.py", "--from", str(csv), "--out", str(out))
            self.assertEqual(r.returncode, 0, r.stderr)
            spec = json.loads(out.read_text())
            self.assertEqual(spec["version"], {"major": 1, "minor": 0})
            self.assertEqual(spec["local"][0]["gpus"], [{"id": "0", "slots": 1}, {"id": "1", "slots": 1}])
            csv.write_text("garbage\n")
            r = run(sys.executable, "ci/gpu-resource-spec.py", "--from", str(csv), "--out", str(out))
            self.assertEqual(r.returncode, 1)
            self.assertIn("line 1", r.stderr)
            r = run(sys.executable, "ci/gpu-resource-spec.py", "--out", str(out), "--dry-run")
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIn("nvidia-smi --query-gpu=index,name", r.stdout)


if __name__ == "__main__":
    unittest.main()
