"""The questions users bring to a GPU, decided by PyTorch on a CUDA device:
which attention backend runs and whether it repeats its bits (and what the
deterministic mode does to each), whether a sample's result depends on the
batch it is computed in, what each reduced-precision setting does to a GEMM
or a convolution, and what the deterministic mode costs a training step.
torch_backends.py registers the probes (PROBES), probes/declared.toml
declares each one's TEST (labelled gpu) that suites/pytorch_python_test.cc
runs, catalog/claims.toml maps them to claims.
Without a CUDA device each is not evaluated, naming itself.

Every observation is made by a function that takes the device, so the same
code runs on the CPU in the probes' own tests (probes/tests/
test_cuda_questions.py); the readings that turn an observation into a fact
take plain JSON and no torch, and are tested on recorded and constructed
observations (a backward that varies, an alert, a backend refused).

Positive controls: a "same bits" verdict is trusted only when a sum in a
fresh random order, on the same device, gave other bits in the same place
(run to run: twice in the process; fresh process: in the child) and, for
the batch level, when a training-mode batch_norm (whose statistics are the
batch's) gave a slice other bits than the slice alone.

    python3 cuda_questions.py sdpa-child DEVICE SIZES  (child) the attention digests of a fresh process
    python3 cuda_questions.py grid-child DEVICE SIZES  (child) the batch grid's rows under this process's
                                                       environment (a lever set by variables)
    (SIZES: the parent's sizes(), as JSON)
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import warnings
from pathlib import Path
from typing import Any, Callable

import children
from common import (NotHere, compare, device_name, digest, first_line, median_ratio, median_seconds, need_device,
                    order_digest, order_varies, sync, version_of)

BACKENDS = ("MATH", "FLASH_ATTENTION", "EFFICIENT_ATTENTION", "CUDNN_ATTENTION")
# "DEFAULT" is no sdpa_kernel block: the backend PyTorch's own priority picks.
DEFAULT = "DEFAULT"
DTYPES = ("f16", "bf16", "f32")
# batch, heads, sequence, head dimension: long enough that a backward pass
# splits its sums over many blocks of the sequence.
SDPA_SHAPE = (4, 16, 1024, 64)
RUNS = 4
ALERT = children.ALERT
MODES = ("defaults", "deterministic", "warn_only")
# The Reproducibility notes carry a table of SDPA's backends from the release
# after 2.11 (pytorch/pytorch#182551): FLASH_ATTENTION's backward is
# nondeterministic by default and deterministic under
# use_deterministic_algorithms(True); CUDNN_ATTENTION is disabled under it.
TABLE_FROM = (2, 12)
CHILD_TIMEOUT_S = 300

# The batch grid: BATCH rows, slices op(x)[:k] against op(x[:k]) and one from
# the middle, each operation in each dtype, under each lever.
BATCH = 128
# The GEMMs' inner and outer width, and the reductions' row length (WIDTH x 4).
WIDTH = 4096
KS = (1, 2, 3, 7, 8, 16, 33, 64)
MIDDLE = (40, 72)
GRID_OPS = ("mm", "addmm", "linear", "bmm", "sum", "softmax", "layer_norm", "conv2d", "sdpa")
# lever -> what it sets, as a user writes it. The variables of the cuBLAS
# lever are read as cuBLAS starts: that lever runs in a fresh process.
LEVERS = {
    "defaults": "the defaults",
    "deterministic": "torch.use_deterministic_algorithms(True)",
    "no reduced-precision reduction": "torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction = False "
                                      "and allow_bf16_reduced_precision_reduction = False",
    "no split-K": "torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction = (False, False) and "
                  "allow_bf16_reduced_precision_reduction = (False, False)",
    "cuBLAS workspace": "CUBLAS_WORKSPACE_CONFIG=:16:8 CUBLASLT_WORKSPACE_SIZE=1",
}
LEVER_ENV = {"cuBLAS workspace": {"CUBLAS_WORKSPACE_CONFIG": ":16:8", "CUBLASLT_WORKSPACE_SIZE": "1"}}
# The GEMMs a lever's cost is timed on, and the reps (alternated with the
# defaults in the same process; the variables' lever against the parent's).
COST_ROWS = ("mm", "linear")
COST_REPS = 15

# Reduced precision: an fp32 GEMM and convolution against fp64, and the same
# computation on inputs rounded to TF32 and to bf16 (the errors a setting
# that computes in those types must show).
PRECISION_MM = (1024, 4096, 1024)
PRECISION_CONV = ((16, 128, 28, 28), (128, 128, 3, 3))
# A result whose error against fp64 is at least this share of the error of
# the inputs rounded to a type was computed at that type's precision. An
# fp32 computation's error is about 1/600 of TF32's for these sums (5.8e-8
# against 3.65e-5 for the GEMM); TF32 rounded to nearest gives its level,
# TF32 truncated 2.5 to 2.8 times it, which is 0.32 to 0.36 of bf16's: so
# bf16 from 0.6 of its level, TF32 from 0.3 of its.
LEVEL_SHARE = {"tf32": 0.3, "bf16": 0.6}
LEVEL_ORDER = ("fp32", "tf32", "bf16")
TIMED_REPS = 9


def _dtype(torch, name: str):
    return {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16, "f64": torch.float64}[name]


def _rand(torch, *shape: int, seed: int, device: str, dtype: str = "f32", scale: float = 1.0):
    """Seeded normal numbers made on the CPU, then moved: the same inputs on
    every device."""
    x = torch.randn(*shape, generator=torch.Generator().manual_seed(seed)) * scale
    return x.to(device=device, dtype=_dtype(torch, dtype))


# --- attention ---------------------------------------------------------------

def _attention(torch):
    """torch.nn.attention; NotHere where this version lacks sdpa_kernel
    (settings.py's own check, as the CPU's SDPA probes make it)."""
    import settings
    return settings._sdpa()


def _backend_names(attention) -> dict[int, str]:
    members = getattr(attention.SDPBackend, "__members__", {})
    return {int(getattr(m, "value", m)): name for name, m in members.items()}


def _default_pick(torch, attention, q) -> str:
    """The backend PyTorch's priority picks for these inputs
    (torch._fused_sdp_choice), '' where this version cannot say."""
    choose = getattr(torch, "_fused_sdp_choice", None)
    if choose is None:
        return ""
    try:
        return _backend_names(attention).get(int(choose(q, q, q)), "")
    except RuntimeError as e:
        return f"none ({first_line(e)})"


def _sdpa_once(torch, attention, backend: str, qkv, grad) -> tuple[str, str]:
    """One forward and backward: the digests of the output and of the three
    gradients."""
    q, k, v = (t.detach().clone().requires_grad_() for t in qkv)
    scope = (attention.sdpa_kernel(getattr(attention.SDPBackend, backend)) if backend != DEFAULT
             else contextlib.nullcontext())
    with scope:
        out = torch.nn.functional.scaled_dot_product_attention(q, k, v)
        out.backward(grad)
    return digest([out]), digest([q.grad, k.grad, v.grad])


def _sdpa_mode(torch, attention, backend: str, qkv, grad, mode: str, runs: int) -> dict[str, Any]:
    """`runs` forward and backward passes under a mode (MODES): whether
    PyTorch raised (its first line), the distinct forward and backward
    digests, the first run's, and the warnings about determinism."""
    import children
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if mode != "defaults":
            torch.use_deterministic_algorithms(True, warn_only=mode == "warn_only")
        try:
            seen = [_sdpa_once(torch, attention, backend, qkv, grad) for _ in range(runs)]
        except RuntimeError as e:
            if not children.refusal(e, torch):
                raise
            return {"raised": first_line(e), "warned": _warnings(caught)}
        finally:
            torch.use_deterministic_algorithms(False)
    return {"forward": seen[0][0], "backward": seen[0][1], "forward_distinct": len({s[0] for s in seen}),
            "backward_distinct": len({s[1] for s in seen}), "runs": runs, "warned": _warnings(caught)}


def _warnings(caught) -> list[str]:
    return sorted({first_line(str(w.message)) for w in caught if str(w.message).strip()})[:4]


def _sdpa_inputs(torch, device: str, dtype: str, shape: tuple[int, ...]):
    qkv = [_rand(torch, *shape, seed=s, device=device, dtype=dtype) for s in (6, 7, 8)]
    return qkv, _rand(torch, *shape, seed=9, device=device, dtype=dtype)


def sdpa_observe(torch, device: str, runs: int = RUNS, fresh_process: bool = True,
                 modes: tuple[str, ...] = MODES) -> dict[str, Any]:
    """Each backend (and the defaults' own pick, DEFAULT) in each dtype:
    under each of `modes` (MODES), what PyTorch did; which backend the
    defaults pick, plainly and under the deterministic mode; a fresh
    process's digests; the run-to-run and fresh-process controls."""
    attention = _attention(torch)
    shape = tuple(SDPA_SHAPE)
    backends = [DEFAULT] + [b for b in BACKENDS if hasattr(attention.SDPBackend, b)]
    out: dict[str, Any] = {"torch": str(torch.__version__), "device": device_name(torch, device),
                           "shape": list(shape), "runs": runs, "backends": {}, "default_pick": {},
                           "default_pick_deterministic": {}}
    for dtype in DTYPES:
        qkv, grad = _sdpa_inputs(torch, device, dtype, shape)
        out["default_pick"][dtype] = _default_pick(torch, attention, qkv[0])
        torch.use_deterministic_algorithms(True)
        try:
            out["default_pick_deterministic"][dtype] = _default_pick(torch, attention, qkv[0])
        finally:
            torch.use_deterministic_algorithms(False)
        out["backends"][dtype] = {b: {mode: _sdpa_mode(torch, attention, b, qkv, grad, mode, runs) for mode in modes}
                                  for b in backends}
        sync(torch, device)
    first, second = order_digest(torch, device), order_digest(torch, device)
    out["controls"] = {"run": {"what": "a running sum in a fresh random order on the device, twice",
                               "varied": first != second}}
    if fresh_process:
        child = _child("sdpa-child", device, {})
        out["fresh_process"] = child
        if "error" not in child:
            out["controls"]["process"] = {"what": "the same sum in an order drawn in the fresh process",
                                          "varied": child.get("control") != first}
    return out


def sdpa_child(torch, device: str) -> dict[str, Any]:
    """A fresh process's first forward and backward digests of each backend
    under the defaults, and its control digest."""
    import children
    attention = _attention(torch)
    out: dict[str, Any] = {"digests": {}}
    for dtype in DTYPES:
        qkv, grad = _sdpa_inputs(torch, device, dtype, tuple(SDPA_SHAPE))
        for b in [DEFAULT] + [b for b in BACKENDS if hasattr(attention.SDPBackend, b)]:
            try:
                out["digests"][f"{b} {dtype}"] = list(_sdpa_once(torch, attention, b, qkv, grad))
            except RuntimeError as e:
                if not children.refusal(e, torch):
                    raise
                out["digests"][f"{b} {dtype}"] = {"raised": first_line(e)}
    out["control"] = order_digest(torch, device)
    return out


def sizes() -> dict[str, Any]:
    """The sizes this process runs with, for a fresh process to run the same."""
    return {"SDPA_SHAPE": list(SDPA_SHAPE), "DTYPES": list(DTYPES), "BATCH": BATCH, "WIDTH": WIDTH}


def _child(command: str, device: str, env: dict[str, str]) -> dict[str, Any]:
    """A fresh interpreter's answer to `command`, with this process's sizes;
    {"error": ...} when it failed (the harness's, not PyTorch's: children.py's
    rule)."""
    out = children.run_json([sys.executable, str(Path(__file__).resolve()), command, device, json.dumps(sizes())],
                            dict(os.environ, **env), CHILD_TIMEOUT_S)
    return {"error": f"the fresh process: {out['error']}"} if "error" in out else out


# The readings: plain JSON in, (passed, detail, mistrusted) out.

def _ran(cell: dict[str, Any]) -> bool:
    return "raised" not in cell


def _where(backend: str, dtype: str, picks: dict[str, str]) -> str:
    return f"{picks.get(dtype) or 'the default pick'} (the defaults) {dtype}" if backend == DEFAULT \
        else f"{backend} {dtype}"


def sdpa_repeatability_reading(obs: dict[str, Any]) -> tuple[bool | None, str, str]:
    """sdpa-cuda-repeatable: with the defaults, the backend PyTorch picks
    gives the same forward and backward bits run to run and in a fresh
    process, in each dtype it runs. The other backends' behaviour is listed."""
    picks, runs = obs.get("default_pick", {}), obs.get("runs", RUNS)
    varies, holds, lines = [], [], []
    fresh = obs.get("fresh_process", {})
    for dtype, backends in obs.get("backends", {}).items():
        for backend, modes in backends.items():
            cell = modes["defaults"]
            name = _where(backend, dtype, picks)
            if not _ran(cell):
                if backend != DEFAULT:
                    lines.append(f"{name}: does not run ({cell['raised']})")
                continue
            moved = []
            if cell["forward_distinct"] > 1:
                moved.append(f"{cell['forward_distinct']} different outputs in {runs} runs")
            if cell["backward_distinct"] > 1:
                moved.append(f"{cell['backward_distinct']} different gradients in {runs} runs")
            theirs = fresh.get("digests", {}).get(f"{backend} {dtype}")
            if isinstance(theirs, list) and theirs != [cell["forward"], cell["backward"]]:
                moved.append("other " + " and ".join(w for w, a, b in zip(("output", "gradients"), theirs,
                                                                        (cell["forward"], cell["backward"]))
                                                     if a != b) + " in a fresh process")
            said = f"{name}: " + ("; ".join(moved) if moved else "repeats its bits")
            if backend == DEFAULT:
                (varies if moved else holds).append(said)
            else:
                lines.append(said)
    controls = obs.get("controls", {})
    mistrusted = ""
    if not varies and not controls.get("run", {}).get("varied"):
        mistrusted = "the run-to-run control (a sum in a fresh random order) gave the same bits twice"
    elif not varies and "error" not in fresh and not controls.get("process", {}).get("varied"):
        mistrusted = "the fresh-process control gave the parent's bits"
    if "error" in fresh:
        return None, f"the fresh process failed: {fresh['error']}", ""
    if not varies and not holds:
        return None, "no dtype ran with the defaults: " + "; ".join(lines), ""
    detail = "; ".join(varies + holds) + (". Each backend forced: " + "; ".join(lines) if lines else "")
    return not varies, detail, mistrusted


def sdpa_deterministic_reading(obs: dict[str, Any]) -> tuple[bool | None, str, str]:
    """sdpa-cuda-deterministic: under use_deterministic_algorithms(True),
    each backend either repeats its bits or raises; where it raises PyTorch's
    alert, warn_only=True warns instead and runs. A backend that runs under
    the mode and gives other bits run to run refutes it, whatever the
    documents say."""
    picks = obs.get("default_pick_deterministic", {})
    broken, lines = [], []
    # PyTorch may warn once a process (TORCH_WARN_ONCE): a warn_only run
    # without the warning refutes only where no cell of the process got it.
    warned_once = any(ALERT in w for backends in obs.get("backends", {}).values() for modes in backends.values()
                      for w in modes.get("warn_only", {}).get("warned", []))
    for dtype, backends in obs.get("backends", {}).items():
        for backend, modes in backends.items():
            name = _where(backend, dtype, picks)
            plain, strict, warn = modes["defaults"], modes["deterministic"], modes["warn_only"]
            if not _ran(plain):
                continue
            if not _ran(strict):
                alert = ALERT in strict["raised"]
                said = f"{name}: raises under the mode ({strict['raised']})"
                if alert and not _ran(warn):
                    broken.append(f"{name}: warn_only=True raised too ({warn['raised']})")
                elif alert and not warned_once:
                    broken.append(f"{name}: warn_only=True ran without PyTorch's warning")
                else:
                    lines.append(said + ("; warn_only=True warns and runs" if alert else "; refused"))
                continue
            if strict["backward_distinct"] > 1 or strict["forward_distinct"] > 1:
                what = "gradients" if strict["backward_distinct"] > 1 else "outputs"
                n = max(strict["backward_distinct"], strict["forward_distinct"])
                broken.append(f"{name}: {n} different {what} in {strict['runs']} runs under the mode, with no "
                              f"alert" + (f" (warned: {strict['warned'][0]})" if strict.get("warned") else ""))
                continue
            switched = ""
            if strict["forward"] != plain["forward"]:
                switched = " (other bits than without the mode: another kernel)"
            lines.append(f"{name}: repeats its bits under the mode{switched}")
    changed = {d: (obs.get("default_pick", {}).get(d), p) for d, p in picks.items()
               if p != obs.get("default_pick", {}).get(d)}
    if changed:
        lines.append("the defaults' pick under the mode: " + ", ".join(f"{d} {a} -> {b}" for d, (a, b)
                                                                      in changed.items()))
    mistrusted = "" if broken or obs.get("controls", {}).get("run", {}).get("varied") else \
        "the run-to-run control (a sum in a fresh random order) gave the same bits twice"
    if not broken and not lines:
        return None, "no backend ran in any dtype", ""
    return not broken, "; ".join(broken + lines), mistrusted


def sdpa_table_reading(obs: dict[str, Any]) -> tuple[bool | None, str, str]:
    """sdpa-cuda-table (the Reproducibility notes after 2.11): under
    use_deterministic_algorithms(True), FLASH_ATTENTION runs and repeats its
    backward; CUDNN_ATTENTION is not used (forced, PyTorch refuses it; the
    defaults do not pick it)."""
    broken, lines = [], []
    for dtype, backends in obs.get("backends", {}).items():
        flash, cudnn = backends.get("FLASH_ATTENTION"), backends.get("CUDNN_ATTENTION")
        if flash and _ran(flash["defaults"]):
            strict = flash["deterministic"]
            if not _ran(strict):
                broken.append(f"FLASH_ATTENTION {dtype}: raises under the mode ({strict['raised']})")
            elif strict["backward_distinct"] > 1:
                broken.append(f"FLASH_ATTENTION {dtype}: {strict['backward_distinct']} different gradients in "
                              f"{strict['runs']} runs under the mode")
            else:
                lines.append(f"FLASH_ATTENTION {dtype}: repeats its backward under the mode")
        if cudnn and _ran(cudnn["defaults"]):
            if _ran(cudnn["deterministic"]):
                broken.append(f"CUDNN_ATTENTION {dtype}: runs under the mode")
            else:
                lines.append(f"CUDNN_ATTENTION {dtype}: refused under the mode")
        if obs.get("default_pick_deterministic", {}).get(dtype) == "CUDNN_ATTENTION":
            broken.append(f"{dtype}: the defaults pick CUDNN_ATTENTION under the mode")
    if not broken and not lines:
        return None, "neither FLASH_ATTENTION nor CUDNN_ATTENTION ran in any dtype here", ""
    mistrusted = "" if broken or obs.get("controls", {}).get("run", {}).get("varied") else \
        "the run-to-run control (a sum in a fresh random order) gave the same bits twice"
    return not broken, "; ".join(broken + lines), mistrusted


def _sdpa_probe(probe: str, reading: Callable, **observe: Any) -> tuple[bool | None, str, dict]:
    import torch
    need_device(torch, probe)
    obs = sdpa_observe(torch, "cuda", **observe)
    passed, detail, mistrusted = reading(obs)
    if mistrusted:
        obs["mistrusted"] = mistrusted
    return passed, f"PyTorch {torch.__version__} on {obs['device']}: {detail}", obs


def cuda_sdpa_repeatable() -> tuple[bool | None, str, dict]:
    return _sdpa_probe("cuda_sdpa_repeatable", sdpa_repeatability_reading, modes=("defaults",))


def cuda_sdpa_deterministic() -> tuple[bool | None, str, dict]:
    return _sdpa_probe("cuda_sdpa_deterministic", sdpa_deterministic_reading, fresh_process=False)


def table_gate(version: str) -> str:
    """'' where the version's notes carry the per-backend table, else why not."""
    if version_of(version) >= TABLE_FROM:
        return ""
    return (f"the Reproducibility notes of PyTorch {version} carry no table of SDPA's backends (it arrives after "
            f"2.11, pytorch/pytorch#182551); what each backend does is recorded by "
            f"TorchPython.CudaSdpaRepeatsItsBits and TorchPython.CudaSdpaUnderDeterministicAlgorithms")


def cuda_sdpa_table() -> tuple[bool | None, str, dict]:
    import torch
    why = table_gate(str(torch.__version__))
    if why:
        raise NotHere(why)
    return _sdpa_probe("cuda_sdpa_table", sdpa_table_reading, fresh_process=False)


# --- batch invariance ----------------------------------------------------------

def _grid_ops(torch, device: str, dtype: str) -> dict[str, tuple]:
    """name -> (the inputs whose first dimension is the batch, the fixed
    operands, the operation)."""
    F = torch.nn.functional
    r = lambda *shape, seed, scale=1.0: _rand(torch, *shape, seed=seed, device=device, dtype=dtype,  # noqa: E731
                                              scale=scale)
    x = r(BATCH, WIDTH, seed=1)
    w = r(WIDTH, WIDTH, seed=2, scale=WIDTH ** -0.5)
    bias = r(WIDTH, seed=3)
    wide = r(BATCH, 4 * WIDTH, seed=4)
    return {
        "mm": ([x], [w], torch.mm),
        "addmm": ([x], [bias, w], lambda a, b, m: torch.addmm(b, a, m)),
        "linear": ([x], [w, bias], F.linear),
        "bmm": ([r(BATCH, 64, 256, seed=5), r(BATCH, 256, 64, seed=6)], [], torch.bmm),
        "sum": ([wide], [], lambda t: t.sum(-1)),
        "softmax": ([wide], [], lambda t: torch.softmax(t, -1)),
        "layer_norm": ([x], [], lambda t: F.layer_norm(t, (t.shape[-1],))),
        "conv2d": ([r(BATCH, 32, 28, 28, seed=7)], [r(64, 32, 3, 3, seed=8, scale=1 / 8)],
                   lambda t, k: F.conv2d(t, k, padding=1)),
        "sdpa": ([r(BATCH, 4, 256, 64, seed=s) for s in (9, 10, 11)], [], F.scaled_dot_product_attention),
    }


def _grid_row(torch, op: tuple) -> dict[str, Any]:
    """One operation's run and batch levels, in invariance.py's row form."""
    import children
    batched, fixed, fn = op

    def run(rows: slice | None = None):
        args = [b if rows is None else b[rows] for b in batched] + list(fixed)
        with torch.no_grad():
            return children.call(fn, torch, *args)
    full = run()
    out: dict[str, Any] = {"digest": digest([full]), "run": compare(full, run())}
    per = {str(k): compare(full[:k], run(slice(0, k))) for k in KS}
    lo, hi = MIDDLE
    per[f"{lo}:{hi}"] = compare(full[lo:hi], run(slice(lo, hi)))
    out["batch"] = {"same": all(c["same"] for c in per.values()), "per": per,
                    "differ_at": [k for k, c in per.items() if not c["same"]]}
    return out


@contextlib.contextmanager
def lever(torch, name: str):
    """The in-process levers of LEVERS, set on entry and restored on exit;
    NotHere where this version lacks one (the probe names it, unjudged)."""
    m = torch.backends.cuda.matmul
    names = ("allow_fp16_reduced_precision_reduction", "allow_bf16_reduced_precision_reduction")
    saved_det = torch.are_deterministic_algorithms_enabled()
    saved = {}
    try:
        if name == "deterministic":
            torch.use_deterministic_algorithms(True)
        elif name in ("no reduced-precision reduction", "no split-K"):
            for n in names:
                if not hasattr(m, n):
                    raise NotHere(f"PyTorch {torch.__version__} has no torch.backends.cuda.matmul.{n}")
                saved[n] = getattr(m, n)
            for n in names:
                try:
                    setattr(m, n, False if name == "no reduced-precision reduction" else (False, False))
                except (TypeError, RuntimeError, AssertionError) as e:
                    raise NotHere(f"PyTorch {torch.__version__} takes no (allow, allow_splitk) pair for "
                                   f"torch.backends.cuda.matmul.{n} (the split-K form arrived in 2.10): "
                                   f"{first_line(e)}") from e
        yield
    finally:
        torch.use_deterministic_algorithms(saved_det)
        for n, value in saved.items():
            setattr(m, n, value)


def _rows(torch, device: str, variant: str) -> dict[str, dict[str, Any]]:
    import children
    rows: dict[str, dict[str, Any]] = {}
    for dtype in DTYPES:
        for name, op in _grid_ops(torch, device, dtype).items():
            key = f"{name} {dtype} {device} | {variant}"
            try:
                rows[key] = _grid_row(torch, op)
            except children.Refused as e:
                rows[key] = {"refused": str(e), "setting": LEVERS[variant]}
    return rows


def _gemms(torch, device: str, dtype: str) -> Callable[[], None]:
    """The GEMMs of COST_ROWS, once (untimed: common's timer times it)."""
    ops = _grid_ops(torch, device, dtype)

    def once() -> None:
        with torch.no_grad():
            for name in COST_ROWS:
                batched, fixed, fn = ops[name]
                fn(*batched, *fixed)
    return once


def _gemm_median(torch, device: str, dtype: str) -> float:
    """The GEMMs' median seconds over COST_REPS runs, after one to warm up."""
    return median_seconds(_gemms(torch, device, dtype), COST_REPS, warmup=1, done=lambda: sync(torch, device))


def _lever_cost(torch, device: str, name: str) -> dict[str, Any]:
    """The lever's time over the defaults' on the GEMMs of COST_ROWS in
    bf16 and fp32, medians of COST_REPS alternated reps."""
    out = {}
    for dtype in ("f32", "bf16"):
        once = _gemms(torch, device, dtype)
        once()
        out[dtype] = median_ratio(once, (lambda: lever(torch, "defaults"), lambda: lever(torch, name)), COST_REPS,
                                  done=lambda: sync(torch, device))
    return {"ratio": out, "reps": COST_REPS, "paired": True}


def grid_child(torch, device: str) -> dict[str, Any]:
    """A fresh process under a variables' lever: its rows and its GEMMs'
    median seconds."""
    name = next((n for n, env in LEVER_ENV.items() if all(os.environ.get(k) == v for k, v in env.items())), "")
    return {"lever": name, "rows": _rows(torch, device, name or "defaults"),
            "seconds": {dtype: _gemm_median(torch, device, dtype) for dtype in ("f32", "bf16")}}


def grid_observe(torch, device: str, levers=tuple(LEVERS)) -> dict[str, Any]:
    """Every operation in every dtype under each lever: invariance.py's grid
    form (rows "op dtype device | lever", levels run and batch), the
    controls, and each lever's cost."""
    import children
    F = torch.nn.functional
    rows: dict[str, dict[str, Any]] = {}
    missing, costs, errors = {}, {}, {}
    for name in levers:
        if name in LEVER_ENV:
            child = _child("grid-child", device, LEVER_ENV[name])
            if "error" in child:
                errors[name] = child["error"]
                continue
            rows.update(child["rows"])
            here = {dtype: _gemm_median(torch, device, dtype) for dtype in ("f32", "bf16")}
            costs[name] = {"ratio": {d: child["seconds"][d] / here[d] for d in here}, "reps": COST_REPS,
                           "paired": False}
            continue
        try:
            with lever(torch, name):
                rows.update(_rows(torch, device, name))
        except NotHere as e:
            missing[name] = str(e)
            continue
        if name != "defaults":
            costs[name] = _lever_cost(torch, device, name)
    batch = _rand(torch, BATCH, 256, seed=31, device=device)
    with torch.no_grad():
        bn = lambda t: F.batch_norm(t, None, None, training=True)  # noqa: E731
        batch_varied = not compare(bn(batch)[:4], children.call(bn, torch, batch[:4]))["same"]
    controls = {"run": {"what": "a running sum in a fresh random order on the device",
                        "varied": order_varies(torch, device)},
                "batch": {"what": "batch_norm in training mode (its statistics are the batch's)",
                          "varied": batch_varied}}
    return {"torch": str(torch.__version__), "device": device_name(torch, device), "errors": errors,
            "refused": {}, "threads_all": 0, "ks": list(KS), "middle": list(MIDDLE), "batch": BATCH,
            "variants": [n for n in levers if n not in missing and n not in errors], "levers": dict(LEVERS),
            "levers_missing": missing, "lever_costs": costs, "rows": rows, "controls": controls}


def lever_reading(grid: dict[str, Any]) -> list[dict[str, Any]]:
    """For each lever: the cells (operation and dtype) that differ across the
    batch with the defaults and hold their bits under it, those that still
    differ, and its measured cost."""
    def batch_same(key: str) -> bool | None:
        row = grid.get("rows", {}).get(key, {})
        return row["batch"]["same"] if "batch" in row else None
    out = []
    for name in grid.get("variants", []):
        if name == "defaults":
            continue
        fixed, still = [], []
        for key in grid.get("rows", {}):
            cell, _, variant = key.partition(" | ")
            if variant != "defaults" or batch_same(key) is not False:
                continue
            under = batch_same(f"{cell} | {name}")
            if under is True:
                fixed.append(cell)
            elif under is False:
                still.append(cell)
        out.append({"lever": name, "setting": grid.get("levers", {}).get(name, name), "fixes": fixed,
                    "still_differ": still, "cost": grid.get("lever_costs", {}).get(name)})
    return out


def cuda_invariance() -> tuple[bool | None, str, dict]:
    """The batch grid on CUDA (batch-invariant's GPU platform, judged by
    reports/invariance.py as the CPU grid is)."""
    import torch
    need_device(torch, "cuda_invariance")
    grid = grid_observe(torch, "cuda")
    grid["lever_effects"] = lever_reading(grid)
    differ = [k for k, r in grid["rows"].items() if k.endswith("| defaults") and not r.get("batch", {}).get("same", True)]
    said = (f"PyTorch {torch.__version__} on {grid['device']}: {len(differ)} of "
            f"{sum(k.endswith('| defaults') for k in grid['rows'])} default cells differ across the batch"
            + (f" ({', '.join(k.split(' | ')[0] for k in differ[:6])})" if differ else ""))
    for lv in grid["lever_effects"]:
        said += f"; {lv['lever']}: holds {len(lv['fixes'])} of them"
    if grid["errors"]:
        return None, said + "; a fresh process failed: " + "; ".join(f"{k}: {v}" for k, v in grid["errors"].items()), \
            grid
    return True, said, grid


# --- reduced precision -----------------------------------------------------------

def round_tf32(torch, x):
    """x's fp32 values rounded to TF32's 10 explicit mantissa bits, to
    nearest, ties to even (the rounding of the inputs a TF32 tensor core
    takes)."""
    bits = x.float().contiguous().view(torch.int32)
    lsb = (bits >> 13) & 1
    return ((bits + 0xFFF + lsb) & ~0x1FFF).view(torch.float32)


def _rounded(torch, x, level: str):
    return {"fp32": lambda t: t, "tf32": lambda t: round_tf32(torch, t),
            "bf16": lambda t: t.bfloat16().float()}[level](x)


class _Gemm:
    kind = "matmul"

    def __init__(self, torch, device: str) -> None:
        m, k, n = PRECISION_MM
        self.torch = torch
        self.a = _rand(torch, m, k, seed=50, device=device)
        self.b = _rand(torch, k, n, seed=51, device=device)
        self.terms = k

    def run(self, a=None, b=None):
        return self.torch.mm(self.a if a is None else a, self.b if b is None else b)


class _Conv:
    kind = "conv"

    def __init__(self, torch, device: str) -> None:
        x, w = PRECISION_CONV
        self.torch = torch
        self.a = _rand(torch, *x, seed=52, device=device)
        self.b = _rand(torch, *w, seed=53, device=device)
        self.terms = w[1] * w[2] * w[3]

    def run(self, a=None, b=None):
        return self.torch.nn.functional.conv2d(self.a if a is None else a, self.b if b is None else b, padding=1)


def _exact(op, a, b):
    """op on a and b in fp64 (the reference: no setting reduces fp64)."""
    return op.run(a.double(), b.double())


def error_levels(op) -> dict[str, Any]:
    """The fp64 reference, the magnitudes |a||b| each element's error is
    relative to, and the error of the inputs rounded to TF32 and to bf16."""
    ref = _exact(op, op.a, op.b)
    scale = _exact(op, op.a.abs(), op.b.abs()).clamp_min(1e-300)
    levels = {lv: float(((_exact(op, _rounded(op.torch, op.a, lv), _rounded(op.torch, op.b, lv)) - ref).abs()
                         / scale).max()) for lv in ("tf32", "bf16")}
    return {"ref": ref, "scale": scale, "levels": levels}


def relative_error(got, levels: dict[str, Any]) -> float:
    return float(((got.double() - levels["ref"]).abs() / levels["scale"]).max())


def precision_level(error: float, levels: dict[str, float]) -> str:
    """The coarsest input precision whose rounding error the result shows:
    'bf16' when its error is at least LEVEL_SHARE['bf16'] of bf16's, else
    'tf32' when at least LEVEL_SHARE['tf32'] of TF32's, else 'fp32'."""
    for level in ("bf16", "tf32"):
        if error >= LEVEL_SHARE[level] * levels[level]:
            return level
    return "fp32"


# Each setting: (its words, the operation, what it sets, the levels its
# documentation allows, the level it documents as its effect ('' where it
# documents none), what it needs).
FP32_SETTINGS = (
    ("torch.backends.cuda.matmul.allow_tf32 = False (the default)", "matmul", {"matmul_tf32": False},
     ("fp32",), "", ""),
    ("torch.backends.cuda.matmul.allow_tf32 = True", "matmul", {"matmul_tf32": True}, ("fp32", "tf32"), "tf32", ""),
    ("torch.set_float32_matmul_precision('highest')", "matmul", {"matmul_precision": "highest"}, ("fp32",), "",
     "set_float32_matmul_precision"),
    ("torch.set_float32_matmul_precision('high')", "matmul", {"matmul_precision": "high"}, ("fp32", "tf32"), "tf32",
     "set_float32_matmul_precision"),
    ("torch.set_float32_matmul_precision('medium')", "matmul", {"matmul_precision": "medium"},
     ("fp32", "tf32", "bf16"), "tf32", "set_float32_matmul_precision"),
    ("torch.backends.cuda.matmul.fp32_precision = 'tf32'", "matmul", {"cuda.matmul.fp32_precision": "tf32"},
     ("fp32", "tf32"), "tf32", "fp32_precision"),
    ("torch.backends.cuda.matmul.fp32_precision = 'ieee'", "matmul", {"cuda.matmul.fp32_precision": "ieee"},
     ("fp32",), "", "fp32_precision"),
    ("torch.backends.cudnn.allow_tf32 = True (the default)", "conv", {"cudnn_tf32": True}, ("fp32", "tf32"), "tf32",
     ""),
    ("torch.backends.cudnn.allow_tf32 = False", "conv", {"cudnn_tf32": False}, ("fp32",), "", ""),
    ("torch.backends.cudnn.conv.fp32_precision = 'ieee'", "conv", {"cudnn.conv.fp32_precision": "ieee"}, ("fp32",),
     "", "fp32_precision"),
    # set_float32_matmul_precision leaves convolutions to cudnn.allow_tf32
    # (its docstring: it does not change the precision of convolutions).
    ("torch.set_float32_matmul_precision('highest'), for a convolution", "conv", {"matmul_precision": "highest"},
     ("fp32", "tf32"), "", "set_float32_matmul_precision"),
)


def _needs(torch, what: str) -> str:
    if what == "set_float32_matmul_precision" and not hasattr(torch, "set_float32_matmul_precision"):
        return f"PyTorch {torch.__version__} has no torch.set_float32_matmul_precision"
    if what == "fp32_precision" and not hasattr(torch.backends, "fp32_precision"):
        return f"PyTorch {torch.__version__} has no fp32_precision settings (they arrived in 2.9)"
    return ""


@contextlib.contextmanager
def precision_settings(torch, sets: dict[str, Any]):
    """Sets what `sets` names (matmul_tf32, cudnn_tf32, matmul_precision, a
    dotted fp32_precision name) and restores every precision setting after,
    through the API it was read with (2.9's tree where it exists: the legacy
    switches are its spellings)."""
    import settings
    b = torch.backends
    tree = hasattr(b, "fp32_precision")
    saved = settings._read_all() if tree else {}
    legacy = (b.cuda.matmul.allow_tf32, b.cudnn.allow_tf32)
    matmul_precision = torch.get_float32_matmul_precision() if hasattr(torch, "get_float32_matmul_precision") else None
    try:
        for key, value in sets.items():
            if key == "matmul_tf32":
                b.cuda.matmul.allow_tf32 = value
            elif key == "cudnn_tf32":
                b.cudnn.allow_tf32 = value
            elif key == "matmul_precision":
                torch.set_float32_matmul_precision(value)
            else:
                settings._setting(key).fp32_precision = value
        yield
    finally:
        # The legacy spellings first, then (2.9 and later) every setting of
        # the tree exactly as it was read: the legacy getters stay readable
        # (a legacy switch left unlike its tree makes them raise).
        if matmul_precision is not None:
            torch.set_float32_matmul_precision(matmul_precision)
        b.cudnn.allow_tf32 = legacy[1]
        if tree:
            settings._restore(saved)
        else:
            b.cuda.matmul.allow_tf32 = legacy[0]


def _strict(kind: str) -> dict[str, Any]:
    return {"matmul_tf32": False} if kind == "matmul" else {"cudnn_tf32": False}


def _timed_ratio(torch, device: str, run, base: dict, reduced: dict, reps: int = TIMED_REPS) -> float:
    """The median time of `run` under `reduced` over its median under
    `base`, reps alternated."""
    return median_ratio(run, (lambda: precision_settings(torch, base), lambda: precision_settings(torch, reduced)),
                        reps, warm=True, done=lambda: sync(torch, device))


def precision_observe(torch, device: str, timed: bool = True, only: Callable[[str], bool] | None = None
                      ) -> dict[str, Any]:
    """Each fp32 setting of FP32_SETTINGS on its operation: the bits against
    the strict setting, the error against fp64 (each element's relative to
    |a||b|), the precision level it shows, and its time over the strict
    setting's; the reduced-precision switches of fp16 and bf16 GEMMs; the
    preferred BLAS library."""
    ops = {"matmul": _Gemm(torch, device), "conv": _Conv(torch, device)}
    levels = {kind: error_levels(op) for kind, op in ops.items()}
    strict = {}
    for kind, op in ops.items():
        with precision_settings(torch, _strict(kind)):
            first, again = op.run(), op.run()
        strict[kind] = {"digest": digest([first]), "repeats": digest([first]) == digest([again]),
                        "error": relative_error(first, levels[kind])}
    out: dict[str, Any] = {"torch": str(torch.__version__), "device": device_name(torch, device),
                           "levels": {k: v["levels"] for k, v in levels.items()}, "strict": strict, "settings": []}
    for words, kind, sets, allowed, effect, needs in FP32_SETTINGS:
        if only is not None and not only(words):
            continue
        entry: dict[str, Any] = {"setting": words, "op": kind, "allowed": list(allowed), "effect": effect}
        missing = _needs(torch, needs)
        if missing:
            out["settings"].append(dict(entry, missing=missing))
            continue
        op = ops[kind]
        with precision_settings(torch, sets):
            got = op.run()
        err = relative_error(got, levels[kind])
        entry.update(digest=digest([got]), same_as_strict=digest([got]) == strict[kind]["digest"], error=err,
                     level=precision_level(err, levels[kind]["levels"]))
        if timed:
            entry["time_ratio"] = _timed_ratio(torch, device, op.run, _strict(kind), sets)
        out["settings"].append(entry)
    out["half"] = half_observe(torch, device) if only is None else []
    return out


# The reduced-precision switches of half GEMMs: (words, dtype, attribute,
# value, strict value, what it needs).
HALF_SETTINGS = (
    ("torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction = True (the default)", "f16",
     "allow_fp16_reduced_precision_reduction", True, False),
    ("torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction = True (the default)", "bf16",
     "allow_bf16_reduced_precision_reduction", True, False),
    ("torch.backends.cuda.matmul.allow_fp16_accumulation = True", "f16", "allow_fp16_accumulation", True, False),
)


def half_observe(torch, device: str) -> list[dict[str, Any]]:
    """Each switch of HALF_SETTINGS on a half GEMM: the bits against its
    strict value, and the error of each against fp64 (relative to |a||b|);
    then preferred_blas_library('cublaslt') against 'cublas' on fp32."""
    m, k, n = PRECISION_MM
    out = []
    mm = torch.backends.cuda.matmul
    for words, dtype, attr, value, strict in HALF_SETTINGS:
        if not hasattr(mm, attr):
            out.append({"setting": words, "missing": f"PyTorch {torch.__version__} has no "
                                                     f"torch.backends.cuda.matmul.{attr}"})
            continue
        a = _rand(torch, m, k, seed=54, device=device, dtype=dtype)
        b = _rand(torch, k, n, seed=55, device=device, dtype=dtype, scale=1 / 8)
        ref = a.double() @ b.double()
        scale = (a.double().abs() @ b.double().abs()).clamp_min(1e-300)
        saved = getattr(mm, attr)
        got = {}
        try:
            for v in (strict, value):
                setattr(mm, attr, v)
                got[v] = torch.mm(a, b)
        finally:
            setattr(mm, attr, saved)
        errs = {v: float(((t.double() - ref).abs() / scale).max()) for v, t in got.items()}
        out.append({"setting": words, "dtype": dtype, "same_as_strict": digest([got[value]]) == digest([got[strict]]),
                    "error": errs[value], "strict_error": errs[strict]})
    blas = getattr(torch.backends.cuda, "preferred_blas_library", None)
    if blas is None:
        out.append({"setting": "torch.backends.cuda.preferred_blas_library('cublaslt')",
                    "missing": f"PyTorch {torch.__version__} has no torch.backends.cuda.preferred_blas_library"})
    elif device == "cuda":
        op = _Gemm(torch, device)
        saved = blas()
        try:
            blas("cublas")
            plain = op.run()
            blas("cublaslt")
            lt = op.run()
        finally:
            blas(saved)
        out.append({"setting": "torch.backends.cuda.preferred_blas_library('cublaslt')", "dtype": "f32",
                    "same_as_strict": digest([plain]) == digest([lt]), "against": "preferred_blas_library('cublas')"})
    return out


def precision_reading(obs: dict[str, Any]) -> tuple[bool | None, str, str]:
    """cuda-precision-settings: each fp32 setting this version has computes
    at a precision its documentation allows (a strict one at fp32's)."""
    broken, lines = [], []
    for s in obs.get("settings", []):
        if "missing" in s:
            lines.append(f"{s['setting']}: not here ({s['missing']})")
            continue
        said = f"{s['setting']}: {s['op']} at {s['level']} precision (error {s['error']:.2g})"
        (lines if s["level"] in s["allowed"] else broken).append(
            said if s["level"] in s["allowed"] else said + f", outside what it allows ({', '.join(s['allowed'])})")
    mistrusted = ""
    if not all(v.get("repeats", True) for v in obs.get("strict", {}).values()):
        mistrusted = "the strict setting itself gave two results, so 'the same bits as strict' proves nothing"
    return (not broken) if broken or lines else None, "; ".join(broken + lines), mistrusted


def tf32_reading(obs: dict[str, Any]) -> tuple[bool | None, str, str]:
    """tf32-precision on PyTorch's evidence: with TF32 allowed (a matmul
    under allow_tf32, a convolution under cudnn.allow_tf32's default), the
    result shows TF32's error, above the strict fp32 result's; None where no
    TF32 setting changed the bits (no TF32 here)."""
    picked = [s for s in obs.get("settings", []) if s.get("effect") == "tf32" and "allow_tf32 = True" in s["setting"]]
    if not picked:
        return None, "no TF32 setting ran", ""
    strict = obs.get("strict", {})
    said, reduced, used = [], [], []
    for s in picked:
        base = strict[s["op"]]["error"]
        if s["same_as_strict"] or s["level"] == "fp32":
            said.append(f"{s['op']}: {s['setting']} gave " + ("the strict bits" if s["same_as_strict"] else
                                                              f"fp32's error ({s['error']:.2g}), other bits")
                        + " (TF32 not used)")
            continue
        used.append(s)
        ok = s["level"] == "tf32" and s["error"] > base
        (reduced if ok else said).append(f"{s['op']}: error {s['error']:.2g} against fp64 under {s['setting']}, "
                                         f"strict fp32 {base:.2g} (inputs rounded to TF32: "
                                         f"{obs['levels'][s['op']]['tf32']:.2g})")
    if not used:
        return None, "; ".join(said) + ": this device computed no fp32 GEMM or convolution in TF32", ""
    return len(reduced) == len(used), "; ".join(reduced + said), ""


def highest_conv_reading(obs: dict[str, Any]) -> tuple[bool | None, str, str]:
    """matmul-precision-highest-conv (folklore): under
    set_float32_matmul_precision('highest') an fp32 convolution is computed
    at fp32's precision."""
    s = next((s for s in obs.get("settings", []) if s["setting"].endswith("for a convolution")), None)
    if s is None or "missing" in s:
        return None, (s or {}).get("missing", "not run"), ""
    return s["level"] == "fp32", (f"a convolution under {s['setting'].split(',')[0]} with the other defaults "
                                  f"(cudnn.allow_tf32 = True): {s['level']} precision, error {s['error']:.2g} "
                                  f"against fp64 (strict fp32 {obs['strict']['conv']['error']:.2g})"), ""


def no_effect_lines(obs: dict[str, Any]) -> list[str]:
    """The settings whose documented effect did not appear here: a switch
    that allows a reduced precision and left the bits as the strict ones."""
    out = []
    for s in obs.get("settings", []):
        if s.get("effect") and "missing" not in s and s.get("same_as_strict"):
            out.append(f"{s['setting']}: the bits of the strict setting on this {s['op']}")
    for s in obs.get("half", []):
        if "missing" not in s and s.get("same_as_strict"):
            out.append(f"{s['setting']}: the bits of {s.get('against', 'its strict value')} on a "
                       f"{s['dtype']} GEMM")
    return out


def _precision_probe(probe: str, reading: Callable, **observe: Any) -> tuple[bool | None, str, dict]:
    import torch
    need_device(torch, probe)
    obs = precision_observe(torch, "cuda", **observe)
    passed, detail, mistrusted = reading(obs)
    obs["no_effect"] = no_effect_lines(obs)
    if mistrusted:
        obs["mistrusted"] = mistrusted
    return passed, f"PyTorch {torch.__version__} on {obs['device']}: {detail}", obs


def cuda_precision_settings() -> tuple[bool | None, str, dict]:
    return _precision_probe("cuda_precision_settings", precision_reading)


def cuda_tf32_precision() -> tuple[bool | None, str, dict]:
    return _precision_probe("cuda_tf32_precision", tf32_reading, timed=False,
                            only=lambda words: "allow_tf32 = True" in words)


def cuda_highest_conv() -> tuple[bool | None, str, dict]:
    return _precision_probe("cuda_highest_conv", highest_conv_reading, timed=False,
                            only=lambda words: words.endswith("for a convolution"))


# --- torch.compile on CUDA (compiled.py's checks; torch_backends.py runs them) ------

def _check_state(run: dict[str, Any]) -> str:
    """"error", "did_not_run" (its compiled function did not run: an error
    unless it names what the machine lacks, then not evaluated), "refused"
    or "" (it ran)."""
    return ("error" if "error" in run else "did_not_run" if "did_not_run" in run else "refused" if "refused" in run
            else "")


def compile_needs(seen: dict[str, Any]) -> str:
    """What this machine lacks for the compiled functions that did not run,
    with their failure ("" where every one that did not run names nothing
    missing): the checks are then not evaluated, not judged."""
    lacking = [(name, run) for name, run in seen.items()
               if isinstance(run, dict) and "did_not_run" in run and run.get("need")]
    if not lacking:
        return ""
    name, run = lacking[0]
    return f"torch.compile could not run here, for want of {run['need']} ({name}: {run['did_not_run']})"


def compile_eager_reading(seen: dict[str, Any]) -> tuple[bool | None, str, str]:
    """compile-cuda-matches-eager (folklore): a compiled function and a
    compiled training step give eager's bits on CUDA. Trusted where eager on
    inputs one ulp away gives other bits than compiled."""
    return _compile_reading(seen, ("bits", "train"), "versus_eager", "compiled against eager")


def compile_deterministic_reading(seen: dict[str, Any]) -> tuple[bool | None, str, str]:
    """compile-cuda-deterministic (folklore): under
    use_deterministic_algorithms(True) a compiled function repeats its bits
    run to run on CUDA, and an operation the mode forbids (put_ with
    accumulate=False) raises when compiled as in eager."""
    passed, detail, mistrusted = _compile_reading(seen, ("deterministic",), "run_to_run",
                                                  "compiled under the mode, run to run")
    alert = seen.get("alert", {})
    if _check_state(alert) == "error":
        return None, f"{detail}; the alert check's process failed: {alert['error']}", ""
    if _check_state(alert) == "did_not_run":
        # No run, no evidence of the alert: not evaluated where the machine
        # lacks what compiling needs (compile_needs), the harness's error otherwise.
        return None, f"{detail}; put_(accumulate=False) under the mode did not run: {alert['did_not_run']}", ""
    raised = alert.get("alert", {})
    if "compiled" in raised:
        same = raised.get("compiled") == raised.get("eager")
        detail += (f"; put_(accumulate=False) under the mode: eager {'raised' if raised.get('eager') else 'ran'}, "
                   f"compiled {'raised' if raised.get('compiled') else 'ran without the alert'}")
        if passed is not None:
            passed = passed and same
    return passed, detail, mistrusted


def _compile_reading(seen: dict[str, Any], checks: tuple[str, ...], key: str, words: str):
    said, differ, errors = [], [], []
    controls_ok = True
    for check in checks:
        run = seen.get(check, {})
        state = _check_state(run)
        if state == "error":
            errors.append(f"{check}: {run['error']}")
            continue
        if state == "did_not_run":
            # Not a result: not evaluated where it names what the machine
            # lacks (compile_needs), the harness's error otherwise.
            (said if run.get("need") else errors).append(f"{check}: the compiled function did not run: "
                                                         f"{run['did_not_run']}")
            continue
        if state == "refused" or key not in run:
            said.append(f"{check}: refused by PyTorch ({run.get('refused', 'not run')})")
            continue
        c = run[key]
        ctl = run.get("controls", {})
        controls_ok &= bool(ctl.get("eager_one_ulp_away_differs", ctl.get("random_order_sum_varies")))
        (said if c.get("same") else differ).append(
            f"{check}: {words}: " + ("the same bits" if c.get("same") else
                                     f"{c.get('fraction', 0):.1%} of elements differ, by up to "
                                     f"{c.get('max_rel', 0):.2g} of the largest"))
    for name, run in seen.items():
        if isinstance(run, dict) and " " in name and key in run:
            said.append(f"{name.split()[0]} with Inductor's {name.split()[1]} setting: "
                        + ("the same bits" if run[key].get("same") else "other bits"))
    if errors:
        return None, "checks whose process failed: " + "; ".join(errors), ""
    if not differ and not any(": the same bits" in s for s in said):
        return None, "; ".join(said) or "no check ran", ""
    mistrusted = "" if differ or controls_ok else "a check's positive control did not vary"
    return not differ, "; ".join(differ + said), mistrusted


# --- what the deterministic mode costs a training step -----------------------------

def cuda_det_alg_speed() -> tuple[bool | None, str, dict]:
    """det-alg-slower on CUDA: the training step of cudnn_choices.py (its
    form whose operations all have a deterministic CUDA backward) timed with
    use_deterministic_algorithms off (A) and on (B), both workers with
    CUBLAS_WORKSPACE_CONFIG=:4096:8, as the Reproducibility notes ask for
    cuBLAS under the mode (2.11 no longer alerts without it: cublas-config)."""
    import cudnn_choices
    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    return cudnn_choices._compared("cuda_det_alg_speed", dict(cudnn_choices.TRAIN_F32, deterministic_safe=True),
                                   {"deterministic_algorithms": False}, {"deterministic_algorithms": True},
                                   ("steady_ns",))


# --- the search for counter-examples, on the GPU ------------------------------------

def cuda_counterexamples() -> tuple[bool | None, str, dict]:
    """The search for counter-examples at the CUDA levels
    (counterexamples.run_cuda): under use_deterministic_algorithms(True)
    run to run, across streams, across the batch; the corpus replayed
    first, each level's planted controls, the tier's budget
    (BACKENDCHECK_SEARCH_BUDGET where set). It records; the report judges
    (det-alg-cuda-run, cuda-stream-invariant)."""
    import torch
    need_device(torch, "cuda_counterexamples")
    import counterexamples as search
    seen = search.run_cuda(os.environ.get("BACKENDCHECK_TIER", "ci"))
    missed = [level for level, c in seen["controls"].items() if not c["trusted"]]
    found = {key: [c["words"] for c in s["counterexamples"]] for key, s in seen["searches"].items()}
    return True, (f"PyTorch {torch.__version__} on {seen['device']}: planted controls "
                  + (f"MISSED at {', '.join(missed)}" if missed else "found") + "; "
                  + "; ".join(f"{key}: {len(words)} counter-example(s) ({', '.join(words[:3])})"
                              for key, words in found.items())), seen


PROBES = {
    "cuda_counterexamples": cuda_counterexamples,
    "cuda_sdpa_repeatable": cuda_sdpa_repeatable,
    "cuda_sdpa_deterministic": cuda_sdpa_deterministic,
    "cuda_sdpa_table": cuda_sdpa_table,
    "cuda_invariance": cuda_invariance,
    "cuda_precision_settings": cuda_precision_settings,
    "cuda_tf32_precision": cuda_tf32_precision,
    "cuda_highest_conv": cuda_highest_conv,
    "cuda_det_alg_speed": cuda_det_alg_speed,
}

# The probes that may share one interpreter where the run names a place for
# it (shared_child.py: torch's import and CUDA's start paid once for them):
# bits, untimed, each restoring what it sets. The costs, which time the
# device, and the batch grid, whose levers' costs it times, keep a fresh
# interpreter each. The group's name is its tests' RESOURCE_LOCK
# (their lock in probes/declared.toml): the interpreter answers one
# at a time.
SHARED_CHILD = {"cuda-questions-child": ("cuda_sdpa_repeatable", "cuda_sdpa_deterministic", "cuda_sdpa_table",
                                         "cuda_tf32_precision", "cuda_highest_conv")}


def main(argv: list[str]) -> int:
    if len(argv) == 4 and argv[1] in ("sdpa-child", "grid-child"):
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        import torch
        globals().update(json.loads(argv[3]))
        out = sdpa_child(torch, argv[2]) if argv[1] == "sdpa-child" else grid_child(torch, argv[2])
        print(json.dumps(out))
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
