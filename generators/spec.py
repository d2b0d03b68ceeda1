"""Loading and validating a matrix spec.

A spec is TOML::

    [shapes]                      # named conv2d shapes (see suites/README.md)
    small = "mb2ic8ih14oc8kh3ph1"

    [[suite]]
    name = "cpu-determinism"      # unique across the specs of one run
    fixture = "Determinism"       # generators/fixtures.py
    prefix = "Cpu"                # gtest instantiation prefix
    repeats = 5                   # runs per case (default 1)
    positive_control = false      # the check must catch these as nondeterministic
    [suite.axes]                  # the Cartesian product of these lists
    direction = ["fwd", "bwd_weights"]
    engine = ["onednn", "reference:owner"]
    threads = [1, 2]
    shape = ["small"]
    "cudnn.benchmark" = [false, true]   # any flag of harness/flags.def
    [[suite.exclude]]             # drop the cases that match every key
    engine = "reference:owner"
    threads = 1

Every problem is reported as ``FILE:LINE: message`` through SpecError.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .errors import SpecError
from .fixtures import FIXTURES
from .flags import Flag, load_flags
from .locate import LineIndex
from .problem import DIRECTIONS, DTYPES, parse_shape

ENGINES = {"auto": ("cpu", "cuda"), "onednn": ("cpu",), "reference": ("cpu",), "cudnn": ("cuda",)}
DEVICES = ("cpu", "cuda")
SUITE_KEYS = {"name", "fixture", "prefix", "repeats", "positive_control", "axes", "exclude"}
TOP_KEYS = {"shapes", "suite"}
AXES = ("device", "direction", "dtype", "engine", "threads", "shape")
MAX_REPEATS = 1000
MAX_THREADS = 1024

@dataclass
class Suite:
    name: str
    fixture: str
    prefix: str
    repeats: int
    positive_control: bool
    axes: dict[str, list[Any]]  # in the order the spec gives them
    exclude: list[dict[str, list[Any]]]
    line: int
    path: str

@dataclass
class Spec:
    path: str
    shapes: dict[str, str] = field(default_factory=dict)
    suites: list[Suite] = field(default_factory=list)

class _Ctx:
    def __init__(self, path: str, index: LineIndex) -> None:
        self.path = path
        self.index = index

    def error(self, where: tuple[str | int, ...], message: str) -> SpecError:
        return SpecError(self.path, self.index.line(where), message)

def _read_text(path: Path) -> str:
    try:
        data = path.read_bytes()
    except OSError as e:
        raise SpecError(str(path), 1, f"cannot read spec: {e.strerror or e}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data[: e.start].count(b"\n") + 1
        raise SpecError(str(path), line, "not UTF-8 text: is this a TOML spec?") from None

def load_spec(path: Path, flags: dict[str, Flag] | None = None) -> Spec:
    flags = flags if flags is not None else load_flags()
    text = _read_text(path)
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        line = getattr(e, "lineno", None)
        msg = str(e)
        if line is None:

            m = re.search(r"\(at line (\d+), column \d+\)", msg)
            line = int(m.group(1)) if m else 1
            msg = re.sub(r"\s*\(at line \d+, column \d+\)", "", msg)
        raise SpecError(str(path), line, f"not valid TOML: {msg}") from None
    ctx = _Ctx(str(path), LineIndex(text))
    if not doc:
        raise SpecError(str(path), 1, "empty spec: it defines no [[suite]]")
    for key in doc:
        if key not in TOP_KEYS:
            raise ctx.error((key,), f"unknown top-level key '{key}' (expected: {', '.join(sorted(TOP_KEYS))})")
    spec = Spec(path=str(path))
    shapes = doc.get("shapes", {})
    if not isinstance(shapes, dict):
        raise ctx.error(("shapes",), "'shapes' must be a table of name = \"shape\"")
    for name, shape in shapes.items():
        if not isinstance(shape, str):
            raise ctx.error(("shapes", name), f"shape '{name}' must be a string such as \"mb2ic8ih14oc8kh3\"")
        try:
            parse_shape(shape)
        except ValueError as e:
            raise ctx.error(("shapes", name), str(e)) from None
        spec.shapes[name] = shape
    suites = doc.get("suite")
    if not isinstance(suites, list) or not suites:
        raise ctx.error(("suite",), "the spec defines no [[suite]]")
    for i, raw in enumerate(suites):
        spec.suites.append(_suite(ctx, i, raw, spec.shapes, flags))
    return spec

def _suite(ctx: _Ctx, i: int, raw: dict[str, Any], shapes: dict[str, str], flags: dict[str, Flag]) -> Suite:
    here = ("suite", i)
    for key in raw:
        if key not in SUITE_KEYS:
            raise ctx.error(here + (key,), f"unknown suite key '{key}' (expected: {', '.join(sorted(SUITE_KEYS))})")
    for key in ("name", "fixture", "axes"):
        if key not in raw:
            raise ctx.error(here, f"suite is missing '{key}'")
    name = raw["name"]
    if not isinstance(name, str) or not name or not all(c.isalnum() or c in "-_" for c in name):
        raise ctx.error(here + ("name",), "suite name must be a non-empty string of letters, digits, '-' and '_'")
    fixture = raw["fixture"]
    if fixture not in FIXTURES:
        raise ctx.error(here + ("fixture",), f"unknown fixture '{fixture}' (known: {', '.join(FIXTURES)})")
    prefix = raw.get("prefix", "Cases")
    if not isinstance(prefix, str) or not prefix.isidentifier() or "_" in prefix:
        raise ctx.error(here + ("prefix",), "prefix must be a CamelCase identifier without '_'")
    repeats = raw.get("repeats", 1)
    if not isinstance(repeats, int) or isinstance(repeats, bool) or not 1 <= repeats <= MAX_REPEATS:
        raise ctx.error(here + ("repeats",), f"repeats must be an integer in 1..{MAX_REPEATS}")
    control = raw.get("positive_control", False)
    if not isinstance(control, bool):
        raise ctx.error(here + ("positive_control",), "positive_control must be true or false")
    axes_raw = raw["axes"]
    if not isinstance(axes_raw, dict) or not axes_raw:
        raise ctx.error(here + ("axes",), "axes must be a table with at least one axis")
    axes: dict[str, list[Any]] = {}
    for axis, values in axes_raw.items():
        where = here + ("axes", axis)
        if not isinstance(values, list):
            values = [values]
        if not values:
            raise ctx.error(where, f"axis '{axis}' is empty: give at least one value")
        checked = [_axis_value(ctx, where, axis, v, shapes, flags) for v in values]
        if len(set(map(str, checked))) != len(checked):
            raise ctx.error(where, f"axis '{axis}' lists a value twice")
        axes[axis] = checked
    if "shape" not in axes:
        raise ctx.error(here + ("axes",), "axes must include 'shape'")
    exclude: list[dict[str, list[Any]]] = []
    rules = raw.get("exclude", [])
    if not isinstance(rules, list):
        raise ctx.error(here + ("exclude",), "exclude must be an array of tables ([[suite.exclude]])")
    for j, rule in enumerate(rules):
        where = here + ("exclude", j)
        if not isinstance(rule, dict) or not rule:
            raise ctx.error(where, "an exclude rule must be a non-empty table of axis = value(s)")
        parsed: dict[str, list[Any]] = {}
        for axis, values in rule.items():
            if axis not in axes:
                raise ctx.error(where + (axis,), f"exclude names '{axis}', which is not an axis of this suite")
            values = values if isinstance(values, list) else [values]
            parsed[axis] = [_axis_value(ctx, where + (axis,), axis, v, shapes, flags) for v in values]
        exclude.append(parsed)
    return Suite(name, fixture, prefix, repeats, control, axes, exclude, ctx.index.line(here), ctx.path)

def _axis_value(ctx: _Ctx, where: tuple[str | int, ...], axis: str, value: Any, shapes: dict[str, str],
                flags: dict[str, Flag]) -> Any:
    def bad(message: str) -> SpecError:
        return ctx.error(where, message)

    if axis == "device":
        if value not in DEVICES:
            raise bad(f"unknown device {value!r} (known: {', '.join(DEVICES)})")
    elif axis == "direction":
        if value not in DIRECTIONS:
            raise bad(f"unknown direction {value!r} (known: {', '.join(DIRECTIONS)})")
    elif axis == "dtype":
        if value not in DTYPES:
            raise bad(f"unknown dtype {value!r} (known: {', '.join(DTYPES)})")
    elif axis == "engine":
        if not isinstance(value, str) or value.split(":", 1)[0] not in ENGINES:
            raise bad(f"unknown engine {value!r} (known: {', '.join(ENGINES)}, optionally ENGINE:ALGORITHM)")
        if ":" in value and (value.startswith("auto") or not value.split(":", 1)[1].replace("_", "").isalnum()):
            raise bad(f"bad engine:algorithm {value!r}")
    elif axis == "threads":
        if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= MAX_THREADS:
            raise bad(f"threads must be integers in 1..{MAX_THREADS}, not {value!r}")
    elif axis == "shape":
        if value not in shapes:
            raise bad(f"unknown shape {value!r}: define it under [shapes]")
    elif axis in flags:
        flag = flags[axis]
        if flag.type == "bool" and not isinstance(value, bool):
            raise bad(f"flag '{axis}' takes true or false, not {value!r}")
        if flag.type == "int" and (not isinstance(value, int) or isinstance(value, bool) or value < 0):
            raise bad(f"flag '{axis}' takes a non-negative integer, not {value!r}")
    else:
        raise bad(f"unknown axis or flag '{axis}' (axes: {', '.join(AXES)}; flags: {', '.join(flags)})")
    return value
