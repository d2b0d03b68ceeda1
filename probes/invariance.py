"""Invariance of PyTorch's CPU operations, level by level, decided by the
torch under test.

For each operation and flag variant (the defaults, mkldnn off,
use_deterministic_algorithms on) it records whether the result's bits stay
the same

- run to run, in one process (the same call twice);
- across thread counts (torch.set_num_threads 1 against 2, and all cores);
- across batch sizes: op(x)[:k] against op(x[:k]) for k crossing the
  kernels' blocking, and a slice from the middle;

and, for the defaults, in fresh processes (the same call in a new process),
under another CPU capability (ATEN_CPU_CAPABILITY=default: PyTorch's own
vectorized kernels at their scalar level) and under a lower oneDNN ISA
(ONEDNN_MAX_CPU_ISA). Each difference is measured: the fraction of elements
that differ and the largest relative difference. The report compares the
digests between torch installs for the release level.

Every level has a positive control, a computation whose order follows the
level's variable, so that it must vary there: a sum in a fresh random order
(run to run; in a fresh process, the order from the OS's entropy), a sum in
as many chunks as threads (threads), a training-mode batch_norm (batch: its
statistics are the batch's), a sum in chunks as wide as the name of the
capability or ISA that the child process reports (capability, ISA). A level
whose control did not vary is not trusted.

Where PyTorch itself raises while an operation runs under a setting (oneDNN
under the ISA cap, an operation under the deterministic mode), that cell
records PyTorch's refusal ({"refused": "RuntimeError: ...", "setting": ...})
and the grid goes on; "refused" at the top names each child level's
refusals ("whole" when PyTorch refused every operation there, whose control
then counts as not varied). "errors" names only the child processes that
failed: the harness's errors (children.py).

It records; reports/invariance.py judges.

    python3 invariance.py grid        the grid, as JSON
    python3 invariance.py digests     (child) this process's digests, as JSON
    python3 invariance.py threads OPS (child) OPS (a JSON list) on 1 and 2
                                      threads, for a thread lever
"""

from __future__ import annotations

import json
import os
import tempfile
import sys
from typing import Any, Callable

import torch

import children
from common import compare, digest, lacks, median_seconds, order_digest, order_varies
import readings

F = torch.nn.functional
BATCH = 64
# k crosses the blocking of the GEMM and vectorized kernels: 1 (the
# matrix-vector path), 2, 4, 8, 16 (powers of the register blocks), 3, 7, 33
# (remainders of blocks of 2, 4, 8, 16 and 32).
KS = (1, 2, 3, 4, 7, 8, 16, 33)
MIDDLE = (8, 24)
VARIANTS = ("defaults", "mkldnn off", "deterministic")
# What each variant sets, as a refusal's record names it.
VARIANT_SETTINGS = {"defaults": "the defaults", "mkldnn off": "torch.backends.mkldnn.enabled = False",
                    "deterministic": "torch.use_deterministic_algorithms(True)"}
CAPABILITY = "default"
ISA = "SSE41"
# What each child level sets, as a refusal's record names it.
SETTINGS = {"process": "a fresh process", "capability": f"ATEN_CPU_CAPABILITY={CAPABILITY}",
            "isa": f"ONEDNN_MAX_CPU_ISA={ISA}"}


def _rand(*shape: int, seed: int) -> torch.Tensor:
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed))


def _has(what: str) -> str:
    """'' when this torch has `what` (a dotted name under torch), else why not."""
    return lacks(torch, what)


def _sdpa(backend: str) -> Callable[[], str]:
    def missing() -> str:
        why = _has("torch.nn.functional.scaled_dot_product_attention")
        if why:
            return why
        try:
            from torch.nn.attention import SDPBackend  # noqa: F401
        except ImportError:
            return f"PyTorch {torch.__version__} has no torch.nn.attention.sdpa_kernel"
        return ""
    return missing


def _attention(backend: str):
    def run(q, k, v):
        from torch.nn.attention import SDPBackend, sdpa_kernel
        with sdpa_kernel(getattr(SDPBackend, backend)):
            return F.scaled_dot_product_attention(q, k, v)
    return run


# name -> (the inputs whose first dimension is the batch, the fixed operands,
# the operation, what this torch lacks ('' when it has it)). Sizes are those
# where a level can show: reductions of hundreds to thousands of terms. A
# child process takes the parent's inputs from the file INPUTS names (under
# another CPU capability, torch.randn's own kernel gives other numbers).
INPUTS = "BACKENDCHECK_INVARIANCE_INPUTS"
# Where a child process saves its results, for the parent to measure.
OUTPUTS = "BACKENDCHECK_INVARIANCE_OUTPUTS"


def _ops() -> dict[str, tuple]:
    ops = _made_ops()
    if os.environ.get(INPUTS):
        saved = torch.load(os.environ[INPUTS])
        ops = {name: (saved[name][0], saved[name][1], *op[2:]) for name, op in ops.items()}
    return ops


def _made_ops() -> dict[str, tuple]:
    x2 = _rand(BATCH, 1024, seed=1)
    w = _rand(1024, 1024, seed=2) / 32
    wide = _rand(BATCH, 4096, seed=3)
    img = _rand(16, 32, 28, 28, seed=4)
    seq = _rand(16, 32, 128, seed=5)
    qkv = [_rand(16, 4, 64, 32, seed=s) for s in (6, 7, 8)]
    index = torch.randint(0, 64, (512,), generator=torch.Generator().manual_seed(9))
    rows = _rand(BATCH, 512, seed=10)
    bags = torch.randint(0, 1000, (BATCH, 16), generator=torch.Generator().manual_seed(11))
    table = _rand(1000, 64, seed=12)
    none = lambda: ""  # noqa: E731
    return {
        "mm": ([x2], [w], torch.mm, none),
        "bmm": ([_rand(BATCH, 32, 64, seed=13), _rand(BATCH, 64, 48, seed=14)], [], torch.bmm, none),
        "addmm": ([x2], [_rand(1024, seed=15), w], lambda x, b, m: torch.addmm(b, x, m), none),
        "linear": ([x2], [w, _rand(1024, seed=15)], F.linear, none),
        "matmul": ([_rand(BATCH, 16, 256, seed=16)], [_rand(256, 256, seed=17) / 16], torch.matmul, none),
        "matmul bf16": ([_rand(BATCH, 256, seed=18).bfloat16()], [(_rand(256, 256, seed=19) / 16).bfloat16()],
                        torch.matmul, none),
        "conv1d": ([seq], [_rand(48, 32, 5, seed=20)], lambda x, k: F.conv1d(x, k, padding=2), none),
        "conv2d": ([img], [_rand(32, 32, 3, 3, seed=21)], lambda x, k: F.conv2d(x, k, padding=1), none),
        "softmax": ([wide], [], lambda x: torch.softmax(x, -1), none),
        "log_softmax": ([wide], [], lambda x: torch.log_softmax(x, -1), none),
        "layer_norm": ([wide], [], lambda x: F.layer_norm(x, (4096,)), none),
        "rms_norm": ([wide], [], lambda x: F.rms_norm(x, (4096,)), lambda: _has("torch.nn.functional.rms_norm")),
        "group_norm": ([img], [], lambda x: F.group_norm(x, 8), none),
        "sdpa math": (qkv, [], _attention("MATH"), _sdpa("MATH")),
        "sdpa flash": (qkv, [], _attention("FLASH_ATTENTION"), _sdpa("FLASH_ATTENTION")),
        "sum": ([wide], [], lambda x: x.sum(-1), none),
        "mean": ([wide], [], lambda x: x.mean(-1), none),
        "cumsum": ([wide], [], lambda x: x.cumsum(-1), none),
        "embedding_bag": ([bags], [table], lambda b, t: F.embedding_bag(b, t, mode="sum"), none),
        "index_add": ([rows], [index], lambda x, i: torch.zeros(x.shape[0], 64).index_add(1, i, x), none),
        "scatter_add": ([rows], [index], lambda x, i: torch.zeros(x.shape[0], 64).scatter_add(
            1, i.expand(x.shape[0], -1), x), none),
    }


class _Variant:
    """The flags of one variant, set on entry and restored on exit."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __enter__(self) -> None:
        self.saved = (torch.backends.mkldnn.enabled, torch.are_deterministic_algorithms_enabled())
        torch.backends.mkldnn.enabled = self.name != "mkldnn off"
        torch.use_deterministic_algorithms(self.name == "deterministic")

    def __exit__(self, *exc) -> None:
        torch.backends.mkldnn.enabled = self.saved[0]
        torch.use_deterministic_algorithms(self.saved[1])


def _run(op: tuple, rows: slice | None = None, threads: int = 2) -> torch.Tensor:
    """The operation on its inputs (PyTorch's refusal: children.Refused)."""
    batched, fixed, fn, _ = op
    torch.set_num_threads(threads)
    args = [b if rows is None else b[rows] for b in batched] + list(fixed)
    with torch.no_grad():
        return children.call(fn, torch, *args)


def _row(op: tuple) -> dict[str, Any]:
    """The in-process levels of one operation under the current flags."""
    full = _run(op)
    out: dict[str, Any] = {"digest": digest([full]), "run": compare(full, _run(op))}
    threads = {str(n): compare(full, _run(op, threads=n)) for n in sorted({1, os.cpu_count() or 2} - {2})}
    out["threads"] = {"same": all(c["same"] for c in threads.values()), "per": threads}
    per = {str(k): compare(full[:k], _run(op, slice(0, k))) for k in KS}
    lo, hi = MIDDLE
    per[f"{lo}:{hi}"] = compare(full[lo:hi], _run(op, slice(lo, hi)))
    out["batch"] = {"same": all(c["same"] for c in per.values()), "per": per,
                    "differ_at": [k for k, c in per.items() if not c["same"]]}
    return out


def _chunked_sum(x: torch.Tensor, chunks: int) -> torch.Tensor:
    return torch.stack([c.sum() for c in x.chunk(max(chunks, 1))]).sum()


def _threads_varied() -> bool:
    """The thread level's positive control: a sum in three chunks per thread
    has other bits on 1 thread than on 2 (two threads are set after)."""
    x = _rand(1 << 16, seed=30) * 1e3
    digests = []
    for n in (1, 2):
        torch.set_num_threads(n)
        digests.append(digest([_chunked_sum(x, torch.get_num_threads() * 3)]))
    torch.set_num_threads(2)
    return digests[0] != digests[1]


def controls() -> dict[str, dict[str, Any]]:
    """The in-process levels' positive controls: each must vary."""
    batch = _rand(BATCH, 256, seed=31)
    bn = lambda t: F.batch_norm(t, None, None, training=True)  # noqa: E731
    return {"run": {"what": "a sum in a fresh random order each run", "varied": order_varies(torch)},
            "threads": {"what": "a sum in three chunks per thread", "varied": _threads_varied()},
            "batch": {"what": "batch_norm in training mode (its statistics are the batch's)",
                      "varied": not compare(bn(batch)[:4], bn(batch[:4]))["same"]}}


def _onednn_isa() -> str:
    import settings
    x, w = _rand(4, 32, 20, 20, seed=32), _rand(48, 32, 3, 3, seed=33)
    _, log, _ = settings._traced(lambda: children.call(F.conv2d, torch, x, w))
    return next((line.split("isa:")[1].strip() for line in log.splitlines() if "isa:" in line), "")


def digests() -> dict[str, Any]:
    """This process's digests of every operation (defaults, two threads) and
    of the controls of the child levels; the operations PyTorch refused here
    ("refused") and the readings it refused ("readings_refused": the oneDNN
    ISA, read off a convolution)."""
    isa, readings_refused = "", {}
    try:
        isa = _onednn_isa()  # first: oneDNN prints its ISA once, with its first primitive
    except children.Refused as e:
        readings_refused["isa"] = str(e)
    torch.set_num_threads(2)
    ops = _ops()
    results, refused = {}, {}
    for name, op in ops.items():
        if op[3]():
            continue
        try:
            results[name] = _run(op)
        except children.Refused as e:
            refused[name] = str(e)
    if os.environ.get(OUTPUTS):
        torch.save(results, os.environ[OUTPUTS])
    out = {name: digest([t]) for name, t in results.items()}
    x = _rand(1 << 16, seed=34) * 1e3
    capability = torch.backends.cpu.get_cpu_capability() if not _has("torch.backends.cpu.get_cpu_capability") else ""
    return {"ops": out, "capability": capability, "isa": isa, "refused": refused, "readings_refused": readings_refused,
            "controls": {"process": order_digest(torch),
                         "release": digest([_chunked_sum(x, len(str(torch.__version__)) + 1)]),
                         "capability": digest([_chunked_sum(x, len(capability) + 1)]),
                         "isa": digest([_chunked_sum(x, len(isa) + 1)])}}


def _child(env: dict[str, str], where: str) -> dict[str, Any]:
    """A fresh process's digests (and its results, loaded from `where`)."""
    out = children.run_json([sys.executable, __file__, "digests"], dict(os.environ, **env, **{OUTPUTS: where}), 600)
    return out if "error" in out else dict(out, results=torch.load(where))


def _kernels(op: tuple, rows: slice | None) -> dict[str, Any]:
    """What ran an operation: oneDNN's kernels and oneMKL's routines."""
    import settings
    try:
        _, log, mkl = settings._traced(lambda: _run(op, rows))
    except children.Refused as e:
        return {"refused": str(e)}
    return {"path": settings._path(log, mkl), "mkl_routines": mkl}


# A lever of the thread level: oneMKL's strict CNR mode, which its
# documentation says keeps ?gemm's bits whatever the thread count (on its
# AVX2 and AVX-512 branches). oneMKL reads MKL_CBWR once, at its first call,
# so the lever is a fresh process; so is its baseline, the same computation
# with the variable unset.
THREAD_LEVERS = {"MKL_CBWR=AUTO,STRICT": {"MKL_CBWR": "AUTO,STRICT"}}
# A lever's cost: the median time of torch.mm on the grid's operands at two
# threads, over this many calls, in the lever's process against the
# baseline's.
COST_REPS = 15


def threads_child(names: list[str]) -> dict[str, Any]:
    """(child) Each named operation on 1 and 2 threads, with the defaults and
    under the deterministic mode; the thread level's control; mm's median
    time at 2 threads; and what oneMKL says of itself here (its CNR mode)."""
    import settings
    ops = _ops()
    cells: dict[str, dict[str, Any]] = {}
    for variant in ("defaults", "deterministic"):
        with _Variant(variant):
            for name in names:
                try:
                    cells[f"{name} | {variant}"] = compare(_run(ops[name], threads=2), _run(ops[name], threads=1))
                except children.Refused as e:
                    cells[f"{name} | {variant}"] = {"refused": str(e)}
    mm = ops["mm"]
    with torch.no_grad():
        mm_s = median_seconds(lambda: mm[2](*mm[0], *mm[1]), COST_REPS, warmup=2)
    return {"cells": cells, "control_varied": _threads_varied(),
            "mm_ms": mm_s * 1e3, "reps": COST_REPS, "blas": settings.mkl_said()}


def _threads_process(names: list[str], env: dict[str, str], unset: tuple[str, ...] = ()) -> dict[str, Any]:
    """threads_child() in a fresh process under `env`, without the variables
    `unset`; {"error": ...} when the process failed."""
    environ = {k: v for k, v in os.environ.items() if k not in unset}
    return children.run_json([sys.executable, __file__, "threads", json.dumps(names)], dict(environ, **env), 600)


def thread_levers(rows: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """Each thread lever tried on the operations whose bits move with the
    thread count here (the grid's defaults or deterministic rows): the
    lever's process and a baseline process both run them on 1 and 2
    threads; read by readings.thread_lever."""
    names = sorted({key.split(" | ")[0] for key, row in rows.items()
                    if key.endswith(("| defaults", "| deterministic")) and row.get("threads", {}).get("same") is False})
    out = []
    for lever, env in THREAD_LEVERS.items():
        if not names:
            out.append({"lever": lever, "setting": lever, "level": "threads",
                        "not_evaluated": "every operation of the grid holds its bits across the thread count here"})
            continue
        base = _threads_process(names, {}, unset=tuple(env))
        under = _threads_process(names, env)
        out.append(readings.thread_lever(lever, names, base, under))
    return out


def grid() -> dict[str, Any]:
    """Every operation's levels, the controls, and the kernels of mm's batch
    slices."""
    ops = _ops()
    rows: dict[str, dict[str, Any]] = {}
    for name, op in ops.items():
        missing = op[3]()
        for variant in VARIANTS:
            key = f"{name} | {variant}"
            if missing:
                rows[key] = {"not_evaluated": missing}
                continue
            try:
                with _Variant(variant):
                    rows[key] = _row(op)
            except children.Refused as e:
                rows[key] = {"refused": str(e), "setting": VARIANT_SETTINGS[variant]}
    with tempfile.TemporaryDirectory() as tmp:
        base = _child({}, f"{tmp}/base.pt")
        torch.save({name: (op[0], op[1]) for name, op in ops.items()}, f"{tmp}/inputs.pt")
        shared = {INPUTS: f"{tmp}/inputs.pt"}
        levels = {"process": _child(shared, f"{tmp}/process.pt"),
                  "capability": _child(dict(shared, ATEN_CPU_CAPABILITY=CAPABILITY), f"{tmp}/capability.pt"),
                  "isa": _child(dict(shared, ONEDNN_MAX_CPU_ISA=ISA), f"{tmp}/isa.pt")}
    if "error" in base:
        levels = {level: base for level in levels}
    names = [name for name in ops if not any(k in rows[f"{name} | defaults"] for k in ("not_evaluated", "refused"))]
    checks = controls()
    refused = {}
    for level, child in levels.items():
        read = readings.child_level(level, SETTINGS[level], base, child, names)
        for name, cell in read["cells"].items():
            rows[f"{name} | defaults"][level] = cell or compare(base["results"][name], child["results"][name])
        if read["refused"]:
            refused[level] = read["refused"]
        checks[level] = {"what": {"process": "a running sum in an order drawn from the OS's entropy in each process",
                                    "capability": "torch.randn's numbers (its kernel is vectorized) summed in chunks "
                                                  "as wide as the reported capability's name",
                                    "isa": "a sum in chunks as wide as oneDNN's ISA's name"}[level],
                           "varied": read["varied"]}
        if read["refused"].get("whole") or read["refused"].get("reading"):
            said = read["refused"]["reading"] or next(iter(read["refused"]["ops"].values()))
            checks[level]["refused"] = f"PyTorch refused {SETTINGS[level]}: {said}"
    settings_seen = {"capability": {"own": base.get("capability"), "child": levels["capability"].get("capability"),
                                    "set": CAPABILITY},
                     "isa": {"own": base.get("isa"), "child": levels["isa"].get("isa"), "set": ISA}}
    inputs = digest([t for op in ops.values() for t in op[0] + op[1]
                                 if isinstance(t, torch.Tensor)])
    mm = ops["mm"]
    kernels = {"mm": {f"k={k}": _kernels(mm, slice(0, k)) for k in (1, 3, 4)} | {"full": _kernels(mm, None)}}
    errors = {level: child["error"] for level, child in levels.items() if "error" in child}
    checks["release"] = {"what": "a sum in as many chunks as the version string has characters (compared "
                                "between installs by the report)", "digest": base.get("controls", {}).get("release")}
    return {"torch": str(torch.__version__), "errors": errors, "refused": refused, "threads_all": os.cpu_count(),
            "ks": list(KS), "middle": list(MIDDLE), "batch": BATCH, "variants": list(VARIANTS), "rows": rows,
            "controls": checks, "levels_set": settings_seen, "inputs_digest": inputs, "kernels": kernels,
            "lever_effects": thread_levers(rows)}


def main(argv: list[str]) -> int:
    if argv[1:] == ["digests"]:
        print(json.dumps(digests()))
    elif argv[1:2] == ["threads"] and len(argv) == 3:
        print(json.dumps(threads_child(json.loads(argv[2]))))
    elif argv[1:] == ["grid"]:
        print(json.dumps(grid(), indent=1))
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
