"""Items through resuming children (probes/children.py), with plain
Python children: a crash and a hang each cost the item they struck, the
next child goes on from the item after, and a child that writes much to its
stderr is not taken for a hung one. PyTorch's refusal of an operation is
told from the probe's own failure, with a stand-in package named torch
whose functions raise as PyTorch's do."""

from __future__ import annotations

import importlib.util
import sys
import tempfile
import threading
import unittest
from pathlib import Path

PROBES = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(PROBES))
import children  # noqa: E402

# A stand-in for PyTorch: a package named torch whose operations raise as
# PyTorch's do under a setting it refuses (oneDNN under an ISA cap), or on
# arguments it rejects.
TORCH = r"""
def conv(*args):
    raise RuntimeError("could not create a primitive descriptor iterator")


def unsupported(*args):
    raise NotImplementedError("Could not run 'aten::conv' with arguments from the 'CPU' backend.")


def compiled(*args):
    raise RuntimeError("backend='inductor' raised:\nInvalidCxxCompiler: No working C++ compiler found\n\nmore")


# Dynamo's and Inductor's exceptions in the shapes torch/_dynamo/exc.py and
# torch/_inductor/exc.py give them (PyTorch 2.11): BackendCompilerFailed's
# "backend='inductor' raised:\nTYPE: MESSAGE", raised from None with the inner
# exception kept; Dynamo's note appended to the message.
class TorchDynamoException(RuntimeError):
    pass


TorchDynamoException.__module__ = "torch._dynamo.exc"


class BackendCompilerFailed(TorchDynamoException):
    def __init__(self, backend_name, inner_exception):
        self.backend_name, self.inner_exception = backend_name, inner_exception
        super().__init__(f"backend={backend_name!r} raised:\n{type(inner_exception).__name__}: {inner_exception}")


class InductorError(BackendCompilerFailed):
    def __init__(self, inner_exception):
        self.inner_exception = inner_exception
        TorchDynamoException.__init__(self, f"{type(inner_exception).__name__}: {inner_exception}")


class TorchRuntimeError(TorchDynamoException):
    pass


NOTE = ("\n\nSet TORCHDYNAMO_VERBOSE=1 for the internal stack trace (please do this especially if you're reporting a "
        "bug to PyTorch). For even more developer context, set TORCH_LOGS=\"+dynamo\"\n")
ALERT = ("put_ does not have a deterministic implementation, but you set 'torch.use_deterministic_algorithms(True)'. "
         "You can turn off determinism just for this operation, or you can use the 'warn_only=True' option, if "
         "that's acceptable for your application. You can also file an issue at "
         "https://github.com/pytorch/pytorch/issues to help us prioritize adding deterministic support for this "
         "operation.")


def wrapped_alert(*args):
    e = BackendCompilerFailed("inductor", RuntimeError(ALERT))
    e.args = (e.args[0] + NOTE,)
    raise e from None


def chained_alert(*args):
    try:
        raise RuntimeError(ALERT)
    except RuntimeError as inner:
        raise TorchRuntimeError("Dynamo failed to run FX node with fake tensors: call_method put_(*(FakeTensor(..., "
                                "size=(16,)), FakeTensor(..., size=(4,), dtype=torch.int64)), **{'accumulate': "
                                "False}): got an exception") from inner


def launcher_build(*args):
    import subprocess
    inner = subprocess.CalledProcessError(1, ["/usr/bin/gcc", "/tmp/tmpab12/main.c", "-O3", "-shared", "-fPIC",
                                              "-Wno-psabi", "-o", "/tmp/tmpab12/cuda_utils.cpython-311-x86_64-linux"
                                              "-gnu.so", "-lcuda", "-L/usr/lib/x86_64-linux-gnu",
                                              "-I/opt/venv/include/python3.11"])
    raise InductorError(inner) from None


def lowering_failed(*args):
    raise BackendCompilerFailed("inductor", AssertionError("no lowering for aten.put_")) from None


def no_cc(*args):
    raise RuntimeError("Failed to find C compiler. Please specify via CC environment variable.")


def rejects(*args):
    raise TypeError("conv(): argument 'input' must be Tensor, not str")


def add(a, b):
    return a + b
"""


def stand_in_torch(where: Path):
    """The stand-in package, imported from `where` under its own name."""
    (where / "torch").mkdir()
    (where / "torch" / "__init__.py").write_text(TORCH)
    spec = importlib.util.spec_from_file_location("torch_stand_in", where / "torch" / "__init__.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# A child that runs ITEMS from START, each an operation through
# children.call on the stand-in torch; PyTorch's refusal is the item's
# observation, any other exception kills the child.
REFUSING_CHILD = r"""
import json, sys, threading
sys.path[:0] = [sys.argv[2], sys.argv[3]]
import torch, children
start, items = int(sys.argv[1]), sys.argv[4:]


def ours(*args):
    raise RuntimeError("the probe's own check failed")


OPS = {"ok": lambda: children.call(torch.add, torch, 1, 2),
       "refused": lambda: children.call(torch.conv, torch, "x"),
       "native": lambda: children.call(lambda: threading.Lock().release(), torch),
       "bug": lambda: children.call(ours, torch),
       "setup": lambda: torch.conv("x")}
for i in range(start, len(items)):
    print(json.dumps({"start": i, "item": items[i]}), flush=True)
    try:
        out = {"result": OPS[items[i]]()}
    except children.Refused as e:
        out = {"refused": str(e)}
    print(json.dumps({"item": items[i], "index": i, **out}), flush=True)
"""

# A child: runs ITEMS from START on; "ok" answers, "crash" dies, "hang"
# sleeps, "loud" writes 1 MB to stderr first. It counts its own starts in
# the file COUNT, so that the test sees how many children ran.
CHILD = r"""
import json, os, sys, time
start, count, items = int(sys.argv[1]), sys.argv[2], sys.argv[3:]
with open(count, "a") as f:
    f.write("child\n")
for i in range(start, len(items)):
    print(json.dumps({"start": i, "item": items[i]}), flush=True)
    if items[i] == "crash":
        print("boom in", items[i], file=sys.stderr, flush=True)
        os._exit(3)
    if items[i] == "hang":
        time.sleep(60)
    if items[i] == "loud":
        sys.stderr.write("x" * (1 << 20) + "\n")
        sys.stderr.flush()
    print(json.dumps({"item": items[i], "index": i, "pid": os.getpid()}), flush=True)
"""


class ChildrenTest(unittest.TestCase):
    def run_items(self, items: list[str], tmp: Path) -> tuple[list[dict], int]:
        script, count = tmp / "child.py", tmp / "count"
        script.write_text(CHILD)
        records = children.run_resuming(lambda start: [sys.executable, str(script), str(start), str(count), *items],
                                        len(items), hang_s=2.0)
        return records, len(count.read_text().splitlines())

    def test_a_crash_and_a_hang_cost_their_item_only(self) -> None:
        import tempfile
        with tempfile.TemporaryDirectory() as tmp:
            items = ["ok", "crash", "ok", "loud", "hang", "ok", "ok"]
            records, started = self.run_items(items, Path(tmp))
        self.assertEqual([r["index"] for r in records], list(range(len(items))))
        self.assertEqual([r["item"] for r in records], items)
        self.assertEqual(records[1]["error"], "the process died (exit 3): boom in crash")
        self.assertEqual(records[4]["error"], "hung: no answer in 2 s")
        self.assertEqual([i for i, r in enumerate(records) if "error" in r], [1, 4])
        # Three children: the first, one after the crash, one after the hang;
        # each took every item it reached (the loud one did not stall).
        self.assertEqual(started, 3)
        self.assertEqual(records[2]["pid"], records[3]["pid"])
        self.assertEqual(records[5]["pid"], records[6]["pid"])

    def test_one_child_takes_every_item_when_none_fails(self) -> None:
        import tempfile
        with tempfile.TemporaryDirectory() as tmp:
            records, started = self.run_items(["ok"] * 5, Path(tmp))
        self.assertEqual(started, 1)
        self.assertEqual(len({r["pid"] for r in records}), 1)
        self.assertFalse(any("error" in r for r in records))


class RefusalTest(unittest.TestCase):
    """An exception PyTorch raised while an operation ran is its refusal (an
    observation); one of the probe's own code is not."""

    def setUp(self) -> None:
        self.tmp = tempfile.TemporaryDirectory()
        self.torch = stand_in_torch(Path(self.tmp.name))

    def tearDown(self) -> None:
        self.tmp.cleanup()

    def refused(self, fn, *args) -> str:
        with self.assertRaises(children.Refused) as caught:
            children.call(fn, self.torch, *args)
        return str(caught.exception)

    def test_pytorchs_runtime_errors_are_its_refusals(self) -> None:
        self.assertEqual(self.refused(self.torch.conv, "x"),
                         "RuntimeError: could not create a primitive descriptor iterator")
        self.assertEqual(self.refused(self.torch.unsupported),
                         "NotImplementedError: Could not run 'aten::conv' with arguments from the 'CPU' backend.")
        self.assertEqual(children.call(self.torch.add, self.torch, 1, 2), 3)

    def test_a_native_functions_runtime_error_in_the_operation_is_pytorchs(self) -> None:
        # PyTorch's C++ raises from a native function: here, a lock's.
        why = self.refused(lambda: threading.Lock().release())
        self.assertTrue(why.startswith("RuntimeError: "), why)

    def test_the_probes_own_raise_is_not_a_refusal(self) -> None:
        def ours():
            raise RuntimeError("the probe's own check failed")
        with self.assertRaises(RuntimeError) as caught:
            children.call(ours, self.torch)
        self.assertNotIsInstance(caught.exception, children.Refused)
        self.assertEqual(children.refusal(caught.exception, self.torch), "")

    def test_a_recursion_in_the_probes_code_is_not_a_refusal(self) -> None:
        def deeper(n):
            return deeper(n + 1)
        with self.assertRaises(RecursionError):
            children.call(deeper, self.torch, 0)

    def test_an_argument_pytorch_rejects_is_not_a_refusal(self) -> None:
        """A TypeError says the probe called PyTorch wrongly: its own error."""
        with self.assertRaises(TypeError):
            children.call(self.torch.rejects, self.torch, "x")


class CompiledTest(unittest.TestCase):
    """Only a run is evidence: a compiled function that did not run is
    DidNotRun, naming what the machine lacks where its failure says so;
    PyTorch's alert is recognised whole, through Dynamo's wrapping, on
    exceptions in the shapes Dynamo and Inductor raise."""

    def setUp(self) -> None:
        self.tmp = tempfile.TemporaryDirectory()
        self.torch = stand_in_torch(Path(self.tmp.name))

    def tearDown(self) -> None:
        self.tmp.cleanup()

    def did_not_run(self, fn) -> children.DidNotRun:
        with self.assertRaises(children.DidNotRun) as caught:
            children.call(fn, self.torch)
        return caught.exception

    def test_the_alert_is_recognised_whole_through_dynamos_wrapping(self) -> None:
        for fn in (self.torch.wrapped_alert, self.torch.chained_alert):
            with self.assertRaises(children.Refused) as caught:
                children.call(fn, self.torch)
            said = caught.exception.message
            self.assertTrue(said.startswith("RuntimeError: put_ does not have a deterministic implementation"), said)
            self.assertIn("'warn_only=True' option", said, "the words past 200 characters are kept")
        # Cut at the first line, as the alert check once read it, the wrapped alert is lost.
        try:
            self.torch.wrapped_alert()
        except RuntimeError as e:
            self.assertNotIn(children.ALERT, str(e).strip().splitlines()[0][:200])
            self.assertEqual(children.alert_line(e), "RuntimeError: " + self.torch.ALERT)
            self.assertIsNone(children.did_not_run(e), "the alert is PyTorch's answer, not a failure to run")

    def test_a_compiled_function_that_failed_to_build_did_not_run(self) -> None:
        launcher = self.did_not_run(self.torch.launcher_build)
        self.assertEqual(launcher.need, "a C compiler and Python.h, with which Triton builds its launcher (its build "
                                        "failed)")
        self.assertIn("InductorError: CalledProcessError: Command '['/usr/bin/gcc', '/tmp/tmpab12/main.c'", str(launcher))
        self.assertIn("C++ compiler", self.did_not_run(self.torch.compiled).need)
        self.assertIn("a C compiler (CC)", self.did_not_run(self.torch.no_cc).need)
        # Dynamo or Inductor failing for no missing need: it did not run, an error.
        lowering = self.did_not_run(self.torch.lowering_failed)
        self.assertEqual(lowering.need, "")
        self.assertTrue(str(lowering).startswith("BackendCompilerFailed: backend='inductor' raised: AssertionError: "
                                                 "no lowering for aten.put_"), str(lowering))

    def test_the_whole_text_follows_the_chain_once(self) -> None:
        try:
            self.torch.chained_alert()
        except RuntimeError as e:
            self.assertEqual([type(x).__name__ for x in children.chain(e)], ["TorchRuntimeError", "RuntimeError"])
            e.__cause__.__context__ = e  # a loop is followed once
            self.assertEqual(len(children.chain(e)), 2)
        self.assertEqual(children.need_in("fatal error: Python.h: No such file or directory\n"),
                         children.NEEDS[0][1])
        self.assertEqual(children.need_in("RuntimeError: CUDA error: out of memory"), "")


def _torch():
    try:
        import torch
        import torch._dynamo.exc  # noqa: F401
        return torch
    except ImportError:
        return None


@unittest.skipIf(_torch() is None, "this interpreter has no torch with Dynamo")
class RealDynamoTest(unittest.TestCase):
    """The same, on the exceptions of the installed torch: Dynamo's own
    BackendCompilerFailed around a backend that fails, as torch.compile
    raises it on the CPU."""

    def compiled(self, backend):
        torch = _torch()
        torch._dynamo.reset()
        return torch, torch.compile(lambda x: x + 1, backend=backend)

    def test_a_backend_in_which_pytorch_raised_the_alert(self) -> None:
        def alerting(gm, example_inputs):
            # PyTorch's own alert, raised while the backend compiles.
            torch.zeros(4).put_(torch.tensor([0, 0]), torch.ones(2), accumulate=False)
            return gm
        torch, fn = self.compiled(alerting)
        torch.use_deterministic_algorithms(True)
        try:
            with self.assertRaises(children.Refused) as caught:
                children.call(fn, torch, torch.ones(4))
        finally:
            torch.use_deterministic_algorithms(False)
        self.assertEqual(caught.exception.kind, "BackendCompilerFailed")
        self.assertTrue(caught.exception.message.startswith("RuntimeError: put_ does not have a deterministic "
                                                            "implementation"), caught.exception.message)
        self.assertIn("'warn_only=True' option", caught.exception.message)

    def test_a_backend_whose_launcher_did_not_build(self) -> None:
        import subprocess

        def building(gm, example_inputs):
            raise subprocess.CalledProcessError(1, ["cc", "/tmp/t/main.c", "-o", "/tmp/t/m.so", "-lcuda"])
        torch, fn = self.compiled(building)
        with self.assertRaises(children.DidNotRun) as caught:
            children.call(fn, torch, torch.ones(4))
        self.assertIn("Triton builds its launcher", caught.exception.need)
        self.assertIn("backend='building' raised", str(caught.exception))


class RefusingChildTest(unittest.TestCase):
    """A child whose operation PyTorch refuses records that item's refusal
    and goes on; one whose own code fails dies: that item's error."""

    def test_a_refusal_is_the_items_observation_and_a_failure_its_error(self) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            stand_in_torch(Path(tmp))
            script = Path(tmp) / "child.py"
            script.write_text(REFUSING_CHILD)
            items = ["ok", "refused", "native", "ok", "bug", "ok", "setup", "ok"]
            records = children.run_resuming(
                lambda start: [sys.executable, str(script), str(start), tmp, str(PROBES), *items], len(items), 20.0)
        self.assertEqual([r["item"] for r in records], items)
        self.assertEqual(records[1], {"item": "refused", "index": 1,
                                      "refused": "RuntimeError: could not create a primitive descriptor iterator"})
        self.assertIn("refused", records[2])
        self.assertEqual([i for i, r in enumerate(records) if "error" in r], [4, 6])
        self.assertIn("RuntimeError: the probe's own check failed", records[4]["error"])
        self.assertIn("RuntimeError: could not create a primitive descriptor iterator", records[6]["error"],
                      "PyTorch's error outside an operation (the probe's setup) stays the harness's")
        self.assertEqual([r.get("result") for r in records if r["item"] == "ok"], [3, 3, 3, 3])


if __name__ == "__main__":
    unittest.main()
