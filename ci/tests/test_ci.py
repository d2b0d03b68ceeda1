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
PLATFORMS = ROOT / "ci" / "nightly-platforms.txt"


def expected_platforms() -> list[str]:
    """ci/nightly-platforms.txt's names."""
    return [n for line in PLATFORMS.read_text().splitlines() if (n := line.split("#", 1)[0].strip())]


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
        self.assertTrue(any('--torch "torch==${{ matrix.torch }}"' in r for r in runs))
        uploads = [s for s in gpu["steps"] if s.get("uses", "").startswith("actions/upload-artifact")]
        self.assertEqual(len(uploads), 1)
        self.assertIn("${{ matrix.gpu }}-torch${{ matrix.torch }}", uploads[0]["with"]["name"])
        self.assertEqual(uploads[0]["with"]["path"], "ci-out/${{ matrix.gpu }}-torch${{ matrix.torch }}",
                         "the folder ci/nightly-gpu.sh writes")
        downloads = [s for s in merge["steps"] if s.get("uses", "").startswith("actions/download-artifact")]
        self.assertEqual(downloads[0]["with"]["pattern"], "evidence-*")
        self.assertTrue(any(s.get("uses", "").startswith("actions/upload-artifact") for s in merge["steps"]))

    def test_merge_compares_with_the_last_report_and_publishes_the_junit(self) -> None:
        gpu, merge = self.doc["jobs"]["gpu"], self.doc["jobs"]["merge"]
        matrix = gpu["strategy"]["matrix"]
        self.assertEqual(sorted(expected_platforms()), sorted(f"{g}-torch{t}" for g in matrix["gpu"]
                                                               for t in matrix["torch"]),
                         "ci/nightly-platforms.txt lists the matrix")
        steps = merge["steps"]
        names = [s.get("uses", "").split("@")[0] for s in steps]
        fetch = steps[names.index("dawidd6/action-download-artifact")]
        upload = next(s for s in steps if s.get("uses", "").startswith("actions/upload-artifact"))
        self.assertEqual((fetch["with"]["workflow"], fetch["with"]["name"]),
                         (GITHUB.name, upload["with"]["name"]), "the baseline is this workflow's merged report")
        command = next(s["run"] for s in steps if "ci/merge-reports.sh" in s.get("run", ""))
        self.assertLess(names.index("dawidd6/action-download-artifact"),
                        next(i for i, s in enumerate(steps) if "ci/merge-reports.sh" in s.get("run", "")))
        for flag in (f"--baseline {fetch['with']['path']}/report.json", "--fail-on-change",
                     "--expect-platforms ci/nightly-platforms.txt"):
            self.assertIn(flag, command)
        junit = steps[names.index("mikepenz/action-junit-report")]
        self.assertEqual((junit["if"], junit["with"]["report_paths"]), ("always()", "merged-report/claims-junit.xml"))
        self.assertEqual(merge["permissions"]["checks"], "write")

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
        self.assertTrue(any('--torch "torch==$TORCH"' in c for c in gpu["script"]))
        self.assertIn("ci-out/$GPU-torch$TORCH", gpu["artifacts"]["paths"])
        self.assertEqual(merge["needs"][0]["job"], "gpu")
        for job in (gpu, merge):
            self.assertTrue(any("schedule" in r["if"] for r in job["rules"]))
            for script in scripts_in(job["script"]):
                self.assertTrue((ROOT / script).is_file(), f"{script} does not exist")


    def test_merge_compares_with_the_last_report_and_publishes_the_junit(self) -> None:
        doc = yaml.safe_load(GITLAB.read_text())
        matrix = doc["gpu"]["parallel"]["matrix"][0]
        self.assertEqual(sorted(expected_platforms()), sorted(f"{g}-torch{t}" for g in matrix["GPU"]
                                                               for t in matrix["TORCH"]))
        merge = doc["merge"]
        script = "\n".join(merge["script"])
        self.assertIn("$CI_API_V4_URL/projects/$CI_PROJECT_ID/jobs/artifacts/$CI_DEFAULT_BRANCH/download?job=merge",
                      script, "the last successful pipeline's merged report")
        for flag in ("--baseline baseline/merged-report/report.json", "--fail-on-change",
                     "--expect-platforms ci/nightly-platforms.txt"):
            self.assertIn(flag, script)
        self.assertEqual(merge["artifacts"]["reports"]["junit"], "merged-report/claims-junit.xml")
        self.assertIn("merged-report", merge["artifacts"]["paths"])


def other_errors(r: subprocess.CompletedProcess) -> list[str]:
    """A merge of folders of a few tests each (write_machine_folder)
    against the whole catalog: the claims none of their tests addresses are
    errors (the report exits 1). Its status and the ERROR lines of any other
    cause: none is expected."""
    errors = [line for line in r.stderr.splitlines() if line.startswith("ERROR ")]
    if r.returncode not in (0, 1, 3) or (r.returncode == 1 and not errors):
        return [f"exit {r.returncode}: {r.stderr[-2000:]}"]
    return [e for e in errors if not e.endswith("the catalog's selectors match no test: fix catalog/claims.toml")]


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

    def test_nightly_uploads_only_what_its_own_run_wrote(self) -> None:
        """A runner that kept an earlier run's evidence, report and build:
        a run that wrote none uploads none of them (its log only), and fails; a run that
        wrote its own uploads those (and its build's manifest, however old).
        The script runs in a copy of ci/, beside a stand-in for the run
        (the ./backendcheck under test writes, or not, what a run writes)."""
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp) / "repo"
            (root / "ci").mkdir(parents=True)
            (root / "ci" / "nightly-gpu.sh").write_bytes((ROOT / "ci" / "nightly-gpu.sh").read_bytes())
            (root / "ci" / "cuda-driver-check.py").write_text("")
            (root / "backendcheck").write_text(
                "#!/bin/bash\necho '==> configuring (preset default, tier nightly) in build/default/torch/x/bin/python'\n"
                "[[ $WRITES == 1 ]] || exit 0\n"
                "mkdir -p build/nightly/h100/evidence/run-2 build/nightly/h100/report build/default/torch/x/bin/python/generated\n"
                "echo new > build/nightly/h100/evidence/run-2/r.jsonl; ln -sfn run-2 build/nightly/h100/evidence/latest\n"
                "echo '{}' > build/nightly/h100/report/report.json; echo new > build/default/torch/x/bin/python/ctest-junit.xml\n")
            (root / "backendcheck").chmod(0o755)
            old = {"build/nightly/h100/evidence/run-1/r.jsonl": "old", "build/nightly/h100/report/report.json": "{}",
                   "build/default/torch/x/bin/python/generated/cases.json": "cases", "build/default/torch/x/bin/python/ctest-junit.xml": "old"}
            for name, text in old.items():
                (root / name).parent.mkdir(parents=True, exist_ok=True)
                (root / name).write_text(text)
            (root / "build/nightly/h100/evidence/latest").symlink_to("run-1")
            for path in list(root.rglob("*")) + [root / "build/nightly/h100/evidence/run-1"]:
                os.utime(path, (1e9, 1e9), follow_symlinks=False)
            env = {k: v for k, v in os.environ.items() if k != "CTEST_PARALLEL_LEVEL"}
            for writes in ("0", "1"):
                out = Path(tmp) / f"out-{writes}"
                r = subprocess.run(["bash", str(root / "ci" / "nightly-gpu.sh"), "--name", "h100", "--out", str(out)],
                                   cwd=root, env={**env, "WRITES": writes}, capture_output=True, text=True,
                                   timeout=60, check=False)
                uploaded = sorted(str(p.relative_to(out / "h100")) for p in (out / "h100").rglob("*") if p.is_file())
                if writes == "0":
                    self.assertEqual(r.returncode, 1, r.stderr)
                    self.assertEqual(uploaded, ["run.log"], "only the run's own log")
                    self.assertIn("this run wrote no evidence", r.stderr)
                    self.assertIn("build/nightly/h100/report was not written by this run", r.stderr)
                else:
                    self.assertEqual(r.returncode, 0, r.stderr)
                    self.assertEqual(uploaded, ["cases.json", "ctest-junit.xml", "evidence/r.jsonl",
                                                "report/report.json", "run.log"])
                    self.assertEqual((out / "h100" / "evidence" / "r.jsonl").read_text(), "new\n")

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
        """--torch takes ./backendcheck's values (cli.torch_spec): a release,
        an interpreter or pinned; anything else is one line and exit 2."""
        r = run("ci/nightly-gpu.sh", "--name", "h100", "--torch", "torch==2.11.0", "--out", "/tmp/ci-out", "--dry-run")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("+ ./backendcheck run --torch torch==2.11.0 --tier nightly", r.stdout)
        self.assertIn("artifacts in /tmp/ci-out/h100-torch2.11.0", r.stdout)
        own = run("ci/nightly-gpu.sh", "--name", "h100", "--torch", "/usr/bin/python3", "--out", "/tmp/ci-out",
                  "--dry-run")
        self.assertEqual(own.returncode, 0, own.stderr)
        self.assertIn("+ ./backendcheck run --torch /usr/bin/python3 --tier nightly", own.stdout)
        self.assertIn("artifacts in /tmp/ci-out/h100\n", own.stdout + "\n")
        for value, why in (("2.11.0", "'2.11.0': no such interpreter"), ("torch==latest", "not a release number")):
            bad = run("ci/nightly-gpu.sh", "--name", "h100", "--torch", value, "--out", "x", "--dry-run")
            self.assertEqual(bad.returncode, 2)
            self.assertEqual(len(bad.stderr.splitlines()), 1, bad.stderr)
            self.assertTrue(bad.stderr.startswith(f"nightly-gpu: --torch {value}: "), bad.stderr)
            self.assertIn(why, bad.stderr)

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
            r = run("ci/merge-reports.sh", "--in", tmp, "--out", f"{tmp}/report", "--dry-run", "--fail-on-change",
                    "--expect-platform", "l4", "--expect-platforms", str(PLATFORMS))
            self.assertIn(f"--fail-on-change --expect-platform l4 --expect-platforms {PLATFORMS}", r.stdout)
            self.assertNotEqual(run("ci/merge-reports.sh", "--in", f"{tmp}/none", "--out", "x").returncode, 0)

    def test_merge_of_two_torch_versions_on_one_gpu(self) -> None:
        """Two nightly folders of one GPU type and two torch releases: one
        report, two platforms, paired, with what differs between them."""
        with tempfile.TemporaryDirectory() as tmp:
            for version, digest in (("2.11.0+cu130", "aaaa"), ("2.15.0+cu132", "bbbb")):
                write_machine_folder(Path(tmp) / f"h100-torch{version.split('+')[0]}", "h100", version, digest)
            r = run("ci/merge-reports.sh", "--in", tmp, "--out", f"{tmp}/report")
            self.assertEqual(other_errors(r), [])
            report = json.loads((Path(tmp) / "report" / "report.json").read_text())
            self.assertEqual(len(report["platforms"]), 2)
            bits = [c for c in report["changes"] if c["kind"] == "bits"]
            self.assertEqual([c["versions"] for c in bits], [["2.11.0+cu130", "2.15.0+cu132"]])

    def test_resource_spec(self) -> None:
        """GPU ids in the order the tests' CUDA counts them
        (CUDA_DEVICE_ORDER=PCI_BUS_ID): by PCI bus id, whatever order
        nvidia-smi printed them in; CUDA_VISIBLE_DEVICES narrows the list."""
        env = {k: v for k, v in os.environ.items() if k != "CUDA_VISIBLE_DEVICES"}

        def spec_of(csv_text: str, *extra: str, visible: str | None = None) -> subprocess.CompletedProcess:
            csv.write_text(csv_text)
            return subprocess.run([sys.executable, "ci/gpu-resource-spec.py", "--from", str(csv), "--out", str(out),
                                   *extra], cwd=ROOT, capture_output=True, text=True, timeout=60, check=False,
                                  env=env if visible is None else dict(env, CUDA_VISIBLE_DEVICES=visible))

        with tempfile.TemporaryDirectory() as tmp:
            csv, out = Path(tmp) / "smi.csv", Path(tmp) / "spec.json"
            listed = ("00000000:C1:00.0, GPU-cccc, NVIDIA L4\n00000000:1B:00.0, GPU-aaaa, NVIDIA H100 80GB HBM3\n"
                      "00000000:41:00.0, GPU-bbbb, NVIDIA H100 80GB HBM3\n")
            r = spec_of(listed)
            self.assertEqual(r.returncode, 0, r.stderr)
            spec = json.loads(out.read_text())
            self.assertEqual(spec["version"], {"major": 1, "minor": 0})
            self.assertEqual(spec["local"][0]["gpus"], [{"id": str(i), "slots": 1} for i in range(3)])
            r = spec_of(listed, "--slots", "2", visible="GPU-cccc,1")
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(json.loads(out.read_text())["local"][0]["gpus"],
                             [{"id": "2", "slots": 2}, {"id": "1", "slots": 2}],
                             "the L4 is the third by PCI bus id (C1 after 1B and 41); index 1 is the bus 41 H100")
            r = spec_of(listed, visible="GPU-dddd")
            self.assertEqual(r.returncode, 1)
            self.assertIn("CUDA_VISIBLE_DEVICES: 'GPU-dddd' is none of the GPUs", r.stderr)
            r = spec_of("garbage\n")
            self.assertEqual(r.returncode, 1)
            self.assertIn("line 1", r.stderr)
            r = spec_of(listed, "--slots", "0")
            self.assertEqual(r.returncode, 2)
            r = run(sys.executable, "ci/gpu-resource-spec.py", "--out", str(out), "--dry-run")
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIn("nvidia-smi --query-gpu=pci.bus_id,uuid,name", r.stdout)

if __name__ == "__main__":
    unittest.main()
