"""bench --self (cli/selfbench.py): the per-case overhead read from a run's
ctest JUnit, its registered tests and its batches' outcomes; the row it adds
to BENCHMARKS.md; its command line."""

from __future__ import annotations

import json
import tempfile
import unittest
from pathlib import Path

from cli import selfbench
from cli.options import UsageError, parse

CASES = ["Cpu/Determinism.Bitwise/A", "Cpu/Determinism.Bitwise/B", "Cpu/Determinism.Bitwise/C"]


def _gtest(name: str, ms: int) -> str:
    return f"[ RUN      ] {name}\n[       OK ] {name} ({ms} ms)\n"


class OverheadTest(unittest.TestCase):
    def setUp(self) -> None:
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        self.build = Path(tmp.name) / "build"
        self.run_dir = self.build / "evidence" / "run-1"
        (self.run_dir / "batch").mkdir(parents=True)
        tests = [{"name": "batch.determinism_tests.1",
                  "command": ["python3", "batch.py", "shard", "--binary", "b", "--timeout", "300", "--name",
                              "batch.determinism_tests.1", *CASES]},
                 *({"name": c, "command": ["batch.py", "case", "b"]} for c in CASES)]
        (self.build / "ctest-tests.json").write_text(json.dumps({"tests": tests}))

    def junit(self, times: dict[str, tuple[float, str]]) -> None:
        cases = "".join(f'<testcase name="{n}" time="{t}"><system-out>{out}</system-out></testcase>'
                        for n, (t, out) in times.items())
        (self.build / "ctest-junit.xml").write_text(f'<testsuite>{cases}</testsuite>')

    def outcome(self, case: str, ms: int, outcome: str = "passed") -> None:
        (self.run_dir / "batch" / f"{case.replace('/', '%2F')}.json").write_text(
            json.dumps({"test": case, "outcome": outcome, "ms": ms}))

    def test_a_batched_case_costs_its_test_and_its_share_of_the_batch_beyond_the_cases(self) -> None:
        for case, ms in zip(CASES, (1000, 2000, 3000)):
            self.outcome(case, ms)
        # the batch: 6 s of cases and 0.9 s more, 0.3 s a case; each case's test 0.05 s
        self.junit({"batch.determinism_tests.1": (6.9, ""),
                    **{c: (0.05, _gtest(c, ms)) for c, ms in zip(CASES, (1000, 2000, 3000))}})
        o = selfbench.overhead(self.build, self.run_dir)
        self.assertEqual((o["cases"], o["batched"]), (3, True))
        self.assertAlmostEqual(o["median_s"], 0.35, places=3)

    def test_one_process_per_case_costs_its_test_less_its_own_time(self) -> None:
        self.junit({"batch.determinism_tests.1": (0.02, "no batches asked for"),
                    CASES[0]: (1.5, _gtest(CASES[0], 1000)), CASES[1]: (2.25, _gtest(CASES[1], 2000)),
                    CASES[2]: (3.75, _gtest(CASES[2], 3000))})
        o = selfbench.overhead(self.build, self.run_dir)
        self.assertEqual((o["cases"], o["batched"]), (3, False))
        self.assertAlmostEqual(o["median_s"], 0.5, places=3)

    def test_a_case_left_to_its_own_process_counts_as_one(self) -> None:
        self.outcome(CASES[0], 1000)
        self.outcome(CASES[1], 0, outcome="left")
        self.junit({"batch.determinism_tests.1": (1.4, ""), CASES[0]: (0.1, _gtest(CASES[0], 1000)),
                    CASES[1]: (2.5, _gtest(CASES[1], 2000))})
        o = selfbench.overhead(self.build, self.run_dir)
        self.assertEqual(o["cases"], 2, "the case that did not run has no overhead")
        self.assertAlmostEqual(o["median_s"], (0.5 + 0.5) / 2, places=3)

    def test_no_case_ran(self) -> None:
        self.junit({})
        self.assertEqual(selfbench.overhead(self.build, self.run_dir)["median_s"], None)


class RecordTest(unittest.TestCase):
    RESULT = {"date": "2026-12-07", "commit": "abc1234", "machine": "AMD EPYC (avx2, avx512f), 2 cores",
              "cold_run_s": 900.0, "cold_run_rc": 0, "warm_run_s": 350.5, "warm_run_rc": 0,
              "overhead": {"median_s": 0.04, "cases": 657, "batched": True}, "test_s": 1800.0, "test_rc": 1}

    def test_a_row_per_measurement_in_its_section_the_rest_kept(self) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            md = Path(tmp) / "BENCHMARKS.md"
            md.write_text("# Benchmarks\n\n## Earlier\n\ntext\n")
            selfbench.record(self.RESULT, md)
            selfbench.record({**self.RESULT, "commit": "def5678", "test_s": 1700.0, "test_rc": 0}, md)
            text = md.read_text()
        self.assertTrue(text.startswith("# Benchmarks\n\n## Earlier\n\ntext\n"), text)
        section = text[text.index(selfbench.HEADING):]
        self.assertIn(selfbench.TABLE_HEAD, section)
        rows = [line for line in section.splitlines() if line.startswith("| 2026")]
        self.assertEqual(rows, [
            "| 2026-12-07 | abc1234 | AMD EPYC (avx2, avx512f), 2 cores | 900 s | 350.5 s | 0.04 s (657 cases, "
            "in batches) | 1800 s (exit 1) |",
            "| 2026-12-07 | def5678 | AMD EPYC (avx2, avx512f), 2 cores | 900 s | 350.5 s | 0.04 s (657 cases, "
            "in batches) | 1700 s |"])

    def test_a_section_followed_by_another_keeps_it(self) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            md = Path(tmp) / "BENCHMARKS.md"
            md.write_text(f"# B\n\n{selfbench.HEADING}\n\nwords\n\n{selfbench.TABLE_HEAD}\n## Later\n\nmore\n")
            selfbench.record({"date": "2026-12-08", "machine": "m", "test_s": 10.0, "test_rc": 0}, md)
            text = md.read_text()
        self.assertIn("| 2026-12-08 | ? | m | not measured | not measured | not measured | 10 s |\n\n## Later\n\nmore\n",
                      text)


class CommandTest(unittest.TestCase):
    def test_bench_self_writes_its_record_and_its_row_and_says_its_line(self) -> None:
        from unittest import mock
        from cli import commands
        from cli.options import parse
        result = {**RecordTest.RESULT, "test_commit": "fff0000"}
        with tempfile.TemporaryDirectory() as tmp, mock.patch.object(commands, "ROOT", Path(tmp)), \
                mock.patch.object(selfbench, "measure", return_value=result):
            said: list[str] = []
            state = commands.State(parse(["bench", "--self"], Path(tmp)))
            with mock.patch.object(state, "log", said.append):
                status = commands.cmd_bench(state)
            self.assertEqual(status, 1, "a timed command exited 1")
            self.assertEqual(json.loads((Path(tmp) / "build" / selfbench.RESULT).read_text()), result)
            self.assertIn("| abc1234 (test: fff0000) |", (Path(tmp) / selfbench.BENCHMARKS).read_text())
            self.assertTrue(said[-1].startswith("the harness's own speed: cold run 900 s"), said)


class CommandLineTest(unittest.TestCase):
    def test_self_takes_run_test_or_both(self) -> None:
        cwd = Path.cwd()
        self.assertEqual(parse(["bench", "--self"], cwd).self_parts, ("run", "test"))
        self.assertEqual(parse(["bench", "--self=test"], cwd).self_parts, ("test",))
        self.assertEqual(parse(["bench"], cwd).self_parts, ())
        with self.assertRaises(UsageError):
            parse(["bench", "--self=warm"], cwd)


if __name__ == "__main__":
    unittest.main()
