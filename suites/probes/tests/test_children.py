"""Items through resuming children (suites/probes/children.py), with plain
Python children: a crash and a hang each cost the item they struck, the
next child goes on from the item after, and a child that writes much to its
stderr is not taken for a hung one."""

from __future__ import annotations

import sys
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import children  # noqa: E402

# A child: runs ITEMS from START on; "ok" answers, "crash" dies, "hang"
# sleeps, "loud" writes 1 MB to stderr first. It counts its own starts in
# the file COUNT, so that the test sees how many children ran.
CHILD = r"""
import json, os, sys, time
start, count, items = int(sys.argv[1]), sys.argv[2], sys.argv[3:]
with open(count, "a") as f:
    f.write("child\n")
for i in range(start, len(items)):
    print(json.dumps({"start": i, "item": items[i]}), flush=True)
    if items[i] == "crash":
        print("boom in", items[i], file=sys.stderr, flush=True)
        os._exit(3)
    if items[i] == "hang":
        time.sleep(60)
    if items[i] == "loud":
        sys.stderr.write("x" * (1 << 20) + "\n")
        sys.stderr.flush()
    print(json.dumps({"item": items[i], "index": i, "pid": os.getpid()}), flush=True)
"""


class ChildrenTest(unittest.TestCase):
    def run_items(self, items: list[str], tmp: Path) -> tuple[list[dict], int]:
        script, count = tmp / "child.py", tmp / "count"
        script.write_text(CHILD)
        records = children.run_resuming(lambda start: [sys.executable, str(script), str(start), str(count), *items],
                                        len(items), hang_s=2.0)
        return records, len(count.read_text().splitlines())

    def test_a_crash_and_a_hang_cost_their_item_only(self) -> None:
        import tempfile
        with tempfile.TemporaryDirectory() as tmp:
            items = ["ok", "crash", "ok", "loud", "hang", "ok", "ok"]
            records, started = self.run_items(items, Path(tmp))
        self.assertEqual([r["index"] for r in records], list(range(len(items))))
        self.assertEqual([r["item"] for r in records], items)
        self.assertEqual(records[1]["error"], "the process died (exit 3): boom in crash")
        self.assertEqual(records[4]["error"], "hung: no answer in 2 s")
        self.assertEqual([i for i, r in enumerate(records) if "error" in r], [1, 4])
        # Three children: the first, one after the crash, one after the hang;
        # each took every item it reached (the loud one did not stall).
        self.assertEqual(started, 3)
        self.assertEqual(records[2]["pid"], records[3]["pid"])
        self.assertEqual(records[5]["pid"], records[6]["pid"])

    def test_one_child_takes_every_item_when_none_fails(self) -> None:
        import tempfile
        with tempfile.TemporaryDirectory() as tmp:
            records, started = self.run_items(["ok"] * 5, Path(tmp))
        self.assertEqual(started, 1)
        self.assertEqual(len({r["pid"] for r in records}), 1)
        self.assertFalse(any("error" in r for r in records))


if __name__ == "__main__":
    unittest.main()
