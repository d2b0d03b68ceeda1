"""The parser of use_deterministic_algorithms's docstring, on the wording of
several releases (no torch needed): every bullet becomes an entry, with its
list, operations, devices, direction and conditions; a condition the parser
does not know keeps the entry, marked not understood, with its text."""

from __future__ import annotations

import sys
import tempfile
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import documented  # noqa: E402
from test_children import stand_in_torch  # noqa: E402

DOC = """Sets whether PyTorch operations must use "deterministic"
    algorithms.

    The following normally-nondeterministic operations will act
    deterministically when ``mode=True``:

        * :class:`torch.nn.Conv1d` when called on CUDA tensor
        * :func:`torch.Tensor.__getitem__` when attempting to differentiate a CPU tensor
          and the index is a list of tensors
        * :func:`torch.Tensor.index_put` with ``accumulate=True`` when called on a CPU
          tensor
        * :func:`torch.Tensor.index_copy` when called on a CPU or CUDA tensor
        * :func:`torch.Tensor.scatter_reduce` when ``reduce='sum'`` or ``reduce='mean'`` and called on CUDA tensor

    The following normally-nondeterministic operations will throw a
    :class:`RuntimeError` when ``mode=True``:

        * :class:`torch.nn.MaxUnpool1d`
        * :func:`torch.nn.functional.interpolate` when attempting to differentiate a CUDA tensor
          and one of the following modes is used:

          - ``linear``
          - ``bilinear``

        * :func:`torch.Tensor.put_` when ``accumulate=False``
        * :func:`torch.nn.MaxPool2d`, :func:`torch.nn.MaxPool3d`, and :func:`torch.nn.AvgPool3d`
          when attempting to differentiate an MPS tensor
        * :func:`torch.nn.functional.interpolate` when attempting to differentiate an MPS tensor
          in some cases

    A handful of CUDA operations are nondeterministic if the CUDA version is
    10.2 or greater, unless the environment variable ``CUBLAS_WORKSPACE_CONFIG=:4096:8``
    If one of these environment variable configurations is not set, a :class:`RuntimeError`
    will be raised from these operations when called with CUDA tensors:

        * :func:`torch.mm`

    Some other list nobody has seen before:

        * :func:`torch.foo` when it is Tuesday

    Note that deterministic operations tend to have worse performance.
"""


class ParseTest(unittest.TestCase):
    def setUp(self) -> None:
        self.entries = documented.parse(DOC)
        self.by_text = {e.text.split(" ")[0]: e for e in self.entries}

    def test_every_bullet_is_an_entry(self) -> None:
        self.assertEqual(len(self.entries), 12)
        self.assertEqual([e.list for e in self.entries],
                         ["deterministic"] * 5 + ["throws"] * 6 + ["unknown"])

    def test_devices_direction_and_conditions(self) -> None:
        e = {x.id: x for x in self.entries}
        self.assertIn("deterministic:torch.nn.Conv1d:cuda", e)
        getitem = e["deterministic:torch.Tensor.__getitem__:cpu:backward:index=list of tensors"]
        self.assertTrue(getitem.backward)
        self.assertEqual(e["deterministic:torch.Tensor.index_put:cpu:accumulate=True"].conditions, {"accumulate": True})
        self.assertEqual(e["deterministic:torch.Tensor.index_copy:cpu/cuda"].devices, ["cpu", "cuda"])
        self.assertIn("deterministic:torch.Tensor.scatter_reduce:cuda:reduce=['sum', 'mean']", e)
        self.assertEqual(e["throws:torch.nn.MaxUnpool1d:any"].devices, [], "no device named: every device")
        self.assertEqual(e["throws:torch.nn.functional.interpolate:cuda:backward:mode=['linear', 'bilinear']"]
                         .conditions, {"mode": ["linear", "bilinear"]})
        pools = e["throws:torch.nn.MaxPool2d+torch.nn.MaxPool3d+torch.nn.AvgPool3d:mps:backward"]
        self.assertEqual(pools.ops, ["torch.nn.MaxPool2d", "torch.nn.MaxPool3d", "torch.nn.AvgPool3d"])
        mm = e["throws:torch.mm:cuda:CUBLAS_WORKSPACE_CONFIG=unset"]
        self.assertEqual(mm.devices, ["cuda"])

    def test_what_it_does_not_understand_is_kept_with_its_text(self) -> None:
        vague = [e for e in self.entries if not e.understood]
        self.assertEqual(len(vague), 2)
        self.assertEqual(vague[0].leftover, "in some cases")
        self.assertIn("when attempting to differentiate an MPS tensor in some cases", vague[0].text)
        self.assertEqual(vague[1].list, "unknown")
        self.assertIn("torch.foo", vague[1].text)
        self.assertEqual(len({e.id for e in self.entries}), len(self.entries), "ids are unique")

    def test_ids_do_not_depend_on_wording(self) -> None:
        a = documented.parse_entry("throws", ":func:`torch.kthvalue` with called on a CUDA tensor", {})
        b = documented.parse_entry("throws", ":func:`torch.kthvalue` when called on a CUDA tensor", {})
        self.assertEqual(a.id, b.id)
        self.assertTrue(a.understood)

    def test_the_alert_names_the_operation(self) -> None:
        self.assertTrue(documented._names_op("max_unpooling2d_forward_out does not have a deterministic "
                                             "implementation", "torch.nn.MaxUnpool1d"))
        self.assertTrue(documented._names_op("put_ does not have a deterministic implementation", "torch.Tensor.put_"))
        self.assertFalse(documented._names_op("index out of range in self", "torch.Tensor.put_"))


class FormsTest(unittest.TestCase):
    """An entry that names several forms is checked form by form: each mode,
    each reduction, a float32 and a complex64 tensor for "floating point or
    complex"; every combination where it names several kinds."""

    def labels(self, text: str) -> list[str]:
        return [documented.form_label(f) for f in documented.forms(documented.parse_entry("throws", text, {}))]

    def test_each_mode_reduction_and_dtype_is_a_form(self) -> None:
        e = {x.id: x for x in documented.parse(DOC)}
        interpolate = e["throws:torch.nn.functional.interpolate:cuda:backward:mode=['linear', 'bilinear']"]
        self.assertEqual(documented.forms(interpolate), [{"mode": "linear"}, {"mode": "bilinear"}])
        self.assertEqual(self.labels(":func:`torch.Tensor.scatter_reduce` when ``reduce='sum'`` or ``reduce='mean'`` "
                                     "and called on CUDA tensor"), ["reduce='sum'", "reduce='mean'"])
        self.assertEqual(self.labels(":func:`torch.cumsum` when called on a CUDA tensor when dtype is floating point "
                                     "or complex"), ["dtype=torch.float32", "dtype=torch.complex64"])
        # 2.15's index_reduce: two reductions by two dtypes.
        self.assertEqual(self.labels(":func:`torch.Tensor.index_reduce` with ``reduce='prod'\\'mean'`` when called on "
                                     "an MPS tensor with floating or complex dtype"),
                         ["reduce='prod', dtype=torch.float32", "reduce='prod', dtype=torch.complex64",
                          "reduce='mean', dtype=torch.float32", "reduce='mean', dtype=torch.complex64"])

    def test_an_entry_of_one_form_has_one_unlabelled_form(self) -> None:
        for text in (":class:`torch.nn.EmbeddingBag` when attempting to differentiate a CUDA tensor "
                     "when ``mode='max'``",
                     ":func:`torch.Tensor.scatter_reduce` when ``reduce='prod'`` and called on CUDA tensor",
                     ":class:`torch.nn.MaxUnpool1d`"):
            self.assertEqual(self.labels(text), [""], text)

    def test_the_alert_of_a_mode_names_that_modes_kernel(self) -> None:
        op = "torch.nn.functional.interpolate"
        alert = ("upsample_linear1d_backward_out_cuda does not have a deterministic implementation, but you set "
                 "'torch.use_deterministic_algorithms(True)'.")
        self.assertFalse(documented._names_op(alert, op), "interpolate's own name is not in the alert")
        self.assertTrue(documented._names_op(alert, op, documented._kernel(op, {"mode": "linear"})))
        self.assertFalse(documented._names_op(alert, op, documented._kernel(op, {"mode": "bilinear"})))
        self.assertEqual(documented._kernel(op, {"mode": ["linear", "bilinear"]}), "", "one form names one kernel")


# Raised as PyTorch raises them, from a file of the stand-in package: the
# alert, a missing kernel in the words of a release that raised it as a
# RuntimeError, and a dtype without a kernel.
PYTORCH_RAISES = r"""
def alert():
    raise RuntimeError("put_ does not have a deterministic implementation, but you set "
                       "'torch.use_deterministic_algorithms(True)'. You can turn off determinism ...")


def no_backend():
    raise RuntimeError("Could not run 'aten::resize_' with arguments from the 'QuantizedCUDA' backend. This could "
                       "be because the operator doesn't exist for this backend")


def no_dtype():
    raise NotImplementedError('"index_func_" not implemented for \'ComplexFloat\'')
"""


class CannotRunTest(unittest.TestCase):
    """PyTorch's refusal to run an operation at all on a device or in a form
    (no kernel for that backend or dtype) is told from the determinism alert
    and from the probe's own failure, by what PyTorch says."""

    def setUp(self) -> None:
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)
        self.torch = stand_in_torch(Path(self.tmp.name))
        self.raises: dict = {}
        exec(compile(PYTORCH_RAISES, str(Path(self.tmp.name) / "torch" / "ops.py"), "exec"), self.raises)

    def said(self, fn) -> str:
        try:
            fn()
        except Exception as e:  # noqa: BLE001 - what cannot_run says of it is the test
            return documented.cannot_run(e, self.torch)
        self.fail("it did not raise")

    def test_pytorchs_missing_kernel_is_its_reason(self) -> None:
        self.assertEqual(self.said(self.torch.unsupported),
                         "NotImplementedError: Could not run 'aten::conv' with arguments from the 'CPU' backend")
        self.assertEqual(self.said(self.raises["no_backend"]),
                         "RuntimeError: Could not run 'aten::resize_' with arguments from the 'QuantizedCUDA' backend")
        self.assertEqual(self.said(self.raises["no_dtype"]),
                         "NotImplementedError: \"index_func_\" not implemented for 'ComplexFloat'")

    def test_the_alert_and_other_refusals_are_not(self) -> None:
        self.assertEqual(self.said(self.raises["alert"]), "")
        self.assertEqual(self.said(self.torch.conv), "")

    def test_the_probes_own_error_in_pytorchs_words_is_not(self) -> None:
        def ours():
            raise NotImplementedError("Could not run 'aten::resize_' with arguments from the 'QuantizedCUDA' backend")
        self.assertEqual(self.said(ours), "")


if __name__ == "__main__":
    unittest.main()
