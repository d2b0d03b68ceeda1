"""The probes' shared machinery (common.py, and children.run / run_json):
plain Python where it needs no torch, the torch this interpreter has where
it does (skipped, with why, without one)."""

from __future__ import annotations

import hashlib
import json
import sys
import time
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import children  # noqa: E402
import common  # noqa: E402

try:
    import torch
except ImportError:  # the machinery that needs no torch is tested all the same
    torch = None
NO_TORCH = f"{sys.executable} cannot import torch"


class WordsTest(unittest.TestCase):
    def test_first_line_is_cut_at_one_length(self) -> None:
        self.assertEqual(common.first_line(RuntimeError("\n  first  \nsecond")), "first")
        self.assertEqual(common.first_line(ValueError("")), "ValueError", "an empty message: its type")
        self.assertEqual(common.first_line(""), "")
        long = "x" * (common.FIRST_LINE + 50)
        self.assertEqual(common.first_line(long), "x" * common.FIRST_LINE)
        self.assertEqual(common.last_line("Traceback\n  ...\nKeyError: 'a'\n\n"), "KeyError: 'a'")
        self.assertEqual(common.last_line("", "no message"), "no message")
        self.assertEqual(len(common.last_line(long)), common.FIRST_LINE)

    def test_version_of(self) -> None:
        self.assertEqual(common.version_of("2.11.0+cu130"), (2, 11))
        self.assertEqual(common.version_of("1.13.0a0"), (1, 13))
        self.assertEqual(common.version_of("12.4"), (12, 4))
        self.assertLess(common.version_of("2.9.1"), common.version_of("2.10.0"), "numbers, not text")


class TimerTest(unittest.TestCase):
    def test_median_seconds_counts_its_runs(self) -> None:
        calls, done = [], []
        seconds = common.median_seconds(lambda: calls.append(1), reps=5, warmup=2, done=lambda: done.append(1))
        self.assertEqual(len(calls), 7)
        self.assertGreaterEqual(len(done), 7, "each run ends with done()")
        self.assertGreaterEqual(seconds, 0.0)

    def test_median_ratio_sees_the_slower_side(self) -> None:
        """A side that sleeps 20 ms a run against one that sleeps 2 ms: the
        ratio sees it, and the other way round (its positive control)."""
        delay = {"s": 0.0}

        def side(seconds):
            return lambda: common.set_by(lambda: delay.update(s=seconds))
        run = lambda: time.sleep(delay["s"])  # noqa: E731
        self.assertGreater(common.median_ratio(run, (side(0.002), side(0.02)), reps=3), 3)
        self.assertLess(common.median_ratio(run, (side(0.02), side(0.002)), reps=3), 1 / 3)
        warmed = []
        common.median_ratio(lambda: warmed.append(1), (side(0), side(0)), reps=3, warm=True)
        self.assertEqual(len(warmed), 12, "with warm, one untimed run more a side and rep")


class ChildTest(unittest.TestCase):
    def run_json(self, code: str, **kw):
        return children.run_json([sys.executable, "-c", code], **kw)

    def test_a_child_s_last_json_line(self) -> None:
        self.assertEqual(self.run_json("print('a warning'); print('{\"a\": 1}')"), {"a": 1})
        self.assertEqual(self.run_json("import sys, json; print(json.dumps({'got': sys.stdin.read()}))",
                                       input="in"), {"got": "in"})

    def test_a_failed_child_is_an_error_in_words(self) -> None:
        self.assertEqual(self.run_json("raise SystemExit('it broke')"), {"error": "exit 1: it broke"})
        self.assertEqual(self.run_json("import time; time.sleep(5)", timeout=0.5), {"error": "no answer in 0 s"})
        self.assertEqual(self.run_json("print('not json')")["error"][:27], "printed 'not json', not JSO")
        self.assertEqual(self.run_json("pass")["error"], "no output: no message")
        ran = children.run(["/nonexistent/interpreter"])
        self.assertIsNone(ran.code)
        self.assertTrue(ran.failure.startswith("could not start: FileNotFoundError"), ran.failure)
        self.assertEqual(children.run([sys.executable, "-c", "print(1)"]), children.Ran(0, "1\n", "", ""))


@unittest.skipIf(torch is None, NO_TORCH)
class DigestTest(unittest.TestCase):
    def test_the_digest_of_the_records(self) -> None:
        """The value every record kept before the digest had one home: the
        documented list's hash of shape, dtype and bytes (through numpy
        there), for each dtype, None and an empty tensor."""
        x = torch.arange(12, dtype=torch.float32).reshape(3, 4)
        for t in (x, x.t(), x.to(torch.bfloat16), x.to(torch.int64), torch.empty(0)):
            h = hashlib.sha256(str((tuple(t.shape), str(t.dtype))).encode())
            c = t.contiguous()
            h.update(c.view(-1).view(torch.uint8).numpy().tobytes() if c.numel() else b"")
            self.assertEqual(common.digest([t]), h.hexdigest()[:16], t.dtype)
        self.assertNotEqual(common.digest([x]), common.digest([x.reshape(4, 3)]), "the shape counts")
        self.assertNotEqual(common.digest([x, None]), common.digest([x]))
        # One element whose stride is 0 (as OpInfo's samples of put_ give):
        # the old formula raised on it ("must be 1 to view Float as Byte");
        # its bytes are those of the same value laid out plainly.
        one = torch.empty_strided((1,), (0,)).fill_(2.0)
        self.assertEqual(common.digest([one]), common.digest([torch.tensor([2.0])]))

    def test_compare(self) -> None:
        a = torch.ones(4)
        self.assertEqual(common.compare(a, a.clone()), {"same": True})
        b = a.clone()
        b[0] = 1.5
        self.assertEqual(common.compare(a, b), {"same": False, "fraction": 0.25, "max_rel": 0.5})

    def test_the_order_control_varies_and_a_fixed_order_does_not(self) -> None:
        self.assertTrue(common.order_varies(torch))
        self.assertNotEqual(common.order_digest(torch), common.order_digest(torch))
        fixed = torch.randn(1 << 16, generator=torch.Generator().manual_seed(30)) * 1e3
        self.assertEqual(common.digest([fixed.sum()]), common.digest([fixed.sum()]), "its negative control")
        line = children.run_json([sys.executable, "-c", "import sys, json, torch; sys.path.insert(0, sys.argv[1]); "
                                  "import common; print(json.dumps({'d': common.order_digest(torch)}))",
                                  str(Path(common.__file__).parent)])
        self.assertNotEqual(line.get("d"), common.order_digest(torch), line)

    def test_not_here_and_the_device(self) -> None:
        if torch.cuda.is_available():
            self.skipTest("this machine has a CUDA device")
        with self.assertRaises(common.NotHere) as e:
            common.need_device(torch, "cuda_sdpa_repeatable")
        self.assertIn("cuda_sdpa_repeatable", str(e.exception))
        self.assertEqual(common.device_name(torch, "cpu"), "CPU")


if __name__ == "__main__":
    unittest.main()
