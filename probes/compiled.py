"""torch.compile (Inductor's C++ backend) on the CPU against eager, and on a
CUDA device (its Triton backend; BACKENDCHECK_COMPILE_DEVICE=cuda, the plans
of CUDA_PLANS, which add a training step and the bits under the
deterministic mode), decided by the torch under test, each check in a fresh
process (a compiler crash or hang costs that check only), two at a time:

- bits: a compiled function (a matmul, softmax, layer_norm and a row sum)
  against eager on the same inputs, the compiled function run twice, and a
  second compilation after torch._dynamo.reset();
- batch: the compiled matmul's op(x)[:k] against op(x[:k]), k = 1 and 3;
- alert: under use_deterministic_algorithms(True), does an operation the
  documented list says throws on every device (put_ with accumulate=False)
  still raise when compiled;
- fill: under use_deterministic_algorithms(True) with
  torch.utils.deterministic.fill_uninitialized_memory, is torch.empty's
  memory filled (NaN) when compiled, as it is in eager;
- the nightly tier adds Inductor's own settings, where this version has
  them: torch._inductor.config.deterministic and batch_invariant
  (TORCHINDUCTOR_DETERMINISTIC=1, TORCHINDUCTOR_BATCH_INVARIANT=1), and what
  they change in the bits and the batch check.

Positive controls: "the same bits as eager" is trusted when eager on inputs
one ulp away gives other bits than compiled; "the same bits run to run" when
a sum in a fresh random order varies in that process.

Where PyTorch itself raises while a check's functions run, eager or
compiled (a setting it refuses), the check records PyTorch's refusal,
{"refused": "RuntimeError: ..."}, an observation. Only a run is evidence: a
compiled function that did not run (Dynamo or Inductor failed, or the
machine lacks what they build with: a C++ compiler for Inductor on the CPU,
a C compiler and Python.h for Triton's launcher) is {"did_not_run": its
failure, "need": what the machine lacks, or "" (then it is an error)},
never a result; a check whose process failed otherwise is {"error": ...},
the harness's (children.py).

    python3 compiled.py CHECK      (child) one check, as JSON
"""

from __future__ import annotations

import json
import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import children
from common import compare, last_line, order_varies

CHECKS = ("bits", "batch", "alert", "fill")
# On CUDA (BACKENDCHECK_COMPILE_DEVICE=cuda) the checks split between two
# probes, and add a training step and the bits under the deterministic mode.
CUDA_PLANS = {"eager": ("bits", "train"), "deterministic": ("deterministic", "alert", "batch")}
DEVICE = "BACKENDCHECK_COMPILE_DEVICE"
NIGHTLY = {"bits deterministic": ("bits", {"TORCHINDUCTOR_DETERMINISTIC": "1"}),
           "batch batch_invariant": ("batch", {"TORCHINDUCTOR_BATCH_INVARIANT": "1"})}
KS = (1, 3)
TIMEOUT_S = 420
PARALLEL = 2


def _device() -> str:
    return os.environ.get(DEVICE) or "cpu"


def _inputs(torch):
    g = torch.Generator().manual_seed(40)
    return (torch.randn(64, 512, generator=g).to(_device()), (torch.randn(512, 512, generator=g) / 23).to(_device()))


def _fn(torch):
    F = torch.nn.functional

    def f(x, w):
        y = torch.softmax(x @ w, -1)
        return F.layer_norm(y, (y.shape[-1],)) + y.sum(-1, keepdim=True)
    return f


def bits(torch) -> dict[str, Any]:
    x, w = _inputs(torch)
    f = _fn(torch)
    eager = children.call(f, torch, x, w)
    compiled = torch.compile(f)
    first = children.call(compiled, torch, x, w)
    again = children.call(compiled, torch, x, w)
    torch._dynamo.reset()
    recompiled = children.call(torch.compile(f), torch, x, w)
    nudged = children.call(f, torch, torch.nextafter(x, torch.full_like(x, float("inf"))), w)
    return {"versus_eager": compare(eager, first), "run_to_run": compare(first, again),
            "recompiled": compare(first, recompiled),
            "controls": {"eager_one_ulp_away_differs": not compare(nudged, first)["same"],
                         "random_order_sum_varies": order_varies(torch, _device())}}


def deterministic(torch) -> dict[str, Any]:
    """The compiled function under use_deterministic_algorithms(True):
    against eager under the mode, and run to run."""
    x, w = _inputs(torch)
    f = _fn(torch)
    torch.use_deterministic_algorithms(True)
    try:
        eager = children.call(f, torch, x, w)
        compiled = torch.compile(f)
        first = children.call(compiled, torch, x, w)
        again = children.call(compiled, torch, x, w)
    finally:
        torch.use_deterministic_algorithms(False)
    return {"versus_eager": compare(eager, first), "run_to_run": compare(first, again),
            "controls": {"random_order_sum_varies": order_varies(torch, _device())}}


def train(torch) -> dict[str, Any]:
    """One SGD step of a small MLP (512-512-10, cross entropy), compiled
    against eager from the same weights: the loss and the updated weights,
    and the compiled step run to run from the same start."""
    device = _device()
    x, _ = _inputs(torch)
    target = torch.arange(x.shape[0], device=device) % 10

    def fresh():
        torch.manual_seed(41)
        net = torch.nn.Sequential(torch.nn.Linear(512, 512), torch.nn.ReLU(), torch.nn.Linear(512, 10)).to(device)
        # The optimizer is made outside the compiled step: Dynamo does not
        # trace its construction and would run the whole step in eager.
        return net, torch.optim.SGD(net.parameters(), lr=0.1)

    def step(net, opt):
        loss = torch.nn.functional.cross_entropy(net(x), target)
        loss.backward()
        opt.step()
        return torch.cat([loss.detach().reshape(1)] + [p.detach().reshape(-1) for p in net.parameters()])
    eager = children.call(step, torch, *fresh())
    compiled_step = torch.compile(step)
    first = children.call(compiled_step, torch, *fresh())
    again = children.call(compiled_step, torch, *fresh())
    return {"versus_eager": compare(eager, first), "run_to_run": compare(first, again),
            "controls": {"random_order_sum_varies": order_varies(torch, _device())}}


def batch(torch) -> dict[str, Any]:
    x, w = _inputs(torch)
    compiled = torch.compile(lambda a: a @ w, dynamic=False)
    full = children.call(compiled, torch, x)
    per = {str(k): compare(full[:k], children.call(compiled, torch, x[:k].clone())) for k in KS}
    eager = {str(k): compare(children.call(torch.matmul, torch, x, w)[:k],
                              children.call(torch.matmul, torch, x[:k], w)) for k in KS}
    return {"compiled": per, "eager": eager}


def alert(torch) -> dict[str, Any]:
    """put_(accumulate=False) under use_deterministic_algorithms(True),
    eager and compiled: "raised", PyTorch's alert where it raised it (its
    whole line, wherever Dynamo put it) or "" where the function ran;
    "alert", whether it did. A function that neither ran nor raised the
    alert says nothing of it: the check is {"did_not_run", "need"} beside
    what the other function showed."""
    def put(t, index, src):
        return t.clone().put_(index, src, accumulate=False)
    args = (torch.zeros(16, device=_device()), torch.tensor([0, 1, 1, 2], device=_device()),
            torch.ones(4, device=_device()))
    seen: dict[str, str] = {}
    failed: dict[str, children.DidNotRun] = {}
    torch.use_deterministic_algorithms(True)
    try:
        for name, fn in (("eager", put), ("compiled", torch.compile(put))):
            try:
                children.call(fn, torch, *args)
                seen[name] = ""
            except children.DidNotRun as e:
                failed[name] = e
            except children.Refused as e:
                if children.ALERT not in e.message:
                    failed[name] = children.DidNotRun(f"PyTorch raised {e} instead of running it")
                else:
                    seen[name] = e.message
    finally:
        torch.use_deterministic_algorithms(False)
    out: dict[str, Any] = {"raised": seen, "alert": {k: bool(v) for k, v in seen.items()}}
    if failed:
        out["did_not_run"] = "; ".join(f"{k}: {e}" for k, e in failed.items())
        out["need"] = next((e.need for e in failed.values() if e.need), "")
    return out


def fill(torch) -> dict[str, Any]:
    det = getattr(getattr(torch, "utils", None), "deterministic", None)
    if det is None or not hasattr(det, "fill_uninitialized_memory"):
        return {"absent": f"PyTorch {torch.__version__} has no torch.utils.deterministic.fill_uninitialized_memory"}
    torch.use_deterministic_algorithms(True)
    det.fill_uninitialized_memory = True
    try:
        eager = torch.empty(64, device=_device())
        compiled = children.call(torch.compile(lambda: torch.empty(64, device=_device())), torch)
    finally:
        torch.use_deterministic_algorithms(False)
    return {"eager_filled": bool(eager.isnan().all()), "compiled_filled": bool(compiled.isnan().all())}


def _child(check: str) -> int:
    import torch
    started = time.monotonic()
    try:
        out = globals()[check](torch)
    except children.DidNotRun as e:
        out = {"did_not_run": str(e), "need": e.need}
    except children.Refused as e:
        out = {"refused": str(e)}
    out["seconds"] = round(time.monotonic() - started, 1)
    print(json.dumps(out))
    return 0


def read_child(returncode: int, stdout: str, stderr: str) -> dict[str, Any]:
    """A check's record from its process: its JSON line; where its compiled
    function did not run, what the machine lacks, read from the whole of
    its stderr too (a compiler writes there why Triton's launcher did not
    build); where the process failed, {"error": its exit and last line}, or
    {"did_not_run", "need"} where its stderr names a missing need."""
    lines = stdout.strip().splitlines()
    if returncode == 0 and lines:
        out = json.loads(lines[-1])
        if "did_not_run" in out and not out.get("need"):
            out["need"] = children.need_in(stderr)
        return out
    last = last_line(stderr)
    need = children.need_in(stderr)
    if need:
        return {"did_not_run": f"exit {returncode}: {last}", "need": need}
    return {"error": f"exit {returncode}: {last}"}


def run(nightly: bool, cuda: str = "") -> dict[str, Any]:
    """Every check in a fresh process; the nightly ones under Inductor's own
    settings, where this version has them. `cuda`, a key of CUDA_PLANS: that
    plan's checks on the CUDA device, Inductor's batch_invariant setting
    included in every tier (a lever of batch invariance on the GPU)."""
    import torch
    if not hasattr(torch, "compile"):
        return {"absent": f"PyTorch {torch.__version__} has no torch.compile (it arrived in 2.0)"}
    from torch._inductor import config
    checks = CUDA_PLANS[cuda] if cuda else CHECKS
    plan = {name: (name, {DEVICE: "cuda"} if cuda else {}) for name in checks}
    settings = {}
    for name, (check, env) in NIGHTLY.items():
        setting = name.split()[1]
        settings[setting] = hasattr(config, setting)
        if settings[setting] and check in checks and (nightly or (cuda and setting == "batch_invariant")):
            plan[name] = (check, dict(env, **({DEVICE: "cuda"} if cuda else {})))
    out: dict[str, Any] = {"torch": str(torch.__version__), "inductor_settings": settings, "nightly": nightly,
                           "device": "cuda" if cuda else "cpu"}

    def one(check: str, env: dict[str, str]) -> dict[str, Any]:
        r = children.run([sys.executable, __file__, check], dict(os.environ, **env), TIMEOUT_S)
        return {"error": r.failure} if r.code is None else read_child(r.code, r.stdout, r.stderr)
    # Two checks at a time: most of a check is Inductor compiling, and no
    # check reads another's bits; the record keeps the plan's order.
    with ThreadPoolExecutor(max_workers=PARALLEL) as pool:
        futures = {name: pool.submit(one, check, env) for name, (check, env) in plan.items()}
        out.update({name: f.result() for name, f in futures.items()})
    return out


if __name__ == "__main__":
    if len(sys.argv) == 2 and sys.argv[1] in CHECKS + ("deterministic", "train"):
        sys.exit(_child(sys.argv[1]))
    print(__doc__, file=sys.stderr)
    sys.exit(2)
