"""The one error type of the generator: a message tied to a file and line."""

from __future__ import annotations

import re
import stat
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


MAX_INPUT_BYTES = 16 << 20  # a spec, a catalog, an expectation file, a manifest or a baseline
MAX_KEY_PARTS = 64  # dotted parts of one TOML key (tomllib's cost grows with their square)


def read_regular(path: Path, what: str, limit: int = MAX_INPUT_BYTES) -> bytes:
    """The bytes of a regular file of at most `limit` bytes; SpecError for
    anything else (a FIFO would block, /dev/zero would never end)."""
    try:
        info = path.stat()
        if not stat.S_ISREG(info.st_mode):
            raise SpecError(str(path), 1, f"cannot read {what}: not a regular file")
        if info.st_size > limit:
            raise SpecError(str(path), 1, f"cannot read {what}: {info.st_size} bytes, more than {limit}")
        with path.open("rb") as f:
            data = f.read(limit + 1)
    except OSError as e:
        raise SpecError(str(path), 1, f"cannot read {what}: {e.strerror or e}") from None
    if len(data) > limit:
        raise SpecError(str(path), 1, f"cannot read {what}: more than {limit} bytes")
    return data


def load_toml(path: Path, what: str = "spec") -> tuple[str, dict[str, Any]]:
    """The text and the document of a TOML file; SpecError at the line of an
    unreadable file, a byte that is not UTF-8 or a TOML syntax error."""
    data = read_regular(path, what)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data[: e.start].count(b"\n") + 1
        raise SpecError(str(path), line, f"not UTF-8 text: is this a TOML {what}?") from None
    for number, line in enumerate(text.splitlines(), start=1):
        key = line.strip().split("=", 1)[0] if not line.lstrip().startswith("[") else line.split("]", 1)[0]
        if key.count(".") >= MAX_KEY_PARTS:
            raise SpecError(str(path), number, f"a key of more than {MAX_KEY_PARTS} dotted parts")
    try:
        return text, tomllib.loads(text)
    except RecursionError:
        raise SpecError(str(path), 1, f"not a usable TOML {what}: nested too deeply") from None
    except tomllib.TOMLDecodeError as e:
        m = re.search(r"\(at line (\d+), column \d+\)", str(e))
        message = re.sub(r"\s*\(at line \d+, column \d+\)", "", str(e))
        raise SpecError(str(path), int(m.group(1)) if m else 1, f"not valid TOML: {message}") from None
    except ValueError as e:  # an integer of more digits than Python converts
        raise SpecError(str(path), 1, f"not a usable TOML {what}: {str(e)[:100]}") from None
