"""The claims PyTorch's own calls into cuDNN decide (catalog/claims.toml: the
benchmark, cache, limit, choice and deterministic-flag claims, disabled-2x,
tf32-speed), judged on records as suites/pytorch_python_test.cc writes them
for the probes of probes/cudnn_choices.py: without a CUDA device each
is not evaluated, naming the device and its probe, the model's prediction
beside it; on a device their Compare and CrossProcess records decide by the
ratio and distribution rules, as PyTorch's evidence."""

from __future__ import annotations

import json
import re
import tempfile
import unittest
from pathlib import Path

from inputs.probes import DECLARED, by_test, load_declared
from reports.catalog import load_catalog
from reports.evidence import read_evidence
from reports.verdicts import judge_all

ROOT = Path(__file__).resolve().parents[2]
DECIDED_BY_PYTORCH = ("bench-fastest bench-cache bench-limit bench-fixed-faster bench-varying-slower bench-memory "
                      "bench-unstable heuristic-stable det-slower det-overrides-bench det-bench-leaks "
                      "det-bench-cross-run det-alg-implies-cudnn disabled-2x").split()
PYTHON = "/venv/bin/python"
TORCH = "2.15.0+cu132"


def probes() -> dict[str, str]:
    """TorchPython test -> the probe it runs, from the probes' declarations."""
    return by_test(load_declared(DECLARED))


def skip_reason(probe: str) -> str:
    """What the test records where torch sees no CUDA device: the
    interpreter, then the probe's NotHere (cudnn_choices._need_cuda) as
    torch_backends.py words it."""
    return f"{PYTHON}: needs a CUDA device: PyTorch {TORCH} sees none (probe {probe}): not evaluated"


def environment(gpu: bool) -> dict:
    env = {"kind": "environment", "schema": 1, "machine": "m", "onednn_isa": "avx2", "omp_max_threads": 2,
           "backends": {}, "torch": {"version": TORCH, "python": PYTHON}}
    if gpu:
        env["gpu"] = {"name": "NVIDIA H100 80GB HBM3", "arch": "sm_90", "count": 1, "driver": "13.0"}
    return env


def write(directory: Path, env: dict, tests: dict[str, tuple[dict, dict]]) -> Path:
    """One evidence file: the environment, then per test its case record and
    its result record, as the test binary writes them."""
    directory.mkdir(parents=True)
    lines = [env]
    for test, (case, result) in tests.items():
        lines += [{"kind": "case", "schema": 1, "test": test, "checks": [], **case},
                  {"kind": "result", "schema": 1, "test": test, "elapsed_ms": 1.0, **result}]
    (directory / "pytorch_python_tests-1.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    return directory


def samples(repro: str, steady: list[float], extra: dict | None = None) -> dict:
    n = len(steady)
    out = {"repro": repro, "total_ns": [int(x * 20) for x in steady], "steady_ns": steady, "first_ns": [0] * n,
           "search_ns": [0] * n, "workspace_bytes": [0] * n, "rss_peak_bytes": [0] * n, "chosen": [""] * n}
    out.update(extra or {})
    return out


class ProbeClaimsCase(unittest.TestCase):
    """The catalog, a scratch folder and the probes of `probe_table`, and the
    claims judged on a folder of records (no tests of its own)."""

    @staticmethod
    def probe_table() -> dict[str, str]:
        return probes()

    def setUp(self) -> None:
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)
        self.claims = {c.id: c for c in load_catalog(ROOT / "catalog" / "claims.toml")}
        self.probes = self.probe_table()

    def judge(self, ids: list[str], directory: Path) -> dict:
        ev = read_evidence([directory])
        self.assertEqual(ev.refused, [])
        return {v.claim.id: v for v in judge_all([self.claims[i] for i in ids], [], ev, partial=True)}


class CudnnClaimsTest(ProbeClaimsCase):

    def test_each_claim_names_the_pytorch_probes_that_decide_it(self) -> None:
        for cid in DECIDED_BY_PYTORCH:
            c = self.claims[cid]
            self.assertEqual((c.about, c.system), ("pytorch", "pytorch"), cid)
            self.assertTrue(c.tests and all(t.startswith("TorchPython.") for t in c.tests), (cid, c.tests))
            named = [t for t in self.probes if any(re.fullmatch(p.replace("*", ".*"), t) for p in c.tests)]
            self.assertTrue(named, f"{cid}: {c.tests} names no TorchPython test")
            self.assertTrue(all(self.probes[t].startswith("cudnn_") for t in named), (cid, named))
            self.assertIsNotNone(c.prediction, cid)
            self.assertEqual(c.prediction.system, "model", cid)
        tf32 = self.claims["tf32-speed"]
        self.assertIn("TorchPython.Tf32ConvolutionSpeed", tf32.tests)
        self.assertIn("TorchPython.Tf32MatmulSpeed", tf32.tests)

    def test_without_a_cuda_device_each_is_not_evaluated_naming_its_probe(self) -> None:
        skipped = {}
        for test, probe in self.probes.items():
            if probe.startswith(("cudnn_", "tf32_")):
                why = skip_reason(probe)
                skipped[test] = ({"repro": f"torch_backends.py {probe}", "system": "pytorch", "skip_reason": why},
                                 {"outcome": "skipped", "message": why})
        verdicts = self.judge(DECIDED_BY_PYTORCH + ["tf32-speed"], write(Path(self.tmp.name) / "run",
                                                                          environment(False), skipped))
        for cid, v in verdicts.items():
            self.assertEqual(v.verdict, "not evaluated", (cid, v.reason))
            self.assertIn("needs a CUDA device", v.reason, cid)
            probes = {self.probes[f.test] for f in v.facts}
            self.assertTrue(probes and all(f"probe {p}" in v.reason for p in probes), (cid, v.reason))
            if cid != "tf32-speed":
                self.assertIsNotNone(v.prediction, cid)

    def test_a_comparison_and_fresh_processes_decide_as_pytorchs_evidence(self) -> None:
        a = [2.0e6 + 1e3 * i for i in range(9)]
        fixed = {"repro": "torch_backends.py cudnn_bench_fixed", "system": "pytorch",
                 "checks": [{"name": "cudnn_bench_fixed", "outcome": "passed", "detail": "measured"}],
                 "compare": {"a": samples("torch_backends.py cudnn_bench_fixed defaults", a),
                             "b": samples("torch_backends.py cudnn_bench_fixed cudnn.benchmark=True",
                                          [x * 0.8 for x in a]),
                             "versus_flags": {"benchmark": True}, "reps": 9, "others_cpu": 0.01}}
        processes = [{"env": "cudnn.benchmark=True", "chosen": f"bits {d}", "digest": d,
                      "implementation": "cuDNN 91900", "threads": 16} for d in ("d1", "d1", "d2", "d1", "d3")]
        unstable = {"repro": "torch_backends.py cudnn_bench_processes", "system": "pytorch",
                    "checks": [{"name": "cudnn_bench_processes", "outcome": "passed", "detail": "ran"}],
                    "processes": processes, "choice_distribution": {"bits d1": 3, "bits d2": 1, "bits d3": 1},
                    "digest_distribution": {"d1": 3, "d2": 1, "d3": 1}, "distinct_choices": 3,
                    "distinct_digests": 3, "digests_stable_within_env": False, "digests_equal_across_envs": False}
        verdicts = self.judge(["bench-fixed-faster", "bench-unstable"], write(
            Path(self.tmp.name) / "gpu", environment(True),
            {"TorchPython.CudnnBenchmarkSpeedWithFixedShapes": (fixed, {"outcome": "passed", "message": ""}),
             "TorchPython.CudnnBenchmarkChoicesAcrossProcesses": (unstable, {"outcome": "passed", "message": ""})}))
        v = verdicts["bench-fixed-faster"]
        self.assertEqual((v.verdict, v.decided_by), ("supported", "pytorch"), v.reason)
        self.assertIn("steady_ns B/A = 0.8", v.reason)
        self.assertIsNotNone(v.prediction)
        v = verdicts["bench-unstable"]
        self.assertEqual((v.verdict, v.decided_by), ("supported", "pytorch"), v.reason)
        self.assertIn("3 distinct in 5 processes", v.reason)


if __name__ == "__main__":
    unittest.main()
