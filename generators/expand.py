"""Expanding validated suites into cases, each with a canonical repro string,
a readable gtest parameter name and a stable id."""

from __future__ import annotations

import hashlib
import itertools
from dataclasses import dataclass
from typing import Any

from .errors import SpecError
from .fixtures import BINARIES, FIXTURES
from .flags import Flag
from .problem import format_problem, parse_shape
from .spec import ENGINES, Spec, Suite


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


def case_repro(axes: dict[str, Any], shapes: dict[str, str], flags: dict[str, Flag]) -> str:
    """The canonical repro string of harness/case.cc for one point of the matrix."""
    engine = axes.get("engine", "auto")
    engine_name, _, algo = engine.partition(":")
    device = axes.get("device") or ENGINES[engine_name][0]
    problem = format_problem(axes.get("direction", "fwd"), axes.get("dtype", "f32"), parse_shape(shapes[axes["shape"]]))
    parts = [problem, f"device={device}", f"engine={engine_name}"]
    if algo:
        parts.append(f"algo={algo}")
    parts.append(f"threads={axes.get('threads', 1)}")
    for name, flag in flags.items():
        if name in axes and axes[name] != flag.default:
            parts.append(f"{name}={flag.format(axes[name])}")
    return " ".join(parts)


def _camel(text: str) -> str:
    words = "".join(c if c.isalnum() else " " for c in text).split()
    return "".join(w[:1].upper() + w[1:] for w in words)


def _name_part(axis: str, value: Any) -> str:
    if isinstance(value, bool):
        return _camel(axis) + ("On" if value else "Off")
    if axis == "threads":
        return f"T{value}"
    if isinstance(value, int):
        return _camel(axis) + str(value)
    return _camel(str(value))


def _excluded(point: dict[str, Any], rules: list[dict[str, list[Any]]]) -> bool:
    return any(all(point[a] in values for a, values in rule.items()) for rule in rules)


def expand_suite(suite: Suite, shapes: dict[str, str], flags: dict[str, Flag]) -> list[Case]:
    fixture = FIXTURES[suite.fixture]
    names = list(suite.axes)
    varying = [a for a in names if len(suite.axes[a]) > 1]
    cases: list[Case] = []
    seen: dict[str, str] = {}
    for values in itertools.product(*(suite.axes[a] for a in names)):
        point = dict(zip(names, values))
        if _excluded(point, suite.exclude):
            continue
        engine_name = point.get("engine", "auto").split(":", 1)[0]
        device = point.get("device") or ENGINES[engine_name][0]
        if device not in ENGINES[engine_name]:
            raise SpecError(suite.path, suite.line, f"suite '{suite.name}': engine {engine_name} does not run on {device}")
        if device not in fixture.devices:
            raise SpecError(suite.path, suite.line, f"suite '{suite.name}': fixture {fixture.name} does not run on {device}")
        repro = case_repro(point, shapes, flags)
        name = "_".join(_name_part(a, point[a]) for a in varying) or "Case"
        if name in seen:
            raise SpecError(suite.path, suite.line, f"suite '{suite.name}': two cases are named {name}")
        seen[name] = repro
        identity = f"{fixture.name}|{repro}|{suite.repeats}|{int(suite.positive_control)}"
        binary = fixture.binaries[device]
        cases.append(Case(
            id=hashlib.blake2b(identity.encode(), digest_size=8).hexdigest(),
            suite=suite.name, fixture=fixture.name, prefix=suite.prefix, binary=binary, name=name,
            test=f"{suite.prefix}/{fixture.name}.{fixture.test}/{name}", repro=repro, repeats=suite.repeats,
            positive_control=suite.positive_control, axes={**point, "device": device},
            labels=BINARIES[binary], spec=suite.path))
    if not cases:
        raise SpecError(suite.path, suite.line, f"suite '{suite.name}': the exclude rules remove every case")
    return cases


def expand(specs: list[Spec], flags: dict[str, Flag]) -> list[Case]:
    """All cases of all specs; suite names and gtest names must be unique."""
    cases: list[Case] = []
    suites: dict[str, str] = {}
    tests: set[str] = set()
    for spec in specs:
        for suite in spec.suites:
            if suite.name in suites:
                raise SpecError(suite.path, suite.line, f"suite name '{suite.name}' is already used in {suites[suite.name]}")
            suites[suite.name] = suite.path
            for case in expand_suite(suite, spec.shapes, flags):
                key = f"{case.binary}:{case.test}"
                if key in tests:
                    raise SpecError(suite.path, suite.line, f"test {case.test} is generated twice (prefix clash?)")
                tests.add(key)
                cases.append(case)
    return cases
