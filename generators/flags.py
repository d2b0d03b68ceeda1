"""The flags backendcheck mirrors, read from harness/flags.def (the one list)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

FLAGS_DEF = Path(__file__).resolve().parent.parent / "harness" / "flags.def"
_LINE = re.compile(r'^BC_FLAG\("([^"]+)",\s*(\w+),\s*(bool|int),\s*(\w+)\)')


@dataclass(frozen=True)
class Flag:
    name: str
    type: str  # "bool" or "int"
    default: bool | int

    def format(self, value: bool | int) -> str:
        """The value as the C++ harness prints it."""
        if self.type == "bool":
            return "true" if value else "false"
        return str(value)


def load_flags(path: Path = FLAGS_DEF) -> dict[str, Flag]:
    """Flags in declaration order, keyed by their torch name."""
    flags: dict[str, Flag] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        m = _LINE.match(line.strip())
        if not m:
            continue
        name, _member, kind, default = m.groups()
        value: bool | int = default == "true" if kind == "bool" else int(default)
        flags[name] = Flag(name, kind, value)
    if not flags:
        raise RuntimeError(f"{path}: no BC_FLAG lines")
    return flags
