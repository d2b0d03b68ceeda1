"""Line numbers for TOML keys, which tomllib does not report.

A light scan of the source maps each table header and each ``key = value``
line to its path, with array-of-tables elements numbered: ``[[suite]]`` then
``[suite.axes]`` then ``"cudnn.benchmark" = [...]`` gives the path
``("suite", 0, "axes", "cudnn.benchmark")``. Errors about a key name its line;
errors about a table name its header's line.
"""

from __future__ import annotations

import re

_HEADER = re.compile(r"^\s*(\[\[?)\s*(.+?)\s*\]\]?\s*(#.*)?$")
_KEY = re.compile(r'^\s*("(?:[^"\\]|\\.)*"|\'[^\']*\'|[A-Za-z0-9_.-]+)\s*=')
_PART = re.compile(r'"((?:[^"\\]|\\.)*)"|\'([^\']*)\'|([A-Za-z0-9_-]+)')

Path = tuple[str | int, ...]


def _parts(dotted: str) -> list[str]:
    return [a or b or c for a, b, c in _PART.findall(dotted)]


class LineIndex:
    """Path -> first line (1-based) where it is defined."""

    def __init__(self, text: str) -> None:
        self.lines: dict[Path, int] = {}
        counters: dict[Path, int] = {}
        arrays: set[Path] = set()  # name-only paths of arrays of tables
        current: Path = ()
        in_multiline = False
        for number, line in enumerate(text.splitlines(), start=1):
            if in_multiline:
                # Skip the body of a multi-line array or string.
                if line.rstrip().endswith(("]", '"""', "'''")):
                    in_multiline = False
                continue
            header = _HEADER.match(line)
            if header and not _KEY.match(line):
                is_array = header.group(1) == "[["
                names = _parts(header.group(2))
                path: list[str | int] = []
                for i, name in enumerate(names):
                    path.append(name)
                    name_only = tuple(p for p in path if isinstance(p, str))
                    last = i == len(names) - 1
                    if last and is_array:
                        arrays.add(name_only)
                        key = tuple(path)
                        counters[key] = counters.get(key, -1) + 1
                        path.append(counters[key])
                    elif name_only in arrays:
                        path.append(counters.get(tuple(path), 0))
                current = tuple(path)
                self.lines.setdefault(current, number)
                continue
            key = _KEY.match(line)
            if key:
                full = current + tuple(_parts(key.group(1)))
                self.lines.setdefault(full, number)
                rest = line[key.end():].strip()
                if (rest.startswith("[") and rest.count("[") > rest.count("]")) or rest.startswith(('"""', "'''")) and rest.count(rest[:3]) == 1:
                    in_multiline = True

    def line(self, path: Path) -> int:
        """The line of `path`, else of its nearest defined ancestor, else 1."""
        p = tuple(path)
        while p:
            if p in self.lines:
                return self.lines[p]
            p = p[:-1]
        return 1
