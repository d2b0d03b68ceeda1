"""Probes of the torch.backends settings of PyTorch 2.x that change numerics
or pick kernels, decided by the torch under test on the CPU: the
fp32_precision settings and their legacy spellings, set_float32_matmul_precision,
the MHA fast path, scaled_dot_product_attention's backends, the CPU
capability and opt_einsum. Each probe returns (passed, detail, observed), as
torch_backends.py's do (its PROBES registers them); it raises NotHere, naming
the version, where this torch lacks what it is about, or where this machine
cannot show it (no fast bf16 kernel on this CPU), naming what would.

A verdict of "same bits" or "no effect" is only as good as the check's
power to see a difference: every such probe runs a positive control, a
change of the same kind that must give other bits, and reports itself
mistrusted (observed["mistrusted"]) when the control did not vary.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import sys
import tempfile
import warnings

import torch

import children
from common import NotHere, digest, first_line, median_ratio, order_varies, set_by
from readings import mkl_report, mkl_routines
import re

# What each probe records about the inputs it made: shapes chosen so that the
# reduction is long enough for a narrower type to change the last bits
# (k = 512 for matmul, 32 channels x 3 x 3 for convolution).
MM = (96, 512, 80)
CONV = ((4, 32, 20, 20), (48, 32, 3, 3))
# An LSTM (batch, steps, input, hidden): each gate sums input + hidden
# products a step.
LSTM = (4, 12, 64, 96)
# bf16 keeps 8 significant bits: a sum of k products of inputs rounded to it
# is off by about k * 2^-8 of the largest term in the worst case; the probes
# use that as the bound of "computed in bf16".
BF16_UNIT = 2.0 ** -8
# TF32 keeps 11 significant bits.
UNITS = {"bf16": BF16_UNIT, "tf32": 2.0 ** -11}
# Runs of each setting, alternated, whose median times give a speed ratio.
TIMED_RUNS = 7


def _version() -> str:
    return str(torch.__version__)


def _need(what: str, present: bool) -> None:
    if not present:
        raise NotHere(f"PyTorch {_version()} has no {what}")


def _rand(*shape: int, seed: int) -> torch.Tensor:
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed))


def _rel_error(t: torch.Tensor, ref: torch.Tensor) -> float:
    return float((t.double() - ref).abs().max() / ref.abs().max())


def _bf16_supported() -> bool:
    """Whether oneDNN has fast bf16 kernels on this CPU (PyTorch's own check)."""
    check = getattr(torch.ops.mkldnn, "_is_mkldnn_bf16_supported", None)
    return bool(check()) if check is not None else False


def _tf32_supported() -> bool:
    """Whether this CPU has AMX-FP16, which the CPU TF32 kernels of PyTorch's
    oneDNN build use (torch.cpu's own check)."""
    check = getattr(torch.cpu, "_is_amx_fp16_supported", None)
    return bool(check()) if check is not None else False


def _no_bf16(what: str) -> NotHere:
    return NotHere(f"this CPU has no fast bf16 kernel (PyTorch {_version()}: "
                   f"torch.ops.mkldnn._is_mkldnn_bf16_supported() is False; CPU capability "
                   f"{_capability()}), so it cannot show {what}: a CPU with avx512_bf16 or AMX would")


def _capability() -> str:
    cpu = getattr(torch.backends, "cpu", None)
    return cpu.get_cpu_capability() if cpu is not None and hasattr(cpu, "get_cpu_capability") else "unknown"


def _captured(fn, scopes=()):
    """fn's result and what the process printed on its standard output while
    it ran inside the context managers `scopes` (C libraries print there, past
    Python's sys.stdout)."""
    libc = ctypes.CDLL(None)
    sys.stdout.flush()
    saved = os.dup(1)
    with tempfile.TemporaryFile() as out:
        os.dup2(out.fileno(), 1)
        try:
            with contextlib.ExitStack() as stack:
                for scope in scopes:
                    stack.enter_context(scope)
                result = fn()
        finally:
            libc.fflush(None)
            os.dup2(saved, 1)
            os.close(saved)
        out.seek(0)
        return result, out.read().decode("utf-8", errors="replace")


def _verbose_scopes() -> list:
    b = torch.backends
    scopes = [b.mkldnn.verbose(b.mkldnn.VERBOSE_ON)] if hasattr(b.mkldnn, "verbose") else []
    if hasattr(b, "mkl") and hasattr(b.mkl, "verbose") and b.mkl.is_available():
        scopes.append(b.mkl.verbose(b.mkl.VERBOSE_ON))
    return scopes


def _traced(fn):
    """fn's result, what oneDNN printed while it ran (its verbose lines; the
    harness's C++ reads the kernel names out of them), and the oneMKL
    routines it called (PyTorch's CPU BLAS in the x86 wheels)."""
    result, text = _captured(fn, _verbose_scopes())
    lines = text.splitlines()
    return result, "\n".join(line for line in lines if "_verbose" in line), mkl_routines(text)


def mkl_said() -> dict[str, str]:
    """What oneMKL says of itself on one small torch.mm (readings.mkl_report:
    its banner's code branch and its CNR mode); {} where this torch has no
    oneMKL, or it printed no banner."""
    b = torch.backends
    if not (hasattr(b, "mkl") and b.mkl.is_available() and hasattr(b.mkl, "verbose")):
        return {}
    a = torch.ones(8, 8)
    _, text = _captured(lambda: torch.mm(a, a), [b.mkl.verbose(b.mkl.VERBOSE_ON)])
    return mkl_report(text)


class _Matmul:
    """One seeded fp32 matmul and its fp64 oracle."""

    def __init__(self) -> None:
        m, k, n = MM
        self.a, self.b = _rand(m, k, seed=1), _rand(k, n, seed=2)
        self.ref = self.a.double() @ self.b.double()

    def run(self) -> torch.Tensor:
        return self.a @ self.b

    def bf16_control(self) -> torch.Tensor:
        """The same matmul on inputs rounded to bf16: what bf16 arithmetic
        would give; its bits must differ from fp32's."""
        return self.a.bfloat16().float() @ self.b.bfloat16().float()

    def bound(self, unit: float) -> float:
        """The largest error, relative to the largest output, of products
        whose factors are rounded to `unit`: unit * max(|a| @ |b|)."""
        return float(unit * (self.a.double().abs() @ self.b.double().abs()).max() / self.ref.abs().max())


class _Conv:
    """One seeded fp32 3x3 convolution and its fp64 oracle."""

    def __init__(self) -> None:
        x, w = CONV
        self.x, self.w = _rand(*x, seed=3), _rand(*w, seed=4)
        self.ref = torch.nn.functional.conv2d(self.x.double(), self.w.double(), padding=1)

    def run(self) -> torch.Tensor:
        return torch.nn.functional.conv2d(self.x, self.w, padding=1)

    def bf16_control(self) -> torch.Tensor:
        return torch.nn.functional.conv2d(self.x.bfloat16().float(), self.w.bfloat16().float(), padding=1)

    def bound(self, unit: float) -> float:
        """As _Matmul.bound, with the convolution of the magnitudes."""
        magnitude = torch.nn.functional.conv2d(self.x.double().abs(), self.w.double().abs(), padding=1)
        return float(unit * magnitude.max() / self.ref.abs().max())


class _Lstm:
    """One seeded single-layer LSTM over a short sequence (PyTorch runs it
    through oneDNN's RNN primitive on the CPU), in eval with no_grad, and its
    fp64 oracle (the same weights in float64)."""

    def __init__(self) -> None:
        batch, steps, inputs, hidden = LSTM
        self.lstm = torch.nn.LSTM(inputs, hidden, batch_first=True).eval()
        with torch.no_grad():
            for i, p in enumerate(self.lstm.parameters()):
                p.copy_(_rand(*p.shape, seed=20 + i) * hidden ** -0.5)
        self.x = _rand(batch, steps, inputs, seed=19)
        with torch.no_grad():
            oracle = torch.nn.LSTM(inputs, hidden, batch_first=True).double()
            oracle.load_state_dict({k: v.double() for k, v in self.lstm.state_dict().items()})
            self.ref = oracle(self.x.double())[0]

    def run(self) -> torch.Tensor:
        with torch.no_grad():
            return self.lstm(self.x)[0]

    def bf16_control(self) -> torch.Tensor:
        with torch.no_grad():
            return self.lstm(self.x.bfloat16().float())[0]


# Each operation a CPU precision setting governs, with the length of the
# sums its outputs are made of: the LSTM's error bound (its recurrence has no
# bound of the matmul's kind) is that length times the type's unit, a loose one.
OPS = {"matmul": (_Matmul, MM[1]), "conv": (_Conv, CONV[1][1] * 9), "rnn": (_Lstm, LSTM[2] + LSTM[3])}


def _path(log: str, mkl: list[str]) -> str:
    """What ran the operation: oneDNN (its kernels are named in observed),
    oneMKL (its routines), or neither (PyTorch's own kernel)."""
    if ",exec," in log:
        # onednn_verbose,v1,primitive,exec,cpu,KIND,IMPLEMENTATION,...
        kernels = sorted({f"{f[5]} {f[6]}" for f in (line.split(",") for line in log.splitlines())
                          if len(f) > 6 and f[3] == "exec" and f[5] != "reorder"})
        return "through oneDNN" + (f" ({', '.join(kernels)})" if kernels else "")
    if mkl:
        return f"through oneMKL's {', '.join(mkl)}, not oneDNN"
    blas = re.search(r"BLAS_INFO=([^,\s]+)", torch.__config__.show())
    if blas and blas.group(1) != "mkl":
        return (f"through neither oneDNN nor oneMKL: this build's BLAS ('{blas.group(1)}' in torch.__config__; "
                "it names no kernel) or PyTorch's own kernel")
    return "through neither oneDNN nor oneMKL (PyTorch's own kernel)"


def _mistrusted(observed: dict, control: str, varied: bool) -> None:
    """Marks the observation mistrusted when its positive control did not vary."""
    observed["control"] = {"what": control, "varied": varied}
    if not varied:
        observed["mistrusted"] = f"the positive control ({control}) gave the same bits, so 'same bits' proves nothing"


# --- the fp32_precision settings ----------------------------------------------

# Every fp32_precision setting by its torch name, as (backend, op) of the
# getter that torch.backends uses.
SETTINGS = {"fp32_precision": ("generic", "all"), "cuda.matmul.fp32_precision": ("cuda", "matmul"),
            "cudnn.fp32_precision": ("cuda", "all"), "cudnn.conv.fp32_precision": ("cuda", "conv"),
            "cudnn.rnn.fp32_precision": ("cuda", "rnn"), "mkldnn.fp32_precision": ("mkldnn", "all"),
            "mkldnn.matmul.fp32_precision": ("mkldnn", "matmul"), "mkldnn.conv.fp32_precision": ("mkldnn", "conv"),
            "mkldnn.rnn.fp32_precision": ("mkldnn", "rnn")}


def _setting(name: str):
    """The torch.backends object whose fp32_precision attribute `name` is."""
    value = torch.backends
    for part in name.split(".")[:-1]:
        value = getattr(value, part)
    return value


def _read_all() -> dict[str, str]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return {name: str(_setting(name).fp32_precision) for name in SETTINGS}


def _restore(values: dict[str, str]) -> None:
    # Children first would be overwritten by their parents: parents first.
    for name in sorted(values, key=lambda n: n.count(".")):
        _setting(name).fp32_precision = values[name]


def _parent(name: str) -> str | None:
    """The setting a setting at "none" reads: an operation's is its backend's
    ("cuda", "all" is cudnn.fp32_precision, matmul's too), a backend's is the
    generic one."""
    backend, op = SETTINGS[name]
    if backend == "generic":
        return None
    want = (backend, "all") if op != "all" else ("generic", "all")
    return next(n for n, key in SETTINGS.items() if key == want)


def _descendants(name: str) -> list[str]:
    children = [n for n in SETTINGS if _parent(n) == name]
    return children + [d for c in children for d in _descendants(c)]


def _has_fp32_precision() -> None:
    _need("torch.backends.fp32_precision (the fp32_precision settings arrived in 2.9)",
          hasattr(torch.backends, "fp32_precision") and hasattr(torch.backends.mkldnn, "matmul"))


def fp32_precision_inherit() -> tuple[bool, str, dict]:
    """The fp32_precision settings form a tree: the generic setting, each
    backend's (cuda, cudnn, mkldnn) and each operation's (matmul, conv, rnn).
    A setting at "none" reads as its parent's value: set a backend, its
    operations at "none" read the backend's precision; set the generic one,
    the backends at "none" read it. Records the defaults."""
    _has_fp32_precision()
    defaults = _read_all()
    seen: dict[str, dict[str, str]] = {}
    try:
        for parent, value in (("mkldnn.fp32_precision", "bf16"), ("cudnn.fp32_precision", "tf32"),
                              ("fp32_precision", "tf32")):
            _restore({n: "none" for n in SETTINGS if n != "fp32_precision"} | {"fp32_precision": "none"})
            _setting(parent).fp32_precision = value
            seen[f"{parent}={value}"] = _read_all()
    finally:
        _restore(defaults)
    wrong = {}
    for case, values in seen.items():
        parent, value = case.split("=")
        wrong.update({f"{case}: {c}": values[c] for c in _descendants(parent) if values[c] != value})
    passed = not wrong
    return passed, (f"defaults {defaults}; with every other setting at 'none', setting a parent makes its children "
                    f"read its value" + ("" if passed else f", except {wrong}")), {
                        "defaults": defaults, "after_setting_a_parent": seen, "children_not_inheriting": wrong}


def fp32_precision_legacy() -> tuple[bool, str, dict]:
    """The legacy switches write the fp32_precision settings they stand for:
    torch.backends.cuda.matmul.allow_tf32 = True/False sets
    cuda.matmul.fp32_precision to "tf32"/"ieee"; set_float32_matmul_precision
    "highest", "high" and "medium" set the matmul settings of CUDA and oneDNN
    (ieee/ieee, tf32/tf32, tf32/bf16). Records what each wrote."""
    _has_fp32_precision()
    defaults = _read_all()
    legacy = torch.get_float32_matmul_precision()
    matmuls = ("cuda.matmul.fp32_precision", "mkldnn.matmul.fp32_precision")
    want = {"cuda.matmul.allow_tf32=True": {"cuda.matmul.fp32_precision": "tf32"},
            "cuda.matmul.allow_tf32=False": {"cuda.matmul.fp32_precision": "ieee"},
            "set_float32_matmul_precision('highest')": dict(zip(matmuls, ("ieee", "ieee"))),
            "set_float32_matmul_precision('high')": dict(zip(matmuls, ("tf32", "tf32"))),
            "set_float32_matmul_precision('medium')": dict(zip(matmuls, ("tf32", "bf16")))}
    seen = {}
    try:
        for case in want:
            if case.startswith("cuda"):
                torch.backends.cuda.matmul.allow_tf32 = case.endswith("True")
            else:
                torch.set_float32_matmul_precision(case.split("'")[1])
            seen[case] = {k: v for k, v in _read_all().items() if k in want[case]}
    finally:
        torch.set_float32_matmul_precision(legacy)
        _restore(defaults)
    differ = {case: seen[case] for case in want if seen[case] != want[case]}
    return not differ, ("; ".join(f"{case} wrote {seen[case]}" for case in want) +
                        (f"; expected otherwise: {differ}" if differ else "")), {"wrote": seen, "expected": want}


def fp32_precision_refuses() -> tuple[bool, str, dict]:
    """A precision the setting does not know raises RuntimeError, and so does
    one its backend cannot compute ("bf16" for cuda.matmul); the setting keeps
    its value."""
    _has_fp32_precision()
    before = _read_all()
    tries = {"mkldnn.matmul.fp32_precision='fp16'": ("mkldnn.matmul.fp32_precision", "fp16"),
             "mkldnn.matmul.fp32_precision='TF32'": ("mkldnn.matmul.fp32_precision", "TF32"),
             "cuda.matmul.fp32_precision='bf16'": ("cuda.matmul.fp32_precision", "bf16")}
    raised = {}
    try:
        for case, (name, value) in tries.items():
            try:
                _setting(name).fp32_precision = value
                raised[case] = ""
            except RuntimeError as e:
                raised[case] = str(e).splitlines()[0]
    finally:
        _restore(before)
    kept = _read_all() == before
    passed = all(raised.values()) and kept
    return passed, ("; ".join(f"{c}: " + (f"RuntimeError: {m}" if m else "accepted") for c, m in raised.items()) +
                    ("" if kept else "; a refused value changed the settings")), {"raised": raised, "kept": kept}


# --- set_float32_matmul_precision on the CPU ------------------------------------

def _docstring_says(text: str) -> bool:
    doc = " ".join((torch.set_float32_matmul_precision.__doc__ or "").split())
    return text in doc


def _matmul_under(precision: str, op) -> tuple[torch.Tensor, str, list[str]]:
    legacy = torch.get_float32_matmul_precision()
    try:
        torch.set_float32_matmul_precision(precision)
        return _traced(op.run)
    finally:
        torch.set_float32_matmul_precision(legacy)


def _precision_probe(precision: str, fallback: str) -> tuple[bool, str, dict]:
    """set_float32_matmul_precision(precision) on a CPU fp32 matmul, held to
    its docstring: with a fast reduced-precision algorithm here, the bits
    change and the error stays within that type's bound; without one, it
    computes as `fallback` ("high": as "highest"), the same bits."""
    _need("torch.set_float32_matmul_precision", hasattr(torch, "set_float32_matmul_precision"))
    op = _Matmul()
    base, base_log, base_mkl = _matmul_under("highest", op)
    again, _, _ = _matmul_under("highest", op)
    got, log, mkl = _matmul_under(precision, op)
    fast = _bf16_supported() and precision == "medium"
    k = MM[1]
    err, base_err = _rel_error(got, op.ref), _rel_error(base, op.ref)
    observed = {"precision": precision, "bf16_kernels_here": _bf16_supported(), "capability": _capability(),
                "digest": {"highest": digest([base]), precision: digest([got])}, "dtype": str(got.dtype),
                "error": {"highest": base_err, precision: err},
                "onednn_verbose": {"highest": base_log, precision: log},
                "mkl_routines": {"highest": base_mkl, precision: mkl}, "shape_mkn": list(MM)}
    if digest([base]) != digest([again]):
        observed["mistrusted"] = "'highest' itself gave two results: the comparison is not trusted"
    if fast:
        changed = digest([got]) != digest([base])
        within = err <= k * BF16_UNIT
        return changed and within, (f"{precision}: the matmul ran {_path(log, mkl)}; bits "
                                    f"{'changed' if changed else 'unchanged'} against 'highest' "
                                    f"with a fast bf16 kernel here; error against fp64 {err:.3g} (highest "
                                    f"{base_err:.3g}; bf16 bound {k * BF16_UNIT:.3g})"), observed
    _mistrusted(observed, "the same matmul on inputs rounded to bf16", digest([op.bf16_control()]) != digest([base]))
    same = digest([got]) == digest([base])
    return same, (f"{precision}: no fast reduced-precision kernel for it on this CPU (capability "
                  f"{_capability()}), so computed as '{fallback}': the matmul ran {_path(log, mkl)}; bits "
                  f"{'equal to' if same else 'differ from'} 'highest' (error {err:.3g} against fp64)"), observed


def matmul_precision_medium() -> tuple[bool, str, dict]:
    """"medium": float32 matmuls use bfloat16 internally if a fast algorithm
    is available, otherwise computed as if "high" (the docstring)."""
    return _precision_probe("medium", "high")


def matmul_precision_high() -> tuple[bool, str, dict]:
    """"high": TensorFloat32 or two-bfloat16 sums if available, otherwise
    computed as if "highest" (the docstring). On a CPU PyTorch has neither
    for fp32 matmul: the bits equal "highest"'s."""
    return _precision_probe("high", "highest")


def matmul_precision_keeps_dtype_and_conv() -> tuple[bool, str, dict]:
    """The docstring's notes: the setting does not change the output dtype of
    float32 matmuls, nor the precision of convolution operations: a CPU
    convolution gives the same bits under "medium" as under "highest"."""
    _need("torch.set_float32_matmul_precision", hasattr(torch, "set_float32_matmul_precision"))
    notes = {"dtype": _docstring_says("does not change the output dtype"),
             "convolution": _docstring_says("does not change the precision of convolution operations")}
    op, conv = _Matmul(), _Conv()
    dtypes = {p: str(_matmul_under(p, op)[0].dtype) for p in ("highest", "high", "medium")}
    legacy = torch.get_float32_matmul_precision()
    try:
        torch.set_float32_matmul_precision("highest")
        c_highest = conv.run()
        torch.set_float32_matmul_precision("medium")
        c_medium, log, mkl = _traced(conv.run)
    finally:
        torch.set_float32_matmul_precision(legacy)
    same = digest([c_highest]) == digest([c_medium])
    observed = {"docstring_notes": notes, "dtypes": dtypes, "conv_digest": {"highest": digest([c_highest]),
                                                                          "medium": digest([c_medium])},
                "onednn_verbose": {"conv under medium": log}}
    _mistrusted(observed, "the same convolution on inputs rounded to bf16",
                digest([conv.bf16_control()]) != digest([c_highest]))
    passed = same and set(dtypes.values()) == {"torch.float32"}
    return passed, (f"output dtype {sorted(set(dtypes.values()))} under highest, high and medium; a CPU "
                    f"convolution (run {_path(log, mkl)}) gives {'equal' if same else 'different'} bits under medium "
                    f"and highest; the docstring "
                    f"of this version says so: {notes}"), observed


def matmul_precision_cuda_only() -> tuple[bool, str, dict]:
    """The docstring: "This flag currently only affects one native device
    type: CUDA." Where oneDNN has fast bf16 kernels, "medium" changing a CPU
    matmul's bits refutes it; on a CPU without them, nothing could show it."""
    _need("torch.set_float32_matmul_precision", hasattr(torch, "set_float32_matmul_precision"))
    op = _Matmul()
    base, _, _ = _matmul_under("highest", op)
    got, log, mkl = _matmul_under("medium", op)
    wrote = {}
    if hasattr(torch.backends, "fp32_precision"):
        legacy = torch.get_float32_matmul_precision()
        try:
            torch.set_float32_matmul_precision("medium")
            wrote = {k: v for k, v in _read_all().items() if k.startswith("mkldnn")}
        finally:
            torch.set_float32_matmul_precision(legacy)
    if not _bf16_supported():
        raise _no_bf16("whether 'medium' reaches CPU matmuls" +
                       (f" (it set the CPU's settings {wrote})" if wrote else ""))
    changed = digest([got]) != digest([base])
    return not changed, (f"'medium' {'changed' if changed else 'left'} the bits of a CPU fp32 matmul "
                         f"({'against' if changed else 'as'} 'highest'); it set the CPU's settings {wrote}; the "
                         f"docstring says CUDA only: {_docstring_says('only affects one native device type: CUDA')}"
                         ), {"changed_cpu_bits": changed, "cpu_settings_written": wrote,
                             "onednn_verbose": {"medium": log}, "mkl_routines": {"medium": mkl}}


# --- torch.backends.mkldnn.{matmul,conv,rnn}.fp32_precision ------------------------

def _fast_here(precision: str) -> bool:
    return _bf16_supported() if precision == "bf16" else _tf32_supported()


def _reduced_run(kind: str, precision: str) -> dict:
    """One operation at mkldnn.KIND.fp32_precision = "none" and = precision:
    its bits, its error against fp64, what ran it (oneDNN's kernels, oneMKL's
    routines), and the ratio of the median times (reduced over "none")."""
    make, k = OPS[kind]
    op = make()
    name = f"mkldnn.{kind}.fp32_precision"
    before = _read_all()
    try:
        base, base_log, base_mkl = _traced(op.run)
        _setting(name).fp32_precision = precision
        got, log, mkl = _traced(op.run)
        ratio = median_ratio(op.run, (lambda: set_by(lambda: _restore(before)),
                                      lambda: set_by(lambda: setattr(_setting(name), "fp32_precision", precision))),
                             TIMED_RUNS)
    finally:
        _restore(before)
    return {"setting": name, "precision": precision, "changed": digest([got]) != digest([base]),
            "digest": {"none": digest([base]), precision: digest([got])},
            "error": {"none": _rel_error(base, op.ref), precision: _rel_error(got, op.ref)},
            "bound": op.bound(UNITS[precision]) if hasattr(op, "bound") else k * UNITS[precision], "path": _path(log, mkl), "speed_ratio": ratio,
            "control_varies": digest([op.bf16_control()]) != digest([base]),
            "onednn_verbose": {"none": base_log, precision: log}, "mkl_routines": {"none": base_mkl, precision: mkl}}


def _reduced_line(r: dict) -> str:
    """One setting's run, its clauses joined by commas: the settings of a
    detail are joined by "; ", so that two settings' equal figures ("time
    0.99x fp32's") stay each its own setting's."""
    return (f"{r['setting']}='{r['precision']}': ran {r['path']}, bits "
            f"{'changed' if r['changed'] else 'unchanged'}, error against fp64 {r['error'][r['precision']]:.3g} "
            f"(fp32 {r['error']['none']:.3g}, {r['precision']} bound {r['bound']:.3g}), "
            f"time {r['speed_ratio']:.2f}x fp32's (median of {TIMED_RUNS})")


def _mkldnn_reduced(kinds: tuple[str, ...], precision: str) -> tuple[bool, str, dict]:
    """torch.backends.mkldnn.KIND.fp32_precision = precision computes that fp32
    operation in the reduced type on a CPU with fast kernels for it (the
    MKLDNN backend notes): its bits change against "none", and its error
    against fp64 stays within the type's bound. Records the oneDNN kernels
    that ran and the speed ratio. Where this CPU has no such kernel, not
    evaluated, with what the setting did here."""
    _has_fp32_precision()
    runs = {kind: _reduced_run(kind, precision) for kind in kinds}
    observed = {"bf16_kernels_here": _bf16_supported(), "amx_fp16_here": _tf32_supported(),
                "capability": _capability(), "runs": runs,
                "onednn_verbose": {f"{kind} {s}": r["onednn_verbose"][s] for kind, r in runs.items()
                                   for s in r["onednn_verbose"]},
                "mkl_routines": {f"{kind} {s}": r["mkl_routines"][s] for kind, r in runs.items()
                                 for s in r["mkl_routines"]}}
    detail = "; ".join(_reduced_line(r) for r in runs.values())
    if not _fast_here(precision):
        what = ("fast bf16 kernel (torch.ops.mkldnn._is_mkldnn_bf16_supported() is False)" if precision == "bf16"
                else "AMX-FP16 (torch.cpu._is_amx_fp16_supported() is False)")
        raise NotHere(f"this CPU (PyTorch {_version()}, CPU capability {_capability()}) has no {what}, so it cannot "
                      f"show what '{precision}' does where the notes offer it; here: {detail}")
    # "No effect" needs a control that the same comparison sees a difference.
    _mistrusted(observed, "the same operations on inputs rounded to bf16",
                all(r["control_varies"] for r in runs.values() if not r["changed"]))
    passed = all(r["changed"] and r["error"][precision] <= r["bound"] for r in runs.values())
    return passed, detail, observed


def mkldnn_matmul_bf16() -> tuple[bool, str, dict]:
    """See _mkldnn_reduced: matmul in bf16."""
    return _mkldnn_reduced(("matmul",), "bf16")


def mkldnn_conv_bf16() -> tuple[bool, str, dict]:
    """See _mkldnn_reduced: convolution in bf16."""
    return _mkldnn_reduced(("conv",), "bf16")


def mkldnn_rnn_bf16() -> tuple[bool, str, dict]:
    """See _mkldnn_reduced: an LSTM in bf16."""
    return _mkldnn_reduced(("rnn",), "bf16")


def mkldnn_tf32() -> tuple[bool, str, dict]:
    """See _mkldnn_reduced: matmul, convolution and an LSTM in TF32."""
    return _mkldnn_reduced(tuple(OPS), "tf32")


# --- the MHA fast path ----------------------------------------------------------

def _encoder():
    torch.manual_seed(0)
    layer = torch.nn.TransformerEncoderLayer(64, 4, dim_feedforward=128, batch_first=True).eval()
    return layer, _rand(8, 16, 64, seed=5)


def mha_fastpath() -> tuple[bool, str, dict]:
    """torch.backends.mha: get_fastpath_enabled() is True by default, and
    set_fastpath_enabled(False) turns the fast path off: an eligible
    TransformerEncoderLayer (eval, no_grad, batch_first, as its docs list)
    computes its output by the slow path instead, other bits, each path
    repeatable. The largest difference is recorded."""
    mha = getattr(torch.backends, "mha", None)
    _need("torch.backends.mha", mha is not None and hasattr(mha, "set_fastpath_enabled"))
    default = mha.get_fastpath_enabled()
    layer, x = _encoder()
    with torch.no_grad():
        fast = [layer(x) for _ in range(2)]
        mha.set_fastpath_enabled(False)
        try:
            slow = [layer(x) for _ in range(2)]
            off = mha.get_fastpath_enabled()
        finally:
            mha.set_fastpath_enabled(default)
    repeat = digest([fast[0]]) == digest([fast[1]]) and digest([slow[0]]) == digest([slow[1]])
    differ = digest([fast[0]]) != digest([slow[0]])
    diff = float((fast[0] - slow[0]).abs().max())
    observed = {"default": default, "after_disable": off, "digest": {"fast": digest([fast[0]]),
                                                                     "slow": digest([slow[0]])},
                "max_abs_difference": diff, "each_path_repeats": repeat}
    _mistrusted(observed, "a sum in a fresh random order each run", order_varies(torch))
    passed = default is True and off is False and differ and repeat
    return passed, (f"default {default}; disabled, the encoder layer's output {'differs' if differ else 'is equal'} "
                    f"(largest difference {diff:.3g}); each path repeats its bits: {repeat}"), observed


# --- scaled_dot_product_attention's backends -------------------------------------

def _sdpa():
    attention = None
    try:
        from torch.nn import attention  # noqa: F401
    except ImportError:
        pass
    _need("torch.nn.attention.sdpa_kernel", attention is not None and hasattr(attention, "sdpa_kernel"))
    return attention


_SWITCHES = ("flash", "mem_efficient", "math", "cudnn")


def _switches() -> dict[str, bool]:
    cuda = torch.backends.cuda
    return {s: bool(getattr(cuda, f"{s}_sdp_enabled")()) for s in _SWITCHES if hasattr(cuda, f"{s}_sdp_enabled")}


def sdpa_switches() -> tuple[bool, str, dict]:
    """The backend switches of scaled_dot_product_attention: every
    enable_*_sdp is on by default, each setter is read back by its *_enabled
    getter, and sdpa_kernel(BACKEND) enables that backend alone inside and
    restores every switch after, also when the block raises."""
    attention = _sdpa()
    cuda = torch.backends.cuda
    defaults = _switches()
    setters = {}
    for s in defaults:
        getattr(cuda, f"enable_{s}_sdp")(False)
        setters[s] = _switches()[s]
        getattr(cuda, f"enable_{s}_sdp")(defaults[s])
    math = attention.SDPBackend.MATH
    with attention.sdpa_kernel(math):
        inside = _switches()
    after = _switches()
    try:
        with attention.sdpa_kernel(math):
            raise KeyError("inside")
    except KeyError:
        pass
    after_error = _switches()
    passed = (all(defaults.values()) and not any(setters.values()) and inside == {s: s == "math" for s in inside}
              and after == defaults and after_error == defaults)
    return passed, (f"defaults {defaults}; each set to False reads {setters}; inside sdpa_kernel(MATH) {inside}; "
                    f"after it {after}; after it raised {after_error}"), {
                        "defaults": defaults, "set_false_reads": setters, "inside_math": inside, "after": after,
                        "after_error": after_error}


def sdpa_cpu_backends() -> tuple[bool, str, dict]:
    """On the CPU, scaled_dot_product_attention's MATH and FLASH_ATTENTION
    backends both run and give different bits, each repeatable, forward and
    backward, also under use_deterministic_algorithms(True); the GPU-only
    backends have no CPU kernel (PyTorch says no viable backend)."""
    attention = _sdpa()
    F = torch.nn.functional
    q, k, v = (_rand(2, 4, 64, 32, seed=s) for s in (6, 7, 8))
    seen: dict[str, dict] = {}
    for name in ("MATH", "FLASH_ATTENTION", "EFFICIENT_ATTENTION", "CUDNN_ATTENTION"):
        if not hasattr(attention.SDPBackend, name):
            continue
        backend = getattr(attention.SDPBackend, name)
        runs = []
        try:
            for deterministic in (False, False, True):
                qq, kk, vv = (t.clone().requires_grad_() for t in (q, k, v))
                torch.use_deterministic_algorithms(deterministic)
                try:
                    with attention.sdpa_kernel(backend):
                        out = F.scaled_dot_product_attention(qq, kk, vv)
                        out.sum().backward()
                finally:
                    torch.use_deterministic_algorithms(False)
                runs.append((digest([out]), digest([qq.grad])))
            seen[name] = {"forward": runs[0][0], "backward": runs[0][1], "repeats": len(set(runs)) == 1}
        except RuntimeError as e:
            seen[name] = {"error": first_line(e)}
    observed = {"backends": seen}
    _mistrusted(observed, "a sum in a fresh random order each run", order_varies(torch))
    ran = {b: s for b, s in seen.items() if "error" not in s}
    both = {"MATH", "FLASH_ATTENTION"} <= set(ran)
    differ = both and ran["MATH"]["forward"] != ran["FLASH_ATTENTION"]["forward"]
    repeat = all(s["repeats"] for s in ran.values())
    return both and differ and repeat, ("; ".join(
        f"{b}: " + (f"forward {s['forward']}, backward {s['backward']}, repeatable {s['repeats']}" if "error" not in s
                    else f"raised: {s['error']}") for b, s in seen.items())), observed


# --- the CPU capability ---------------------------------------------------------

# The capability a fresh process reports, and a softmax's digest there
# (common.digest, as every record's); argv[1]: this folder.
_CHILD = ("import json,sys,torch;sys.path.insert(0,sys.argv[1]);from common import digest;"
          "x=torch.randn(4096,generator=torch.Generator().manual_seed(9));y=torch.softmax(x.exp()*1.5,0);"
          "print(json.dumps({'reported':torch.backends.cpu.get_cpu_capability(),'digest':digest([y])}))")


def cpu_capability() -> tuple[bool, str, dict]:
    """torch.backends.cpu.get_cpu_capability() names the vectorized kernels
    PyTorch's own operations use; ATEN_CPU_CAPABILITY caps it in a fresh
    process: "default" and each level up to the CPU's own (here: its
    default) are reported as set. Records a vectorized operation's bits at
    each (a softmax of exponentials over 4096 floats)."""
    cpu = getattr(torch.backends, "cpu", None)
    _need("torch.backends.cpu.get_cpu_capability", cpu is not None and hasattr(cpu, "get_cpu_capability"))
    own = cpu.get_cpu_capability()
    order = ["DEFAULT", "AVX2", "AVX512"]
    levels = ["default"] + [lvl.lower() for lvl in order[1:order.index(own) + 1]] if own in order else ["default"]
    seen = {}
    for level in levels:
        env = dict(os.environ, ATEN_CPU_CAPABILITY=level)
        said = children.run_json([sys.executable, "-c", _CHILD, os.path.dirname(os.path.abspath(__file__))], env,
                                 timeout=120)
        seen[level] = {"reported": said.get("reported", ""), "digest": said.get("digest", ""),
                       "error": said.get("error", "")}
    ok = all(s["reported"] == lvl.upper() and not s["error"] for lvl, s in seen.items())
    bits = {s["digest"] for s in seen.values()}
    return ok, (f"own capability {own}; " + "; ".join(f"ATEN_CPU_CAPABILITY={lvl}: reports {s['reported']}, "
                                                      f"softmax bits {s['digest']}" for lvl, s in seen.items()) +
                f"; the bits {'differ' if len(bits) > 1 else 'are equal'} across them"), {
                    "own": own, "levels": seen, "bits_differ_across_levels": len(bits) > 1}


# --- opt_einsum -------------------------------------------------------------------

def opt_einsum() -> tuple[bool, str, dict]:
    """torch.backends.opt_einsum: is_available() says whether the opt_einsum
    package is importable; with it, enabled is True and strategy "auto" by
    default, and einsum contracts a chain of three or more operands in the
    order opt_einsum plans (its bits may differ from enabled=False's
    left-to-right order). Records the bits per setting."""
    oe = getattr(torch.backends, "opt_einsum", None)
    _need("torch.backends.opt_einsum", oe is not None)
    if not oe.is_available():
        raise NotHere(f"the opt-einsum package is not installed beside PyTorch {_version()} "
                      "(requirements/torch.txt pins it for the managed environment)")
    a, b, c, d = _rand(64, 8, seed=10), _rand(8, 256, seed=11), _rand(256, 4, seed=12), _rand(4, 64, seed=13)
    defaults = {"enabled": oe.enabled, "strategy": oe.strategy}
    seen = {}
    try:
        for enabled, strategy in ((True, "auto"), (True, "greedy"), (True, "optimal"), (False, None)):
            oe.enabled = enabled
            if strategy:
                oe.strategy = strategy
            seen[f"enabled={enabled}" + (f", strategy={strategy}" if strategy else "")] = digest([
                torch.einsum("ij,jk,kl,lm->im", a, b, c, d)])
    finally:
        oe.enabled, oe.strategy = defaults["enabled"], defaults["strategy"]
    passed = defaults == {"enabled": True, "strategy": "auto"}
    return passed, (f"available; defaults {defaults}; a four-operand chain's bits: {seen}"), {
        "defaults": defaults, "digests": seen, "orders_differ": len(set(seen.values())) > 1}


# --- the verbose modes ------------------------------------------------------------

def verbose_scopes() -> tuple[bool, str, dict]:
    """torch.backends.mkldnn.verbose(level) and torch.backends.mkl.verbose(level)
    make oneDNN and oneMKL print a line per primitive or call while inside
    the block, and nothing after it: the level is restored on exit.
    torch.backends.mkl.is_available() says whether the build has oneMKL."""
    b = torch.backends
    mkldnn_ok = hasattr(b.mkldnn, "verbose")
    _need("torch.backends.mkldnn.verbose", mkldnn_ok)
    conv, op = _Conv(), _Matmul()
    _, inside = _captured(conv.run, [b.mkldnn.verbose(b.mkldnn.VERBOSE_ON)])
    _, after = _captured(conv.run)
    seen = {"mkldnn": {"inside": sum(",exec," in line for line in inside.splitlines()),
                       "after": sum(",exec," in line for line in after.splitlines())}}
    mkl = hasattr(b, "mkl") and b.mkl.is_available()
    if mkl and hasattr(b.mkl, "verbose"):
        _, inside = _captured(op.run, [b.mkl.verbose(b.mkl.VERBOSE_ON)])
        _, after = _captured(op.run)
        calls = lambda text: sum(line.startswith("MKL_VERBOSE ") and "(" in line for line in text.splitlines())
        seen["mkl"] = {"inside": calls(inside), "after": calls(after), "routines": mkl_routines(inside)}
    passed = all(s["inside"] > 0 and s["after"] == 0 for s in seen.values())
    return passed, (f"mkl.is_available() {mkl}; " + "; ".join(
        f"{lib}.verbose: {s['inside']} line(s) of calls inside the block, {s['after']} after it"
        for lib, s in seen.items())), {"mkl_available": mkl, "lines": seen}


# --- torch.backends.cuda.matmul's reduced-precision switches ------------------------

def cuda_matmul_reduced_precision() -> tuple[bool, str, dict]:
    """torch.backends.cuda.matmul's reduced-precision switches, as settings
    (their numerics are the GPU tier's): allow_fp16_reduced_precision_reduction
    and allow_bf16_reduced_precision_reduction are True by default,
    allow_fp16_accumulation False; each is read back as set; the
    (allow, allow_splitk) form refuses (True, False) with a RuntimeError;
    preferred_blas_library and preferred_linalg_library name a backend."""
    m = torch.backends.cuda.matmul
    names = ("allow_fp16_reduced_precision_reduction", "allow_bf16_reduced_precision_reduction",
             "allow_fp16_accumulation")
    want = dict(zip(names, (True, True, False)))
    have = {}
    for name in names:
        try:
            have[name] = getattr(m, name)
        except (AttributeError, AssertionError):
            pass
    _need("torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction", len(have) >= 2)
    defaults = dict(have)
    read_back, refused = {}, ""
    try:
        for name in have:
            setattr(m, name, not defaults[name])
            read_back[name] = getattr(m, name) == (not defaults[name])
            setattr(m, name, defaults[name])
        try:
            m.allow_fp16_reduced_precision_reduction = (True, False)
        except RuntimeError as e:
            refused = str(e).splitlines()[0]
    finally:
        for name, value in defaults.items():
            setattr(m, name, value)
    libraries = {}
    for fn in ("preferred_blas_library", "preferred_linalg_library"):
        if hasattr(torch.backends.cuda, fn):
            libraries[fn] = str(getattr(torch.backends.cuda, fn)())
    wrong = {k: v for k, v in defaults.items() if v != want[k]}
    passed = not wrong and all(read_back.values()) and bool(refused)
    return passed, (f"defaults {defaults}" + (f" (not as documented: {wrong})" if wrong else "") +
                    f"; read back as set: {read_back}; (True, False): " +
                    (f"RuntimeError: {refused}" if refused else "accepted") + f"; {libraries}"), {
                        "defaults": defaults, "read_back": read_back, "refused_splitk": refused,
                        "libraries": libraries}


PROBES = {"fp32_precision_inherit": fp32_precision_inherit, "fp32_precision_legacy": fp32_precision_legacy,
          "fp32_precision_refuses": fp32_precision_refuses, "matmul_precision_medium": matmul_precision_medium,
          "matmul_precision_high": matmul_precision_high,
          "matmul_precision_keeps_dtype_and_conv": matmul_precision_keeps_dtype_and_conv,
          "matmul_precision_cuda_only": matmul_precision_cuda_only, "mkldnn_matmul_bf16": mkldnn_matmul_bf16,
          "mkldnn_conv_bf16": mkldnn_conv_bf16, "mkldnn_rnn_bf16": mkldnn_rnn_bf16,
          "mkldnn_tf32": mkldnn_tf32, "mha_fastpath": mha_fastpath, "sdpa_switches": sdpa_switches,
          "sdpa_cpu_backends": sdpa_cpu_backends, "cpu_capability": cpu_capability, "opt_einsum": opt_einsum,
          "verbose_scopes": verbose_scopes, "cuda_matmul_reduced_precision": cuda_matmul_reduced_precision}
