"""The flags backendcheck mirrors, read from harness/flags.def (the one list)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

FLAGS_DEF = Path(__file__).resolve().parent.parent / "harness" / "flags.def"
_LINE = re.compile(r'^BC_FLAG\("([^"]+)",\s*(\w+),\s*(bool|int|str),\s*("[^"]*"|\w+)\)')
_WORD = re.compile(r"[a-z0-9_]+")


@dataclass(frozen=True)
class Flag:
    name: str
    type: str  # "bool", "int" or "str"
    default: bool | int | str

    def format(self, value: bool | int | str) -> str:
        """The value as the C++ harness prints it."""
        if self.type == "bool":
            return "true" if value else "false"
        return str(value)

    def accepts(self, value: object) -> bool:
        """Whether a spec's value has this flag's type (a str flag takes a
        lower-case word, as the C++ harness does; which words, PyTorch says)."""
        if self.type == "bool":
            return isinstance(value, bool)
        if self.type == "int":
            return isinstance(value, int) and not isinstance(value, bool) and value >= 0
        return isinstance(value, str) and _WORD.fullmatch(value) is not None


def load_flags(path: Path = FLAGS_DEF) -> dict[str, Flag]:
    """Flags in declaration order, keyed by their torch name."""
    flags: dict[str, Flag] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        m = _LINE.match(line.strip())
        if not m:
            continue
        name, _member, kind, default = m.groups()
        value: bool | int | str
        if kind == "bool":
            value = default == "true"
        elif kind == "int":
            value = int(default)
        else:
            value = default.strip('"')
        flags[name] = Flag(name, kind, value)
    if not flags:
        raise RuntimeError(f"{path}: no BC_FLAG lines")
    return flags
