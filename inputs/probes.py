"""PyTorch's Python probes, declared once (probes/declared.toml).

Each ``[[probe]]`` names a probe of a module's ``PROBES`` (probes/),
the gtest test that runs it (``TorchPython.<test>``) and what ctest is to
know of that test: the device whose tier holds it, its timeout, whether it
runs alone, on how many processors and under which lock. The build writes
the tests and their properties from them (generators/probes.py); the tests
of the reports and the GPU kit's plan read them here. No torch is imported:
the file is TOML, read by tomllib. Errors are ``FILE:LINE: message``
(SpecError), as the specs' are.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from .errors import SpecError, load_toml
from .locate import LineIndex

DECLARED = Path(__file__).resolve().parent.parent / "probes" / "declared.toml"
SUITE = "TorchPython"
BINARY_LABEL = "pytorch"  # the label every test of pytorch_python_tests has (bc_test_binary)
DEVICES = ("cpu", "gpu")  # every test of the binary is labelled cpu by its directory; gpu adds the GPU tier
_NAME = re.compile(r"^[a-z][a-z0-9_]*$")
_TEST = re.compile(r"^[A-Z][A-Za-z0-9]*$")
_LOCK = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
# key -> (types, what it must be)
FIELDS: dict[str, tuple[tuple[type, ...], str]] = {
    "name": ((str,), "the probe's key in its module's PROBES, such as \"build_config\""),
    "test": ((str,), "the gtest test's name in CamelCase, such as \"BuildConfiguration\""),
    "module": ((str,), "the module of probes/ whose PROBES holds the probe, such as \"settings\""),
    "device": ((str,), f"one of {', '.join(DEVICES)}"),
    "timeout": ((int,), "seconds, a positive integer"),
    "serial": ((bool,), "true or false"),
    "processors": ((int,), "a positive integer"),
    "lock": ((str,), "a resource lock's name, such as \"cuda-questions-child\""),
    "tier": ((bool,), "true or false"),
    "fresh": ((str,), "why the probe needs an interpreter of its own, such as \"it times torch's import\""),
}
REQUIRED = ("name", "test", "module")


@dataclass(frozen=True)
class Probe:
    name: str
    test: str
    module: str
    device: str = "cpu"
    timeout: int | None = None
    serial: bool = False
    processors: int | None = None
    lock: str | None = None
    tier: bool = False  # the probe reads the build's tier (BACKENDCHECK_TIER)
    fresh: str | None = None  # why it needs an interpreter of its own (else it is forked: forked())
    line: int = 1

    @property
    def forked(self) -> bool:
        """Whether the probe runs in a child of the run's forking interpreter
        where the run names a place for it (probes/shared_child.py
        serve_forks): one that declares no need of a fresh interpreter. The
        forking interpreter never starts CUDA, so a GPU probe's child starts
        its own, as a fresh interpreter would; the probes of a group that
        shares one interpreter (cuda_questions.SHARED_CHILD) are answered
        there instead."""
        return self.fresh is None

    @property
    def full_name(self) -> str:
        return f"{SUITE}.{self.test}"

    def properties(self) -> list[tuple[str, str]]:
        """ctest's properties of the test beyond bc_test_binary's, in the
        order CMake is given them."""
        out: list[tuple[str, str]] = []
        if self.device == "gpu":
            out.append(("LABELS", f'"{BINARY_LABEL};gpu"'))
        if self.timeout is not None:
            out.append(("TIMEOUT", str(self.timeout)))
        if self.serial and self.device != "gpu":
            out.append(("RUN_SERIAL", "TRUE"))
        if self.processors is not None:
            out.append(("PROCESSORS", str(self.processors)))
        if self.lock is not None and self.device != "gpu":
            out.append(("RESOURCE_LOCK", self.lock))
        return out

    def gpu_call(self) -> str | None:
        """A GPU probe's GPU (cmake/GpuResources.cmake's bc_gpu_test): a
        serial one alone on its GPU (all its slots; without a resource spec,
        RUN_SERIAL), the others one slot each; its lock kept."""
        if self.device != "gpu":
            return None
        lock = f" LOCK {self.lock}" if self.lock is not None else ""
        return f"bc_gpu_test([==[{self.full_name}]==] {'ALONE' if self.serial else 'SHARED'}{lock})"


def load_declared(path: Path) -> list[Probe]:
    """The probes a declarations file declares, in its order; SpecError at
    the line of the first thing wrong."""
    text, doc = load_toml(path, "probe declarations")
    index = LineIndex(text)
    where = str(path)
    for key in doc:
        if key != "probe":
            raise SpecError(where, index.line((key,)), f"unknown top-level key '{key}' (expected: [[probe]])")
    entries = doc.get("probe")
    if not isinstance(entries, list) or not entries or not all(isinstance(e, dict) for e in entries):
        raise SpecError(where, index.line(("probe",)), "no [[probe]] declared")
    probes: list[Probe] = []
    seen: dict[str, dict[str, int]] = {"name": {}, "test": {}}
    for i, entry in enumerate(entries):
        line = index.line(("probe", i))
        for key, value in entry.items():
            at = index.line(("probe", i, key))
            if key not in FIELDS:
                raise SpecError(where, at, f"probe: unknown field '{key}' (expected: {', '.join(FIELDS)})")
            types, what = FIELDS[key]
            # bool is an int to Python; a timeout of true is not a number.
            if not isinstance(value, types) or (bool not in types and isinstance(value, bool)):
                raise SpecError(where, at, f"probe: {key} must be {what}")
        for key in REQUIRED:
            if key not in entry:
                raise SpecError(where, line, f"probe: {key} missing ({FIELDS[key][1]})")
        checks = (("name", _NAME), ("test", _TEST), ("module", _NAME), ("lock", _LOCK))
        for key, pattern in checks:
            if key in entry and not pattern.match(entry[key]):
                raise SpecError(where, index.line(("probe", i, key)), f"probe: {key} must be {FIELDS[key][1]}")
        if "fresh" in entry and not entry["fresh"].strip():
            raise SpecError(where, index.line(("probe", i, "fresh")), f"probe: fresh must be {FIELDS['fresh'][1]}")
        if entry.get("device", "cpu") not in DEVICES:
            raise SpecError(where, index.line(("probe", i, "device")), f"probe: device must be {FIELDS['device'][1]}")
        for key in ("timeout", "processors"):
            if key in entry and entry[key] <= 0:
                raise SpecError(where, index.line(("probe", i, key)), f"probe: {key} must be {FIELDS[key][1]}")
        for key in ("name", "test"):
            if entry[key] in seen[key]:
                raise SpecError(where, index.line(("probe", i, key)),
                                f"probe: {key} '{entry[key]}' declared twice (first at line {seen[key][entry[key]]})")
            seen[key][entry[key]] = index.line(("probe", i, key))
        probes.append(Probe(line=line, **entry))
    return probes


def by_test(probes: list[Probe]) -> dict[str, str]:
    """TorchPython.<test> -> the probe it runs."""
    return {p.full_name: p.name for p in probes}
