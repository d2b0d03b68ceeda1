"""use_deterministic_algorithms's own list judged form by form
(reports/documented.py): each mode, reduction or dtype an entry names gets
a verdict and the entry the gravest of them; an operation PyTorch cannot
run on a device is not evaluated there, with PyTorch's reason. On the H100
kit's recorded run (reports/tests/data/h100/torchpython-1, PyTorch
2.11.0+cu130, a record from before the probe checked each form) and on
constructed records of the probe as it is now."""

from __future__ import annotations

import tempfile
import unittest
from pathlib import Path

from reports import documented
from reports.evidence import read_evidence
from reports.page.folds import unfolded

ROOT = Path(__file__).resolve().parents[2]
H100 = ROOT / "reports" / "tests" / "data" / "h100" / "torchpython-1" / "evidence"
INTERPOLATE = "throws:torch.nn.functional.interpolate:cuda:backward:mode=['linear', 'bilinear', 'bicubic', 'trilinear']"
RESIZE = "throws:torch.Tensor.resize_:any:quantized=True"


def forms(row: dict) -> dict[str, str]:
    return {f["form"]: f["verdict"] for f in row["forms"]}


class RecordedH100Test(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        [(_, cls.listed)] = documented.judge(read_evidence([H100])).items()
        cls.rows = {e["id"]: e for e in cls.listed["entries"]}

    def test_an_operation_pytorch_cannot_run_on_cuda_is_not_evaluated_there(self) -> None:
        # A quantized tensor has no CUDA kernel for resize_: PyTorch's
        # NotImplementedError is not the alert the entry promises.
        row = self.rows[RESIZE]
        self.assertEqual(row["devices_seen"], {"cpu": "supported", "cuda": "not evaluated", "mps": "not evaluated"})
        self.assertEqual(row["verdict"], "supported", row["reason"])
        self.assertIn("CUDA: not evaluated (PyTorch cannot run torch.Tensor.resize_ on CUDA: Could not run "
                      "'aten::resize_' with arguments from the 'QuantizedCUDA' backend)", row["reason"])
        self.assertTrue(row["reason"].startswith("CPU: torch.Tensor.resize_ raised RuntimeError "
                                                 "'quantized_resize_cpu_ does not have a deterministic"), row["reason"])

    def test_interpolate_has_one_verdict_per_mode(self) -> None:
        # The record ran the four modes in one call under the mode; it stopped
        # at linear's alert, so only linear was seen to raise. With
        # warn_only=True bicubic warned, bilinear and trilinear did not.
        row = self.rows[INTERPOLATE]
        self.assertEqual(forms(row), {"mode='linear'": "supported", "mode='bilinear'": "inconclusive",
                                      "mode='bicubic'": "inconclusive", "mode='trilinear'": "inconclusive"})
        self.assertEqual(row["verdict"], "supported", "the gravest of its modes")
        reasons = {f["form"]: f["reason"] for f in row["forms"]}
        self.assertIn("raised RuntimeError 'upsample_linear1d_backward_out_cuda does not have",
                      reasons["mode='linear'"])
        self.assertIn("not run under use_deterministic_algorithms(True) (its modes ran in one call, which stopped "
                      "at the error of mode='linear')", reasons["mode='bilinear'"])
        self.assertIn("with warn_only=True it gave no warning", reasons["mode='bilinear'"])
        self.assertIn("with warn_only=True it warned: upsample_bicubic2d_backward_out_cuda", reasons["mode='bicubic'"])
        self.assertEqual(row["reason"], "CUDA: mode='linear': supported; mode='bilinear': inconclusive; "
                                        "mode='bicubic': inconclusive; mode='trilinear': inconclusive")

    def test_the_forms_the_older_probe_never_ran_are_not_evaluated(self) -> None:
        cumsum = self.rows["throws:torch.cumsum:cuda:dtype=floating"]
        self.assertEqual(forms(cumsum), {"dtype=torch.float32": "refuted", "dtype=torch.complex64": "not evaluated"})
        self.assertEqual(cumsum["verdict"], "refuted")
        scatter = self.rows["deterministic:torch.Tensor.scatter_reduce:cuda:reduce=['sum', 'mean']"]
        self.assertEqual(forms(scatter), {"reduce='sum'": "supported", "reduce='mean'": "not evaluated"})
        self.assertIn("ran reduce='sum' only", scatter["forms"][1]["reason"])
        self.assertEqual(self.rows["throws:torch.nn.NLLLoss:cuda"]["forms"], [], "one form: no list")

    def test_an_older_record_splits_by_the_kernel_the_alert_names(self) -> None:
        # Constructed: the one call stopped at bicubic's alert, so linear and
        # bilinear ran under the mode without one; trilinear did not run,
        # and the record's 3 warnings leave its warn_only unknown.
        alert = lambda mode: f"upsample_{mode}2d_backward_out_cuda does not have a deterministic implementation"
        modes = ["linear", "bilinear", "bicubic", "trilinear"]
        seen = {"mode_true": {"digest": "", "error": alert("bicubic"), "names_op": False, "warnings": []},
                "warn_only": {"digest": "w", "error": "", "warnings": [alert(m) for m in modes[:3]]},
                "mode_false": {"digest": "d", "error": "", "warnings": []}}
        entry = {"id": INTERPOLATE, "list": "throws", "conditions": {"mode": modes},
                 "result": {"devices": {"cuda": {"torch.nn.functional.interpolate": seen}}}}
        row = documented._entry(entry, "python3", True)
        self.assertEqual(forms(row), {"mode='linear'": "refuted", "mode='bilinear'": "refuted",
                                      "mode='bicubic'": "supported", "mode='trilinear'": "inconclusive"})
        self.assertIn("only the first 3 warnings", row["forms"][3]["reason"])

    def test_the_counts(self) -> None:
        self.assertEqual(self.listed["counts"], {"supported": 45, "refuted": 3})

    def test_the_page_lists_each_form(self) -> None:
        from reports.pipeline import Report
        from reports.page.render import write_report
        with tempfile.TemporaryDirectory() as out:
            page = unfolded(write_report(Path(out), Report.of([], [], read_evidence([H100]))).read_text())
        listed = page.split('id="documented-list"', 1)[1].split("</table>", 1)[0]
        self.assertEqual(listed.count('<ul class="documented-forms">'), 3)
        self.assertIn("CUDA <span class=\"mono\">mode=&#39;bicubic&#39;</span>: "
                      "<span class=\"v v-inconclusive\">inconclusive</span>", listed)


def alerted(kernel: str) -> dict:
    """A throwing form's runs as the probe records them: the alert, a warning, a result."""
    return {"mode_true": {"digest": "", "error": f"{kernel} does not have a deterministic implementation",
                          "kind": "RuntimeError", "cannot_run": "", "warnings": [], "names_op": True},
            "warn_only": {"digest": "d", "error": "", "kind": "", "cannot_run": "", "warnings": [f"{kernel} does not"]},
            "mode_false": {"digest": "d", "error": "", "kind": "", "cannot_run": "", "warnings": []}}


def no_kernel() -> dict:
    """A form PyTorch has no kernel for on the device: every run raised it."""
    run = {"digest": "", "error": "Could not run 'aten::cumsum.out' with arguments from the 'QuantizedCUDA' backend. "
                                  "This could be because", "kind": "NotImplementedError",
           "cannot_run": "NotImplementedError: Could not run 'aten::cumsum.out' with arguments from the "
                         "'QuantizedCUDA' backend", "warnings": []}
    return {"mode_true": dict(run, names_op=True), "warn_only": run, "mode_false": run}


class FormsTest(unittest.TestCase):
    """Records of the probe as it is now: one record per form."""

    def row(self, recorded_forms: dict, control_ok: bool = True) -> dict:
        entry = {"id": "throws:torch.op:cuda:mode=['a', 'b', 'c']", "list": "throws", "text": "t", "ops": ["torch.op"],
                 "devices": ["cuda"], "backward": False, "conditions": {"mode": ["a", "b", "c"]},
                 "result": {"devices": {"cuda": {"torch.op": {"forms": recorded_forms}}}}}
        return documented._entry(entry, "python3", control_ok)

    def test_the_entry_takes_the_gravest_of_its_forms(self) -> None:
        ran = dict(alerted("a_kernel"), mode_true={"digest": "d", "error": "", "kind": "", "cannot_run": "",
                                                   "warnings": [], "names_op": False})
        row = self.row({"mode='a'": alerted("a_kernel"), "mode='b'": ran, "mode='c'": no_kernel()})
        self.assertEqual(forms(row), {"mode='a'": "supported", "mode='b'": "refuted", "mode='c'": "not evaluated"})
        self.assertEqual(row["verdict"], "refuted")
        self.assertEqual(row["forms"][1]["reason"],
                         "torch.op with mode='b' ran without an error under use_deterministic_algorithms(True)")
        self.assertEqual(row["forms"][2]["reason"], "PyTorch cannot run torch.op with mode='c' on CUDA: "
                                                    "NotImplementedError: Could not run 'aten::cumsum.out' with "
                                                    "arguments from the 'QuantizedCUDA' backend")

    def test_no_form_runs_on_the_device_the_entry_is_not_evaluated(self) -> None:
        row = self.row({"mode='a'": no_kernel(), "mode='b'": no_kernel()})
        self.assertEqual(row["verdict"], "not evaluated")

    def test_the_alert_is_judged_not_taken_for_a_missing_kernel(self) -> None:
        # The probe said the error is not a missing kernel (cannot_run ""):
        # its words decide nothing, the entry is judged.
        said = alerted("a_kernel")
        said["warn_only"]["error"] = "Could not run 'aten::x' with arguments from the 'CPU' backend"
        self.assertEqual(forms(self.row({"mode='a'": said})), {"mode='a'": "refuted"})

    def test_a_missed_control_trusts_no_form(self) -> None:
        row = self.row({"mode='a'": alerted("a_kernel"), "mode='b'": no_kernel()}, control_ok=False)
        self.assertEqual(forms(row), {"mode='a'": "inconclusive", "mode='b'": "not evaluated"})
        self.assertIn("the check's own control missed", row["forms"][0]["reason"])


if __name__ == "__main__":
    unittest.main()
