"""The engines, read from backends/engines.def (the one list, also the C++
registry's): name, device, operations, whether cuDNN's selection semantics
choose their algorithm, and the library each wraps."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

ENGINES_DEF = Path(__file__).resolve().parent.parent / "backends" / "engines.def"
_ENGINE = re.compile(r'^BC_ENGINE\("([a-z_0-9]+)",\s*\w+,\s*(cpu|cuda),\s*"(\*|[a-z_0-9 ]*)",\s*(true|false),\s*"([^"]*)",'
                     r'\s*"([a-z_]+)",\s*"([a-z_]*)"\)$')
_BACKEND = re.compile(r'^BC_BACKEND\("([a-z_0-9]+)",\s*\w+\)$')


@dataclass(frozen=True)
class Engine:
    name: str
    device: str  # "cpu" or "cuda"
    ops: tuple[str, ...]  # ("*",): every operation declared in harness/ops
    cudnn_selection: bool
    library: str  # "" for the harness's own code
    system: str  # whose behaviour its evidence shows: pytorch, onednn, cudnn, cublas, reference, model
    role: str = ""  # its path in the model of PyTorch's dispatch: mkldnn, native, cudnn, blas, or ""

    @property
    def oracle(self) -> bool:
        """The harness's fp64 oracle (system "reference"), as the C++
        EngineEntry::IsOracle says: benchmarked to be placed, never raced."""
        return self.system == "reference"

    def serves(self, op: str) -> bool:
        return "*" in self.ops or op in self.ops


@lru_cache(maxsize=1)
def engines(path: Path = ENGINES_DEF) -> dict[str, Engine]:
    """The engines in engines.def order, by name."""
    out: dict[str, Engine] = {}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        line = line.strip()
        if not line.startswith("BC_ENGINE("):
            continue
        m = _ENGINE.match(line)
        if not m:
            raise RuntimeError(f"{path}:{number}: not a BC_ENGINE line this reader understands: {line}")
        name, device, ops, selection, library, system, role = m.groups()
        out[name] = Engine(name, device, tuple(ops.split()), selection == "true", library, system, role)
    if not out:
        raise RuntimeError(f"{path}: no BC_ENGINE lines")
    return out


@lru_cache(maxsize=1)
def backends(path: Path = ENGINES_DEF) -> tuple[str, ...]:
    """Every backend whose availability is reported: the engines, then the others."""
    others = [m.group(1) for line in path.read_text(encoding="utf-8").splitlines()
              if (m := _BACKEND.match(line.strip()))]
    return tuple(engines(path)) + tuple(others)


# The system of the harness's own re-implementation of PyTorch's dispatch and
# cuDNN selection: a case that lets dispatch choose is its evidence, whatever
# engine runs, so it is a system even where no engine line names it.
MODEL = "model"


@lru_cache(maxsize=1)
def systems(path: Path = ENGINES_DEF) -> tuple[str, ...]:
    """Whose behaviour evidence can show, in engines.def order: the systems
    of the engines, and the model."""
    return tuple(dict.fromkeys([e.system for e in engines(path).values()] + [MODEL]))


def harness_system(system: str) -> bool:
    """Whether a system is the harness's own code (the model, or engines that
    wrap no library), whose version is backendcheck's."""
    own = [not e.library for e in engines().values() if e.system == system]
    return system == MODEL or (bool(own) and all(own))


def device_of(name: str) -> str:
    """The device an engine runs on ("cpu" for a name that is not an engine)."""
    e = engines().get(name)
    return e.device if e else "cpu"
