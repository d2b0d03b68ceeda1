"""The verdict type: one enum with its gravity order, whose words no other
module of the report spells."""

from __future__ import annotations

import ast
import json
import unittest
from pathlib import Path

from reports.ruling import GRAVITY, VERDICTS, Ruling, gravest

ROOT = Path(__file__).resolve().parents[2]
WORDS = {"supported", "refuted", "inconclusive", "not evaluated"}


def spelled(path: Path) -> list[str]:
    """Where a module spells a verdict's word as a string of its own. ("error"
    is also a fact's outcome and a record's key, so the scan cannot tell it
    from a verdict; the modules name that verdict Ruling.ERROR all the same.)"""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [f"{path.relative_to(ROOT)}:{n.lineno}: {n.value!r}" for n in ast.walk(tree)
            if isinstance(n, ast.Constant) and isinstance(n.value, str) and n.value in WORDS]


class RulingTest(unittest.TestCase):
    def test_gravity(self) -> None:
        self.assertEqual([r.gravity for r in GRAVITY], list(range(5)))
        self.assertEqual(gravest(["not evaluated", "supported", "inconclusive"]), Ruling.SUPPORTED)
        self.assertEqual(gravest([Ruling.SUPPORTED, Ruling.REFUTED]), Ruling.REFUTED)
        self.assertEqual(gravest(VERDICTS), Ruling.ERROR)
        self.assertTrue(Ruling.REFUTED.decided and not Ruling.INCONCLUSIVE.decided)

    def test_a_ruling_is_its_word(self) -> None:
        self.assertEqual(Ruling.NOT_EVALUATED, "not evaluated")
        self.assertEqual(f"{Ruling.SUPPORTED}", "supported")
        self.assertEqual(json.dumps({Ruling.ERROR: Ruling.REFUTED}), '{"error": "refuted"}')

    def test_no_module_spells_a_verdict(self) -> None:
        modules = [p for folder in ("reports", "ci") for p in sorted((ROOT / folder).glob("*.py"))
                   if p.name != "ruling.py"]
        self.assertGreater(len(modules), 10)
        self.assertEqual([line for p in modules for line in spelled(p)], [])

    def test_the_scan_sees_a_spelled_verdict(self) -> None:
        # The control: the template may spell them (it shows them), and this
        # test's own module does, so the scan must find them here.
        self.assertTrue(spelled(Path(__file__)))


if __name__ == "__main__":
    unittest.main()
