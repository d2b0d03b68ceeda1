"""runner/batch.py's logic: what a batch leaves to a case's own test, and
what a case's test shows. The process it batches is a short script that
speaks test_main.cc's batch mode (NAME.out as a case starts, NAME.json as it
ends); the real binaries' faults are reports/tests/fault_isolation.py's."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import textwrap
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BATCH = ROOT / "runner" / "batch.py"

# Runs the listed cases in order, as test_main.cc's batch mode does; a case
# named *Crash* kills the process as it starts, *Hang* sleeps, *Skip* skips,
# *Own* needs its own process.
STAND_IN = textwrap.dedent("""\
    #!{python}
    import json, os, signal, sys, time
    out = os.environ["BACKENDCHECK_BATCH_OUT"]
    names = [n for n in open(os.environ["BACKENDCHECK_BATCH_LIST"]).read().split() if n]
    with open(os.path.join(out, "..", "processes"), "a") as f:
        f.write(" ".join(names) + "\\n")
    for name in names:
        q = name.replace("/", "%2F")
        if "Own" in name:
            json.dump({{"test": name, "outcome": "own process"}}, open(os.path.join(out, q + ".json"), "w"))
            continue
        open(os.path.join(out, q + ".out"), "w").write("output of " + name + "\\n")
        if "Crash" in name:
            os.kill(os.getpid(), signal.SIGSEGV)
        if "Hang" in name:
            time.sleep(60)
        outcome = "skipped" if "Skip" in name else "failed" if "Fail" in name else "passed"
        json.dump({{"test": name, "outcome": outcome, "ms": 3}}, open(os.path.join(out, q + ".json"), "w"))
    """)


class BatchTest(unittest.TestCase):
    def setUp(self) -> None:
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        self.tmp = Path(tmp.name)
        self.binary = self.tmp / "stand_in"
        self.binary.write_text(STAND_IN.format(python=sys.executable))
        self.binary.chmod(0o755)
        self.evidence = self.tmp / "evidence"
        self.evidence.mkdir()

    def env(self, selected: list[str] | None) -> dict[str, str]:
        env = {**os.environ, "BACKENDCHECK_EVIDENCE_DIR": str(self.evidence)}
        env.pop("BACKENDCHECK_BATCH", None)
        if selected is not None:
            listing = self.tmp / "selected.json"
            listing.write_text(json.dumps({"tests": [{"name": t} for t in selected]}))
            env["BACKENDCHECK_BATCH"] = str(listing)
        return env

    def shard(self, tests: list[str], selected: list[str] | None, timeout: float = 30) -> str:
        r = subprocess.run([sys.executable, str(BATCH), "shard", "--binary", str(self.binary), "--timeout",
                            str(timeout), "--name", "batch.x.1", *tests], env=self.env(selected),
                           capture_output=True, text=True, check=True, timeout=120)
        return r.stdout

    def outcome(self, test: str) -> dict:
        return json.loads((self.evidence / "batch" / (test.replace("/", "%2F") + ".json")).read_text())

    def case(self, test: str, batched: bool = True) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, str(BATCH), "case", "/bin/echo", f"--gtest_filter={test}",
                               "--gtest_also_run_disabled_tests"],
                              env=self.env([test] if batched else None), capture_output=True, text=True, timeout=60)

    def test_a_crash_costs_its_case_only(self) -> None:
        tests = ["P/S.T/A", "P/S.T/Crash", "P/S.T/B", "P/S.T/Fail", "P/S.T/Skip", "P/S.T/Own"]
        self.shard(tests, tests)
        self.assertEqual({t: self.outcome(t)["outcome"] for t in tests},
                         {"P/S.T/A": "passed", "P/S.T/Crash": "left", "P/S.T/B": "passed", "P/S.T/Fail": "failed",
                          "P/S.T/Skip": "skipped", "P/S.T/Own": "own process"})
        self.assertIn("SIGSEGV", self.outcome("P/S.T/Crash")["why"])
        processes = (self.evidence / "processes").read_text().splitlines()
        self.assertEqual(processes, [" ".join(tests), "P/S.T/B P/S.T/Fail P/S.T/Skip P/S.T/Own"],
                         "a fresh process goes on after the case that died")

    def test_a_hang_is_killed_and_left_to_its_test(self) -> None:
        tests = ["P/S.T/Hang", "P/S.T/A"]
        self.shard(tests, tests, timeout=1)
        self.assertEqual(self.outcome("P/S.T/Hang")["outcome"], "left")
        self.assertIn("ran past 1 s", self.outcome("P/S.T/Hang")["why"])
        self.assertEqual(self.outcome("P/S.T/A")["outcome"], "passed")

    def test_only_the_selected_cases_run(self) -> None:
        self.shard(["P/S.T/A", "P/S.T/B"], ["P/S.T/B", "other"])
        self.assertEqual(self.outcome("P/S.T/B")["outcome"], "passed")
        self.assertFalse((self.evidence / "batch" / "P%2FS.T%2FA.json").exists())

    def test_without_batches_a_shard_does_nothing(self) -> None:
        r = subprocess.run([sys.executable, str(BATCH), "shard", "--binary", str(self.binary), "--name", "b",
                            "P/S.T/A"], env=self.env(None), capture_output=True, text=True, check=True)
        self.assertIn("each case runs alone", r.stdout)
        self.assertFalse((self.evidence / "batch").exists())

    def test_a_case_shows_its_batch_outcome_or_runs_alone(self) -> None:
        self.shard(["P/S.T/A", "P/S.T/Crash", "P/S.T/Skip", "P/S.T/Fail"],
                   ["P/S.T/A", "P/S.T/Crash", "P/S.T/Skip", "P/S.T/Fail"])
        shown = self.case("P/S.T/A")
        self.assertEqual(shown.returncode, 0)
        self.assertEqual(shown.stdout.splitlines()[:3],
                         ["[ RUN      ] P/S.T/A", "output of P/S.T/A", "[       OK ] P/S.T/A (3 ms)"])
        self.assertIn("[  SKIPPED ] P/S.T/Skip", self.case("P/S.T/Skip").stdout)
        self.assertEqual(self.case("P/S.T/Fail").returncode, 1)
        # Left by the batch (it crashed there), or no batch at all: the
        # binary itself runs (here /bin/echo, which prints its arguments).
        for alone in (self.case("P/S.T/Crash"), self.case("P/S.T/A", batched=False)):
            self.assertEqual(alone.returncode, 0)
            self.assertTrue(alone.stdout.startswith("--gtest_filter=P/S.T/"), alone.stdout)


if __name__ == "__main__":
    unittest.main()
