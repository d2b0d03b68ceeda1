"""How the cuBLAS probe reads its children (no torch, no device): the lines
are the child's own child_line on PyTorch's alert text, as
aten/src/ATen/Context.cpp words it (alertCuBLASConfigNotDeterministic), and
on what a release without the alert does."""

from __future__ import annotations

import sys
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import readings  # noqa: E402

ALERT = ("Deterministic behavior was enabled with either `torch.use_deterministic_algorithms(True)` or "
         "`at::Context::setDeterministicAlgorithms(true)`, but this operation is not deterministic because it uses "
         "CuBLAS and you have CUDA >= 10.2. To enable deterministic behavior in this case, you must set an "
         "environment variable before running your PyTorch application: CUBLAS_WORKSPACE_CONFIG=:4096:8 or "
         "CUBLAS_WORKSPACE_CONFIG=:16:8. For more information, go to "
         "https://docs.nvidia.com/cuda/cublas/index.html#results-reproducibility")


def runs(unset: str, warn_only: str, set_: str) -> dict[str, dict]:
    return {"unset": readings.read_child(unset), "unset, warn_only": readings.read_child(warn_only),
            ":4096:8": readings.read_child(set_)}


class CublasConfigReadingTest(unittest.TestCase):
    def test_a_release_with_the_alert_holds_the_rule(self):
        seen = runs(readings.child_line("raised", ALERT, None), readings.child_line("warned", ALERT, True),
                    readings.child_line("ran", "", True))
        self.assertTrue(readings.cublas_config_holds(seen))
        self.assertLessEqual(len(seen["unset"]["message"]), 300)
        self.assertNotIn("CUBLAS_WORKSPACE_CONFIG", seen["unset"]["message"],
                         "the excerpt ends before the variable: it is read on the whole message")
        self.assertEqual(readings.describe_child(seen[":4096:8"]), "ran; 10 runs bitwise equal")
        self.assertTrue(readings.describe_child(seen["unset"]).startswith("raised: Deterministic behavior"))

    def test_a_release_without_the_alert_refutes_it(self):
        seen = runs(readings.child_line("ran", "", True), readings.child_line("ran", "", True),
                    readings.child_line("ran", "", True))
        self.assertFalse(readings.cublas_config_holds(seen))

    def test_an_error_that_does_not_name_the_variable_is_not_the_alert(self):
        oom = "CUDA out of memory. Tried to allocate 2.00 MiB"
        seen = runs(readings.child_line("raised", oom, None), readings.child_line("warned", ALERT, True),
                    readings.child_line("ran", "", True))
        self.assertFalse(readings.cublas_config_holds(seen))

    def test_runs_that_differ_under_the_variable_refute_it(self):
        seen = runs(readings.child_line("raised", ALERT, None), readings.child_line("warned", ALERT, True),
                    readings.child_line("ran", "", False))
        self.assertFalse(readings.cublas_config_holds(seen))
        self.assertEqual(readings.describe_child(seen[":4096:8"]), "ran; runs differ")

    def test_output_that_is_not_the_childs_is_an_error_not_a_verdict(self):
        for out in ("", "Segmentation fault", '{"result": 1}', "ran; 10 runs bitwise equal"):
            with self.assertRaises(ValueError):
                readings.read_child(out)
        # Anything the child's torch printed before its line is passed over.
        self.assertEqual(readings.read_child("a warning\n" + readings.child_line("ran", "", True))["outcome"], "ran")


if __name__ == "__main__":
    unittest.main()


class MklVerboseTest(unittest.TestCase):
    """oneMKL's verbose lines, as torch.backends.mkl.verbose made them print
    (PyTorch 2.15.0's wheel, oneMKL 2024.0)."""

    CAPTURE = ("MKL_VERBOSE oneMKL 2024.0 Update 2 Product build 20240605 for Intel(R) 64 architecture Intel(R) "
               "Architecture processors, Lnx 2.45GHz lp64 gnu_thread\n"
               "MKL_VERBOSE SGEMM(N,N,64,64,64,0x7ffe56b4f040,0x563dc2abec80,64,0x563dc2abec80,64,0x7ffe56b4f060,"
               "0x563dc2ac2d00,64) 16.09ms CNR:OFF Dyn:1 FastMM:1 TID:0  NThr:2\n"
               "onednn_verbose,v1,primitive,exec,cpu,convolution,brg_conv_fwd:avx2,forward_training\n"
               "MKL_VERBOSE SGEMM(N,N,8,8,8,0x1,0x2,8,0x3,8,0x4,0x5,8) 1.1us CNR:OFF Dyn:1 FastMM:1 TID:0  NThr:2\n")

    def test_routines(self) -> None:
        self.assertEqual(readings.mkl_routines(self.CAPTURE), ["SGEMM"])
        self.assertEqual(readings.mkl_routines(self.CAPTURE.replace("SGEMM", "DGEMM", 1)), ["DGEMM", "SGEMM"])

    def test_the_banner_alone_names_no_routine(self) -> None:
        self.assertEqual(readings.mkl_routines(self.CAPTURE.splitlines()[0]), [])
        self.assertEqual(readings.mkl_routines(""), [])


    def test_the_report_names_the_branch_and_the_cnr_mode(self) -> None:
        said = readings.mkl_report(self.CAPTURE)
        self.assertEqual((said["branch"], said["cnr"]), ("generic", "off"))
        self.assertTrue(said["banner"].startswith("oneMKL 2024.0"))
        # The banner of oneMKL's AVX-512 branch on an Intel Xeon, with and without AMX.
        avx512 = self.CAPTURE.replace("Intel(R) Architecture processors", "Intel(R) Advanced Vector Extensions 512 "
                                      "(Intel(R) AVX-512) with support for INT8, BF16, FP16 (limited) instructions")
        self.assertEqual(readings.mkl_report(avx512)["branch"], "avx512")
        amx = avx512.replace("instructions,", "instructions, and Intel(R) Advanced Matrix Extensions (Intel(R) AMX),")
        self.assertEqual(readings.mkl_report(amx)["branch"], "avx512_amx")
        self.assertEqual(readings.mkl_report(self.CAPTURE.replace("CNR:OFF", "CNR:AUTO,STRICT"))["cnr"], "auto,strict")
        # Calls that disagree name no mode; no banner, no report.
        self.assertEqual(readings.mkl_report(self.CAPTURE.replace("CNR:OFF", "CNR:AVX2", 1))["cnr"], "")
        self.assertEqual(readings.mkl_report("\n".join(self.CAPTURE.splitlines()[1:])), {})


class ThreadLeverTest(unittest.TestCase):
    """A thread lever read from its two processes (invariance.threads_child's
    output, constructed as it prints it)."""

    @staticmethod
    def child(moved: tuple[str, ...], varied: bool = True, ms: float = 2.0, blas: bool = True) -> dict:
        cells = {f"{op} | {v}": ({"same": False, "fraction": 0.87} if op in moved else {"same": True})
                 for op in ("mm", "addmm", "linear") for v in ("defaults", "deterministic")}
        return {"cells": cells, "control_varied": varied, "mm_ms": ms, "reps": 15,
                "blas": {"branch": "avx512", "cnr": "auto,strict"} if blas else {}}

    def read(self, base: dict, under: dict) -> dict:
        return readings.thread_lever("MKL_CBWR=AUTO,STRICT", ["mm", "addmm", "linear"], base, under)

    def test_a_lever_that_holds_what_moved_is_named_with_its_cost(self) -> None:
        lever = self.read(self.child(("mm", "addmm", "linear")), self.child((), ms=3.0))
        self.assertEqual((lever["fixes"], lever["still_differ"]), (["addmm", "linear", "mm"], []))
        self.assertAlmostEqual(lever["cost"]["ratio"]["cpu"], 1.5)
        self.assertEqual(lever["level"], "threads")

    def test_what_still_moves_under_the_lever_is_not_held(self) -> None:
        lever = self.read(self.child(("mm", "addmm")), self.child(("addmm",)))
        self.assertEqual((lever["fixes"], lever["still_differ"]), (["mm"], ["addmm"]))

    def test_without_a_positive_control_the_lever_is_not_evaluated(self) -> None:
        # Nothing moved without the lever: nothing for it to hold, whatever it shows.
        self.assertIn("nothing for it to hold", self.read(self.child(()), self.child(()))["not_evaluated"])
        # The thread count did not reach one of the processes.
        self.assertIn("not trusted", self.read(self.child(("mm",)), self.child((), varied=False))["not_evaluated"])
        # Not oneMKL: MKL_CBWR reaches nothing.
        self.assertIn("not the BLAS", self.read(self.child(("mm",)), self.child((), blas=False))["not_evaluated"])

    def test_a_process_that_failed_is_an_error(self) -> None:
        lever = self.read({"error": "ImportError: x"}, self.child(()))
        self.assertIn("ImportError", lever["error"])
        self.assertNotIn("fixes", lever)


class ChildLevelTest(unittest.TestCase):
    """One child level of the invariance grid, read from what its children
    printed (invariance.digests()): PyTorch's refusal of an operation under
    the level's setting is that cell's observation; a child that failed is
    the harness's error; a level PyTorch refused whole has a control that
    did not vary."""

    ONEDNN = "RuntimeError: could not create a primitive descriptor iterator"
    SETTING = "ONEDNN_MAX_CPU_ISA=SSE41"
    NAMES = ["mm", "conv1d", "conv2d"]

    def base(self) -> dict:
        return {"controls": {"isa": "c0"}, "refused": {}, "readings_refused": {}}

    def read(self, child: dict, base: dict | None = None) -> dict:
        return readings.child_level("isa", self.SETTING, base or self.base(), child, self.NAMES)

    def test_a_refused_operation_is_its_cells_observation_the_others_are_compared(self):
        read = self.read({"controls": {"isa": "c1"}, "refused": {"conv1d": self.ONEDNN}, "readings_refused": {}})
        self.assertEqual(read["cells"], {"mm": None, "conv1d": {"refused": self.ONEDNN, "setting": self.SETTING},
                                         "conv2d": None})
        self.assertEqual(read["refused"], {"setting": self.SETTING, "ops": {"conv1d": self.ONEDNN}, "reading": "",
                                           "whole": False})
        self.assertTrue(read["varied"])

    def test_a_level_refused_whole_or_in_its_reading_has_a_control_that_did_not_vary(self):
        every = {name: self.ONEDNN for name in self.NAMES}
        read = self.read({"controls": {"isa": "c1"}, "refused": every, "readings_refused": {}})
        self.assertTrue(read["refused"]["whole"])
        self.assertFalse(read["varied"], "the control differs, but no operation ran under the setting")
        read = self.read({"controls": {"isa": "c1"}, "refused": {}, "readings_refused": {"isa": self.ONEDNN}})
        self.assertEqual(read["refused"]["reading"], self.ONEDNN)
        self.assertFalse(read["refused"]["whole"])
        self.assertFalse(read["varied"], "the ISA the control rests on was not read")
        self.assertEqual(set(read["cells"].values()), {None})

    def test_a_child_that_failed_is_an_error_not_a_refusal(self):
        read = self.read({"error": "Traceback: KeyError: 'mm'"})
        self.assertEqual(read["cells"], {name: {"error": "Traceback: KeyError: 'mm'"} for name in self.NAMES})
        self.assertEqual(read["refused"], {})
        self.assertFalse(read["varied"])

    def test_an_operation_refused_without_a_setting_is_not_the_levels_refusal(self):
        base = dict(self.base(), refused={"mm": self.ONEDNN})
        read = self.read({"controls": {"isa": "c1"}, "refused": {"mm": self.ONEDNN}, "readings_refused": {}}, base)
        self.assertEqual(read["cells"]["mm"], {"refused": self.ONEDNN, "setting": "a fresh process with the defaults"})
        self.assertEqual(read["refused"], {})
        self.assertTrue(read["varied"])
