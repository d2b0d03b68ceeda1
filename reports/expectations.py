"""Per-platform expectation files: the folklore and advice verdicts recorded
on one kind of platform (suites/expectations/SIGNATURE.toml), so that a
verdict that changes is flagged, and fails the tier that checks them.

    platform = "avx512_core_vnni-2t-torch2.15.0_cu132"
    torch = "2.15.0+cu132"   # the torch install the verdicts hold for
    [verdicts]
    bench-fixed-faster = "supported"
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from inputs.errors import SpecError, load_toml

from .evidence import Evidence, platform_of, torch_of
from .ruling import VERDICTS, Ruling
from .verdicts import Verdict

RECORDED_KINDS = ("folklore", "advice")


@dataclass
class Change:
    platform: str
    claim: str
    expected: str
    got: str


def _read(path: Path, known: set[str], torch: str) -> dict[str, str]:
    """The file's verdicts; `torch` is the version of the platform's torch
    install, which the file's own `torch` key (when it has one) must name."""
    text, doc = load_toml(path, "expectation file")
    lines = text.splitlines()

    def line_of(key: str) -> int:
        return next((i for i, ln in enumerate(lines, 1) if re.match(rf'\s*"?{re.escape(key)}"?\s*=', ln)), 1)

    for key in doc:
        if key not in ("platform", "torch", "verdicts"):
            raise SpecError(str(path), line_of(key), f"unknown key '{key}' (expected: platform, torch, verdicts)")
    if "torch" in doc and doc["torch"] != torch:
        raise SpecError(str(path), line_of("torch"), f"torch: the file holds for torch {doc['torch']!r}, but the "
                        f"platform it is named for runs torch {torch or 'none'!r}")
    verdicts = doc.get("verdicts", {})
    if not isinstance(verdicts, dict):
        raise SpecError(str(path), line_of("verdicts"), "verdicts must be a table of claim = \"verdict\"")
    for claim, verdict in verdicts.items():
        if claim not in known:
            raise SpecError(str(path), line_of(claim), f"unknown claim '{claim}'")
        if verdict not in VERDICTS:
            raise SpecError(str(path), line_of(claim), f"unknown verdict {verdict!r} (known: {', '.join(VERDICTS)})")
    return dict(verdicts)


def compare(directory: Path, verdicts: list[Verdict], evidence: Evidence, partial: bool) -> tuple[list[Change], list[str]]:
    """The changes against the expectation file of each platform, and the
    platforms that have none. Raises SpecError for a malformed file."""
    known = {v.claim.id for v in verdicts}
    changes: list[Change] = []
    missing: list[str] = []
    for platform, env in evidence.platform_env.items():
        path = directory / f"{platform_of(env)[1]}.toml"
        if not path.is_file():
            missing.append(f"{platform}: no {path}")
            continue
        expected = _read(path, known, torch_of(env))
        for v in verdicts:
            if v.claim.id not in expected:
                continue
            got = v.on(platform).verdict
            if got == Ruling.NOT_EVALUATED and partial:
                continue  # this run did not build the claim's cases
            if v.on(platform).withheld:
                continue  # timed on a busy machine: no verdict to hold against the file (the report says why)
            if got != expected[v.claim.id]:
                changes.append(Change(platform, v.claim.id, expected[v.claim.id], got))
    return changes, missing


def write(directory: Path, verdicts: list[Verdict], evidence: Evidence) -> list[Path]:
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for platform, env in evidence.platform_env.items():
        signature = platform_of(env)[1]
        torch = torch_of(env)
        lines = [f"# Folklore and advice verdicts recorded on {platform}"
                 + (f", with torch {torch} under test." if torch else "."),
                 "# Rewrite with: ./backendcheck run --tier nightly --write-expectations", "",
                 f'platform = "{signature}"'] + ([f'torch = "{torch}"'] if torch else []) + ["", "[verdicts]"]
        for v in verdicts:
            if v.claim.kind in RECORDED_KINDS and v.on(platform).verdict != Ruling.NOT_EVALUATED:
                lines.append(f'{v.claim.id} = "{v.on(platform).verdict}"')
        path = directory / f"{signature}.toml"
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        written.append(path)
    return written
