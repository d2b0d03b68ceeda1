"""A team's workload file (inputs/workloads.py): the examples and the
planted workloads load; each kind of mistake is one FILE:LINE: message at
the line of the key at fault."""

from __future__ import annotations

import sys
import tempfile
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
from inputs.errors import SpecError  # noqa: E402
from inputs.workloads import load, load_all  # noqa: E402

GOOD = '''path = "w"

[[workload]]
id = "a"
statement = "s"
callable = "m:f"
levels = ["run", "threads"]
'''


class DeclarationTest(unittest.TestCase):
    def test_the_examples_and_the_planted_workloads_load(self) -> None:
        examples = load(ROOT / "examples" / "workloads.toml")
        self.assertEqual([w.id for w in examples], ["cnn-training-step", "transformer-block-training-step",
                                                    "mlp-inference"])
        self.assertEqual(examples[0].hold, ["run", "threads"])
        self.assertEqual(len(load(Path(__file__).parent / "data" / "workloads.toml")), 4)

    def bad(self, text: str, line: int, words: str, module: bool = True) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            (Path(tmp) / "w").mkdir()
            if module:
                (Path(tmp) / "w" / "m.py").write_text("def f(batch):\n    return lambda: {}\n")
            path = Path(tmp) / "team.toml"
            path.write_text(text)
            with self.assertRaises(SpecError) as caught:
                load(path)
        self.assertEqual((caught.exception.line, caught.exception.path), (line, str(path)), str(caught.exception))
        self.assertIn(words, caught.exception.message)

    def test_each_mistake_is_named_at_its_line(self) -> None:
        self.bad(GOOD.replace('levels = ["run", "threads"]', 'levels = ["run", "thread"]'), 7, "levels must list")
        self.bad(GOOD + 'colour = "red"\n', 8, "unknown key 'colour'")
        self.bad(GOOD.replace('"m:f"', '"m.f"'), 6, "must be module:function")
        self.bad(GOOD, 6, "no module m", module=False)
        self.bad(GOOD + "batch = 4\nrows = 4\n", 9, "rows must be fewer than batch")
        self.bad(GOOD + "settings = { deterministic = 1 }\n", 8, "deterministic takes one of")
        self.bad(GOOD + "settings = { fast = true }\n", 8, "unknown setting 'fast'")
        self.bad(GOOD + 'hold = ["batch"]\n', 8, "hold names a level that levels leaves out")
        self.bad(GOOD + GOOD.split("\n", 2)[2], 9, "declared twice")
        self.bad(GOOD.replace('path = "w"', 'path = "nowhere"'), 1, "path must name a directory")
        self.bad('path = "w"\n', 1, "no [[workload]] table")
        self.bad(GOOD + "threads = [2]\n", 8, "at least two")

    def test_an_id_in_two_files_is_refused_at_the_second(self) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            (Path(tmp) / "w").mkdir()
            (Path(tmp) / "w" / "m.py").write_text("")
            for name in ("one.toml", "two.toml"):
                (Path(tmp) / name).write_text(GOOD)
            with self.assertRaises(SpecError) as caught:
                load_all([Path(tmp) / "one.toml", Path(tmp) / "two.toml"])
        self.assertTrue(str(caught.exception).startswith(f"{Path(tmp) / 'two.toml'}:3: id 'a' is declared in"),
                        str(caught.exception))


if __name__ == "__main__":
    unittest.main()
