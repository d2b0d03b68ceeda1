"""What the GPU probes need of the machine they run on, checked once before
the first test (ci/gpu-kit build, or ci/gpu-kit preflight), with the
interpreter under test:

    python3 preflight.py [--out FILE]

prints one line for each need that is missing or could not be checked here
(with why), writes every finding to FILE as JSON, and exits 0: a missing
need is a finding about the machine, which makes the probes that need it
not evaluated, never a failure of the run.

The needs (NEEDS):
- device: a CUDA device this PyTorch sees;
- driver: an NVIDIA driver for this PyTorch's CUDA runtime
  (ci/cuda-driver-check.py, with the runtime torch.version.cuda names);
- compiler: a C compiler that builds an extension of this interpreter, as
  Triton builds its CUDA launcher for torch.compile (the compiler of CC,
  else gcc, else clang: triton/runtime/build.py's rule), with
- python-headers: Python.h of this interpreter (Triton's include
  directory: sysconfig's, the scheme posix_local read as posix_prefix);
- temp: a writable temporary directory (cuDNN's logs, Inductor's and
  Triton's caches);
- cudnn-log: cuDNN writing its API log where CUDNN_LOGLEVEL_DBG and
  CUDNN_LOGDEST_DBG say, in a fresh interpreter that runs one cuDNN
  convolution (cudnn_choices.py reads PyTorch's calls from that log); not
  checked without a CUDA device or without cuDNN.

A probe reads the findings through lacking(probe, need...) where
BACKENDCHECK_PREFLIGHT names the file (the kit exports it): a missing
need's finding, which the probe raises as NotHere, so that it is not
evaluated with that reason; where no file is named or a need was not
checked, the probe runs and finds out for itself.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import sysconfig
import tempfile
from pathlib import Path

import children
from common import first_line, version_of

VARIABLE = "BACKENDCHECK_PREFLIGHT"
SCHEMA = 1
ROOT = Path(__file__).resolve().parents[1]
DRIVER_CHECK = ROOT / "ci" / "cuda-driver-check.py"
NEEDS = {
    "device": "a CUDA device that PyTorch sees",
    "driver": "an NVIDIA driver for PyTorch's CUDA runtime",
    "compiler": "a C compiler (Triton builds torch.compile's CUDA launcher with it)",
    "python-headers": "Python.h of the interpreter under test (Triton's launcher build includes it)",
    "temp": "a writable temporary directory (cuDNN's logs, Inductor's and Triton's caches)",
    "cudnn-log": "cuDNN writing its API log where CUDNN_LOGLEVEL_DBG and CUDNN_LOGDEST_DBG say",
}
MET, MISSING, NOT_CHECKED = "met", "missing", "not checked"
# One cuDNN convolution in a fresh interpreter, whose cuDNN reads the log
# variables as it loads.
_CUDNN_CALL = ("import torch; x = torch.randn(1, 4, 16, 16, device='cuda'); "
               "torch.nn.functional.conv2d(x, torch.randn(4, 4, 3, 3, device='cuda')); torch.cuda.synchronize()")


def _run(cmd: list[str], env: dict[str, str] | None = None, timeout: float = 120) -> tuple[int, str]:
    """Exit status and output (stdout then stderr) of a command; 127 and
    why where it could not start."""
    r = children.run(cmd, env, timeout)
    return (127, r.failure) if r.code is None else (r.code, (r.stdout + r.stderr).strip())


def _first(text: str) -> str:
    return first_line(text) or "no output"


def c_compiler(environ: dict[str, str] | None = None) -> str:
    """The compiler Triton would take (CC, else gcc, else clang on PATH),
    or "" where there is none."""
    environ = os.environ if environ is None else environ
    if environ.get("CC"):
        return environ["CC"]
    path = environ.get("PATH", "")
    return shutil.which("gcc", path=path) or shutil.which("clang", path=path) or ""


def python_include() -> Path:
    """Where Triton looks for this interpreter's Python.h."""
    scheme = sysconfig.get_default_scheme()
    return Path(sysconfig.get_paths(scheme="posix_prefix" if scheme == "posix_local" else scheme)["include"])


def check_build(environ: dict[str, str] | None = None, include: Path | None = None) -> dict[str, tuple[str, str]]:
    """compiler and python-headers: each (state, why), the compiler tried
    on a one-line extension that includes Python.h, as Triton's build
    compiles its launcher."""
    environ = dict(os.environ if environ is None else environ)
    include = python_include() if include is None else include
    cc = c_compiler(environ)
    found = {"compiler": (MET, cc) if cc else (
        MISSING, "no C compiler: CC is not set and neither gcc nor clang is on PATH (torch.compile on CUDA builds "
                 "Triton's launcher with one)")}
    header = include / "Python.h"
    found["python-headers"] = (MET, str(header)) if header.is_file() else (
        MISSING, f"no Python.h for {sys.executable} at {include} (torch.compile on CUDA builds Triton's launcher with "
                 f"it: install this Python's development headers)")
    if cc and header.is_file():
        with tempfile.TemporaryDirectory(prefix="bc-preflight-") as tmp:
            src = Path(tmp) / "launcher.c"
            src.write_text("#include <Python.h>\nint bc_preflight(void) { return Py_IsInitialized(); }\n")
            code, said = _run([cc, str(src), "-O1", "-shared", "-fPIC", f"-I{include}", "-o",
                               str(Path(tmp) / "launcher.so")], env=environ)
        if code != 0:
            found["compiler"] = (MISSING, f"{cc} could not build an extension that includes Python.h (as Triton "
                                          f"builds its launcher): {_first(said)}")
    return found


def check_temp() -> tuple[str, str]:
    try:
        where = tempfile.gettempdir()
        with tempfile.NamedTemporaryFile(dir=where) as f:
            f.write(b"x")
            f.flush()
    except OSError as e:
        return MISSING, (f"no writable temporary directory (TMPDIR={os.environ.get('TMPDIR', 'unset')}): "
                         f"{type(e).__name__}: {e}")
    return MET, where


def check_torch(python: str = sys.executable) -> dict[str, tuple[str, str]]:
    """device, driver and cudnn-log, through PyTorch in this interpreter."""
    try:
        import torch
    except Exception as e:  # noqa: BLE001 - any import failure: nothing of PyTorch's can be checked
        why = f"{python} cannot import torch ({type(e).__name__}: {e})"
        return {n: (NOT_CHECKED, why) for n in ("device", "driver", "cudnn-log")}
    version, runtime = torch.__version__, torch.version.cuda
    found: dict[str, tuple[str, str]] = {}
    if runtime is None:
        why = f"PyTorch {version} is a build without CUDA"
        return {"device": (MISSING, why), "driver": (NOT_CHECKED, why), "cudnn-log": (NOT_CHECKED, why)}
    major, minor = version_of(runtime)
    code, said = _run([sys.executable, str(DRIVER_CHECK), "--runtime", str(major * 1000 + minor * 10)])
    said = said.removeprefix("cuda-driver-check: ")
    found["driver"] = (MET, said) if code == 0 else (MISSING, f"{said}; PyTorch {version} uses CUDA {runtime}")
    if not torch.cuda.is_available():
        found["device"] = (MISSING, f"PyTorch {version} sees no CUDA device")
        found["cudnn-log"] = (NOT_CHECKED, "no CUDA device")
        return found
    found["device"] = (MET, torch.cuda.get_device_name())
    if not torch.backends.cudnn.is_available():
        found["cudnn-log"] = (NOT_CHECKED, f"PyTorch {version} has no cuDNN")
        return found
    with tempfile.TemporaryDirectory(prefix="bc-preflight-") as tmp:
        log = Path(tmp) / "cudnn.log"
        env = dict(os.environ, CUDNN_LOGLEVEL_DBG="3", CUDNN_LOGDEST_DBG=str(log))
        code, said = _run([sys.executable, "-c", _CUDNN_CALL], env=env, timeout=300)
        size = log.stat().st_size if log.exists() else 0
    if code != 0:
        found["cudnn-log"] = (MISSING, f"one cuDNN convolution failed in a fresh interpreter: {_first(said)}")
    elif size == 0:
        found["cudnn-log"] = (MISSING, f"cuDNN {torch.backends.cudnn.version()} wrote no log with "
                                       "CUDNN_LOGLEVEL_DBG=3 and CUDNN_LOGDEST_DBG=FILE")
    else:
        found["cudnn-log"] = (MET, f"cuDNN {torch.backends.cudnn.version()} wrote {size} bytes of log")
    return found


def check() -> dict:
    """Every need's finding, for this interpreter on this machine."""
    found = {**check_torch(), **check_build(), "temp": check_temp()}
    return {"schema": SCHEMA, "python": sys.executable,
            "needs": {n: {"state": found[n][0], "why": found[n][1], "for": NEEDS[n]} for n in NEEDS}}


def lines(findings: dict) -> list[str]:
    """One line for each need missing or not checked."""
    return [f"{x['state']}: {n} ({x['for']}): {x['why']}" for n, x in findings["needs"].items()
            if x["state"] != MET]


def lacking(probe: str, *needs: str) -> str:
    """Why the probe cannot be evaluated on this machine: the finding of the
    first of `needs` the pre-flight ($BACKENDCHECK_PREFLIGHT) found missing,
    naming the probe, for it to raise as NotHere; "" where none is named, or
    none of them was found missing (a need not checked: the probe finds out
    for itself)."""
    where = os.environ.get(VARIABLE, "")
    if not where:
        return ""
    try:
        findings = json.loads(Path(where).read_text())["needs"]
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise RuntimeError(f"{where}: the pre-flight's findings do not read: {type(e).__name__}: {e}") from e
    for need in needs:
        x = findings.get(need, {})
        if x.get("state") == MISSING:
            return f"this machine lacks {x.get('for', need)}: {x.get('why', '')} (probe {probe})"
    return ""


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, help="where to write the findings (JSON)")
    a = ap.parse_args(argv)
    findings = check()
    for line in lines(findings):
        print(f"pre-flight: {line}")
    met = sum(x["state"] == MET for x in findings["needs"].values())
    print(f"pre-flight: {met} of {len(NEEDS)} needs met for {sys.executable}"
          + (f"; findings in {a.out}" if a.out else ""))
    if a.out:
        a.out.parent.mkdir(parents=True, exist_ok=True)
        a.out.write_text(json.dumps(findings, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
