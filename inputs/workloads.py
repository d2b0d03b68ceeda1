"""A team's own workloads, declared like claims (docs/workloads.md): a TOML
file of [[workload]] tables, each naming a Python callable that builds one
step, the levels at which the step should hold its bits, and the settings
the team runs with. Read by the command line before anything runs, and by
the probe (probes/workloads.py) in the torch interpreter: a bad declaration
is one FILE:LINE: message.

    path = "workloads"           # where the callables' modules are, from this file
    [[workload]]
    id = "cnn-train-step"
    statement = "A small CNN's training step is bitwise reproducible ..."
    callable = "cnn:training_step"          # module:function(batch) -> step()
    levels = ["run", "threads", "batch", "process"]
    hold = ["run", "threads"]               # what the statement claims
    settings = { deterministic = false }    # what the team runs with
    batch = 8                               # the batch the step runs at
    rows = 2                                # batch level: these first rows alone
    threads = [1, 2]                        # threads level: these counts
    rows_of = ["output"]                    # batch level: the tensors whose rows compare
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from inputs.errors import SpecError, load_toml
from inputs.locate import LineIndex

ENVIRONMENT = "BACKENDCHECK_CLAIMS"  # a team's workload files, separated by ":"
# The levels a workload's step can be held at, with what each compares.
LEVELS = {
    "run": "the step twice in one process",
    "threads": "the step at the first and the last of `threads` (torch.set_num_threads)",
    "batch": "the first `rows` rows of the step at `batch` against the step at `rows` alone",
    "process": "the step in two fresh interpreters",
}
# The settings a workload runs with and the levers tried where a level moves:
# name -> (what it sets, the values it takes). An environment lever holds only
# in fresh processes (the process level).
SETTINGS = {
    "deterministic": ("torch.use_deterministic_algorithms", (True, False)),
    "mkldnn": ("torch.backends.mkldnn.enabled", (True, False)),
    "matmul_precision": ("torch.set_float32_matmul_precision", ("highest", "high", "medium")),
    "threads": ("torch.set_num_threads", None),
    "ONEDNN_MAX_CPU_ISA": ("the oneDNN ISA cap (environment)", ("AVX2", "AVX512_CORE", "SSE41")),
    "MKL_CBWR": ("oneMKL's conditional numerical reproducibility (environment)", ("COMPATIBLE", "AVX2", "AUTO")),
}
ENV_SETTINGS = ("ONEDNN_MAX_CPU_ISA", "MKL_CBWR")
KEYS = {"id", "statement", "callable", "levels", "hold", "settings", "batch", "rows", "threads", "rows_of"}
_ID = re.compile(r"^[a-z0-9][a-z0-9-]{0,63}$")
_CALLABLE = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_]\w*$")


@dataclass
class Workload:
    id: str
    statement: str
    callable: str
    path: Path  # the directory its module is imported from
    file: Path  # the declaration's file
    line: int  # the line of its [[workload]] header
    levels: list[str] = field(default_factory=lambda: list(LEVELS))
    hold: list[str] = field(default_factory=list)
    settings: dict[str, Any] = field(default_factory=dict)
    batch: int = 8
    rows: int = 2
    threads: list[int] = field(default_factory=lambda: [1, 2])
    rows_of: list[str] = field(default_factory=lambda: ["output"])

    def as_json(self) -> dict[str, Any]:
        return {"id": self.id, "statement": self.statement, "callable": self.callable, "path": str(self.path),
                "file": str(self.file), "line": self.line, "levels": self.levels, "hold": self.hold,
                "settings": self.settings, "batch": self.batch, "rows": self.rows, "threads": self.threads,
                "rows_of": self.rows_of}


def load(path: Path) -> list[Workload]:
    """The workloads of one declaration file; SpecError (FILE:LINE) on the
    first thing wrong."""
    text, doc = load_toml(path, "workload file")
    index = LineIndex(text)

    def error(where: tuple[str | int, ...], message: str) -> SpecError:
        return SpecError(str(path), index.line(where), message)

    for key in doc:
        if key not in ("path", "workload"):
            raise error((key,), f"unknown key '{key}' (known: path, workload)")
    base = path.parent / str(doc.get("path", "."))
    if not isinstance(doc.get("path", "."), str) or not base.is_dir():
        raise error(("path",), f"path must name a directory beside this file, not '{doc.get('path')}'")
    raw = doc.get("workload")
    if not isinstance(raw, list) or not raw:
        raise error(("workload",), "no [[workload]] table: each names a callable that builds one step")
    out: list[Workload] = []
    for i, w in enumerate(raw):
        here = ("workload", i)
        for key in w:
            if key not in KEYS:
                raise error(here + (key,), f"unknown key '{key}' (known: {', '.join(sorted(KEYS))})")
        for key in ("id", "statement", "callable"):
            if not isinstance(w.get(key), str) or not w[key].strip():
                raise error(here + ((key,) if key in w else ()), f"'{key}' must be a non-empty string")
        if not _ID.match(w["id"]):
            raise error(here + ("id",), f"id '{w['id']}' must be lower case letters, digits and '-'")
        if any(x.id == w["id"] for x in out):
            raise error(here + ("id",), f"id '{w['id']}' is declared twice")
        if not _CALLABLE.match(w["callable"]):
            raise error(here + ("callable",), f"callable '{w['callable']}' must be module:function")
        module = w["callable"].split(":", 1)[0].replace(".", "/")
        if not ((base / f"{module}.py").is_file() or (base / module / "__init__.py").is_file()):
            raise error(here + ("callable",), f"no module {module} under {base}")
        levels = w.get("levels", list(LEVELS))
        for key, values in (("levels", levels), ("hold", w.get("hold", levels))):
            if not isinstance(values, list) or any(v not in LEVELS for v in values):
                raise error(here + (key,), f"{key} must list levels of {', '.join(LEVELS)}")
        if any(h not in levels for h in w.get("hold", [])):
            raise error(here + ("hold",), "hold names a level that levels leaves out")
        settings = w.get("settings", {})
        if not isinstance(settings, dict):
            raise error(here + ("settings",), "settings must be a table { name = value }")
        for name, value in settings.items():
            known = SETTINGS.get(name)
            if known is None:
                raise error(here + ("settings", name), f"unknown setting '{name}' (known: {', '.join(SETTINGS)})")
            if name == "threads" and not (isinstance(value, int) and not isinstance(value, bool) and value > 0):
                raise error(here + ("settings", name), "threads must be a positive integer")
            if known[1] is not None and (value not in known[1] or type(value) is not type(known[1][0])):
                raise error(here + ("settings", name), f"{name} takes one of {', '.join(map(str, known[1]))}")
        numbers = {}
        for key, default in (("batch", 8), ("rows", 2)):
            v = w.get(key, default)
            if not isinstance(v, int) or isinstance(v, bool) or v < 1:
                raise error(here + (key,), f"{key} must be a positive integer")
            numbers[key] = v
        if numbers["rows"] >= numbers["batch"]:
            raise error(here + ("rows",), "rows must be fewer than batch: the batch level compares a slice")
        threads = w.get("threads", [1, 2])
        if not (isinstance(threads, list) and len(threads) >= 2
                and all(isinstance(t, int) and not isinstance(t, bool) and t > 0 for t in threads)):
            raise error(here + ("threads",), "threads must list at least two positive thread counts")
        rows_of = w.get("rows_of", ["output"])
        if not (isinstance(rows_of, list) and rows_of and all(isinstance(r, str) for r in rows_of)):
            raise error(here + ("rows_of",), "rows_of must name the step's tensors whose rows are per sample")
        out.append(Workload(id=w["id"], statement=w["statement"].strip(), callable=w["callable"], path=base.resolve(),
                            file=path.resolve(), line=index.line(here), levels=levels,
                            hold=w.get("hold", list(levels)), settings=settings, batch=numbers["batch"],
                            rows=numbers["rows"], threads=threads, rows_of=rows_of))
    return out


def load_all(paths: list[Path]) -> list[Workload]:
    """The workloads of every file, an id declared in two files refused at
    its second."""
    out: list[Workload] = []
    for path in paths:
        for w in load(path):
            twice = next((x for x in out if x.id == w.id), None)
            if twice is not None:
                raise SpecError(str(path), w.line, f"id '{w.id}' is declared in {twice.file}:{twice.line} too")
            out.append(w)
    return out


def main(argv: list[str]) -> int:
    """python3 -m inputs.workloads ctest FILE[:FILE...]...: each workload's
    id and file as a CMake list (id;file;id;file), for the ctest tests
    Workload.<id>; a bad declaration is one FILE:LINE: message, exit 2."""
    if len(argv) < 2 or argv[0] != "ctest":
        print("usage: python3 -m inputs.workloads ctest FILE...", file=sys.stderr)
        return 2
    files = [Path(p) for arg in argv[1:] for p in arg.split(":") if p]
    try:
        found = load_all(files)
    except SpecError as e:
        print(e, file=sys.stderr)
        return 2
    print(";".join(f"{w.id};{w.file}" for w in found), end="")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
