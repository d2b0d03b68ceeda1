"""A census of determinism over PyTorch's own table of operations, OpInfo
(torch.testing._internal.common_methods_invocations.op_db, which needs the
expecttest package), for the installed torch, on the CPU in float32.

For every OpInfo with a float32 CPU sample, on its first SAMPLES samples
(every sample with --all, as the nightly tier runs it):

- under use_deterministic_algorithms(True): does it raise PyTorch's alert
  (a RuntimeError saying the operation has no deterministic implementation);
- under warn_only=True: does it warn instead;
- does its forward repeat its bits over two runs, and on 1 and 2 threads;
  its backward (the gradients of the outputs' sum) over two runs, where the
  OpInfo supports autograd;
- for the operations that return uninitialized memory (empty, empty_like,
  new_empty, empty_strided, empty_permuted), is it filled (NaN) under the
  mode with torch.utils.deterministic.fill_uninitialized_memory, where the
  version has it;
- past ATen's parallel grain (OpInfo's samples hold a few dozen elements,
  below it): the OpInfo's own inputs (reference_inputs where it defines
  them, sample_inputs otherwise) tiled along their first dimension until
  the input holds more than the grain times 2 elements, run under
  use_deterministic_algorithms(True) on 1 and 2 threads, each twice (_large).

The operations run in a child process, one JSON line each; a crash or a
hang costs that operation only (recorded as its error), and the census goes
on in a fresh child. Where PyTorch itself refuses a sample past its first
run (on one thread, under fill_uninitialized_memory), the sample records
PyTorch's refusal beside what it saw before ("refused", children.py), an
observation, and the census goes on. Held against
use_deterministic_algorithms's own list (documented.py's parser of this
torch's docstring), the report lists operations that raise but are not
listed, are listed as throwing but did not raise, and vary but are not
listed.

    python3 census.py run [N | --all]        the census, as JSON (N samples per operation)
    python3 census.py op NAME                every sample of one OpInfo, as JSON
    python3 census.py child START LIMIT      (child) from the START-th operation
"""

from __future__ import annotations

import json
import os
import sys
import time
import warnings
from typing import Any

# As torch_backends.py: the pinned wheels of a torch the harness does not manage.
sys.path[:0] = [p for p in os.environ.get("BACKENDCHECK_PROBE_PATH", "").split(os.pathsep) if p]

import children  # noqa: E402
from common import digest, first_line  # noqa: E402
import documented  # noqa: E402

# The samples per operation of the ci tier (the nightly tier runs every one:
# about 18,700 in 2.15, under a minute; 1.13's take 3.5 minutes on 2 cores).
SAMPLES = 4
# The further runs on each thread count that confirm a difference between
# 1 and 2 threads (only for a sample that showed one).
CONFIRM = 3
# An operation that has not answered in this long is hung.
HANG_S = 60.0
UNINITIALIZED = ("empty", "empty_like", "new_empty", "empty_strided", "empty_permuted")
# Past the grain: at most this many enlarged samples per operation (the
# nightly tier: LARGE_SAMPLES_ALL); an input tiled past this many elements is
# not tried; a doubling step slower than LARGE_SLOW_S ends a sample's growth.
LARGE_SAMPLES = 1
LARGE_SAMPLES_ALL = 4
# An operation past the grain starts no further input after this long, and
# stops at PyTorch's refusal under the mode (its next inputs would be refused
# as well) or at a step slower than LARGE_SLOW_S (the next would be slower).
LARGE_OP_S = 2.0
LARGE_MAX_ELEMENTS = 1 << 22
LARGE_SLOW_S = 1.0


def _op_db():
    """PyTorch's OpInfo table, or why it cannot be imported."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            from torch.testing._internal.common_methods_invocations import op_db
        return op_db, ""
    except ImportError as e:
        return None, str(e)


def _tensors(value: Any, torch) -> list:
    if isinstance(value, torch.Tensor):
        return [value] if value.layout == torch.strided else [value.to_dense()]
    if isinstance(value, (list, tuple)):
        return [t for v in value for t in _tensors(v, torch)]
    if isinstance(value, dict):
        return [t for v in value.values() for t in _tensors(v, torch)]
    return []


def _call(op, sample, torch):
    """The OpInfo's operation on one sample (PyTorch's refusal: children.Refused)."""
    return children.call(op, torch, sample.input, *sample.args, **sample.kwargs)


def _said(e: BaseException) -> str:
    """What PyTorch's own exception says (behind a Refused), its first line."""
    return first_line(e.__cause__ if isinstance(e, children.Refused) and e.__cause__ is not None else e)


def _alert(text: str) -> bool:
    return children.ALERT in text


def _check(op, sample, torch) -> dict[str, Any]:
    """One operation's checks on one sample; where PyTorch refuses the
    operation past its first run, what was seen before and "refused"."""
    out: dict[str, Any] = {}
    torch.set_num_threads(2)
    try:
        first = _call(op, sample, torch)
    except Exception as e:  # noqa: BLE001 - an operation that fails here is recorded, not the census's failure
        return {"fails": _said(e)}
    try:
        _more(out, first, op, sample, torch)
    except children.Refused as e:
        out["refused"] = str(e)
    return out


def _more(out: dict[str, Any], first, op, sample, torch) -> None:
    """The checks after the first run, into `out`."""
    out["repeats"] = digest(_tensors(first, torch)) == digest(_tensors(_call(op, sample, torch), torch))
    torch.set_num_threads(1)
    try:
        one = digest(_tensors(_call(op, sample, torch), torch))
        out["threads"] = digest(_tensors(first, torch)) == one
        if out["repeats"] and not out["threads"]:
            # A dependence on the thread count repeats itself on each count;
            # an operation that varies run to run can look like one by chance.
            ones = {one} | {digest(_tensors(_call(op, sample, torch), torch)) for _ in range(CONFIRM)}
            torch.set_num_threads(2)
            twos = {digest(_tensors(first, torch))} | {digest(_tensors(_call(op, sample, torch), torch))
                                                        for _ in range(CONFIRM)}
            if len(ones) > 1 or len(twos) > 1:
                out["repeats"], out["threads"] = False, None
    finally:
        torch.set_num_threads(2)
    torch.use_deterministic_algorithms(True)
    try:
        _call(op, sample, torch)
        out["raises"] = ""
    except children.Refused as e:
        out["raises"] = _said(e) if _alert(str(e.__cause__)) else ""
        if not out["raises"]:
            out["mode_error"] = _said(e)
    finally:
        torch.use_deterministic_algorithms(False)
    if out["raises"]:
        torch.use_deterministic_algorithms(True, warn_only=True)
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                _call(op, sample, torch)
            out["warns"] = any(_alert(str(w.message)) for w in caught)
        except children.Refused as e:
            out["warns"] = False
            out["warn_only_error"] = _said(e)
        finally:
            torch.use_deterministic_algorithms(False)
    if op.name in UNINITIALIZED:
        out["filled"] = _filled(op, sample, torch)
    if getattr(op, "supports_autograd", False):
        out["backward_repeats"] = _backward_repeats(op, sample, torch)


def _filled(op, sample, torch) -> bool | None:
    deterministic = getattr(getattr(torch, "utils", None), "deterministic", None)
    if deterministic is None or not hasattr(deterministic, "fill_uninitialized_memory"):
        return None
    before = deterministic.fill_uninitialized_memory
    deterministic.fill_uninitialized_memory = True
    torch.use_deterministic_algorithms(True)
    try:
        got = _tensors(_call(op, sample, torch), torch)
        return all(bool(t.isnan().all()) for t in got if t.is_floating_point())
    finally:
        torch.use_deterministic_algorithms(False)
        deterministic.fill_uninitialized_memory = before


def _backward_repeats(op, sample, torch) -> bool | None:
    grads = []
    for _ in range(2):
        leaf = sample.input.detach().clone().requires_grad_() if isinstance(sample.input, torch.Tensor) else None
        if leaf is None or not leaf.is_floating_point():
            return None
        try:
            outs = [t for t in _tensors(op(leaf, *sample.args, **sample.kwargs), torch) if t.requires_grad]
            if not outs:
                return None
            (grad,) = torch.autograd.grad(sum(t.sum() for t in outs), [leaf], allow_unused=True)
        except Exception:  # noqa: BLE001 - no backward for this sample: not checked
            return None
        grads.append(digest([grad]) if grad is not None else "")
    return grads[0] == grads[1]


class _Tiled:
    """A sample's operands, its tensors tiled (what _call reads of a sample)."""

    def __init__(self, input: Any, args: Any, kwargs: dict[str, Any]) -> None:
        self.input, self.args, self.kwargs = input, args, kwargs


def _inputs(op, torch) -> tuple[str, Any]:
    """Where an operation's inputs past the grain come from: its
    reference_inputs where the OpInfo defines them, else its sample_inputs."""
    if getattr(op, "reference_inputs_func", None) is not None:
        return "reference_inputs", op.reference_inputs("cpu", torch.float32, requires_grad=False)
    return "sample_inputs", op.sample_inputs("cpu", torch.float32, requires_grad=False)


def _numel(outputs: Any, torch) -> int:
    """The elements of an operation's tensor outputs, all together."""
    return sum(t.numel() for t in _tensors(outputs, torch))


def _enlarged(sample, times: int, torch) -> _Tiled | None:
    """The sample with its input, and each tensor of the same rank and first
    dimension, tiled `times` along that dimension (Tensor.repeat); None
    where the input is not a strided tensor of one dimension or more."""
    x = sample.input
    if not isinstance(x, torch.Tensor) or x.layout != torch.strided or x.dim() == 0 or x.numel() == 0:
        return None

    def tile(v: Any) -> Any:
        if isinstance(v, torch.Tensor) and v.layout == torch.strided and v.dim() == x.dim() and v.shape[0] == x.shape[0]:
            return v.repeat(times, *([1] * (v.dim() - 1)))
        if type(v) in (list, tuple):
            return type(v)(tile(u) for u in v)
        return v
    return _Tiled(tile(x), tile(sample.args), {k: tile(v) for k, v in sample.kwargs.items()})


def _target() -> int:
    """The elements an enlarged input holds at least: twice ATen's parallel
    grain as this torch reads it (counterexamples.grain), and a few more
    (an odd size: a chunk boundary that falls inside a vector)."""
    from counterexamples import grain
    return 2 * grain()["value"] + 7


def _grown(op, sample, target: int, torch) -> tuple[_Tiled | None, str]:
    """The sample tiled until its input holds at least `target` elements,
    doubling on the way, each step run once (on the current thread count):
    None with the reason where a step's outputs grow faster than its input
    (an outer product's, a correlation matrix's, which past the grain would
    not fit) or a step takes longer than LARGE_SLOW_S (then the four runs
    of the full size would take longer still: passed over, on its cost)."""
    n = sample.input.numel()
    final = -(-target // n)
    if n * final > LARGE_MAX_ELEMENTS:
        return None, "larger than the cap"
    size, times = _numel(_call(op, sample, torch), torch), 1
    while times < final:
        times = min(2 * times, final)
        step = _enlarged(sample, times, torch)
        began = time.monotonic()
        grown = _numel(_call(op, step, torch), torch)
        if grown > 2 * size:
            return None, "outputs grow faster than the input"
        if time.monotonic() - began > LARGE_SLOW_S:
            return None, f"slower than {LARGE_SLOW_S:g} s at {step.input.numel()} elements"
        size = grown
    return (step if final > 1 else _enlarged(sample, 1, torch)), ""


def _large(op, torch, target: int, samples: int = LARGE_SAMPLES) -> dict[str, Any]:
    """An operation past the grain, under use_deterministic_algorithms(True):
    up to `samples` of its inputs (_inputs) tiled until the input holds at
    least `target` elements (_grown), each run twice on 2 threads and twice
    on 1. Counts the samples checked, those whose bits differ between the
    counts while each count repeats itself, those that do not repeat on one
    count; the largest input; the first shape that differed; PyTorch's
    first refusal of an enlarged sample ("refused"), the first sample whose
    tiled shapes do not fit the operation ("unfit"), the first passed over
    and why ("passed")."""
    out: dict[str, Any] = {"checked": 0, "threads_differ": 0, "run_differs": 0, "elements": 0}
    began = time.monotonic()
    torch.use_deterministic_algorithms(True)
    torch.set_num_threads(2)
    try:
        out["from"], inputs = _inputs(op, torch)
        for sample in inputs:
            if out["checked"] >= samples or time.monotonic() - began > LARGE_OP_S:
                break
            if _enlarged(sample, 1, torch) is None:
                continue
            try:
                big, why = _grown(op, sample, target, torch)
                if big is None:
                    out.setdefault("passed", why)
                    if why.startswith("slower"):
                        break
                    continue
                bits = lambda: digest(_tensors(_call(op, big, torch), torch))  # noqa: E731
                twos = {bits(), bits()}
                torch.set_num_threads(1)
                ones = {bits(), bits()}
            except Exception as e:  # noqa: BLE001 - the mode refused it, or its tiled shapes do not fit: recorded
                if "deterministic implementation" in str(e):
                    out["refused"] = _said(e)
                    break
                out.setdefault("unfit", _said(e))
                continue
            finally:
                torch.set_num_threads(2)
            out["checked"] += 1
            out["elements"] = max(out["elements"], big.input.numel())
            if len(ones) > 1 or len(twos) > 1:
                out["run_differs"] += 1
            elif ones != twos:
                out["threads_differ"] += 1
                out.setdefault("shape", list(big.input.shape))
    except Exception as e:  # noqa: BLE001 - making the inputs failed: recorded, the census goes on
        out["fails"] = _said(e)
    finally:
        torch.use_deterministic_algorithms(False)
    out["seconds"] = round(time.monotonic() - began, 3)
    return out


class _Planted:
    """The control past the grain: an elementwise operation that adds the
    thread count to its result once its input holds `target` elements
    (`reads`), or 2 (not `reads`: the same cost, and it holds). _large must
    find the first and not the second, or nothing it says is trusted."""

    reference_inputs_func = None

    def __init__(self, torch, target: int, reads: bool) -> None:
        self.torch, self.target, self.reads = torch, target, reads

    def __call__(self, x: Any) -> Any:
        return x + (self.torch.get_num_threads() if self.reads and x.numel() >= self.target else 2)

    def sample_inputs(self, device: str, dtype: Any, requires_grad: bool = False):
        yield _Tiled(self.torch.arange(12, dtype=dtype, device=device).reshape(4, 3), (), {})


def control(torch, samples: int) -> dict[str, Any]:
    """The planted operations through _large, and whether it told them
    apart (found the one that reads the thread count, not the other)."""
    target = _target()
    planted, holds = (_large(_Planted(torch, target, reads), torch, target, samples) for reads in (True, False))
    return {"planted": planted, "same_cost": holds,
            "trusted": planted["threads_differ"] == 1 and holds["checked"] == 1 and holds["threads_differ"] == 0}


def _tally(results: list[dict[str, Any]]) -> dict[str, Any]:
    """One operation's samples, counted: how many ran, raised the alert
    (with its first message), warned under warn_only, did not repeat their
    bits (run to run; across threads, of those that repeat; backward),
    failed to run at all, were refused by PyTorch past their first run (with
    the first refusal), and whether uninitialized outputs were filled."""
    ran = [r for r in results if "fails" not in r and "no_sample" not in r]
    first = lambda key: next((r[key] for r in results if r.get(key)), "")  # noqa: E731
    tally = {"samples": len(results), "ran": len(ran), "raised": sum(bool(r.get("raises")) for r in ran),
             "alert": first("raises"), "warned": sum(bool(r.get("warns")) for r in ran),
             "run_differs": sum(r.get("repeats") is False for r in ran),
             # Only a sample that repeats itself on each thread count can
             # show a dependence on the count (_check confirms it).
             "threads_differ": sum(r.get("threads") is False and r.get("repeats") is True for r in ran),
             "backward_differs": sum(r.get("backward_repeats") is False for r in ran),
             "backward_checked": sum(r.get("backward_repeats") is not None for r in ran),
             "fails": first("fails") or first("no_sample"), "mode_error": first("mode_error"),
             "refused": sum(bool(r.get("refused")) for r in ran), "refusal": first("refused")}
    filled = [r["filled"] for r in ran if r.get("filled") is not None]
    if filled:
        tally["filled"] = all(filled)
    return tally


def _samples(op, torch, limit: int):
    """The first `limit` float32 CPU samples of an OpInfo (0: every one)."""
    samples = op.sample_inputs("cpu", torch.float32, requires_grad=False)
    for i, sample in enumerate(samples):
        if limit and i >= limit:
            return
        yield i, sample


def child(start: int, limit: int) -> int:
    """Checks the operations from the START-th on, a JSON line each, with a
    "start" line before each (the parent's record of what hung or crashed)."""
    import torch
    op_db, _ = _op_db()
    target = _target()
    for index, op in enumerate(op_db):
        if index < start:
            continue
        name = op.name + (f".{op.variant_test_name}" if getattr(op, "variant_test_name", "") else "")
        print(json.dumps({"start": index, "op": name}), flush=True)
        if torch.float32 not in op.supported_dtypes("cpu"):
            print(json.dumps({"index": index, "op": name, "no_float32": True}), flush=True)
            continue
        results = []
        try:
            for i, sample in _samples(op, torch, limit):
                results.append(_check(op, sample, torch))
        except Exception as e:  # noqa: BLE001 - making the samples failed
            results.append({"no_sample": _said(e)})
        print(json.dumps({"index": index, "op": name, "opinfo": op.name, "aliases": [a.name for a in getattr(op, "aliases", [])],
                          **_tally(results), "large": _large(op, torch, target, LARGE_SAMPLES if limit else LARGE_SAMPLES_ALL)}), flush=True)
    return 0


def one(name: str) -> int:
    """Every sample of the OpInfo named NAME (with its variant, as the census
    names it), checked in this process: the repro of a finding."""
    import torch
    op_db, why = _op_db()
    if op_db is None:
        print(json.dumps({"absent": why}))
        return 3
    for op in op_db:
        if op.name + (f".{op.variant_test_name}" if getattr(op, "variant_test_name", "") else "") == name:
            print(json.dumps({"op": name, **_tally([_check(op, s, torch) for _, s in _samples(op, torch, 0)]),
                              "large": _large(op, torch, _target(), LARGE_SAMPLES_ALL)}, indent=1))
            return 0
    print(json.dumps({"error": f"no OpInfo named {name} in PyTorch {torch.__version__}"}))
    return 2


def run(limit: int = SAMPLES) -> dict[str, Any]:
    """The census: every OpInfo, through child processes (one crash or hang
    costs one operation), with the documented list it is held against."""
    import torch
    op_db, why = _op_db()
    if op_db is None:
        return {"absent": f"PyTorch {torch.__version__}'s OpInfo table cannot be imported: {why} (requirements/"
                          "torch.txt pins expecttest for the managed environment)"}
    total = len(op_db)
    ops: dict[str, Any] = {}
    began = time.monotonic()
    for r in children.run_resuming(lambda start: [sys.executable, __file__, "child", str(start), str(limit)],
                                   total, HANG_S):
        ops[r["op"] + ("" if r["op"] not in ops else f"#{r['index']}")] = r
    listed = documented.parse(torch.use_deterministic_algorithms.__doc__ or "")
    from counterexamples import grain
    return {"torch": str(torch.__version__), "samples_per_op": limit or "all", "opinfos": total,
            "large": {"elements": _target(), "grain": grain(), "samples_per_op": LARGE_SAMPLES if limit
                      else LARGE_SAMPLES_ALL, "slow_s": LARGE_SLOW_S, "cap": LARGE_MAX_ELEMENTS,
                      "control": control(torch, LARGE_SAMPLES)},
            "seconds": round(time.monotonic() - began, 1), "ops": ops,
            "control": documented.control(torch),
            "listed": [{"list": e.list, "ops": e.ops, "devices": e.devices, "conditions": e.conditions,
                        "id": e.id} for e in listed]}


def main(argv: list[str]) -> int:
    args = argv[1:]
    if args[:1] == ["child"] and len(args) == 3:
        return child(int(args[1]), int(args[2]))
    if args[:1] == ["op"] and len(args) == 2:
        return one(args[1])
    if args[:1] == ["run"] and len(args) <= 2:
        print(json.dumps(run(SAMPLES if len(args) == 1 else 0 if args[1] == "--all" else int(args[1])), indent=1))
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
