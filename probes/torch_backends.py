"""Probes of torch.backends semantics that only PyTorch's Python has, run by
suites/pytorch_python_test.cc with an interpreter that imports torch.

Usage: python3 torch_backends.py PROBE
       python3 torch_backends.py --serve-forks DIR   (the interpreter that
           imported torch once and forks a child for each probe of
           probes/declared.toml that needs no interpreter of its own, where
           BACKENDCHECK_PROBE_SHARED_DIR names DIR: shared_child.py)
       python3 torch_backends.py --serve DIR GROUP   (the interpreter a group
           of probes shares, shared_child.py; a probe of cuda_questions'
           SHARED_CHILD is relayed to it where BACKENDCHECK_PROBE_SHARED_DIR
           names DIR, and prints its answer as its own)
Prints one JSON object: {"passed": bool, "detail": str, "torch": version,
"observed": {...}, "harness_error": bool}, and where the probe compared two
settings or ran fresh processes (cudnn_choices.py), "compare" and
"cross_process" (runner/records.h says their fields) (a probe that returns passed=None
observed what it could but part of its own work failed: an error of the
harness, its observations kept); exit 0 when the probe ran (whatever it found), 3 when
torch cannot be imported or this version lacks what the probe is about (the
test skips with that reason, naming the version), 4 when the probe
itself failed (an exception, such as an attribute this version renamed): then
{"error": ..., "torch": version}, an error of the harness that decides
nothing about PyTorch. BACKENDCHECK_PROBE_FAULT=PROBE makes that probe raise
AttributeError, for the test that such a failure is reported as an error.
Each probe states what it checks in its docstring and records what it saw.
"""

from __future__ import annotations

import array
import ctypes
import inspect
import json
import os
import re
import sys
import time
import traceback
import warnings
from pathlib import Path

# The pure-Python packages the probes import beside torch (expecttest,
# opt-einsum), as pinned wheels, for a torch whose environment the harness
# does not manage (./backendcheck sets it; first, as torch reads opt_einsum
# on import).
sys.path[:0] = [p for p in os.environ.get("BACKENDCHECK_PROBE_PATH", "").split(os.pathsep) if p]

# A probe of a group that shares one interpreter (shared_child.py, where the
# run names a place for it) is answered there: this interpreter then imports
# no torch. The groups and their probes: cuda_questions.SHARED_CHILD.
if __name__ == "__main__" and len(sys.argv) == 2:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import cuda_questions as _questions  # noqa: E402 - imports no torch at its top
    import shared_child as _shared  # noqa: E402
    _where = _shared.shared_directory()
    _group = next((g for g, probes in _questions.SHARED_CHILD.items() if sys.argv[1] in probes), "")
    _answer = _shared.relay(sys.argv[1], _group, [sys.executable, __file__, "--serve", str(_where), _group],
                            _where) if _where is not None and _group else None
    if _answer is not None:
        print(_answer[1])
        sys.exit(_answer[0])
    # A probe that needs no interpreter of its own (probes/declared.toml)
    # runs in a child of the run's forking interpreter, which imported torch
    # once for the run (shared_child.serve_forks).
    if _where is not None and not _group:
        sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
        from inputs.probes import DECLARED, load_declared  # noqa: E402 - TOML only, no torch
        if any(p.name == sys.argv[1] and p.forked for p in load_declared(DECLARED)):
            _code = _shared.relay_fork([__file__, sys.argv[1]], [sys.executable, __file__, "--serve-forks", str(_where)],
                                       _where)
            if _code is not None:
                sys.exit(_code)

try:
    import torch
except Exception as e:  # noqa: BLE001 - any import failure means "no PyTorch here"
    print(json.dumps({"error": f"cannot import torch: {type(e).__name__}: {e}"}))
    sys.exit(3)

# The flags and their defaults: harness/flags.def, the one list of them.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from inputs.flags import load_flags  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
import children  # noqa: E402 - what a child's exception says: PyTorch's alert, its refusal, a function that did not run
import settings  # noqa: E402 - the probes of the 2.x settings (precision, SDPA, MHA, CPU capability, opt_einsum)
import cudnn_choices  # noqa: E402 - what PyTorch does when it calls cuDNN (searches, cache, choices, costs)
import cuda_questions  # noqa: E402 - attention, batch size, reduced precision and costs on a CUDA device
import workloads  # noqa: E402 - a team's own step as a claim (BACKENDCHECK_WORKLOAD, the ctest tests Workload.<id>)
from common import NotHere, need_device  # noqa: E402 - not evaluated here; the CUDA device a probe needs

DEFAULTS = {name: flag.default for name, flag in load_flags().items()}
# Flags read through a function rather than an attribute of torch.backends.
_READERS = {"deterministic_algorithms": lambda: torch.are_deterministic_algorithms_enabled(),
            "deterministic_algorithms.warn_only": lambda: torch.is_deterministic_algorithms_warn_only_enabled(),
            # a flags() parameter with no attribute; its getter answers None
            # in builds without Intel GPU support
            "mkldnn.allow_tf32": lambda: torch._C._get_onednn_allow_tf32()}
ABSENT = object()


def _read(name: str):
    """A flag's value by its torch name, or ABSENT where this version has no
    such flag (1.13's torch.backends modules raise AssertionError for an
    unknown attribute, later ones AttributeError)."""
    try:
        if name in _READERS:
            return _READERS[name]()
        value = torch.backends
        for part in name.split("."):
            value = getattr(value, part)
        return value
    except (AttributeError, AssertionError):
        return ABSENT


def _flags() -> dict:
    """Every flag of flags.def this version has, by name."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # mkldnn.allow_tf32's getter warns off Intel GPUs
        seen = {name: _read(name) for name in DEFAULTS}
    return {name: value for name, value in seen.items() if value is not ABSENT}


def defaults() -> tuple[bool, str, dict]:
    """A fresh interpreter's flags equal PyTorch's documented defaults; a flag
    this version lacks is named as absent, and one this build does not apply
    (None) as not in this build, not passed over."""
    seen = _flags()
    absent = sorted(set(DEFAULTS) - set(seen))
    # A build without cuDNN answers None for cuDNN's benchmark_limit, one
    # without Intel GPU support for mkldnn.allow_tf32: reported, not compared.
    missing = sorted(k for k, v in seen.items() if v is None)
    wrong = {k: v for k, v in seen.items() if v is not None and v != DEFAULTS[k]}
    attrs = {"mkldnn.deterministic": "mkldnn.deterministic" in seen,
             "cudnn.benchmark_limit": hasattr(torch.backends.cudnn, "benchmark_limit")}
    ok = not wrong
    # What differs from the statement first: a reason shows its beginning.
    said = ([f"differ from the documented defaults: {wrong}"] if wrong else []) + \
        ([f"not in this build (None, where the documented default applies to builds that have it): {missing}"]
         if missing else []) + ([f"absent in PyTorch {torch.__version__}: {absent}"] if absent else [])
    return ok, "; ".join(said + [f"{len(seen) - len(missing) - len(wrong)} flags at their documented defaults",
                                 f"flags {seen}", f"mkldnn.deterministic exists: {attrs['mkldnn.deterministic']}"]), {
                    "flags": seen, "absent": absent, "not_in_build": missing, "attributes": attrs}


def _parameters(fn) -> dict:
    """A context manager's parameters and their defaults, as declared."""
    return {name: repr(p.default) for name, p in inspect.signature(fn).parameters.items()}


# The starting states from which a flags() scope is entered: each one line a
# user of a version writes (the documented settings of torch.backends, the
# 2.x precision API among them), with the name that version must have.
SCOPE_STATES = (
    ("torch.backends.cudnn.benchmark = True", "cudnn.benchmark"),
    ("torch.backends.cudnn.deterministic = True", "cudnn.deterministic"),
    ("torch.backends.cudnn.enabled = False", "cudnn.enabled"),
    ("torch.backends.cudnn.allow_tf32 = False", "cudnn.allow_tf32"),
    ("torch.backends.cuda.matmul.allow_tf32 = True", "cuda.matmul.allow_tf32"),
    ("torch.set_float32_matmul_precision('high')", ""),
    ("torch.use_deterministic_algorithms(True)", ""),
    ("torch.backends.fp32_precision = 'tf32'", "fp32_precision"),
    ("torch.backends.cudnn.fp32_precision = 'ieee'", "cudnn.fp32_precision"),
    ("torch.backends.cudnn.conv.fp32_precision = 'ieee'", "cudnn.conv.fp32_precision"),
    ("torch.backends.cuda.matmul.fp32_precision = 'tf32'", "cuda.matmul.fp32_precision"),
    ("torch.backends.mkldnn.fp32_precision = 'bf16'", "mkldnn.fp32_precision"),
)


def _snapshot() -> dict:
    """Every flag this version has, as flags() could change it; a getter
    PyTorch refuses in this state is recorded with its message."""
    out = {}
    for name in DEFAULTS:
        try:
            value = _read(name)
        except RuntimeError as e:
            said = children.refusal(e, torch)
            if not said:
                raise
            value = f"refused: {said}"
        if value is not ABSENT:
            out[name] = value
    return out


def _scope() -> dict:
    """flags() used as a user uses it, from the current state: a bare scope,
    one that sets every flag, and one left by an exception."""
    before = _snapshot()
    with torch.backends.cudnn.flags():
        bare = torch.backends.cudnn.enabled
    with torch.backends.cudnn.flags(enabled=True, benchmark=True, deterministic=True, allow_tf32=False):
        inside = _snapshot()
    after = _snapshot()
    try:
        with torch.backends.cudnn.flags(enabled=True, benchmark=True):
            raise KeyError("boom")
    except KeyError:
        pass
    after_error = _snapshot()
    set_inside = inside["cudnn.benchmark"] is True and inside["cudnn.deterministic"] is True and \
        inside["cudnn.allow_tf32"] is False
    return {"bare_enabled": bare, "inside": inside, "after": after, "set_inside": set_inside,
            "restored": after == before, "restored_after_error": after_error == before,
            "changed": {k: [before[k], after.get(k)] for k in before if after.get(k) != before[k]}}


def scope_from(line: str) -> dict:
    """(child) The scope entered after `line`: what _scope saw, or PyTorch's
    refusal of the scope there (with the flags then)."""
    exec(compile(line, "<starting state>", "exec"), {"torch": torch})  # noqa: S102 - the probe's own line
    try:
        return dict(_scope(), state=line)
    except RuntimeError as e:
        said = children.refusal(e, torch)
        if not said:
            raise
        return {"state": line, "refused": said, "after": _snapshot()}


def _forked(fn, *args, timeout: float = 60.0) -> dict:
    """fn(*args) in a forked copy of this process (torch imported, no
    computation started), as JSON through a pipe: a starting state that
    cannot be undone stays in the copy. {"error": ...} where the copy
    failed or did not answer within `timeout` (then it is killed)."""
    import select
    import signal
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the copy: whatever happens, it answers once and exits
        code = 0
        try:
            os.close(read)
            try:
                out = json.dumps(fn(*args), default=str)
            except BaseException as e:  # noqa: BLE001 - reported to the parent, which decides
                out = json.dumps({"error": f"{type(e).__name__}: {e}"})
            with os.fdopen(write, "w") as f:
                f.write(out)
        except BaseException:  # noqa: BLE001 - the pipe broke: the parent sees no answer
            code = 1
        finally:
            os._exit(code)
    os.close(write)
    chunks, deadline = [], time.monotonic() + timeout
    with os.fdopen(read, "rb") as f:
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([f], [], [], left)[0]:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                return {"error": f"the forked copy did not answer within {timeout:g} s"}
            chunk = os.read(f.fileno(), 65536)
            if not chunk:
                break
            chunks.append(chunk)
    _, status = os.waitpid(pid, 0)
    said = b"".join(chunks).decode(errors="replace")
    try:
        return json.loads(said)
    except ValueError:
        return {"error": f"the forked copy exited with {os.waitstatus_to_exitcode(status)} and said {said[:200]!r}"}


def _scope_states() -> list[str]:
    """The starting states this version can reach (their names exist)."""
    out = []
    for line, name in SCOPE_STATES:
        if line.startswith("torch.set_float32") and not hasattr(torch, "set_float32_matmul_precision"):
            continue
        if name:
            try:
                if _read(name) is ABSENT:
                    continue
            except RuntimeError:
                pass
        out.append(line)
    return out


def flags_scope() -> tuple[bool, str, dict]:
    """torch.backends.cudnn.flags() sets the cuDNN flags inside, restores the
    previous values on exit and on an exception, and its parameters default
    to enabled=False: a bare scope turns cuDNN off. Entered from the defaults
    and from every starting state a user of this version reaches with one
    line (SCOPE_STATES), each in a forked copy of this process; a state where PyTorch
    refuses the scope, or where it does not restore, is the claim's
    counter-example."""
    # The copies first, from the state a fresh interpreter has: a scope
    # entered and left here first would leave them another starting point.
    states = {}
    for line in _scope_states():
        got = _forked(scope_from, line)
        if "error" in got:
            raise RuntimeError(f"the scope's copy after {line!r} failed: {got['error']}")
        states[line] = got
    seen = _scope()
    parameters = _parameters(torch.backends.cudnn.flags)
    refused = {line: st["refused"] for line, st in states.items() if "refused" in st}
    unrestored = {line: st["changed"] for line, st in states.items() if "refused" not in st
                  and not (st["restored"] and st["restored_after_error"])}
    unset = [line for line, st in states.items() if "refused" not in st and not st["set_inside"]]
    ok = seen["bare_enabled"] is False and seen["set_inside"] and seen["restored"] and \
        seen["restored_after_error"] and not refused and not unrestored and not unset
    by_message: dict[str, list[str]] = {}
    for line, said in refused.items():
        by_message.setdefault(said, []).append(f"`{line}`")
    against = [f"after {' or '.join(lines)}, PyTorch refuses the scope: {said}"
               for said, lines in by_message.items()] + \
        [f"after `{line}`, the scope does not restore {changed}" for line, changed in unrestored.items()] + \
        [f"after `{line}`, the scope does not set what it is given" for line in unset]
    return ok, "; ".join(against + [
        f"bare flags(): enabled={seen['bare_enabled']}; inside flags(benchmark=True, deterministic=True, "
        f"allow_tf32=False): {'set' if seen['set_inside'] else 'NOT set'}; restored on exit: {seen['restored']}; "
        f"restored after an exception: {seen['restored_after_error']}; entered from the defaults and "
        f"{len(states)} starting states, {len(states) - len(refused) - len(unrestored) - len(unset)} set and restored",
        f"cudnn.flags{tuple(parameters)}"]), {
            "bare_enabled": seen["bare_enabled"], "inside": seen["inside"], "after": seen["after"],
            "parameters": parameters, "states": states, "refused_from": refused, "not_restored_from": unrestored}


def _put(accumulate: bool) -> None:
    x = torch.zeros(16)
    x.put_(torch.tensor([1, 3, 1]), torch.tensor([1.0, 2.0, 3.0]), accumulate=accumulate)


def _raises(fn) -> str:
    """"" where fn ran; PyTorch's alert, its whole line, where it raised it.
    Any other exception is the probe's error: fn did not run, which says
    nothing of the alert."""
    try:
        fn()
        return ""
    except RuntimeError as e:
        alert = children.alert_line(e)
        if not alert:
            raise
        return alert


def _refused(fn) -> str:
    """"" where fn ran; PyTorch's own refusal, its first line, where PyTorch
    raised it (children.refusal: a RuntimeError of torch's code, as the
    setters and getters of torch.backends raise). Any other exception is
    the probe's error."""
    try:
        fn()
        return ""
    except RuntimeError as e:
        said = children.refusal(e, torch)
        if not said:
            raise
        return said.removeprefix(f"{type(e).__name__}: ")


def alert() -> tuple[bool, str, dict]:
    """use_deterministic_algorithms(True) makes an operation without a
    deterministic implementation raise (put_ with accumulate=False on the CPU),
    and leaves deterministic ones (scatter_add_, index_put_ accumulate) alone."""
    torch.use_deterministic_algorithms(True)
    try:
        put = _raises(lambda: _put(False))
        scatter = _raises(lambda: torch.zeros(8).scatter_add_(0, torch.tensor([1, 1]), torch.ones(2)))
        index_put = _raises(lambda: torch.zeros(8).index_put_((torch.tensor([1, 1]),), torch.ones(2),
                                                               accumulate=True))
    finally:
        torch.use_deterministic_algorithms(False)
    ok = children.ALERT in put and not scatter and not index_put
    return ok, (f"put_(accumulate=False): {put or 'no error'}; scatter_add_: {scatter or 'no error'}; "
                f"index_put_(accumulate=True): {index_put or 'no error'}"), {"put": put, "scatter_add": scatter}


def warn_only() -> tuple[bool, str, dict]:
    """With warn_only=True the same operation runs and PyTorch warns instead."""
    torch.use_deterministic_algorithms(True, warn_only=True)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            error = _raises(lambda: _put(False))
    finally:
        torch.use_deterministic_algorithms(False)
    texts = [str(w.message).splitlines()[0] for w in caught]
    ok = not error and any(children.ALERT in t for t in texts)
    return ok, f"error: {error or 'none'}; warnings: {texts}", {"warnings": texts}


def cudnn_deterministic_scope() -> tuple[bool, str, dict]:
    """cudnn.deterministic is cuDNN's flag only: with it on (and
    use_deterministic_algorithms off) put_ runs without an alert; with
    use_deterministic_algorithms on it raises."""
    torch.backends.cudnn.deterministic = True
    try:
        with_cudnn_flag = _raises(lambda: _put(False))
    finally:
        torch.backends.cudnn.deterministic = False
    torch.use_deterministic_algorithms(True)
    try:
        with_global = _raises(lambda: _put(False))
    finally:
        torch.use_deterministic_algorithms(False)
    ok = not with_cudnn_flag and children.ALERT in with_global
    return ok, (f"cudnn.deterministic=True: {with_cudnn_flag or 'no alert'}; "
                f"use_deterministic_algorithms(True): {with_global or 'no alert'}"), {}


def _available(name: str) -> tuple[bool, str, dict]:
    backend = getattr(torch.backends, name)
    available = bool(backend.is_available())
    built = bool(backend.is_built()) if hasattr(backend, "is_built") else None
    return available, built, f"torch.backends.{name}.is_available() = {available}" + (
        f", is_built() = {built}" if built is not None else "")


def _build_attribute(*names: str) -> tuple[str, bool]:
    """The first of `names` that torch._C has (PyTorch renamed has_mkldnn to
    _has_mkldnn in 2.x), with its value."""
    for name in names:
        if hasattr(torch._C, name):
            return name, bool(getattr(torch._C, name))
    raise AttributeError(f"torch._C has none of {', '.join(names)}")


def mkldnn_available() -> tuple[bool, str, dict]:
    """torch.backends.mkldnn.is_available() reports the build: true where
    PyTorch was built with oneDNN (torch._C._has_mkldnn; has_mkldnn in 1.x)."""
    available, _, text = _available("mkldnn")
    name, built = _build_attribute("_has_mkldnn", "has_mkldnn")
    return available == built, f"{text}; torch._C.{name} = {built}", {"attribute": name}


def openmp_available() -> tuple[bool, str, dict]:
    """torch.backends.openmp.is_available() is true in an OpenMP build."""
    available, _, text = _available("openmp")
    return available == ("OpenMP" in torch.__config__.parallel_info()), text, {}


def mps_available() -> tuple[bool, str, dict]:
    """torch.backends.mps is neither built nor available off Apple silicon."""
    available, built, text = _available("mps")
    import platform
    apple = platform.system() == "Darwin" and platform.machine() == "arm64"
    return apple or (not available and not built), f"{text} on {platform.system()} {platform.machine()}", {}


def seed_not_backends() -> tuple[bool, str, dict]:
    """torch.manual_seed seeds the generators and touches no backend flag;
    use_deterministic_algorithms touches no generator: two draws after it
    differ, and two draws after the same manual_seed are equal."""
    before = _flags()
    torch.manual_seed(1234)
    a = torch.rand(4)
    flags_after_seed = _flags()
    torch.manual_seed(1234)
    b = torch.rand(4)
    torch.use_deterministic_algorithms(True)
    try:
        c, d = torch.rand(4), torch.rand(4)
    finally:
        torch.use_deterministic_algorithms(False)
    ok = flags_after_seed == before and torch.equal(a, b) and not torch.equal(c, d)
    return ok, (f"flags unchanged by manual_seed: {flags_after_seed == before}; same seed, same draw: "
                f"{torch.equal(a, b)}; draws under use_deterministic_algorithms differ: {not torch.equal(c, d)}"), {}


# NotHere: this version of PyTorch (or this machine) lacks what the probe
# is about: the fact is not evaluated here, with the message naming the
# version, or what would evaluate it (exit 3).


def mkldnn_deterministic() -> tuple[bool, str, dict]:
    """torch.backends.mkldnn.deterministic (PyTorch 2.x) defaults to False, and
    torch.backends.mkldnn.flags(deterministic=True) sets it inside the scope
    and restores it on exit."""
    m = torch.backends.mkldnn
    if not hasattr(m, "deterministic"):
        raise NotHere(f"PyTorch {torch.__version__} has no torch.backends.mkldnn.deterministic")
    default = m.deterministic
    with m.flags(enabled=True, deterministic=True):
        inside = m.deterministic
    after = m.deterministic
    ok = default is False and inside is True and after is False
    return ok, (f"mkldnn.deterministic default {default}; inside flags(deterministic=True): {inside}; "
                f"after: {after}"), {"default": default, "inside": inside, "after": after}


FP32_PRECISION = {"fp32_precision": lambda b: b, "cuda.matmul.fp32_precision": lambda b: b.cuda.matmul,
                  "cudnn.conv.fp32_precision": lambda b: b.cudnn.conv, "cudnn.rnn.fp32_precision": lambda b: b.cudnn.rnn,
                  "mkldnn.fp32_precision": lambda b: b.mkldnn}


def fp32_precision() -> tuple[bool, str, dict]:
    """The fp32_precision settings (recent 2.x) replace the allow_tf32 flags,
    and the two APIs must not be mixed: once a setting is given through the
    new one that the old flag cannot express (cudnn.conv.fp32_precision =
    "ieee"; cuda.matmul.fp32_precision = "tf32"), reading the old flag
    (cudnn.allow_tf32; cuda.matmul.allow_tf32) raises RuntimeError. Records
    every setting's default."""
    b = torch.backends
    if not hasattr(b, "fp32_precision"):
        raise NotHere(f"PyTorch {torch.__version__} has no torch.backends.fp32_precision")
    defaults = {name: get(b).fp32_precision for name, get in FP32_PRECISION.items()}
    mixed = {}
    for setting, value, old, read in (("cudnn.conv", "ieee", "cudnn.allow_tf32", lambda: b.cudnn.allow_tf32),
                                      ("cuda.matmul", "tf32", "cuda.matmul.allow_tf32",
                                       lambda: b.cuda.matmul.allow_tf32)):
        target = FP32_PRECISION[setting + ".fp32_precision"](b)
        target.fp32_precision = value
        try:
            mixed[f"{setting}.fp32_precision={value!r}, then {old}"] = _refused(read)
        finally:
            target.fp32_precision = defaults[setting + ".fp32_precision"]
    ok = all(mixed.values())
    return ok, (f"defaults {defaults}; " + "; ".join(f"{k}: {('RuntimeError: ' + v[:100]) if v else 'no error'}"
                                                    for k, v in mixed.items())), {"defaults": defaults,
                                                                                  "mixed": mixed}


# One torch.mm on CUDA under use_deterministic_algorithms, in a fresh
# interpreter (cuBLAS and PyTorch read CUBLAS_WORKSPACE_CONFIG from the
# process's environment): "raised: ...", "warned: ..." or "ran", then with
# "repeat" the digests of ten runs.
_CUBLAS_RUN = """
import sys, warnings, torch
sys.path.insert(0, sys.argv[2])
from readings import child_line
warn_only = sys.argv[1] == "warn_only"
torch.use_deterministic_algorithms(True, warn_only=warn_only)
g = torch.Generator(device="cuda").manual_seed(0)
a = torch.randn(512, 512, device="cuda", generator=g)
b = torch.randn(512, 512, device="cuda", generator=g)
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    try:
        outs = [torch.mm(a, b) for _ in range(10)]
    except RuntimeError as e:
        print(child_line("raised", str(e), None)); sys.exit(0)
said = [str(w.message) for w in caught if "CUBLAS_WORKSPACE_CONFIG" in str(w.message)]
same = all(torch.equal(outs[0], o) for o in outs)
print(child_line("warned", said[0], same) if said else child_line("ran", "", same))
"""


def cublas_config() -> tuple[bool, str, dict]:
    """The documented cuBLAS rule, on this PyTorch's CUDA: under
    use_deterministic_algorithms(True), torch.mm without CUBLAS_WORKSPACE_CONFIG
    raises a RuntimeError naming the variable (warn_only: warns and runs),
    and with CUBLAS_WORKSPACE_CONFIG=:4096:8 it runs, bitwise repeatable
    (readings.cublas_config_holds). PyTorch's alert
    (alertCuBLASConfigNotDeterministic) is gone from recent releases, which
    then run without the variable: that refutes the rule for that version,
    whatever cuBLAS itself does."""
    need_device(torch, "cublas_config")
    from readings import cublas_config_holds, describe_child, read_child
    base = {k: v for k, v in os.environ.items() if k != "CUBLAS_WORKSPACE_CONFIG"}
    here = str(Path(__file__).resolve().parent)
    seen = {}
    for name, env, mode in (("unset", base, "error"), ("unset, warn_only", base, "warn_only"),
                            (":4096:8", dict(base, CUBLAS_WORKSPACE_CONFIG=":4096:8"), "error")):
        ran = children.run([sys.executable, "-c", _CUBLAS_RUN, mode, here], env, timeout=120)
        if ran.failure:
            raise RuntimeError(f"torch.mm with CUBLAS_WORKSPACE_CONFIG {name}: {ran.failure}")
        seen[name] = read_child(ran.stdout)
    return (cublas_config_holds(seen),
            "; ".join(f"CUBLAS_WORKSPACE_CONFIG {k}: {describe_child(v)}" for k, v in seen.items()), seen)


def compiled() -> tuple[bool | None, str, dict]:
    """torch.compile on the CPU against eager (probes/compiled.py):
    the bits, run to run and across compilations, the batch check, the alert
    of a throwing operation and fill_uninitialized_memory when compiled; the
    nightly tier adds Inductor's deterministic and batch_invariant settings.
    It records; the report shows it. Not evaluated without torch.compile; a
    check whose process failed is the harness's error (None)."""
    import compiled as inductor
    seen = inductor.run(os.environ.get("BACKENDCHECK_TIER") == "nightly")
    if "absent" in seen:
        raise NotHere(seen["absent"])
    checks = {k: v for k, v in seen.items() if isinstance(v, dict) and k != "inductor_settings"}
    errors = {k: v["error"] if "error" in v else f"the compiled function did not run: {v['did_not_run']}"
              for k, v in checks.items() if "error" in v or ("did_not_run" in v and not v.get("need"))}
    lacking = cuda_questions.compile_needs(seen)
    if lacking and not errors and all("did_not_run" in v for v in checks.values()):
        raise NotHere(lacking)
    bits, alert = checks.get("bits", {}), checks.get("alert", {})
    said = [f"compiled {'equals' if bits.get('versus_eager', {}).get('same') else 'differs from'} eager"
            if "versus_eager" in bits else "",
            "alert when compiled: " + ("not run" if "did_not_run" in alert else
                                       str(alert.get("alert", {}).get("compiled"))),
            f"uninitialized memory filled when compiled: {checks.get('fill', {}).get('compiled_filled')}",
            f"not run here: {lacking}" if lacking else ""]
    return (None if errors else True), (f"PyTorch {torch.__version__}: " + "; ".join(s for s in said if s) +
                                        (f"; checks that failed to run: {errors}" if errors else "")), seen


def _compiled_cuda(plan: str, reading) -> tuple[bool | None, str, dict]:
    """torch.compile on the CUDA device, the checks of compiled.py's
    CUDA_PLANS[plan], held to `reading` (cuda_questions.py). Not evaluated
    without a CUDA device or torch.compile, where the kit's pre-flight found
    no C compiler, Python.h or temporary directory for Triton's launcher
    build (preflight.py), or where PyTorch refused to compile there (its
    reason)."""
    import compiled as inductor
    import preflight
    need_device(torch, f"compiled_cuda_{plan}")
    # Triton builds its CUDA launcher with a C compiler and this Python's
    # headers, in a temporary directory: without them nothing compiles, which
    # is this machine's lack, not a finding about torch.compile.
    if why := preflight.lacking(f"compiled_cuda_{plan}", "compiler", "python-headers", "temp"):
        raise NotHere(why)
    seen = inductor.run(os.environ.get("BACKENDCHECK_TIER") == "nightly", cuda=plan)
    if "absent" in seen:
        raise NotHere(seen["absent"])
    refused = {k: v["refused"] for k, v in seen.items() if isinstance(v, dict) and "refused" in v}
    if refused and len(refused) == len(inductor.CUDA_PLANS[plan]):
        raise NotHere(f"PyTorch {torch.__version__} refused to compile on CUDA: {next(iter(refused.values()))}")
    passed, detail, mistrusted = reading(seen)
    lacking = cuda_questions.compile_needs(seen)
    if lacking and passed is not False:
        # What ran refutes nothing, and what did not run was for want of a
        # need of this machine: not evaluated, never a verdict.
        raise NotHere(lacking)
    if mistrusted:
        seen["mistrusted"] = mistrusted
    return passed, f"PyTorch {torch.__version__} on {torch.cuda.get_device_name()}: {detail}", seen


def compiled_cuda_eager() -> tuple[bool | None, str, dict]:
    return _compiled_cuda("eager", cuda_questions.compile_eager_reading)


def compiled_cuda_deterministic() -> tuple[bool | None, str, dict]:
    return _compiled_cuda("deterministic", cuda_questions.compile_deterministic_reading)


def census() -> tuple[bool | None, str, dict]:
    """Determinism over PyTorch's own OpInfo table (probes/census.py):
    per operation and float32 CPU sample, the alert under
    use_deterministic_algorithms(True), the warning under warn_only, the
    bits run to run, across threads and of the backward, and uninitialized
    memory under fill_uninitialized_memory; past ATen's parallel grain, its
    inputs tiled, under the mode, on 1 and 2 threads, with a planted
    control there. It records; the report holds it against the documented
    list. Not evaluated where this torch's OpInfo
    table cannot be imported (naming the package); an operation that crashed
    or hung is the harness's error (None), the rest kept."""
    import census as opinfo
    seen = opinfo.run(0 if os.environ.get("BACKENDCHECK_TIER") == "nightly" else opinfo.SAMPLES)
    if "absent" in seen:
        raise NotHere(seen["absent"])
    errors = {op: r["error"] for op, r in seen["ops"].items() if "error" in r}
    ran = sum(r.get("ran", 0) for r in seen["ops"].values())
    raised = sorted(op for op, r in seen["ops"].items() if r.get("raised"))
    large = [op for op, r in seen["ops"].items() if (r.get("large") or {}).get("threads_differ")]
    return (None if errors else True), (
        f"PyTorch {torch.__version__}: {len(seen['ops'])} OpInfos, {ran} float32 CPU samples run "
        f"({seen['samples_per_op']} per operation) in {seen['seconds']} s; raised the alert: {', '.join(raised) or 'none'}"
        f"; past the grain ({seen['large']['elements']} elements, planted control "
        f"{'found' if seen['large']['control']['trusted'] else 'MISSED'}), differ between 1 and 2 threads: "
        f"{', '.join(large) or 'none'}" + (f"; crashed or hung: {errors}" if errors else "")), seen


def invariance() -> tuple[bool | None, str, dict]:
    """Whether each operation's bits hold still run to run, across thread
    counts, batch sizes, fresh processes, CPU capabilities and oneDNN ISAs,
    with a positive control per level (probes/invariance.py). It
    records; the report judges. A child process that failed is the harness's
    error (None), the other levels kept."""
    import invariance as grid
    seen = grid.grid()
    rows = seen["rows"]
    differ = sorted({k.split(" | ")[0] for k, r in rows.items() for level in ("batch", "threads", "run")
                     if isinstance(r.get(level), dict) and r[level].get("same") is False})
    return (None if seen["errors"] else True), (
        f"PyTorch {torch.__version__}: {len(rows)} operation and flag rows; not invariant at some in-process level: "
        f"{', '.join(differ) or 'none'}" + (f"; child processes failed: {seen['errors']}" if seen["errors"] else "")
    ), seen


def counterexamples() -> tuple[bool, str, dict]:
    """The search for counter-examples of the universal claims at the thread
    and run-to-run levels (probes/counterexamples.py): the corpus replayed,
    then a seeded search within the tier's budget (BACKENDCHECK_SEARCH_BUDGET
    seconds where set), each counter-example shrunk, with the search's own
    planted controls and the thread levers tried on what it found. It
    records; the report judges. A planted control missed is recorded as
    such (the report then trusts no "found nothing")."""
    import counterexamples as search
    seen = search.run(os.environ.get("BACKENDCHECK_TIER", "ci"))
    found = {key: [c["words"] for c in s["counterexamples"]] for key, s in seen["searches"].items()}
    missed = [level for level, c in seen["controls"].items() if not c["trusted"]]
    return True, (f"PyTorch {torch.__version__}: planted controls " + (f"MISSED at {', '.join(missed)}" if missed
                                                                        else "found") + "; "
                  + "; ".join(f"{key}: {len(words)} counter-example(s) ({', '.join(words[:3])})"
                              for key, words in found.items())), seen


def documented() -> tuple[bool, str, dict]:
    """use_deterministic_algorithms's own list in this version's docstring,
    every entry checked on the devices it names that this machine has, and
    the accumulating CPU operations the list does not name, each in a fresh
    process (probes/documented.py). It records what it saw, entry by
    entry, for the report to judge; it passes when no entry's check failed
    to run (an exception other than the alert, a crash, a timeout); when one
    did, that is the harness's error (None), the other entries' observations
    kept."""
    import documented as listed
    seen = listed.run_all(sys.executable)
    results = [e["result"] for e in seen["entries"] if e.get("result")] + seen["beyond"]
    errors = [f"{r['id']}: {r['error']}" for r in results if r.get("error")] + \
        [f"the check of {op} does not run on the CPU: {why}" for op, why in seen["smoke_failures"].items()]
    ran = sum(1 for r in results for d in r.get("devices", {}).values() if "not_evaluated" not in d)
    return (None if errors else True), (f"PyTorch {torch.__version__}: {len(seen['entries'])} entries "
                        f"({sum(not e['understood'] for e in seen['entries'])} not understood), "
                        f"{len(seen['beyond'])} operations beyond the list; {ran} checks ran here"
                        + (f"; errors: {'; '.join(errors)[:2000]}" if errors else "")), seen


def build_config() -> tuple[bool, str, dict]:
    """The PyTorch under test as it describes itself: version, build
    configuration (compiler, BLAS, oneDNN, OpenMP, CPU capability) and its
    threads, and what its BLAS says of itself (blas_report). Recorded as
    evidence; it passes when PyTorch answers."""
    config = torch.__config__.show()
    parallel = torch.__config__.parallel_info()
    first = [line.strip() for line in config.splitlines() if line.strip().startswith("-")][:8]
    blas = blas_report()
    said = f"; BLAS: {blas['name']} {blas.get('version', '')}".rstrip() + \
        "".join(f", {k} {blas[k]}" for k in ("branch", "cnr") if blas.get(k))
    return bool(config), f"PyTorch {torch.__version__}: " + "; ".join(first) + said, {
        "config": config, "parallel": parallel, "blas": blas}


def blas_report() -> dict:
    """The BLAS that torch's float32 GEMM calls, in its own words: oneMKL
    (the x86 wheels, built into libtorch) by its verbose banner and call
    line: the code branch it dispatched to on this CPU and its CNR mode
    (conditional numerical reproducibility, set by MKL_CBWR); OpenBLAS by
    openblas_get_config and openblas_get_corename (the kernel set it chose).
    {"name", "library", and what the library said: "version", "branch",
    "cnr", "config"}."""
    library = blas_of_torch()
    said = settings.mkl_said()
    if said:
        version = re.search(r"Math Kernel Library Version ([\d.]+)", torch.__config__.show())
        return {"name": "mkl", "library": library, **({"version": version.group(1)} if version else {}), **said}
    path = _blas_path()
    if path is not None and "openblas" in str(path):
        lib = ctypes.CDLL(str(path))
        out = {"name": "openblas", "library": library}
        for key, fn in (("config", "openblas_get_config"), ("branch", "openblas_get_corename")):
            if hasattr(lib, fn):
                getattr(lib, fn).restype = ctypes.c_char_p
                out[key] = getattr(lib, fn)().decode(errors="replace").strip()
        if out.get("branch"):
            out["branch"] = out["branch"].lower()
        version = out.get("config", "").split()
        if len(version) > 1 and version[0] == "OpenBLAS":
            out["version"] = version[1]
        return out
    return {"name": "unknown", "library": library}


# The files that name a BLAS, as the PyTorch engine names the one libtorch's
# sgemm_ resolves to (FindLoadedBlas in backends/pytorch/pytorch.cc).
_BLAS_NAMES = ("libopenblas", "libmkl_rt", "libblis", "libblas.so")


class _DlInfo(ctypes.Structure):
    _fields_ = [("dli_fname", ctypes.c_char_p), ("dli_fbase", ctypes.c_void_p),
                ("dli_sname", ctypes.c_char_p), ("dli_saddr", ctypes.c_void_p)]


def _blas_path() -> Path | None:
    """The file torch's sgemm_ resolves to, searched from torch._C through
    its dependencies (libtorch_cpu's); None when it is built into libtorch
    (a wheel's MKL) or absent."""
    try:
        sgemm = ctypes.cast(ctypes.CDLL(torch._C.__file__).sgemm_, ctypes.c_void_p).value
    except (AttributeError, OSError):
        return None
    info = _DlInfo()
    libc = ctypes.CDLL(None)
    dladdr = libc.dladdr if hasattr(libc, "dladdr") else ctypes.CDLL("libdl.so.2").dladdr
    dladdr.argtypes = [ctypes.c_void_p, ctypes.POINTER(_DlInfo)]
    if not sgemm or not dladdr(sgemm, ctypes.byref(info)) or not info.dli_fname:
        return None
    path = Path(os.path.realpath(info.dli_fname.decode()))
    return path if any(name in path.name for name in _BLAS_NAMES) else None


def blas_of_torch() -> str:
    """The BLAS torch's sgemm_ resolves to (_blas_path), named as the PyTorch
    engine names it; "none mapped" when it is built into libtorch (a wheel's
    MKL) or absent."""
    path = _blas_path()
    if path is None:
        return "none mapped"
    return f"{path.parent.name}/{path.name}" if path.name.startswith("libblas.so") else path.name


def same_torch() -> tuple[bool, str, dict]:
    """The PyTorch that a test process runs is the one a bare interpreter
    runs: torch.mm, on one thread, of the float32 operands the test wrote to
    BACKENDCHECK_SAME_TORCH_DIR, one line "M K N" of its file `shapes` per
    product (aI.f32, M x K; bI.f32, K x N for line I), written to outI.f32
    for the test to compare bitwise with its own at::mm, and the BLAS mapped
    here, for it to compare with the one its engine names. Passes when it
    computed; the test decides the comparison."""
    where = Path(os.environ["BACKENDCHECK_SAME_TORCH_DIR"])
    torch.set_num_threads(1)
    shapes = [tuple(int(x) for x in line.split()) for line in (where / "shapes").read_text().splitlines() if line]
    for i, (m, k, n) in enumerate(shapes):
        a = torch.frombuffer(bytearray((where / f"a{i}.f32").read_bytes()), dtype=torch.float32).reshape(m, k)
        b = torch.frombuffer(bytearray((where / f"b{i}.f32").read_bytes()), dtype=torch.float32).reshape(k, n)
        out = torch.mm(a, b).contiguous()
        # exact: float32 -> float -> f
        (where / f"out{i}.f32").write_bytes(array.array("f", out.flatten().tolist()).tobytes())
    blas = blas_of_torch()
    return True, (f"torch.mm on 1 thread at {', '.join(f'{m}x{k} @ {k}x{n}' for m, k, n in shapes)}; "
                  f"BLAS {blas}"), {"blas": blas, "shapes": [list(s) for s in shapes]}


PROBES = {"build_config": build_config, "defaults": defaults, "flags_scope": flags_scope, "alert": alert, "warn_only": warn_only,
          "cudnn_deterministic_scope": cudnn_deterministic_scope, "mkldnn_available": mkldnn_available,
          "openmp_available": openmp_available, "mps_available": mps_available,
          "seed_not_backends": seed_not_backends, "mkldnn_deterministic": mkldnn_deterministic,
          "fp32_precision": fp32_precision, "documented": documented, "invariance": invariance,
          "counterexamples": counterexamples, "census": census, "compiled": compiled, "same_torch": same_torch,
          "cublas_config": cublas_config, "compiled_cuda_eager": compiled_cuda_eager,
          "compiled_cuda_deterministic": compiled_cuda_deterministic, **settings.PROBES, **cudnn_choices.PROBES,
          **cuda_questions.PROBES, **workloads.PROBES}


def answer(probe: str) -> tuple[int, str]:
    """A probe's exit status and the JSON line it prints (the module's
    docstring says both)."""
    try:
        if os.environ.get("BACKENDCHECK_PROBE_FAULT") == probe:
            raise AttributeError(f"injected by BACKENDCHECK_PROBE_FAULT={probe}")
        passed, detail, observed = PROBES[probe]()
    except NotHere as e:
        return 3, json.dumps({"error": f"{e}: not evaluated", "torch": torch.__version__})
    except Exception as e:  # noqa: BLE001 - any failure of the probe is the harness's error
        where = traceback.extract_tb(e.__traceback__)[-1]
        return 4, json.dumps({"error": f"{type(e).__name__}: {e} ({Path(where.filename).name}:{where.lineno}, in "
                                       f"{where.name})",
                              "torch": torch.__version__})
    # A "same bits" or "no effect" probe whose positive control did not vary
    # says why in observed["mistrusted"]: its fact decides nothing. A probe's
    # comparison and fresh processes (observed["compare"],
    # observed["cross_process"]) travel beside its fact, for the test to
    # record as Compare and CrossProcess records.
    records = {k: observed.pop(k) for k in ("compare", "cross_process") if isinstance(observed, dict) and k in observed}
    return 0, json.dumps({"passed": bool(passed), "detail": detail, "torch": torch.__version__,
                          "observed": observed, "harness_error": passed is None,
                          "mistrusted": str(observed.get("mistrusted", "")) if isinstance(observed, dict) else "",
                          **records}, default=str)


def main(argv: list[str]) -> int:
    if len(argv) == 3 and argv[1] == "--serve-forks":  # the interpreter that forks the probes (shared_child.py)
        import shared_child
        if torch.cuda.is_initialized():  # a fork could not start CUDA again: the probes keep their own interpreters
            print("shared_child: CUDA started at torch's import: no forks", file=sys.stderr)
            return 1
        return shared_child.serve_forks(Path(argv[2]), main)
    if len(argv) == 4 and argv[1] == "--serve":  # the interpreter a group of probes shares (shared_child.py)
        import shared_child
        return shared_child.serve(Path(argv[2]), argv[3],
                                  lambda probe: answer(probe) if probe in PROBES else (1, json.dumps(
                                      {"error": f"no probe {probe!r}"})))
    if len(argv) != 2 or argv[1] not in PROBES:
        print(json.dumps({"error": f"usage: torch_backends.py {{{','.join(PROBES)}}}"}))
        return 1
    code, line = answer(argv[1])
    print(line)
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv))
