"""Loading and validating a matrix spec (the language: catalog/README.md).

Every problem is reported as ``FILE:LINE: message`` through SpecError.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from inputs.engines import engines as registered_engines
from inputs.errors import SpecError, load_toml
from inputs.locate import LineIndex
from inputs.tiers import TIERS

from .fixtures import CHECKS, FIXTURE_OPTIONS, FIXTURES
from inputs.flags import Flag, load_flags
from .problem import describe, from_values, op_fields, problem
from .tables import TABLES, table_shapes

# The engine field's names and the devices each may run on: auto and select,
# then every engine of backends/engines.def.
ENGINES = {"auto": ("cpu", "cuda"), "select": ("cpu", "cuda"),
           **{e.name: (e.device,) for e in registered_engines().values()}}
DEVICES = ("cpu", "cuda")
SUITE_KEYS = {"name", "fixture", "prefix", "repeats", "positive_control", "axes", "exclude", "only_if", "tier",
              "labels", "checks"} | {
    k for keys in FIXTURE_OPTIONS.values() for k in keys}
TOP_KEYS = {"shapes", "schedules", "suite", "memory_budget_mib"}
DEFAULT_MEMORY_BUDGET_MIB = 4096
AXES = ("device", "direction", "dtype", "layout", "engine", "threads", "shape", "schedule", "replicate")
# A replicate runs the same case again as a test of its own, in a process of
# its own: it enters the test's name and identity, never the repro.
MAX_REPLICATES = 20
EXPECT = ("observe", "same_choice", "same_digest")
MAX_REPEATS = 1000
MAX_THREADS = 1024
MAX_STEPS = 100000
MAX_PROCESSES = 100


@dataclass
class Suite:
    name: str
    fixture: str
    prefix: str
    repeats: int
    positive_control: bool
    axes: dict[str, list[Any]]  # in the order the spec gives them
    exclude: list[dict[str, list[Any]]]
    only_if: list[tuple[dict[str, list[Any]], dict[str, list[Any]]]]  # (if, then) pairs
    line: int
    path: str
    options: dict[str, Any] = field(default_factory=dict)  # fixture-specific (FIXTURE_OPTIONS)
    tier: str = "ci"
    labels: tuple[str, ...] = ()


@dataclass
class Spec:
    path: str
    shapes: dict[str, str] = field(default_factory=dict)
    schedules: dict[str, list[str]] = field(default_factory=dict)  # name -> shape names, one per step
    groups: dict[str, list[str]] = field(default_factory=dict)     # table name -> its shape names
    suites: list[Suite] = field(default_factory=list)
    shape_lines: dict[str, int] = field(default_factory=dict)
    memory_budget: int = DEFAULT_MEMORY_BUDGET_MIB << 20  # bytes of one case's host buffers


class _Ctx:
    def __init__(self, path: str, index: LineIndex) -> None:
        self.path = path
        self.index = index

    def error(self, where: tuple[str | int, ...], message: str) -> SpecError:
        return SpecError(self.path, self.index.line(where), message)


def load_spec(path: Path, flags: dict[str, Flag] | None = None) -> Spec:
    flags = flags if flags is not None else load_flags()
    text, doc = load_toml(path)
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
        if isinstance(shape, dict):
            _table(ctx, name, shape, spec)
            continue
        if not isinstance(shape, str):
            raise ctx.error(("shapes", name), f"shape '{name}' must be a string such as \"mb2ic8ih14oc8kh3\"")
        try:
            problem(shape)
        except ValueError as e:
            raise ctx.error(("shapes", name), str(e)) from None
        spec.shapes[name] = shape
        spec.shape_lines[name] = ctx.index.line(("shapes", name))
    budget = doc.get("memory_budget_mib", DEFAULT_MEMORY_BUDGET_MIB)
    if not isinstance(budget, int) or isinstance(budget, bool) or not 1 <= budget <= 1 << 30:
        raise ctx.error(("memory_budget_mib",), "memory_budget_mib must be a positive integer (MiB)")
    spec.memory_budget = budget << 20
    schedules = doc.get("schedules", {})
    if not isinstance(schedules, dict):
        raise ctx.error(("schedules",), "'schedules' must be a table of name = { shape, steps } or { shapes }")
    for name, raw in schedules.items():
        spec.schedules[name] = _schedule(ctx, name, raw, spec)
    suites = doc.get("suite")
    if not isinstance(suites, list) or not suites:
        raise ctx.error(("suite",), "the spec defines no [[suite]]")
    for i, raw in enumerate(suites):
        spec.suites.append(_suite(ctx, i, raw, spec, flags))
    return spec


def _table(ctx: _Ctx, name: str, raw: dict[str, Any], spec: Spec) -> None:
    """``{ table = "resnet50", mb = 8 }``: the table's layers as shapes NAME_LAYER, and NAME as their group."""
    where = ("shapes", name)
    table = raw.get("table")
    if table not in TABLES:
        raise ctx.error(where, f"shape '{name}': table must be one of {', '.join(TABLES)}")
    size_key, default, _ = TABLES[table]
    if set(raw) - {"table", size_key}:
        raise ctx.error(where, f"shape '{name}': table {table} takes only '{size_key}'")
    size = raw.get(size_key, default)
    if not isinstance(size, int) or isinstance(size, bool) or size < 1:
        raise ctx.error(where, f"shape '{name}': {size_key} must be a positive integer")
    spec.groups[name] = [_add_derived_shape(ctx, spec, where, f"{name}_{layer}", shape, f"shape '{name}' layer {layer}")
                         for layer, shape in table_shapes(table, size).items()]


def _add_derived_shape(ctx: _Ctx, spec: Spec, where: tuple[str | int, ...], member: str, shape: str,
                       what: str) -> str:
    """Validates a shape a table or a random schedule made, and registers it under `member`."""
    try:
        problem(shape)
    except ValueError as e:
        raise ctx.error(where, f"{what} ({shape}): {e}") from None
    spec.shapes[member] = shape
    spec.shape_lines[member] = ctx.index.line(where)
    return member


def _random_steps(ctx: _Ctx, name: str, raw: Any, spec: Spec) -> list[str]:
    """``{ seed = S, steps = N, mb = [lo, hi], ... }``: N conv shapes drawn from the ranges, the same for a seed."""
    where = ("schedules", name)
    if not isinstance(raw, dict) or "seed" not in raw or "steps" not in raw:
        raise ctx.error(where, f"schedule '{name}': random needs seed, steps and [lo, hi] ranges of conv fields")
    seed, steps = raw["seed"], raw["steps"]
    if not isinstance(seed, int) or not isinstance(steps, int) or not 1 <= steps <= MAX_STEPS:
        raise ctx.error(where, f"schedule '{name}': seed must be an integer, steps in 1..{MAX_STEPS}")
    ranges = {k: v for k, v in raw.items() if k not in ("seed", "steps")}
    for key, r in ranges.items():
        if key not in op_fields("conv2d") or not (isinstance(r, list) and len(r) == 2
                                                  and all(isinstance(x, int) for x in r) and 0 <= r[0] <= r[1]):
            raise ctx.error(where, f"schedule '{name}': '{key}' must be a conv field with a [lo, hi] integer range")
    for required in op_fields("conv2d", required_only=True):
        ranges.setdefault(required, [1, 1])
    rng = random.Random(seed)
    members = []
    for i in range(steps):
        values = {k: rng.randint(*ranges[k]) for k in op_fields("conv2d") if k in ranges}
        try:
            shape = from_values("conv2d", values)["spec"]
        except ValueError as e:
            raise ctx.error(where, f"schedule '{name}' step {i} (narrow the ranges): {e}") from None
        members.append(_add_derived_shape(ctx, spec, where, f"{name}_step{i}", shape, f"schedule '{name}' step {i}"))
    return members


def _schedule(ctx: _Ctx, name: str, raw: Any, spec: Spec) -> list[str]:
    """``{ shape = "s", steps = N }`` (fixed), ``{ shapes = ["a", "b"] }`` (varying), or
    ``{ random = { seed, steps, ranges } }`` (seeded random)."""
    where = ("schedules", name)
    shapes = spec.shapes
    if not isinstance(raw, dict) or set(raw) - {"shape", "steps", "shapes", "random"}:
        raise ctx.error(where, f"schedule '{name}' must be {{ shape = NAME, steps = N }}, {{ shapes = [NAMES] }} "
                               "or { random = {...} }")
    if "random" in raw:
        if len(raw) != 1:
            raise ctx.error(where, f"schedule '{name}': random stands alone")
        return _random_steps(ctx, name, raw["random"], spec)
    if "shapes" in raw:
        if "shape" in raw or "steps" in raw:
            raise ctx.error(where, f"schedule '{name}' gives both 'shapes' and 'shape'/'steps'")
        steps = raw["shapes"]
        if not isinstance(steps, list) or not steps:
            raise ctx.error(where, f"schedule '{name}': 'shapes' must be a non-empty list of shape names")
    else:
        count = raw.get("steps", 1)
        if not isinstance(count, int) or isinstance(count, bool) or not 1 <= count <= MAX_STEPS:
            raise ctx.error(where, f"schedule '{name}': steps must be an integer in 1..{MAX_STEPS}")
        steps = [raw.get("shape")] * count
    if len(steps) > MAX_STEPS:
        raise ctx.error(where, f"schedule '{name}' has more than {MAX_STEPS} steps")
    for step in steps:
        if step not in shapes:
            raise ctx.error(where, f"schedule '{name}' names unknown shape {step!r}: define it under [shapes]")
    return list(steps)


def _suite(ctx: _Ctx, i: int, raw: dict[str, Any], spec: Spec, flags: dict[str, Flag]) -> Suite:
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
    allowed = FIXTURE_OPTIONS.get(fixture, ())
    for key in raw:
        if key not in allowed and any(key in keys for keys in FIXTURE_OPTIONS.values()):
            raise ctx.error(here + (key,), f"'{key}' is not an option of fixture {fixture}")
    options = _options(ctx, here, raw, fixture, flags)
    if "checks" in raw:
        checks = raw["checks"]
        if not isinstance(checks, list) or not checks or not all(isinstance(c, str) for c in checks):
            raise ctx.error(here + ("checks",), f"checks must be a non-empty list of {', '.join(CHECKS)}")
        for c in checks:
            if c not in CHECKS:
                raise ctx.error(here + ("checks",), f"unknown check '{c}' (known: {', '.join(CHECKS)})")
            if c not in FIXTURES[fixture].checks:
                raise ctx.error(here + ("checks",), f"fixture {fixture} has no '{c}' check "
                                                    f"(it has: {', '.join(FIXTURES[fixture].checks)})")
        if len(set(checks)) != len(checks):
            raise ctx.error(here + ("checks",), "checks lists a check twice")
        if set(checks) != set(FIXTURES[fixture].checks):  # the default (all) leaves case ids as they were
            options["checks"] = [c for c in FIXTURES[fixture].checks if c in checks]
    prefix = raw.get("prefix", "Cases")
    if not isinstance(prefix, str) or not prefix.isidentifier() or "_" in prefix:
        raise ctx.error(here + ("prefix",), "prefix must be a CamelCase identifier without '_'")
    repeats = raw.get("repeats", 1)
    if not isinstance(repeats, int) or isinstance(repeats, bool) or not 1 <= repeats <= MAX_REPEATS:
        raise ctx.error(here + ("repeats",), f"repeats must be an integer in 1..{MAX_REPEATS}")
    tier = raw.get("tier", "ci")
    if tier not in TIERS:
        raise ctx.error(here + ("tier",), f"tier must be one of {', '.join(TIERS)}")
    labels = raw.get("labels", [])
    if not isinstance(labels, list) or not all(isinstance(x, str) and re.fullmatch(r"[a-z0-9][a-z0-9_-]*", x)
                                               for x in labels):
        raise ctx.error(here + ("labels",), "labels must be a list of lower-case words (letters, digits, '-', '_')")
    control = raw.get("positive_control", False)
    if not isinstance(control, bool):
        raise ctx.error(here + ("positive_control",), "positive_control must be true or false")
    if control and "bitwise" not in options.get("checks", ["bitwise"]):
        raise ctx.error(here + ("checks",), "a positive control is caught by the bitwise check: keep 'bitwise'")
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
        if axis == "shape":  # a table's name stands for all its layers
            values = [m for v in values for m in (spec.groups[v] if isinstance(v, str) and v in spec.groups else [v])]
        checked = [_axis_value(ctx, where, axis, v, spec, flags) for v in values]
        if len(set(map(str, checked))) != len(checked):
            raise ctx.error(where, f"axis '{axis}' lists a value twice")
        axes[axis] = checked
    if ("shape" in axes) == ("schedule" in axes):
        raise ctx.error(here + ("axes",), "axes must include exactly one of 'shape' and 'schedule'")
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
            parsed[axis] = [_axis_value(ctx, where + (axis,), axis, v, spec, flags) for v in values]
        exclude.append(parsed)
    only_if: list[tuple[dict[str, list[Any]], dict[str, list[Any]]]] = []
    conditions = raw.get("only_if", [])
    if not isinstance(conditions, list):
        raise ctx.error(here + ("only_if",), "only_if must be an array of tables ([[suite.only_if]])")
    for j, rule in enumerate(conditions):
        where = here + ("only_if", j)
        if not isinstance(rule, dict) or set(rule) != {"if", "then"}:
            raise ctx.error(where, "an only_if rule is { if = { axis = value(s) }, then = { axis = value(s) } }")
        parts = []
        for part in ("if", "then"):
            if not isinstance(rule[part], dict) or not rule[part]:
                raise ctx.error(where, f"only_if '{part}' must be a non-empty table of axis = value(s)")
            parsed_part: dict[str, list[Any]] = {}
            for axis, values in rule[part].items():
                if axis not in axes:
                    raise ctx.error(where, f"only_if names '{axis}', which is not an axis of this suite")
                values = values if isinstance(values, list) else [values]
                parsed_part[axis] = [_axis_value(ctx, where, axis, v, spec, flags) for v in values]
            parts.append(parsed_part)
        only_if.append((parts[0], parts[1]))
    return Suite(name, fixture, prefix, repeats, control, axes, exclude, only_if, ctx.index.line(here), ctx.path,
                 options, tier, tuple(labels))


def _options(ctx: _Ctx, here: tuple[str | int, ...], raw: dict[str, Any], fixture: str,
             flags: dict[str, Flag]) -> dict[str, Any]:
    options: dict[str, Any] = {}
    if fixture == "Compare":
        versus = raw.get("versus")
        if not isinstance(versus, dict) or not versus:
            raise ctx.error(here + ("versus",), "a Compare suite needs versus = { flag = value, ... }: what B changes")
        for flag, value in versus.items():
            if flag not in flags:
                raise ctx.error(here + ("versus", flag), f"versus names unknown flag '{flag}'")
            _flag_value(ctx, here + ("versus", flag), flags[flag], value)
        options["versus"] = dict(versus)
        reps = raw.get("reps", 9)
        if not isinstance(reps, int) or isinstance(reps, bool) or not 3 <= reps <= 1000:
            raise ctx.error(here + ("reps",), "reps must be an integer in 3..1000")
        options["reps"] = reps
    elif fixture == "CrossProcess":
        processes = raw.get("processes", 10)
        if not isinstance(processes, int) or isinstance(processes, bool) or not 1 <= processes <= MAX_PROCESSES:
            raise ctx.error(here + ("processes",), f"processes must be an integer in 1..{MAX_PROCESSES}")
        env = raw.get("env", [{}])
        if not isinstance(env, list) or not env or not all(isinstance(e, dict) for e in env):
            raise ctx.error(here + ("env",), "env must be a list of tables of VARIABLE = \"value\"")
        for e in env:
            for var, value in e.items():
                if not re.fullmatch(r"[A-Z_][A-Z0-9_]*", var) or not isinstance(value, str):
                    raise ctx.error(here + ("env",), f"env entry {var!r} must be an upper-case name with a string value")
        expect = raw.get("expect", "observe")
        if expect not in EXPECT:
            raise ctx.error(here + ("expect",), f"expect must be one of {', '.join(EXPECT)}")
        options.update(processes=processes, env=env, expect=expect)
    return options


def _flag_value(ctx: _Ctx, where: tuple[str | int, ...], flag: Flag, value: Any) -> None:
    if not flag.accepts(value):
        takes = {"bool": "true or false", "int": "a non-negative integer",
                 "str": "a lower-case word (such as \"ieee\" or \"tf32\")"}[flag.type]
        raise ctx.error(where, f"flag '{flag.name}' takes {takes}, not {value!r}")


def _axis_value(ctx: _Ctx, where: tuple[str | int, ...], axis: str, value: Any, spec: Spec,
                flags: dict[str, Flag]) -> Any:
    def bad(message: str) -> SpecError:
        return ctx.error(where, message)

    if axis == "device":
        if value not in DEVICES:
            raise bad(f"unknown device {value!r} (known: {', '.join(DEVICES)})")
    elif axis in ("direction", "dtype", "layout"):
        known = describe()[axis + "s"]  # as harness/problem.cc spells them
        if value not in known:
            raise bad(f"unknown {axis} {value!r} (known: {', '.join(known)})")
    elif axis == "engine":
        if not isinstance(value, str) or value.split(":", 1)[0] not in ENGINES:
            raise bad(f"unknown engine {value!r} (known: {', '.join(ENGINES)}, optionally ENGINE:ALGORITHM)")
        head, _, tail = value.partition(":")
        if value.count(":") > 1 or head == "auto" and tail or (":" in value and not tail.replace("_", "").isalnum()):
            raise bad(f"bad engine {value!r} (ENGINE, ENGINE:ALGORITHM, select or select:ENGINE)")
        if head == "select" and tail and tail not in ENGINES:
            raise bad(f"select:{tail} names an unknown engine")
    elif axis == "threads":
        if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= MAX_THREADS:
            raise bad(f"threads must be integers in 1..{MAX_THREADS}, not {value!r}")
    elif axis == "replicate":
        if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= MAX_REPLICATES:
            raise bad(f"replicate must be integers in 1..{MAX_REPLICATES}, not {value!r}")
    elif axis == "shape":
        if value not in spec.shapes:
            raise bad(f"unknown shape {value!r}: define it under [shapes]")
    elif axis == "schedule":
        if value not in spec.schedules:
            raise bad(f"unknown schedule {value!r}: define it under [schedules]")
    elif axis in flags:
        _flag_value(ctx, where, flags[axis], value)
    elif axis.startswith("env."):
        if not re.fullmatch(r"[A-Z_][A-Z0-9_]*", axis[4:]):
            raise bad(f"environment axis '{axis}' needs an upper-case variable name after 'env.'")
        if not isinstance(value, str) or any(c.isspace() for c in value):
            raise bad(f"'{axis}' takes strings without spaces (\"\" leaves the variable as inherited), not {value!r}")
    else:
        raise bad(f"unknown axis or flag '{axis}' (axes: {', '.join(AXES)}, env.NAME; flags: {', '.join(flags)})")
    return value
