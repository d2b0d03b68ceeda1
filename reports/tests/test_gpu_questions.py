"""The claims of the questions users bring to a GPU (attention, batch size,
reduced precision, the deterministic mode's cost, torch.compile), judged on
records as suites/pytorch_python_test.cc writes them for the probes of
probes/cuda_questions.py and compiled.py's CUDA plans: without a
CUDA device each is not evaluated, naming the device and its probe; on a
device the CUDA grid joins batch-invariant's verdict and the invariance
section, with its levers on the card, and the precision settings without
their documented effect go under "No effect here"."""

from __future__ import annotations

import copy
import json
import unittest
from pathlib import Path

from inputs.probes import DECLARED, load_declared
from reports.evidence import read_evidence
from reports.pipeline import Report
from reports.page.render import write_report
from reports.verdicts import judge_all
from reports.tests.test_cudnn_claims import ProbeClaimsCase, environment, samples, write
from reports.page.folds import unfolded

ROOT = Path(__file__).resolve().parents[2]
RECORDED = json.loads((ROOT / "reports" / "tests" / "data" / "cuda_questions" / "cpu-torch-2.15.json").read_text())
PYTHON = "/venv/bin/python"
TORCH = "2.15.0+cu132"
NEW = {"sdpa-cuda-repeatable": "folklore", "sdpa-cuda-deterministic": "guarantee", "sdpa-cuda-table": "guarantee",
       "cuda-precision-settings": "guarantee", "matmul-precision-highest-conv": "folklore",
       "compile-cuda-matches-eager": "folklore", "compile-cuda-deterministic": "folklore"}
# Claims that gained a CUDA probe beside their earlier evidence.
GAINED = {"batch-invariant": "TorchPython.CudaBatchInvariance", "tf32-precision": "TorchPython.CudaTf32ReducesPrecision",
          "det-alg-slower": "TorchPython.CudaDeterministicAlgorithmsTrainingCost"}


def gpu_probes() -> dict[str, str]:
    """TorchPython test -> probe, for the probes cuda_questions.py registers
    (its PROBES table, as declared) and compiled.py's CUDA plans."""
    return {p.full_name: p.name for p in load_declared(DECLARED)
            if p.module == "cuda_questions" or p.name.startswith("compiled_cuda_")}


def skip_reason(probe: str) -> str:
    """As the test records it without a device (common.need_device)."""
    return f"{PYTHON}: needs a CUDA device: PyTorch {TORCH} sees none (probe {probe}): not evaluated"


def fact(test: str, probe: str, passed: bool, observed: dict) -> tuple[dict, dict]:
    check = {"name": probe, "outcome": "passed" if passed else "failed", "detail": "recorded", "observed": observed}
    return ({"repro": f"torch_backends.py {probe}", "system": "pytorch", "checks": [check]},
            {"outcome": "passed", "message": ""})


def cuda_grid() -> dict:
    """The recorded CPU run of the grid's code, relabelled as a CUDA
    device's, with one lever that holds what the defaults do not (the
    probe's lever_effects as its lever_reading writes them,
    probes/tests/test_cuda_questions.py)."""
    grid = json.loads(json.dumps(RECORDED["grid"]).replace(" cpu", " cuda"))
    grid["device"] = "NVIDIA H100 80GB HBM3"
    grid["rows"]["mm f32 cuda | no split-K"]["batch"] = {"same": True, "per": {}, "differ_at": []}
    split = next(lv for lv in grid["lever_effects"] if lv["lever"] == "no split-K")
    split["still_differ"].remove("mm f32 cuda")
    split["fixes"].append("mm f32 cuda")
    return grid


class GpuQuestionsTest(ProbeClaimsCase):
    @staticmethod
    def probe_table() -> dict[str, str]:
        return gpu_probes()

    def test_each_claim_names_the_pytorch_probe_that_decides_it_on_cuda(self) -> None:
        for cid, kind in NEW.items():
            c = self.claims[cid]
            self.assertEqual((c.kind, c.about, c.system, c.rule), (kind, "pytorch", "pytorch", "fact"), cid)
            self.assertEqual(c.scope.get("device"), "cuda", cid)
            self.assertTrue(c.tests and all(t in self.probes for t in c.tests), (cid, c.tests))
        for cid, test in GAINED.items():
            self.assertIn(test, self.claims[cid].tests, cid)
        self.assertEqual(len(self.probes), 11)

    def test_without_a_cuda_device_each_is_not_evaluated_naming_its_probe(self) -> None:
        skipped = {}
        for test, probe in self.probes.items():
            why = skip_reason(probe)
            skipped[test] = ({"repro": f"torch_backends.py {probe}", "system": "pytorch", "skip_reason": why},
                             {"outcome": "skipped", "message": why})
        verdicts = self.judge(list(NEW), write(Path(self.tmp.name) / "run", environment(False), skipped))
        from reports.wording import SOURCE
        for cid, v in verdicts.items():
            self.assertEqual(v.verdict, "not evaluated", (cid, v.reason))
            self.assertIn("needs a CUDA device", v.reason, cid)
            self.assertIsNone(SOURCE.search(v.reason), (cid, v.reason))
            named = {self.probes[f.test] for f in v.facts}
            self.assertTrue(named and all(f"probe {p}" in v.reason for p in named), (cid, v.reason))

    def test_the_cuda_grid_decides_batch_invariance_beside_the_cpu_grid(self) -> None:
        cpu = copy.deepcopy(RECORDED["grid"])
        for row in cpu["rows"].values():
            row["batch"] = {"same": True, "per": {}, "differ_at": []}
        tests = {"TorchPython.CudaBatchInvariance": fact("TorchPython.CudaBatchInvariance", "cuda_invariance", True,
                                                         cuda_grid()),
                 "TorchPython.InvarianceGrid": fact("TorchPython.InvarianceGrid", "invariance", True, cpu)}
        directory = write(Path(self.tmp.name) / "gpu", environment(True), tests)
        v = self.judge(["batch-invariant"], directory)["batch-invariant"]
        self.assertEqual(v.verdict, "refuted", v.reason)
        self.assertIn("mm f32 cuda", v.reason)
        # Without the CUDA grid's differences, the grid's cells hold; a claim
        # that holds everywhere is not supported by them alone: it waits for
        # the search (test_search.CudaSearchTest has the supported case).
        held = self.judge(["batch-invariant"], write(Path(self.tmp.name) / "cpu", environment(True), {
            "TorchPython.InvarianceGrid": tests["TorchPython.InvarianceGrid"]}))["batch-invariant"]
        self.assertEqual(held.verdict, "not evaluated", held.reason)
        self.assertIn("no search for a counter-example ran", held.reason)
        self.assertIn("all 27 operations of the grid held their bits", held.reason)

    def test_the_report_shows_the_cuda_rows_the_levers_and_no_effect(self) -> None:
        precision = copy.deepcopy(RECORDED["precision"])
        tests = {"TorchPython.CudaBatchInvariance": fact("TorchPython.CudaBatchInvariance", "cuda_invariance", True,
                                                         cuda_grid()),
                 "TorchPython.CudaPrecisionSettings": fact("TorchPython.CudaPrecisionSettings",
                                                           "cuda_precision_settings", True, precision),
                 "TorchPython.TorchCompileOnCudaAgainstEager": fact(
                     "TorchPython.TorchCompileOnCudaAgainstEager", "compiled_cuda_eager", False, {
                         "device": "cuda", "nightly": False, "inductor_settings": {"batch_invariant": True},
                         "bits": {"versus_eager": {"same": True}, "run_to_run": {"same": True}, "recompiled":
                                  {"same": True}, "controls": {"eager_one_ulp_away_differs": True,
                                                               "random_order_sum_varies": True}},
                         "train": {"versus_eager": {"same": False, "fraction": 0.02, "max_rel": 1.6e-9},
                                   "run_to_run": {"same": True}, "controls": {"random_order_sum_varies": True}}})}
        ev = read_evidence([write(Path(self.tmp.name) / "gpu", environment(True), tests)])
        claims = [self.claims[i] for i in ("batch-invariant", "cuda-precision-settings")]
        report = Report.of(judge_all(claims, [], ev, partial=True), [], ev)
        (platform, grid), = report.grids.items()
        self.assertIn("mm f32 cuda | defaults", grid["rows"])
        self.assertEqual(grid["rows"]["mm f32 cuda | no split-K"]["batch"]["state"], "invariant")
        card = report.cards[platform]
        lever = [line for line in card["invariance"] if line.get("setting")]
        self.assertEqual([line["ops"] for line in lever], ["mm f32 cuda"])
        self.assertIn("(False, False)", lever[0]["setting"])
        self.assertIn("alternated", lever[0]["cost"])
        self.assertTrue(any("allow_tf32 = True: the bits of the strict setting" in line
                            for line in card["no_effect_seen"]), card["no_effect_seen"])
        page = unfolded(write_report(Path(self.tmp.name) / "page", report).read_text())
        # The lever holds mm but not addmm or linear: named for what it holds,
        # with what it does not and what holds them all.
        self.assertEqual(lever[0]["says"], "Holds some")
        self.assertEqual(lever[0]["not_held"], "addmm f32 cuda, linear f32 cuda")
        self.assertIn("the same batch", lever[0]["holds_all"])
        self.assertIn("for bitwise reproducibility across the batch size: <span class=\"mono\">", page)
        self.assertIn("holds <span class=\"mono\">mm f32 cuda</span> but <strong class=\"v-refuted\">not</strong> "
                      "<span class=\"mono\">addmm f32 cuda, linear f32 cuda</span>", page)
        self.assertIn('class="card-no-effect-seen"', page)
        self.assertIn("mm f32 cuda | no split-K", page)
        compiled = {line["check"]: line for line in grid["compile"]}
        train = compiled["CUDA: compiled against eager (a training step of a small MLP)"]
        self.assertEqual(train["state"], "differs")
        self.assertIn("2% of elements differ", train["why"])
        self.assertEqual(compiled["CUDA: compiled, run to run"]["state"], "invariant")

    def test_the_gpu_card_prices_the_deterministic_mode_and_cudnn_off(self) -> None:
        """Point 5: on the GPU platform, the reproducibility line of the
        deterministic mode for attention is priced by the CUDA training
        step's comparison, and cuDNN's speed line by the training step with
        cudnn.enabled False against True."""
        a = [4.0e6 + 2e3 * i for i in range(9)]

        def compared(probe: str, factor: float, versus: dict) -> tuple[dict, dict]:
            check = {"name": probe, "outcome": "passed", "detail": "measured"}
            return ({"repro": f"torch_backends.py {probe}", "system": "pytorch", "checks": [check],
                     "compare": {"a": samples(f"torch_backends.py {probe} A", a),
                                 "b": samples(f"torch_backends.py {probe} B", [x * factor for x in a]),
                                 "versus_flags": versus, "reps": 9, "others_cpu": 0.01}},
                    {"outcome": "passed", "message": ""})
        tests = {"TorchPython.CudaSdpaUnderDeterministicAlgorithms": fact(
                     "TorchPython.CudaSdpaUnderDeterministicAlgorithms", "cuda_sdpa_deterministic", True,
                     RECORDED["sdpa"]),
                 "TorchPython.CudaDeterministicAlgorithmsTrainingCost": compared(
                     "cuda_det_alg_speed", 1.3, {"deterministic_algorithms": True}),
                 "TorchPython.CudnnDisabledTrainingSpeedF32": compared("cudnn_disabled_f32", 0.2, {"enabled": True}),
                 "TorchPython.CudnnDisabledTrainingSpeedF16": compared("cudnn_disabled_f16", 0.25, {"enabled": True})}
        ev = read_evidence([write(Path(self.tmp.name) / "gpu", environment(True), tests)])
        ids = ("sdpa-cuda-deterministic", "det-alg-slower", "disabled-2x")
        report = Report.of(judge_all([self.claims[i] for i in ids], [], ev, partial=True), [], ev)
        (card,) = report.cards.values()
        lines = {(x["goal"], x["setting"]): x for s in card["sections"] for x in s["lines"]}
        det = lines[("reproducibility", "torch.use_deterministic_algorithms(True), for scaled_dot_product_attention")]
        self.assertEqual((det["heading"], det["says"]), ("set", "for bitwise reproducibility"))
        cost = det["cost"][0]
        self.assertEqual((cost["claim"], cost["verdict"]), ("det-alg-slower", "supported"))
        self.assertAlmostEqual(cost["timing"]["median"], 1.3, delta=0.01)
        cudnn = lines[("speed", "torch.backends.cudnn.enabled = True (the default)")]
        self.assertEqual(cudnn["says"], "for speed: faster here")
        self.assertEqual(cudnn["verdict"], "supported")

    def test_every_new_test_is_in_the_gpu_tier(self) -> None:
        listed = {p.full_name for p in load_declared(DECLARED) if p.device == "gpu"}
        for test in self.probes:
            self.assertIn(test, listed, test)


if __name__ == "__main__":
    unittest.main()
