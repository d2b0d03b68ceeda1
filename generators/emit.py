"""Writing the case tables (one C++ file per test binary) and the manifest."""

from __future__ import annotations

import json
import os
from pathlib import Path

import jinja2

from .expand import Case
from .fixtures import BINARIES, FIXTURES

TEMPLATES = Path(__file__).resolve().parent / "templates"
MANIFEST_SCHEMA = 1


def _environment() -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES), undefined=jinja2.StrictUndefined,
                             keep_trailing_newline=True, trim_blocks=True, lstrip_blocks=True)
    # Case strings are validated ASCII; json.dumps gives a valid C string literal for them.
    env.filters["cstr"] = lambda s: json.dumps(str(s), ensure_ascii=True)
    env.filters["json"] = lambda v: json.dumps(v, sort_keys=True, ensure_ascii=True)
    return env


def _write_if_changed(path: Path, text: str) -> None:
    """Leaves unchanged outputs untouched, so Ninja rebuilds only what changed."""
    if path.exists() and path.read_text(encoding="utf-8") == text:
        return
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def emit(cases: list[Case], out: Path, specs: list[str]) -> None:
    out.mkdir(parents=True, exist_ok=True)
    template = _environment().get_template("cases.cc.j2")
    for binary in BINARIES:
        mine = [c for c in cases if c.binary == binary]
        groups: dict[tuple[str, str], list[Case]] = {}
        for c in mine:
            groups.setdefault((c.prefix, c.fixture), []).append(c)
        fixtures = sorted({f.name for f in FIXTURES.values() if binary in f.binaries.values()})
        text = template.render(binary=binary, specs=specs, fixtures=fixtures,
                               groups=[{"prefix": p, "fixture": f, "cases": cs, "var": f"k{p}{f}Cases",
                                        "test": FIXTURES[f].test} for (p, f), cs in groups.items()])
        _write_if_changed(out / f"{binary}_cases.cc", text)
    manifest = {
        "schema": MANIFEST_SCHEMA,
        "specs": specs,
        "cases": [{
            "id": c.id, "suite": c.suite, "fixture": c.fixture, "binary": c.binary, "test": c.test,
            "name": c.name, "repro": c.repro, "repeats": c.repeats, "positive_control": c.positive_control,
            "axes": c.axes, "labels": list(c.labels), "spec": c.spec, "options": c.options,
        } for c in cases],
    }
    # Compact: json's C encoder runs only without indentation (10,000 cases in well under a second).
    _write_if_changed(out / "cases.json", json.dumps(manifest, sort_keys=True, separators=(",", ":")) + "\n")
