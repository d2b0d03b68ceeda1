"""The one error type of the generator: a message tied to a file and line."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any


class SpecError(Exception):
    """An error in a spec, printed as ``FILE:LINE: message``."""

    def __init__(self, path: str, line: int, message: str) -> None:
        super().__init__(f"{path}:{line}: {message}")
        self.path = path
        self.line = line
        self.message = message


def load_toml(path: Path, what: str = "spec") -> tuple[str, dict[str, Any]]:
    """The text and the document of a TOML file; SpecError at the line of an
    unreadable file, a byte that is not UTF-8 or a TOML syntax error."""
    try:
        data = path.read_bytes()
    except OSError as e:
        raise SpecError(str(path), 1, f"cannot read {what}: {e.strerror or e}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data[: e.start].count(b"\n") + 1
        raise SpecError(str(path), line, f"not UTF-8 text: is this a TOML {what}?") from None
    try:
        return text, tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        m = re.search(r"\(at line (\d+), column \d+\)", str(e))
        message = re.sub(r"\s*\(at line \d+, column \d+\)", "", str(e))
        raise SpecError(str(path), int(m.group(1)) if m else 1, f"not valid TOML: {message}") from None
