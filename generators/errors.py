"""The one error type of the generator: a message tied to a file and line."""

from __future__ import annotations


class SpecError(Exception):
    """An error in a spec, printed as ``FILE:LINE: message``."""

    def __init__(self, path: str, line: int, message: str) -> None:
        super().__init__(f"{path}:{line}: {message}")
        self.path = path
        self.line = line
        self.message = message
