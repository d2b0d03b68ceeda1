"""The words of a report, held to its readers' terms: no reason names a
source file of the harness or a call site ("at backends/pytorch/pytorch.cc:516"),
and no rule line reads "fact(s) hold" instead of saying which facts held.
The browser check applies it to every fresh report (./backendcheck test)."""

from __future__ import annotations

import re
from typing import Any

# A source file of the harness, with or without its line (pytorch.cc:516,
# runner/case_run.cc, torch_backends.py:448), or a call site ("at X:N").
SOURCE = re.compile(r"(?<![\w.-])[\w./-]*\.(?:cc|h|cu|py)(?::\d+)?(?![\w])|\bat \S+:\d+")
COUNTED = re.compile(r"\bfact\(s\) hold")


def reasons(data: dict[str, Any]) -> list[tuple[str, str]]:
    """(where, text) of every reason in report.json: each claim's, each of
    its platforms', its prediction's, and each documented entry's."""
    out = []
    for c in data.get("claims", []):
        out.append((f"claim {c['id']}", str(c.get("reason", ""))))
        out += [(f"claim {c['id']} on {p}", str(r)) for p, r in c.get("platform_reasons", {}).items()]
        if c.get("prediction"):
            out.append((f"claim {c['id']}'s prediction", str(c["prediction"].get("reason", ""))))
    for platform, listed in (data.get("documented") or {}).items():
        out += [(f"documented entry {e.get('id')} on {platform}", str(e.get("reason", "")))
                for e in listed.get("entries", [])]
    return out


def problems(data: dict[str, Any]) -> list[str]:
    """One line per reason that shows the harness's internals."""
    out = []
    for where, text in reasons(data):
        if (m := SOURCE.search(text)) is not None:
            out.append(f"{where}: its reason names the harness's source ({m.group(0)!r}): {text[:160]}")
        elif COUNTED.search(text):
            out.append(f"{where}: its reason counts facts instead of saying which held: {text[:160]}")
    return out
