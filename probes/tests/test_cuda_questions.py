"""How the GPU questions' probes read what PyTorch did (no device): on a
recorded observation (cuda_questions.py's own functions run by PyTorch 2.15
on the CPU, reports/tests/data/cuda_questions/), and on that observation
changed the way a GPU would change it: a backward that varies under the
deterministic mode, an alert with and without warn_only, a backend refused,
a setting computed at a coarser precision than it allows, a compiled
function that moves. Where this interpreter's torch has sdpa_kernel, the
observation functions also run here on the CPU."""

from __future__ import annotations

import copy
import json
import sys
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import cuda_questions as cq  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
RECORDED = json.loads((ROOT / "reports" / "tests" / "data" / "cuda_questions" / "cpu-torch-2.15.json").read_text())
ALERT_TEXT = ("scaled_dot_product_attention_backward does not have a deterministic implementation, but you set "
              "'torch.use_deterministic_algorithms(True)'.")


def sdpa() -> dict:
    return copy.deepcopy(RECORDED["sdpa"])


class Recorded(unittest.TestCase):
    def test_the_recorded_cpu_observation_reads_as_it_ran(self):
        obs = sdpa()
        self.assertEqual(obs["default_pick"]["f32"], "FLASH_ATTENTION")
        self.assertIn("No viable backend", obs["backends"]["f16"]["CUDNN_ATTENTION"]["defaults"]["raised"])
        self.assertTrue(obs["controls"]["run"]["varied"] and obs["controls"]["process"]["varied"])
        passed, detail, mistrusted = cq.sdpa_repeatability_reading(obs)
        self.assertTrue(passed, detail)
        self.assertEqual(mistrusted, "")
        self.assertIn("FLASH_ATTENTION (the defaults) f16: repeats its bits", detail)
        self.assertIn("CUDNN_ATTENTION f16: does not run", detail)
        passed, detail, _ = cq.sdpa_deterministic_reading(obs)
        self.assertTrue(passed, detail)

    def test_a_control_that_did_not_vary_mistrusts_same_bits(self):
        obs = sdpa()
        obs["controls"]["run"]["varied"] = False
        self.assertIn("control", cq.sdpa_repeatability_reading(obs)[2])
        self.assertIn("control", cq.sdpa_deterministic_reading(obs)[2])


class Attention(unittest.TestCase):
    def test_a_backward_that_varies_with_the_defaults_refutes_the_folklore(self):
        obs = sdpa()
        obs["backends"]["bf16"]["DEFAULT"]["defaults"]["backward_distinct"] = 3
        passed, detail, _ = cq.sdpa_repeatability_reading(obs)
        self.assertFalse(passed)
        self.assertIn("FLASH_ATTENTION (the defaults) bf16: 3 different gradients in 2 runs", detail)

    def test_a_forced_backend_that_varies_is_listed_not_judged(self):
        obs = sdpa()
        obs["backends"]["f16"]["MATH"]["defaults"]["backward_distinct"] = 2
        passed, detail, _ = cq.sdpa_repeatability_reading(obs)
        self.assertTrue(passed)
        self.assertIn("MATH f16: 2 different gradients", detail)

    def test_another_digest_in_a_fresh_process_varies(self):
        obs = sdpa()
        obs["fresh_process"]["digests"]["DEFAULT f32"][1] = "0" * 16
        passed, detail, _ = cq.sdpa_repeatability_reading(obs)
        self.assertFalse(passed)
        self.assertIn("other gradients in a fresh process", detail)

    def test_a_failed_fresh_process_is_the_harness_error(self):
        obs = sdpa()
        obs["fresh_process"] = {"error": "the fresh process exited 1: boom"}
        self.assertIsNone(cq.sdpa_repeatability_reading(obs)[0])

    def test_a_backward_that_varies_under_the_mode_refutes_the_guarantee(self):
        obs = sdpa()
        obs["backends"]["f16"]["FLASH_ATTENTION"]["deterministic"]["backward_distinct"] = 2
        passed, detail, mistrusted = cq.sdpa_deterministic_reading(obs)
        self.assertFalse(passed)
        self.assertIn("FLASH_ATTENTION f16: 2 different gradients in 2 runs under the mode, with no alert", detail)
        self.assertEqual(mistrusted, "")

    def test_an_alert_that_warn_only_turns_into_a_warning_holds(self):
        obs = sdpa()
        cell = obs["backends"]["bf16"]["FLASH_ATTENTION"]
        cell["deterministic"] = {"raised": ALERT_TEXT, "warned": []}
        cell["warn_only"]["warned"] = [ALERT_TEXT]
        passed, detail, _ = cq.sdpa_deterministic_reading(obs)
        self.assertTrue(passed, detail)
        self.assertIn("FLASH_ATTENTION bf16: raises under the mode", detail)
        self.assertIn("warn_only=True warns and runs", detail)

    def test_an_alert_that_warn_only_still_raises_refutes(self):
        obs = sdpa()
        cell = obs["backends"]["bf16"]["FLASH_ATTENTION"]
        cell["deterministic"] = cell["warn_only"] = {"raised": ALERT_TEXT, "warned": []}
        passed, detail, _ = cq.sdpa_deterministic_reading(obs)
        self.assertFalse(passed)
        self.assertIn("warn_only=True raised too", detail)

    def test_warn_only_without_its_warning_refutes(self):
        obs = sdpa()
        obs["backends"]["bf16"]["FLASH_ATTENTION"]["deterministic"] = {"raised": ALERT_TEXT, "warned": []}
        passed, detail, _ = cq.sdpa_deterministic_reading(obs)
        self.assertFalse(passed)
        self.assertIn("warn_only=True ran without PyTorch's warning", detail)

    def test_a_warning_pytorch_gives_once_a_process_holds_for_every_cell(self):
        obs = sdpa()
        for dtype in ("f16", "bf16"):
            cell = obs["backends"][dtype]["FLASH_ATTENTION"]
            cell["deterministic"] = {"raised": ALERT_TEXT, "warned": []}
        obs["backends"]["f16"]["FLASH_ATTENTION"]["warn_only"]["warned"] = [ALERT_TEXT]
        passed, detail, _ = cq.sdpa_deterministic_reading(obs)
        self.assertTrue(passed, detail)

    def test_a_backend_refused_under_the_mode_is_no_refutation(self):
        obs = sdpa()
        obs["backends"]["f16"]["FLASH_ATTENTION"]["deterministic"] = {
            "raised": "No available kernel. Aborting execution.", "warned": []}
        passed, detail, _ = cq.sdpa_deterministic_reading(obs)
        self.assertTrue(passed, detail)
        self.assertIn("FLASH_ATTENTION f16: raises under the mode (No available kernel. Aborting execution.); "
                      "refused", detail)

    def test_the_defaults_switching_backend_under_the_mode_is_named(self):
        obs = sdpa()
        obs["default_pick_deterministic"]["f16"] = "EFFICIENT_ATTENTION"
        self.assertIn("f16 FLASH_ATTENTION -> EFFICIENT_ATTENTION", cq.sdpa_deterministic_reading(obs)[1])

    def test_the_table_is_judged_from_the_release_after_2_11(self):
        self.assertIn("pytorch/pytorch#182551", cq.table_gate("2.11.0+cu130"))
        self.assertIn("2.11", cq.table_gate("1.13.0a0"))
        self.assertEqual(cq.table_gate("2.12.0"), "")
        self.assertEqual(cq.table_gate("2.15.0+cu132"), "")
        self.assertEqual(cq.version_of("2.11.0+cu130"), (2, 11))

    def test_the_table_reading(self):
        obs = sdpa()
        passed, detail, _ = cq.sdpa_table_reading(obs)
        self.assertTrue(passed, detail)
        self.assertIn("FLASH_ATTENTION f16: repeats its backward under the mode", detail)
        # FLASH varies under the mode: refuted.
        varied = sdpa()
        varied["backends"]["f16"]["FLASH_ATTENTION"]["deterministic"]["backward_distinct"] = 2
        self.assertFalse(cq.sdpa_table_reading(varied)[0])
        # CUDNN_ATTENTION runs, and runs under the mode: refuted; refused there: holds.
        ran = sdpa()
        cudnn = ran["backends"]["f16"]["CUDNN_ATTENTION"]
        cudnn["defaults"] = copy.deepcopy(ran["backends"]["f16"]["MATH"]["defaults"])
        cudnn["deterministic"] = copy.deepcopy(cudnn["defaults"])
        passed, detail, _ = cq.sdpa_table_reading(ran)
        self.assertFalse(passed)
        self.assertIn("CUDNN_ATTENTION f16: runs under the mode", detail)
        cudnn["deterministic"] = {"raised": "No available kernel. Aborting execution.", "warned": []}
        self.assertTrue(cq.sdpa_table_reading(ran)[0])
        ran["default_pick_deterministic"]["bf16"] = "CUDNN_ATTENTION"
        self.assertFalse(cq.sdpa_table_reading(ran)[0])


class Batch(unittest.TestCase):
    def test_the_recorded_grid_has_invariance_py_s_form(self):
        grid = RECORDED["grid"]
        row = grid["rows"]["softmax f32 cpu | defaults"]
        self.assertEqual(set(row), {"digest", "run", "batch"})
        self.assertEqual(set(row["batch"]["per"]), {str(k) for k in cq.KS} | {"40:72"})
        self.assertTrue(grid["controls"]["batch"]["varied"] and grid["controls"]["run"]["varied"])
        self.assertEqual(grid["variants"], ["defaults", "deterministic", "no split-K"])

    def test_a_lever_that_makes_a_cell_hold_its_bits_is_named_with_its_cost(self):
        grid = copy.deepcopy(RECORDED["grid"])
        differ = [k.split(" | ")[0] for k, r in grid["rows"].items()
                  if k.endswith("| defaults") and not r["batch"]["same"]]
        self.assertTrue(differ, "the recorded CPU grid has fp32 GEMMs that differ across the batch")
        fixed = differ[0]
        grid["rows"][f"{fixed} | no split-K"]["batch"] = {"same": True, "per": {}, "differ_at": []}
        effects = {lv["lever"]: lv for lv in cq.lever_reading(grid)}
        self.assertIn(fixed, effects["no split-K"]["fixes"])
        self.assertNotIn(fixed, effects["deterministic"]["fixes"])
        self.assertIn(fixed, effects["deterministic"]["still_differ"])
        self.assertEqual(effects["no split-K"]["cost"]["reps"], 3)


class Precision(unittest.TestCase):
    LEVELS = {"tf32": 1e-4, "bf16": 8e-4}

    def test_the_level_a_result_shows(self):
        self.assertEqual(cq.precision_level(1e-7, self.LEVELS), "fp32")
        self.assertEqual(cq.precision_level(0.9e-4, self.LEVELS), "tf32")
        # TF32 that truncates its inputs: about 2.5 times the rounded level,
        # a third of bf16's.
        self.assertEqual(cq.precision_level(2.6e-4, self.LEVELS), "tf32")
        self.assertEqual(cq.precision_level(7e-4, self.LEVELS), "bf16")

    def test_the_levels_of_the_recorded_inputs(self):
        """Rounded to TF32 and to bf16, the recorded CPU observation's
        inputs give levels an order of magnitude apart, and its strict
        fp32 errors sit far below TF32's."""
        obs = RECORDED["precision"]
        for kind in ("matmul", "conv"):
            levels = obs["levels"][kind]
            self.assertGreater(levels["bf16"], 5 * levels["tf32"], kind)
            self.assertLess(obs["strict"][kind]["error"], levels["tf32"] / 50, kind)
            self.assertEqual(cq.precision_level(obs["strict"][kind]["error"], levels), "fp32")

    def test_the_recorded_cpu_settings(self):
        obs = copy.deepcopy(RECORDED["precision"])
        passed, detail, mistrusted = cq.precision_reading(obs)
        self.assertTrue(passed, detail)
        self.assertEqual(mistrusted, "")
        # No TF32 on the CPU: the TF32 claim is not decided by it.
        self.assertIsNone(cq.tf32_reading(obs)[0])
        self.assertTrue(cq.highest_conv_reading(obs)[0])
        self.assertIn("torch.backends.cuda.matmul.allow_tf32 = True: the bits of the strict setting on this matmul",
                      cq.no_effect_lines(obs))

    def tf32_like(self) -> dict:
        """The recorded observation as a TF32 GPU gives it: the TF32
        settings at the error of inputs rounded to TF32."""
        obs = copy.deepcopy(RECORDED["precision"])
        for s in obs["settings"]:
            tf32 = s.get("effect") == "tf32" or s["setting"].endswith("for a convolution")
            if tf32 and "missing" not in s:
                s.update(same_as_strict=False, level="tf32", error=obs["levels"][s["op"]]["tf32"])
        return obs

    def test_tf32_reduces_the_precision(self):
        passed, detail, _ = cq.tf32_reading(self.tf32_like())
        self.assertTrue(passed, detail)
        self.assertIn("matmul: error", detail)
        self.assertFalse(cq.highest_conv_reading(self.tf32_like())[0])
        self.assertTrue(cq.precision_reading(self.tf32_like())[0])

    def test_other_bits_at_fp32_s_error_are_no_tf32(self):
        obs = copy.deepcopy(RECORDED["precision"])
        for s in obs["settings"]:
            if "allow_tf32 = True" in s["setting"]:
                s["same_as_strict"] = False
        passed, detail, _ = cq.tf32_reading(obs)
        self.assertIsNone(passed, detail)
        self.assertIn("other bits (TF32 not used)", detail)

    def test_a_strict_setting_at_tf32_refutes(self):
        obs = self.tf32_like()
        strict = next(s for s in obs["settings"] if s["setting"] == "torch.set_float32_matmul_precision('highest')")
        strict.update(level="tf32", same_as_strict=False)
        passed, detail, _ = cq.precision_reading(obs)
        self.assertFalse(passed)
        self.assertIn("torch.set_float32_matmul_precision('highest'): matmul at tf32 precision", detail)
        self.assertIn("outside what it allows (fp32)", detail)

    def test_a_setting_this_version_lacks_is_named_not_judged(self):
        obs = copy.deepcopy(RECORDED["precision"])
        obs["settings"] = [dict(s, missing="PyTorch 2.8 has no fp32_precision settings (they arrived in 2.9)")
                           if "fp32_precision" in s["setting"] else s for s in obs["settings"]]
        passed, detail, _ = cq.precision_reading(obs)
        self.assertTrue(passed)
        self.assertIn("fp32_precision = 'tf32': not here (PyTorch 2.8 has no fp32_precision", detail)


class Compile(unittest.TestCase):
    SAME = {"same": True}
    MOVED = {"same": False, "fraction": 0.25, "max_rel": 3e-7}

    def seen(self) -> dict:
        controls = {"eager_one_ulp_away_differs": True, "random_order_sum_varies": True}
        return {"bits": {"versus_eager": dict(self.SAME), "run_to_run": dict(self.SAME), "controls": controls},
                "train": {"versus_eager": dict(self.SAME), "run_to_run": dict(self.SAME), "controls": controls},
                "deterministic": {"versus_eager": dict(self.SAME), "run_to_run": dict(self.SAME),
                                  "controls": controls},
                "alert": {"raised": {"eager": "put_ does not have a deterministic implementation", "compiled":
                                     "put_ does not have a deterministic implementation"},
                          "alert": {"eager": True, "compiled": True}}}

    def test_compiled_against_eager(self):
        self.assertTrue(cq.compile_eager_reading(self.seen())[0])
        moved = self.seen()
        moved["train"]["versus_eager"] = dict(self.MOVED)
        passed, detail, _ = cq.compile_eager_reading(moved)
        self.assertFalse(passed)
        self.assertIn("train: compiled against eager: 25.0% of elements differ", detail)

    def test_compiled_under_the_mode(self):
        self.assertTrue(cq.compile_deterministic_reading(self.seen())[0])
        varied = self.seen()
        varied["deterministic"]["run_to_run"] = dict(self.MOVED)
        self.assertFalse(cq.compile_deterministic_reading(varied)[0])
        silent = self.seen()
        silent["alert"]["alert"]["compiled"] = False
        passed, detail, _ = cq.compile_deterministic_reading(silent)
        self.assertFalse(passed)
        self.assertIn("compiled ran without the alert", detail)

    def test_a_failed_check_is_the_harness_error(self):
        failed = self.seen()
        failed["bits"] = {"error": "exit 1: Triton crashed"}
        self.assertIsNone(cq.compile_eager_reading(failed)[0])

    # A compiled function that did not run, as compiled.py records it.
    LAUNCHER = {"did_not_run": "InductorError: CalledProcessError: Command '['/usr/bin/gcc', '/tmp/tmpab12/main.c', "
                               "'-O3', '-shared', '-fPIC', '-o', '/tmp/tmpab12/cuda_utils.so', '-lcuda']' returned "
                               "non-zero exit status 1.",
                "need": "a C compiler and Python.h, with which Triton builds its launcher (its build failed)"}
    LOWERING = {"did_not_run": "BackendCompilerFailed: backend='inductor' raised: AssertionError: no lowering",
                "need": ""}

    def test_a_compiled_function_that_failed_to_build_refutes_nothing(self):
        """The alert check whose compiled put_ did not build: no "ran without
        the alert", no refutation; not evaluated for want of what the machine
        lacks (compile_needs), the harness's error where nothing is missing."""
        for did_not_run in (self.LAUNCHER, self.LOWERING):
            seen = self.seen()
            seen["alert"] = {"raised": {"eager": "RuntimeError: put_ does not have a deterministic implementation"},
                             "alert": {"eager": True}, **did_not_run}
            passed, detail, _ = cq.compile_deterministic_reading(seen)
            self.assertIsNone(passed, detail)
            self.assertNotIn("ran without the alert", detail)
            self.assertIn("put_(accumulate=False) under the mode did not run: ", detail)
            self.assertEqual(cq.compile_needs(seen), "" if not did_not_run["need"] else (
                "torch.compile could not run here, for want of a C compiler and Python.h, with which Triton "
                "builds its launcher (its build failed) (alert: " + did_not_run["did_not_run"] + ")"))
        # A check whose compiled function did not build tells nothing of its bits either.
        seen = self.seen()
        seen["deterministic"] = dict(self.LAUNCHER)
        passed, detail, _ = cq.compile_deterministic_reading(seen)
        self.assertIsNone(passed, "nothing ran to decide the bits: not evaluated, which compile_needs says why")
        self.assertIn("deterministic: the compiled function did not run", detail)
        self.assertIn("for want of a C compiler", cq.compile_needs(seen))
        # What did run still refutes: the bits that moved are an observation.
        seen["bits"] = dict(self.seen()["deterministic"], run_to_run=dict(self.MOVED))
        passed, detail, _ = cq._compile_reading(seen, ("bits", "deterministic"), "run_to_run", "run to run")
        self.assertIs(passed, False, detail)
        seen["deterministic"] = dict(self.LOWERING)
        self.assertIsNone(cq.compile_deterministic_reading(seen)[0], "no need named: the harness's error")

    def test_a_checks_process_names_what_the_machine_lacks_from_its_whole_stderr(self):
        import compiled
        gcc = ("/tmp/tmpab12/main.c:5:10: fatal error: Python.h: No such file or directory\n    5 | #include "
               "<Python.h>\ncompilation terminated.\n")
        out = compiled.read_child(0, json.dumps(self.LAUNCHER | {"need": ""}) + "\n", gcc)
        self.assertEqual(out["need"], "Python.h (the C headers of the interpreter), which Triton needs to build its "
                                      "launcher")
        died = compiled.read_child(1, "", gcc + "Traceback (most recent call last):\n  ...\nsubprocess."
                                   "CalledProcessError: Command '['/usr/bin/gcc', '/tmp/tmpab12/main.c', '-lcuda']' "
                                   "returned non-zero exit status 1.\n")
        self.assertEqual(set(died), {"did_not_run", "need"})
        self.assertIn("Python.h", died["need"])
        self.assertEqual(compiled.read_child(-11, "", "Fatal Python error: Segmentation fault\n"),
                         {"error": "exit -11: Fatal Python error: Segmentation fault"})
        self.assertEqual(compiled.read_child(0, '{"raised": {}, "alert": {}}', ""), {"raised": {}, "alert": {}})

    def test_a_wrapped_alert_as_compiled_records_it_is_the_alert(self):
        """compiled.py records the alert's whole line, wherever Dynamo put it."""
        seen = self.seen()
        seen["alert"] = {"raised": {"eager": "RuntimeError: put_ does not have a deterministic implementation, but "
                                             "you set 'torch.use_deterministic_algorithms(True)'.",
                                    "compiled": "RuntimeError: put_ does not have a deterministic implementation, "
                                                "but you set 'torch.use_deterministic_algorithms(True)'. You can "
                                                "turn off determinism just for this operation, or you can use the "
                                                "'warn_only=True' option"},
                         "alert": {"eager": True, "compiled": True}}
        passed, detail, _ = cq.compile_deterministic_reading(seen)
        self.assertTrue(passed, detail)
        self.assertIn("compiled raised", detail)

    def test_the_recorded_cpu_reading_ran_without_the_alert(self):
        """The CPU's recorded alert check (torch 2.15, reports/tests/data/
        invariance): both functions ran, the compiled put_ without the
        alert, an observation, read as one."""
        recorded = None
        data = ROOT / "reports" / "tests" / "data" / "invariance" / "torch-2.15.0" / "compile.jsonl"
        for line in data.read_text().splitlines():
            r = json.loads(line)
            for c in r.get("checks", []):
                observed = c.get("observed") or {}
                if "alert" in observed:
                    recorded = observed["alert"]
        self.assertIsNotNone(recorded)
        self.assertEqual(recorded["raised"]["compiled"], "")
        seen = self.seen()
        seen["alert"] = recorded
        passed, detail, _ = cq.compile_deterministic_reading(seen)
        self.assertIs(passed, False)
        self.assertIn("eager raised, compiled ran without the alert", detail)
        self.assertEqual(cq.compile_needs(seen), "")

    def test_a_control_that_did_not_vary_mistrusts(self):
        quiet = self.seen()
        quiet["bits"]["controls"]["eager_one_ulp_away_differs"] = False
        self.assertIn("control", cq.compile_eager_reading(quiet)[2])


def _torch_with_sdpa_kernel():
    try:
        import torch
        from torch.nn.attention import sdpa_kernel  # noqa: F401
        return torch
    except ImportError:
        return None


@unittest.skipIf(_torch_with_sdpa_kernel() is None, "this interpreter's torch has no torch.nn.attention.sdpa_kernel")
class OnTheCpu(unittest.TestCase):
    """The observation functions, run here on the CPU at small sizes: the
    same code a CUDA device runs."""

    def setUp(self):
        self.saved = cq.sizes()
        cq.SDPA_SHAPE, cq.BATCH, cq.WIDTH, cq.DTYPES = (2, 2, 32, 16), 80, 64, ("f32",)

    def tearDown(self):
        for k, v in self.saved.items():
            setattr(cq, k, tuple(v) if isinstance(v, list) else v)

    def test_attention(self):
        torch = _torch_with_sdpa_kernel()
        obs = cq.sdpa_observe(torch, "cpu", runs=2)
        self.assertTrue(obs["controls"]["run"]["varied"])
        self.assertNotIn("error", obs["fresh_process"])
        self.assertTrue(obs["controls"]["process"]["varied"])
        self.assertIn("raised", obs["backends"]["f32"]["CUDNN_ATTENTION"]["defaults"])
        self.assertTrue(cq.sdpa_repeatability_reading(obs)[0])

    def test_the_batch_grid_and_a_lever(self):
        torch = _torch_with_sdpa_kernel()
        grid = cq.grid_observe(torch, "cpu", levers=("defaults", "deterministic"))
        self.assertEqual(len([k for k in grid["rows"] if k.endswith("| defaults")]), len(cq.GRID_OPS))
        self.assertTrue(grid["controls"]["batch"]["varied"])
        self.assertEqual(set(grid["lever_costs"]), {"deterministic"})


if __name__ == "__main__":
    unittest.main()
