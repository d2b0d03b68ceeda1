"""The Python layers: generators/ and reports/ never import each other (what
both need is in inputs/, which imports neither)."""

from __future__ import annotations

import ast
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def imported(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


class LayersTest(unittest.TestCase):
    def test_no_package_imports_a_package_it_must_not(self) -> None:
        forbidden = {"generators": {"reports", "ci"}, "reports": {"generators", "ci"},
                     "inputs": {"generators", "reports", "ci"}}
        for package, others in forbidden.items():
            for path in sorted((ROOT / package).rglob("*.py")):
                with self.subTest(module=str(path.relative_to(ROOT))):
                    self.assertFalse(imported(path) & others, f"{path} imports {sorted(imported(path) & others)}")


if __name__ == "__main__":
    unittest.main()
