"""What a build needs, installed when missing: Debian's packages (apt), the
torch under test (an interpreter named, or a release in a managed virtual
environment under the cache, its wheels kept in the wheelhouse beside it),
the probes' pure-Python packages for a torch whose environment is not
managed, and the model's oneDNN.

The cache is ${BACKENDCHECK_CACHE:-${XDG_CACHE_HOME:-~/.cache}/backendcheck}:
torch-VERSION/ and onednn-VERSION/ (virtual environments, each marked
complete by .backendcheck-requirements, the sha256 of its requirements
file), wheels/, and requirements-torch-VERSION.txt for a release other than
the pinned one. --offline downloads nothing and fails with one line naming
what is missing."""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from cli.builds import Refused

ROOT = Path(__file__).resolve().parents[1]
REQUIREMENTS = ROOT / "requirements" / "torch.txt"
ONEDNN_REQUIREMENTS = ROOT / "requirements" / "onednn.txt"
TEST_TORCHES = ROOT / "requirements" / "test-torches.txt"
STAMP = ".backendcheck-requirements"

# Debian packages the build needs. Debian's oneDNN (2.6, the one Debian's
# PyTorch 1.13 links; its CMake config requires OpenCL) is needed only when
# the model runs on the system's oneDNN (see choose_onednn). cmake and ninja
# may come from pip instead (any cmake 3.25 or newer on PATH).
PACKAGES = ["g++", "pkg-config", "libgtest-dev", "libbenchmark-dev", "nlohmann-json3-dev", "libxxhash-dev",
            "python3", "python3-jinja2", "python3-jsonschema", "libopenblas0"]
SYSTEM_ONEDNN_PACKAGES = ["libdnnl-dev", "ocl-icd-opencl-dev"]
# Debian's PyTorch 1.13 (CPU), when it is the torch named (--torch /usr/bin/python3).
DEBIAN_TORCH_PACKAGES = ["libtorch-dev", "python3-torch"]
# What `test` needs besides: headless Chromium for the report's browser test,
# PyYAML for the checks of the CI pipeline files.
TEST_PACKAGES = ["chromium", "chromium-driver", "python3-selenium", "python3-yaml"]
# The probes' pure-Python packages that requirements/torch.txt pins.
PROBE_PACKAGES = ["expecttest", "opt-einsum"]


def log(message: str) -> None:
    print(f"==> {message}", flush=True)


def cache_root(env: dict[str, str] | None = None) -> Path:
    env = os.environ if env is None else env
    if env.get("BACKENDCHECK_CACHE"):
        return Path(env["BACKENDCHECK_CACHE"])
    base = env.get("XDG_CACHE_HOME") or str(Path(env.get("HOME", str(Path.home()))) / ".cache")
    return Path(base) / "backendcheck"


def pin_of(requirements: Path, name: str) -> str:
    """The version `requirements` pins for `name` (name==VERSION), or ""."""
    for line in requirements.read_text(encoding="utf-8").splitlines():
        m = re.match(rf"^{re.escape(name)}==([^ ;#]+)", line)
        if m:
            return m.group(1)
    return ""


def pinned_torch() -> str:
    version = pin_of(REQUIREMENTS, "torch")
    if not version:
        raise Refused(f"{REQUIREMENTS}:1: no 'torch==VERSION' line")
    return version


def test_torches() -> list[str]:
    """The installs `test` runs when none is named (requirements/test-torches.txt)."""
    torches = [line.split("#")[0].strip() for line in TEST_TORCHES.read_text(encoding="utf-8").splitlines()]
    torches = [t for t in torches if t]
    if not torches:
        raise Refused(f"{TEST_TORCHES}:1: no torch install listed")
    return torches


# --- Debian packages -----------------------------------------------------------------


def _installed(package: str) -> bool:
    r = subprocess.run(["dpkg-query", "-W", "-f=${Status}", package], capture_output=True, text=True, check=False)
    return r.stdout == "install ok installed"


def cmake_ok() -> bool:
    """A cmake 3.25 or newer on PATH."""
    try:
        out = subprocess.run(["cmake", "--version"], capture_output=True, text=True, check=False).stdout
    except OSError:
        return False
    m = re.search(r"cmake version (\d+)\.(\d+)", out)
    return bool(m) and (int(m.group(1)), int(m.group(2))) >= (3, 25)


def missing_packages(packages: list[str], build_tools: bool) -> list[str]:
    missing = [p for p in packages if not _installed(p)]
    if build_tools:
        if not cmake_ok():
            missing.append("cmake")
        if not shutil.which("ninja"):
            missing.append("ninja-build")
    return missing


def install_packages(packages: list[str], offline: bool, build_tools: bool = False) -> None:
    """Those of `packages` (Debian names) that are missing, with apt-get as
    root; else one line naming them and how to install them."""
    if not shutil.which("dpkg-query"):
        print("backendcheck: not a Debian system; make sure these (Debian names) are installed: "
              + " ".join(packages), file=sys.stderr)
        return
    missing = missing_packages(packages, build_tools)
    if not missing:
        return
    if offline:
        raise Refused(f"--offline: missing Debian packages: {' '.join(missing)}")
    line = "apt-get install -y --no-install-recommends " + " ".join(missing)
    if os.geteuid() != 0 or not shutil.which("apt-get"):
        raise Refused(f"missing packages: {' '.join(missing)}; install them as root with: apt-get update && {line}")
    log(f"installing {' '.join(missing)}")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    if subprocess.run(["apt-get", "update", "-qq"], env=env, check=False).returncode != 0 or subprocess.run(
            ["apt-get", "install", "-y", "-qq", "--no-install-recommends", *missing], env=env, check=False,
            stdout=subprocess.DEVNULL).returncode != 0:
        raise Refused(f"apt-get could not install {' '.join(missing)}")


# --- Managed environments ------------------------------------------------------------


def venv_python() -> str:
    """A Python 3.10+ with venv, to create a managed environment with."""
    for candidate in ("python3", "/usr/bin/python3"):
        found = shutil.which(candidate)
        if found and subprocess.run([found, "-c", "import sys, venv, ensurepip; sys.exit(sys.version_info < (3, 10))"],
                                    capture_output=True, check=False).returncode == 0:
            return found
    raise Refused("no Python 3.10+ with venv to create a managed environment (apt-get install python3-venv)")


def ensure_env(cache: Path, name: str, requirements: Path, what: str, offline: bool) -> Path:
    """The virtual environment cache/NAME holding what `requirements` pins,
    installed from the wheelhouse (filled first when it lacks something). A
    complete environment, marked by the hash of its requirements file, is
    left as it is."""
    env, wheels = cache / name, cache / "wheels"
    want = hashlib.sha256(requirements.read_bytes()).hexdigest()
    pins = " ".join(line.strip() for line in requirements.read_text(encoding="utf-8").splitlines()
                    if line.strip() and not line.startswith("#"))
    stamp = env / STAMP
    if (env / "bin" / "python").exists() and stamp.is_file() and stamp.read_text().strip() == want:
        return env
    base = venv_python()
    log(f"setting up {what} in {env}")
    shutil.rmtree(env, ignore_errors=True)
    wheels.mkdir(parents=True, exist_ok=True)
    if subprocess.run([base, "-m", "venv", str(env)], check=False).returncode != 0:
        raise Refused(f"cannot create the virtual environment {env}")
    pip = [str(env / "bin" / "pip"), "install", "-q", "--no-index", "--find-links", str(wheels), "-r",
           str(requirements)]
    if subprocess.run(pip, stderr=subprocess.DEVNULL, check=False).returncode != 0:
        if offline:
            shutil.rmtree(env, ignore_errors=True)
            raise Refused(f"--offline: {wheels} lacks wheels of {pins} (or of their dependencies)")
        log(f"downloading {pins} into {wheels}")
        if subprocess.run([str(env / "bin" / "pip"), "download", "-q", "-d", str(wheels), "-r", str(requirements)],
                          check=False).returncode != 0:
            raise Refused(f"pip could not download {pins}")
        if subprocess.run(pip, check=False).returncode != 0:
            raise Refused(f"pip could not install {pins} from {wheels}")
    stamp.write_text(want + "\n")
    return env


def managed_torch(cache: Path, release: str, offline: bool) -> str:
    """The interpreter of the managed environment of `release` (the pinned
    one when empty); another release is pinned as requirements/torch.txt
    pins its own, in a requirements file beside the environments."""
    version, requirements = pinned_torch(), REQUIREMENTS
    if release and release != version:
        version = release
        requirements = cache / f"requirements-torch-{version}.txt"
        cache.mkdir(parents=True, exist_ok=True)
        text = re.sub(r"(?m)^torch==.*$", f"torch=={version}", REQUIREMENTS.read_text(encoding="utf-8"))
        requirements.write_text(text, encoding="utf-8")
    return str(ensure_env(cache, f"torch-{version}", requirements, f"PyTorch {version}", offline) / "bin" / "python")


def probe_path(cache: Path, torch_python: str, offline: bool) -> str:
    """For a torch whose environment the harness does not manage (Debian's):
    the wheel files of the probes' pure-Python packages, from the wheelhouse
    (downloaded into it when missing), as BACKENDCHECK_PROBE_PATH. A package
    that cannot be had leaves its probes not evaluated, naming it."""
    wheels, found = cache / "wheels", []
    pip: list[str] = []
    for name in PROBE_PACKAGES:
        version = pin_of(REQUIREMENTS, name)
        if not version:
            continue
        pattern = f"{name.replace('-', '_')}-{version}-py3-none-any.whl"
        hits = sorted(wheels.glob(pattern))
        if not hits and not offline:
            if not pip:
                for candidate in (str(cache / f"torch-{pinned_torch()}" / "bin" / "python"), "python3",
                                  "/usr/bin/python3"):
                    try:
                        ok = subprocess.run([candidate, "-m", "pip", "--version"], capture_output=True,
                                            check=False).returncode == 0
                    except OSError:
                        ok = False
                    if ok:
                        pip = [candidate, "-m", "pip"]
                        break
            wheels.mkdir(parents=True, exist_ok=True)
            if pip:
                subprocess.run([*pip, "download", "-q", "--no-deps", "-d", str(wheels), f"{name}=={version}"],
                               capture_output=True, check=False)
            hits = sorted(wheels.glob(pattern))
        if hits:
            found.append(str(hits[0]))
        else:
            log(f"no wheel of {name}=={version} for {torch_python}: its probes are not evaluated")
    return ":".join(found)


@dataclass
class Torch:
    """The torch under test, as cmake/torch_info.py reads it."""
    python: str
    version: str
    local: str
    onednn: str
    probe_path: str | None  # None: its environment has the probes' packages

    @property
    def full_version(self) -> str:
        return self.version + (f"+{self.local}" if self.local else "")


def resolve_torch(spec: str, cache: Path, offline: bool) -> Torch:
    """The torch that `spec` names (pinned, torch==VERSION or an interpreter),
    installed when it is a release."""
    if spec == "pinned" or spec.startswith("torch=="):
        python = managed_torch(cache, spec.removeprefix("torch==") if spec != "pinned" else "", offline)
        path: str | None = None
    else:
        found = shutil.which(spec)
        if not found:
            raise Refused(f"--torch {spec}: no such interpreter")
        python = found
        path = probe_path(cache, python, offline)
    r = subprocess.run([python, str(ROOT / "cmake" / "torch_info.py")], capture_output=True, text=True, check=False)
    if r.returncode != 0:
        raise Refused(f"--torch {python}: it cannot import torch")
    info = dict(line.partition("=")[::2] for line in r.stdout.splitlines() if "=" in line)
    torch = Torch(python, info.get("version", ""), info.get("local", ""), info.get("onednn", ""), path)
    log(f"PyTorch under test: torch {torch.full_version} ({python})")
    return torch


def needs_debian_torch(spec: str) -> bool:
    """Debian's torch is installed only when it is the one named and missing."""
    if spec == "pinned" or spec.startswith("torch=="):
        return False
    named = shutil.which(spec) or spec
    if os.path.realpath(named) != os.path.realpath("/usr/bin/python3"):
        return False
    return subprocess.run(["/usr/bin/python3", "-c", "import torch"], capture_output=True,
                          check=False).returncode != 0


def choose_onednn(torch: Torch, cache: Path, offline: bool) -> str:
    """The model's oneDNN (a prefix; "" for the system's). Named by
    BACKENDCHECK_ONEDNN_ROOT; else the one nearest the torch under test: a
    torch on the system's oneDNN 2.x has the model on that same library; a
    torch carrying a oneDNN 3.x of its own has it on the OpenMP oneDNN 3 that
    requirements/onednn.txt pins."""
    if os.environ.get("BACKENDCHECK_ONEDNN_ROOT"):
        root = os.environ["BACKENDCHECK_ONEDNN_ROOT"]
    elif torch.onednn.startswith("2."):
        root = ""
        install_packages(SYSTEM_ONEDNN_PACKAGES, offline)
    else:
        version = pin_of(ONEDNN_REQUIREMENTS, "onednn-cpu-gomp")
        if not version:
            raise Refused(f"{ONEDNN_REQUIREMENTS}:1: no 'onednn-cpu-gomp==VERSION' line")
        root = str(ensure_env(cache, f"onednn-{version}", ONEDNN_REQUIREMENTS,
                              f"oneDNN (onednn-cpu-gomp {version}) for the model", offline))
    log(f"oneDNN of the model: {root or 'the system (Debian libdnnl)'}; oneDNN inside the torch under test: "
        f"{torch.onednn or 'none'}")
    return root
