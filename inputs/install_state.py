"""One torch install's state in a run across versions: how far its set-up,
configure, build, tests and report got. ./backendcheck writes it as the
install goes (a JSON object, replaced whole at each step, so that a reader
never sees half a file); the report reads it (--install FILE). Both use this
module, and nothing else reads or writes the file.

    {"torch": "pinned", "version": "2.15.0+cu132", "stage": "done",
     "build_dir": "...", "run_dir": "...", "log": "...", "exit": 0}

`stage` is the stage the install was in when it stopped (or "done"); `exit`
is its exit status, absent while it runs."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

from inputs.errors import SpecError, read_regular

STAGES = ("setup", "configure", "build", "tests", "report", "done")
FIELDS = {"torch": str, "version": str, "stage": str, "build_dir": str, "run_dir": str, "log": str, "exit": int}


def write(path: Path, state: dict[str, Any]) -> None:
    """Replaces the state file at `path` with `state` (atomically)."""
    unknown = set(state) - set(FIELDS)
    if unknown:
        raise ValueError(f"not fields of an install state: {sorted(unknown)}")
    fd, tmp = tempfile.mkstemp(prefix=".state-", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(state, f, indent=1, sort_keys=True)
            f.write("\n")
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def read(path: Path) -> dict[str, Any]:
    """The state at `path`, its fields checked; SpecError (FILE:1: field)
    for anything that is not an install state."""
    try:
        text = read_regular(path, "the install state", 1 << 20).decode("utf-8", errors="replace")
    except OSError as e:
        raise SpecError(str(path), 1, f"cannot read the install state: {e.strerror or e}") from None
    try:
        state = json.loads(text)
    except ValueError as e:
        raise SpecError(str(path), getattr(e, "lineno", 1), f"not an install state of ./backendcheck (JSON): {e}") \
            from None
    if not isinstance(state, dict) or "torch" not in state:
        raise SpecError(str(path), 1, "torch: missing: not an install state of ./backendcheck")
    for key, value in state.items():
        kind = FIELDS.get(key)
        if kind is None:
            raise SpecError(str(path), 1, f"{key}: not a field of an install state")
        if not isinstance(value, kind) or isinstance(value, bool):
            raise SpecError(str(path), 1, f"{key}: expected {'a number' if kind is int else 'a string'}")
    if state.get("stage", "setup") not in STAGES:
        raise SpecError(str(path), 1, f"stage: {state['stage']!r} is not one of {', '.join(STAGES)}")
    return state
