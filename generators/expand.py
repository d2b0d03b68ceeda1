"""Expanding validated suites into cases, each with a canonical repro string,
a readable gtest parameter name and a stable id."""

from __future__ import annotations

import functools
import hashlib
import itertools
import math
import os
from dataclasses import dataclass
from typing import Any

from inputs.errors import SpecError
from inputs.tiers import tier_labels

from .fixtures import BINARIES, FIXTURES
from inputs.flags import Flag, load_flags
from .problem import canonical_case, problem
from .spec import ENGINES, TIERS, Spec, Suite

MAX_CASES = 20000  # the default cap; the largest default tier has a few hundred


@dataclass
class Case:
    id: str
    suite: str
    fixture: str
    prefix: str
    binary: str
    name: str
    test: str  # the full gtest name: Prefix/Fixture.Test/name
    repro: str
    repeats: int
    positive_control: bool
    axes: dict[str, Any]
    labels: tuple[str, ...]
    spec: str
    options: dict[str, Any]


def _problem(shape: str, axes: dict[str, Any]) -> str:
    return problem(shape, axes.get("direction", "fwd"), axes.get("dtype", "f32"), axes.get("layout", "nchw"))["repro"]


def case_repro(axes: dict[str, Any], spec: Spec, flags: dict[str, Flag]) -> str:
    """The canonical repro string of one point of the matrix, as harness/case.cc writes it (asked of bc_problem)."""
    engine = axes.get("engine", "auto")
    engine_name, _, algo = engine.partition(":")
    if engine_name == "select":  # select:ENGINE restricts the pool; it is one engine name
        engine_name, algo = engine, ""
    device = axes.get("device") or default_device(engine)
    names = spec.schedules[axes["schedule"]] if "schedule" in axes else [axes["shape"]]
    steps = [_problem(spec.shapes[n], axes) for n in names]
    parts = [",".join(f"{step}*{len(list(run))}" for step, run in itertools.groupby(steps)), f"device={device}",
             f"engine={engine_name}", f"threads={axes.get('threads', 1)}"]
    if algo:
        parts.append(f"algo={algo}")
    parts += [f"{name}={flag.format(axes[name])}" for name, flag in flags.items() if name in axes]
    parts += [f"{name}={axes[name]}" for name in axes if name.startswith("env.") and axes[name]]
    return canonical_case(" ".join(parts))


@functools.lru_cache(maxsize=None)
def _camel(text: str) -> str:
    words = "".join(c if c.isalnum() else " " for c in text).split()
    return "".join(w[:1].upper() + w[1:] for w in words)


@functools.lru_cache(maxsize=None)
def _name_part(axis: str, value: Any) -> str:
    if isinstance(value, bool):
        return _camel(axis) + ("On" if value else "Off")
    if axis == "threads":
        return f"T{value}"
    if isinstance(value, int):
        return _camel(axis) + str(value)
    if axis.startswith("env."):
        return _camel(axis[4:].lower()) + (_camel(value) or "Inherited")
    if axis in _str_flag_names():  # "ieee" says nothing without the setting it is for
        return _camel(axis) + _camel(value)
    return _camel(str(value))


@functools.lru_cache(maxsize=None)
def _str_flag_names() -> frozenset[str]:
    return frozenset(name for name, flag in load_flags().items() if flag.type == "str")


def default_device(engine: str) -> str:
    """The device an engine value implies when the spec gives none."""
    head, _, tail = engine.partition(":")
    return ENGINES[tail if head == "select" and tail else head][0]


def name_of(point: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in point.items())


def _matches(point: dict[str, Any], rule: dict[str, list[Any]]) -> bool:
    return all(point[a] in values for a, values in rule.items())


def _excluded(point: dict[str, Any], suite: Suite) -> bool:
    """Dropped by an exclude rule, or by an only_if whose `if` holds and `then` does not."""
    return any(_matches(point, rule) for rule in suite.exclude) or any(
        _matches(point, cond) and not _matches(point, then) for cond, then in suite.only_if)


def max_cases() -> int:
    """The most cases the specs of one build may expand to: MAX_CASES, or
    BACKENDCHECK_MAX_CASES (--max-cases) to raise it."""
    raw = os.environ.get("BACKENDCHECK_MAX_CASES", "")
    return int(raw) if raw.isdigit() and int(raw) > 0 else MAX_CASES


def expand_suite(suite: Suite, spec: Spec, flags: dict[str, Flag], limit: int | None = None) -> list[Case]:
    fixture = FIXTURES[suite.fixture]
    names = list(suite.axes)
    limit = max_cases() if limit is None else limit
    combinations = math.prod(len(suite.axes[a]) for a in names)
    if combinations > limit:
        raise SpecError(suite.path, suite.line, f"suite '{suite.name}' expands to {combinations} combinations, more "
                                                f"than the {limit} cases a build may have (raise it with --max-cases N)")
    varying = [a for a in names if len(suite.axes[a]) > 1]
    cases: list[Case] = []
    seen: dict[str, str] = {}
    for values in itertools.product(*(suite.axes[a] for a in names)):
        point = dict(zip(names, values))
        if _excluded(point, suite):
            continue
        engine = point.get("engine", "auto")
        head, _, tail = engine.partition(":")
        engine_name = tail if head == "select" and tail else head
        device = point.get("device") or default_device(engine)
        if device not in ENGINES[engine_name]:
            raise SpecError(suite.path, suite.line, f"suite '{suite.name}': engine {engine_name} does not run on {device}")
        if device not in fixture.devices:
            raise SpecError(suite.path, suite.line, f"suite '{suite.name}': fixture {fixture.name} does not run on {device}")
        steps = spec.schedules[point["schedule"]] if "schedule" in point else [point["shape"]]
        for shape_name in dict.fromkeys(steps):
            need = problem(spec.shapes[shape_name])["bytes"]
            if need > spec.memory_budget:
                raise SpecError(suite.path, spec.shape_lines.get(shape_name, suite.line),
                                f"shape '{shape_name}' needs {need} bytes of buffers, over the memory budget of "
                                f"{spec.memory_budget} bytes (memory_budget_mib = {spec.memory_budget >> 20})")
        try:
            repro = case_repro(point, spec, flags)
        except ValueError as e:
            raise SpecError(suite.path, suite.line, f"suite '{suite.name}': {e}") from None
        options = dict(suite.options)
        versus = options.pop("versus", None)
        if versus is not None:
            options["versus"] = case_repro({**point, **versus}, spec, flags)
            options["versus_flags"] = dict(versus)
            if options["versus"] == repro:
                raise SpecError(suite.path, suite.line,
                                f"suite '{suite.name}': versus changes nothing for {name_of(point)}")
        name = "_".join(_name_part(a, point[a]) for a in varying) or "Case"
        if name in seen:
            raise SpecError(suite.path, suite.line, f"suite '{suite.name}': two cases are named {name}")
        seen[name] = repro
        identity = f"{fixture.name}|{repro}|{suite.repeats}|{int(suite.positive_control)}|{sorted(options.items())}"
        if "replicate" in point:
            identity += f"|replicate {point['replicate']}"
        binary = fixture.binaries[device]
        cases.append(Case(
            id=hashlib.blake2b(identity.encode(), digest_size=8).hexdigest(),
            suite=suite.name, fixture=fixture.name, prefix=suite.prefix, binary=binary, name=name,
            test=f"{suite.prefix}/{fixture.name}.{fixture.test}/{name}", repro=repro, repeats=suite.repeats,
            positive_control=suite.positive_control, axes={**point, "device": device},
            labels=tuple(dict.fromkeys(BINARIES[binary] + tier_labels(suite.tier) + suite.labels)), spec=suite.path,
            options=options))
    if not cases:
        raise SpecError(suite.path, suite.line, f"suite '{suite.name}': the exclude and only_if rules remove every case")
    return cases


def expand(specs: list[Spec], flags: dict[str, Flag], tier: str = "nightly") -> list[Case]:
    """All cases of the specs' suites up to `tier`; suite names and gtest names must be unique."""
    cases: list[Case] = []
    suites: dict[str, str] = {}
    tests: set[str] = set()
    limit = max_cases()
    for spec in specs:
        for suite in spec.suites:
            if suite.name in suites:
                raise SpecError(suite.path, suite.line, f"suite name '{suite.name}' is already used in {suites[suite.name]}")
            suites[suite.name] = suite.path
            if TIERS.index(suite.tier) > TIERS.index(tier):
                continue
            for case in expand_suite(suite, spec, flags, limit - len(cases)):
                key = f"{case.binary}:{case.test}"
                if key in tests:
                    raise SpecError(suite.path, suite.line, f"test {case.test} is generated twice (prefix clash?)")
                tests.add(key)
                cases.append(case)
    return cases
