"""oneDNN's CPU ISA names, read from backends/onednn/isa.def (the one table,
also the oneDNN engine's): the name oneDNN's own header gives each value of
dnnl_cpu_isa_t, by major version."""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

ISA_DEF = Path(__file__).resolve().parent.parent / "backends" / "onednn" / "isa.def"
_ENTRY = re.compile(r'^BC_ONEDNN_ISA\((\d+),\s*(0x[0-9a-fA-F]+),\s*"([a-z0-9_]+)"\)$')
# What records written before a value had its name carry: "isa_495"
# (decimal) or "isa_0x1ef".
_NUMBERED = re.compile(r"^isa_(0x[0-9a-fA-F]+|\d+)$")


@lru_cache(maxsize=1)
def table() -> dict[tuple[int, int], str]:
    """(major version, value) -> name, the first name a value has."""
    out: dict[tuple[int, int], str] = {}
    for number, line in enumerate(ISA_DEF.read_text(encoding="utf-8").splitlines(), start=1):
        line = line.strip()
        if not line or line.startswith("//"):
            continue
        m = _ENTRY.match(line)
        if m is None:
            raise ValueError(f"{ISA_DEF}:{number}: not BC_ONEDNN_ISA(major, 0xVALUE, \"name\")")
        out.setdefault((int(m.group(1)), int(m.group(2), 16)), m.group(3))
    return out


def name(reported: str, onednn_version: str) -> str:
    """The ISA's name where `reported` is a bare number ("isa_495" from a
    oneDNN 3.x, read with that oneDNN's version "3.2.0 (hash)"); `reported`
    itself otherwise, and where the table has no such value."""
    m = _NUMBERED.match(reported)
    major = re.match(r"\s*(\d+)\.", onednn_version or "")
    if m is None or major is None:
        return reported
    return table().get((int(major.group(1)), int(m.group(1), 0)), reported)
