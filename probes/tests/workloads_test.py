"""The workload probe (probes/workloads.py) on planted workloads
(data/workloads.toml), with the torch of the interpreter that runs it (ctest
runs it as python.workloads with the torch under test): a thread-dependent
operation deep in a 40-layer model is named at exactly its line, forward, as
the first operation that differs, with its thread control varied; a step
that holds at every level is not flagged; a step that raises is an error
naming its own line, never a refutation; the digests of a 100-layer step's
operations stream to a file, the memory they take bounded."""

from __future__ import annotations

import json
import sys
import tempfile
import tracemalloc
import unittest
from pathlib import Path

PROBES = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(PROBES))
import workloads  # noqa: E402
from inputs.workloads import load  # noqa: E402

DATA = Path(__file__).resolve().parent / "data"
DECLARED = {w.id: w for w in load(DATA / "workloads.toml")}
PLANTED = DATA / "workloads" / "planted.py"
MEMORY_BOUND = 50 << 20


def _line_of(marker: str) -> int:
    return next(i for i, line in enumerate(PLANTED.read_text().splitlines(), 1) if marker in line)


class WorkloadProbeTest(unittest.TestCase):
    def test_a_planted_thread_dependent_operation_is_named_at_its_line(self) -> None:
        r = workloads.run(DECLARED["deep-planted"])
        self.assertTrue(r["levels"]["run"]["held"], r["detail"])
        threads = r["levels"]["threads"]
        self.assertTrue(threads["control"]["varied"])
        self.assertFalse(threads["held"])
        self.assertIs(r["passed"], False)
        d = threads["first_divergence"]
        self.assertEqual(d["op"], "aten.add.Tensor", d)
        self.assertTrue(d["phase"].startswith("forward"), d)
        self.assertIn(f'planted.py", line {_line_of("# PLANTED")}, in forward', d["line"])
        # No lever the project knows holds a number the model adds itself.
        self.assertIsNone(threads["levers"]["held_by"])
        self.assertEqual(threads["levers"]["still_moves"]["op"], "aten.add.Tensor")

    def test_a_step_that_holds_is_not_flagged(self) -> None:
        r = workloads.run(DECLARED["holds"])
        self.assertIs(r["passed"], True, r["detail"])
        for level, got in r["levels"].items():
            self.assertTrue(got["held"], level)
            self.assertTrue(got["control"]["varied"], f"{level}: its control must vary for 'the same bits'")
            self.assertNotIn("first_divergence", got)

    def test_a_step_that_raises_is_an_error_at_its_own_line(self) -> None:
        r = workloads.run(DECLARED["raises"])
        self.assertIsNone(r["passed"])
        self.assertIn("ValueError: the team's bug", r["error"])
        self.assertIn(f'planted.py", line {_line_of("# RAISES")}', r["error"])

    def test_the_digests_of_a_hundred_layer_step_stream_within_the_bound(self) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            stream = Path(tmp) / "ops.jsonl"
            # Once untraced: what the first step imports and builds once
            # (torch's submodules, anomaly mode's) is not the records' memory.
            workloads.step_digests(DECLARED["hundred"], {}, 8, stream=stream)
            tracemalloc.start()
            try:
                workloads.step_digests(DECLARED["hundred"], {}, 8, stream=stream)
                peak = tracemalloc.get_traced_memory()[1]
            finally:
                tracemalloc.stop()
            records = [json.loads(x) for x in stream.read_text().splitlines()]
        self.assertGreater(len(records), 300, "forward and backward of 100 layers")
        self.assertTrue(any(r["phase"].startswith("backward") or r["phase"] == "forward or backward"
                            for r in records[len(records) // 2:]))
        self.assertLess(peak, MEMORY_BOUND, f"{peak / 2**20:.1f} MiB traced while recording")


if __name__ == "__main__":
    unittest.main()
