"""Problem and case strings, asked of the C++ code that owns them.

Every operation is declared once, in C++ (``harness/ops/NAME.h``); the
``bc_problem`` tool that the build makes answers for it (one JSON request per
line, see ``harness/bc_problem.cc``). This module holds no grammar of its own:
it describes the operations, turns a spec's shape and axes into the canonical
problem string and a case's tokens into its canonical repro string, with the
C++ parser's own error messages.

The tool is found at ``$BACKENDCHECK_PROBLEM_TOOL`` (what the build and its
tests set), else in the newest build under ``build/``.
"""

from __future__ import annotations

import atexit
import functools
import json
import os
import subprocess
from pathlib import Path
from typing import Any

from inputs.errors import SpecError

ROOT = Path(__file__).resolve().parent.parent


def build_trees(build: Path) -> list[Path]:
    """The CMake build trees under `build` (those holding a CMakeCache.txt):
    build/PRESET by hand, build/PRESET/torch/PATH/OF/PYTHON as ./backendcheck
    makes them; a tree's own folders are not searched."""
    trees = []
    for here, dirs, files in os.walk(build):
        if "CMakeCache.txt" in files:
            trees.append(Path(here))
            dirs.clear()
    return trees


def tool_path() -> Path:
    env = os.environ.get("BACKENDCHECK_PROBLEM_TOOL")
    if env:
        return Path(env)
    built = sorted((p / "bc_problem" for p in build_trees(ROOT / "build") if (p / "bc_problem").is_file()),
                   key=lambda p: p.stat().st_mtime, reverse=True)
    if built:
        return built[0]
    raise SpecError("bc_problem", 0, "the problem tool is not built: ./backendcheck validate SPEC builds it, "
                                     "or cmake --build BUILD_DIR --target bc_problem and set BACKENDCHECK_PROBLEM_TOOL")


class _Tool:
    def __init__(self, path: Path):
        self.path = path
        self.proc = subprocess.Popen([str(path)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
        atexit.register(self.close)

    def ask(self, request: dict[str, Any]) -> dict[str, Any]:
        assert self.proc.stdin and self.proc.stdout
        self.proc.stdin.write(json.dumps(request) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise SpecError(str(self.path), 0, f"the problem tool stopped (exit {self.proc.wait()}) on {request}")
        return json.loads(line)

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.stdin.close()  # type: ignore[union-attr]
            self.proc.wait()


@functools.lru_cache(maxsize=1)
def _tool() -> _Tool:
    return _Tool(tool_path())


@functools.lru_cache(maxsize=None)
def _ask(request: str) -> dict[str, Any]:
    return _tool().ask(json.loads(request))


def ask(**request: Any) -> dict[str, Any]:
    return _ask(json.dumps(request, sort_keys=True))


@functools.lru_cache(maxsize=1)
def describe() -> dict[str, Any]:
    """The operations as C++ declares them: name, fields, and whether the repro names a direction or layout."""
    return ask(describe=True)


def op_fields(op: str, required_only: bool = False) -> tuple[str, ...]:
    """The fields of an operation's shape, in its repro's order (only those a repro must give)."""
    for entry in describe()["ops"]:
        if entry["name"] == op:
            return tuple(f["key"] for f in entry["fields"] if f["required"] or not required_only)
    raise KeyError(op)


def problem(shape: str, direction: str = "fwd", dtype: str = "f32", layout: str = "nchw") -> dict[str, Any]:
    """A spec's shape and axes as C++ reads them: ``repro``, ``op``, ``shape`` and ``bytes`` (of every buffer);
    ValueError with the C++ parser's message when they are not a valid problem."""
    answer = ask(shape=shape, direction=direction, dtype=dtype, layout=layout)
    if "error" in answer:
        raise ValueError(answer["error"])
    return answer


def canonical_case(text: str) -> str:
    """A case's canonical repro string (harness/case.h) from any spelling C++ parses: steps joined by ',' (a run
    of N equal ones as STEP*N), then key=value tokens in any order, flags at their defaults included."""
    answer = ask(case=text)
    if "error" in answer:
        raise ValueError(answer["error"])
    return answer["repro"]


def from_values(op: str, values: dict[str, int]) -> dict[str, Any]:
    """A problem from its fields (a spec's random schedules); ValueError when they are not valid."""
    answer = ask(op=op, values=values)
    if "error" in answer:
        raise ValueError(answer["error"])
    return answer
