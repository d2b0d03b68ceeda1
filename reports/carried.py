"""What an evidence directory carries so that its report needs nothing else:
the manifest of the build that ran it (cases.json) and run.json (the
commit, the catalog's digest). `./backendcheck run` writes both into each
run directory; a directory copied from another machine reports with no
other argument, and one recorded with another catalog is named in one line
and judged --partial (a claim it holds no test of is not evaluated)."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

MANIFEST = "cases.json"
RUN = "run.json"


def catalog_digest(claims: Path) -> str:
    """The catalog's digest ("" where it cannot be read: its loader says why)."""
    try:
        return hashlib.blake2b(claims.read_bytes(), digest_size=16).hexdigest()
    except OSError:
        return ""


def write(run_dir: Path, manifest: Path, claims: Path, commit: str) -> None:
    """The manifest (where the build has one) and run.json, into a run
    directory as it starts."""
    if manifest.is_file():
        shutil.copyfile(manifest, run_dir / MANIFEST)
    (run_dir / RUN).write_text(json.dumps({"commit": commit, "catalog": catalog_digest(claims)}, indent=1) + "\n",
                               encoding="utf-8")


def _run(directory: Path) -> dict[str, Any]:
    try:
        data = json.loads((directory / RUN).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def manifest_of(evidence: list[Path]) -> Path | None:
    """The manifest the first evidence directory that carries one carries."""
    return next((d / MANIFEST for d in evidence if d.is_dir() and (d / MANIFEST).is_file()), None)


def other_catalogs(evidence: list[Path], claims: Path) -> list[str]:
    """One line for each evidence directory recorded with another catalog."""
    mine = catalog_digest(claims)
    if not mine:
        return []
    out = []
    for d in evidence:
        run = _run(d) if d.is_dir() else {}
        if run.get("catalog") and run["catalog"] != mine:
            out.append(f"{d}: recorded at commit {str(run.get('commit') or 'unknown')[:12]} with another catalog than "
                       f"{claims}'s: a claim whose tests it does not hold is not evaluated (judged as --partial)")
    return out
