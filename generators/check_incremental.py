"""Checks that the build regenerates case tables only when a spec or a
template changes, and that a regeneration with the same result recompiles
nothing.

    python3 -m generators.check_incremental BUILD_DIR SPEC TEMPLATE

Steps: an up-to-date build does no work; touching the spec runs the generator
and nothing else (unchanged outputs keep their modification times); touching
the template does the same. Exit 0 when all hold, 1 with the step that failed.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

_WORK = ("Building", "Linking", "Expanding")


def _build(build: Path) -> list[str]:
    out = subprocess.run(["ninja", "-C", str(build)], capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise SystemExit(f"{build}: ninja failed:\n{out.stdout[-2000:]}{out.stderr[-2000:]}")
    return [line for line in out.stdout.splitlines() if any(w in line for w in _WORK)]


def _touch(path: Path) -> None:
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, max(st.st_mtime_ns, time.time_ns()) + 1_000_000_000))


def main(argv: list[str]) -> int:
    build, spec, template = (Path(a) for a in argv)
    tables = sorted((build / "generated").glob("*_cases.cc"))
    if not tables:
        print(f"{build}/generated: no case tables: is this a configured build?")
        return 1
    _build(build)  # settle whatever an earlier edit left
    steps = [("an up-to-date build", None, []),
             (f"after touching {spec.name}", spec, ["Expanding the matrix specs into case tables"]),
             (f"after touching {template.name}", template, ["Expanding the matrix specs into case tables"])]
    for what, path, expected in steps:
        before = {t: t.stat().st_mtime_ns for t in tables}
        if path is not None:
            _touch(path)
        work = _build(build)
        ran = [w.split("] ", 1)[-1] for w in work]
        if ran != expected:
            print(f"{what}: expected {expected or 'no work'}, ninja ran {ran}")
            return 1
        changed = [t.name for t in tables if t.stat().st_mtime_ns != before[t]]
        if changed:
            print(f"{what}: unchanged tables were rewritten: {', '.join(changed)}")
            return 1
        print(f"{what}: ran {ran or 'nothing'}; case tables untouched")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
