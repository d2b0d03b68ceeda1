"""ci/kit_steps.py, the GPU kit's budgeted test calls, over a stand-in for
ctest (a script that lists five tests and runs each for a set time, writing
a record before and after): what a call starts, cuts and leaves, resuming,
a test too long for any call, the archive's limits, and a call stopped by
SIGTERM."""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tarfile
import tempfile
import textwrap
import time
import unittest
from pathlib import Path
from unittest import mock

from ci import kit_steps

ROOT = Path(__file__).resolve().parents[2]

FAKE_CTEST = textwrap.dedent('''\
    #!{python}
    import json, os, sys, time
    TESTS = {{"A": 0.1, "B": 0.1, "Slow": 4.0, "C": 0.1, "Fails": 0.1, "Self": 0.1}}
    SELFTESTS = {{"Self"}}
    args = sys.argv[1:]
    if "--show-only=json-v1" in args:
        excluded = args[args.index("-LE") + 1] if "-LE" in args else ""
        print(json.dumps({{"tests": [{{"name": n}} for n in TESTS if not (excluded == "selftest" and n in SELFTESTS)]}}))
        sys.exit(0)
    name = args[args.index("-R") + 1][1:-1].replace("\\\\", "")
    ev = os.environ["BACKENDCHECK_EVIDENCE_DIR"]
    with open(os.path.join(ev, "t-%d.jsonl" % os.getpid()), "w") as f:
        f.write(json.dumps({{"kind": "case", "schema": 1, "test": name}}) + "\\n")
        f.flush()
        time.sleep(TESTS[name])
        outcome = "failed" if name == "Fails" else "passed"
        f.write(json.dumps({{"kind": "result", "schema": 1, "test": name, "outcome": outcome}}) + "\\n")
    failure = "<failure message='x'/>" if name == "Fails" else ""
    with open(args[args.index("--output-junit") + 1], "w") as j:
        j.write("<testsuite><testcase name='%s' status='run'>%s</testcase></testsuite>" % (name, failure))
    sys.exit(1 if name == "Fails" else 0)
    ''')


def _text(f: Path) -> str:
    """A file's text, or "" where a completed test's directory went away."""
    try:
        return f.read_text()
    except OSError:
        return ""


class KitStepsTest(unittest.TestCase):
    def setUp(self) -> None:
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        self.t = Path(tmp.name)
        self.ctest = self.t / "ctest"
        self.ctest.write_text(FAKE_CTEST.format(python=sys.executable))
        self.ctest.chmod(0o755)
        (self.t / "build" / "generated").mkdir(parents=True)
        (self.t / "build" / "generated" / "cases.json").write_text('{"cases": []}')
        # What a recorded run measured; Slow's is wrong, as a first guess can be.
        self.durations = self.t / "durations.json"
        self.durations.write_text(json.dumps({"A": 0.1, "B": 0.1, "Slow": 0.3, "C": 0.1, "Fails": 0.1}))

    def argv(self, budget: float) -> list[str]:
        return ["test", "--build", str(self.t / "build"), "--state", str(self.t / "state"), "--out",
                str(self.t / "out"), "--budget", str(budget), "--name", "node", "--ctest", str(self.ctest),
                "--durations", str(self.durations), "--label", ""]

    def call(self, budget: float) -> tuple[int, dict, list[dict]]:
        """One call in a process of its own; its exit, its account, and the
        records in its archive."""
        r = subprocess.run([sys.executable, "-m", "ci.kit_steps", *self.argv(budget)], cwd=ROOT, capture_output=True,
                           text=True, timeout=60)
        k = json.loads((self.t / "state" / "state.json").read_text())["calls"]
        return r.returncode, *self.archive(k)

    def archive(self, k: int) -> tuple[dict, list[dict]]:
        with tarfile.open(self.t / "out" / f"backendcheck-gpu-node-{k}.tar.gz") as tf:
            names = tf.getnames()
            steps = json.loads(tf.extractfile(f"node-{k}/kit-steps.json").read())
            records = [json.loads(line) for n in names if n.endswith(".jsonl")
                       for line in tf.extractfile(n).read().decode().splitlines()]
        for n in ("ctest-junit.xml", "cases.json", "ctest-tests.json", "kit-steps.json"):
            self.assertIn(f"node-{k}/{n}", names)
        return steps, records

    def test_calls_resume_cut_tests_run_again_and_a_test_too_long_for_any_call_stops(self) -> None:
        rc, steps, records = self.call(3.0)
        self.assertEqual(rc, 3, "tests are left")
        self.assertEqual([x["test"] for x in steps["ran"]], ["A", "B"])
        self.assertEqual(steps["cut"], ["Slow"], "Slow was expected to fit and ran into the budget")
        self.assertEqual({r["test"] for r in records}, {"A", "B"}, "the cut test's partial records are dropped")
        self.assertEqual(steps["left"], ["Slow", "C", "Fails"])
        rc, steps, records = self.call(3.0)
        self.assertEqual(rc, 3)
        self.assertEqual((steps["ran"], steps["cut"], steps["too_long"]), ([], ["Slow"], ["Slow"]),
                         "cut again with a whole call of its own: too long for one")
        self.assertEqual(records, [])
        rc, steps, records = self.call(3.0)
        self.assertEqual(rc, 1, "all done, one failed")
        self.assertEqual([(x["test"], x["outcome"]) for x in steps["ran"]], [("C", "passed"), ("Fails", "failed")])
        self.assertEqual(steps["left"], [])
        self.assertEqual(sorted(r["test"] for r in records if r["kind"] == "result"), ["C", "Fails"])

    def test_the_harness_s_own_checks_are_left_out_unless_asked_for(self) -> None:
        build, ctest = self.t / "build", str(self.ctest)
        self.assertEqual(kit_steps.plan_tests(build, "", "", ctest, "selftest"), ["A", "B", "Slow", "C", "Fails"])
        self.assertEqual(kit_steps.plan_tests(build, "", "", ctest, ""), ["A", "B", "Slow", "C", "Fails", "Self"])
        self.call(0)
        self.assertEqual(json.loads((self.t / "state" / "plan.json").read_text()), ["A", "B", "Slow", "C", "Fails"],
                         "by default a call's plan has no selftest")

    def test_a_fresh_machine_skips_what_earlier_calls_brought_back(self) -> None:
        earlier = self.t / "kit-steps.json"
        earlier.write_text(json.dumps({"ran": [{"test": "A", "outcome": "passed"},
                                               {"test": "Slow", "outcome": "passed"}]}))
        r = subprocess.run([sys.executable, "-m", "ci.kit_steps", *self.argv(0), "--done", str(earlier)], cwd=ROOT,
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(r.returncode, 1, r.stderr)
        steps, _ = self.archive(1)
        self.assertEqual([x["test"] for x in steps["ran"]], ["B", "C", "Fails"])

    def test_a_test_is_started_only_where_its_expected_time_fits(self) -> None:
        state = {"done": {"A": "passed"}, "cut": [], "too_long": []}
        plan = ["A", "B", "C"]
        self.assertEqual(kit_steps.next_test(plan, state, 0.0, 10.0, {"B": 20.0}, first=True), "B",
                         "the first test of a call always starts")
        self.assertIsNone(kit_steps.next_test(plan, state, 1.0, 10.0, {"B": 20.0}, first=False))
        self.assertIsNone(kit_steps.next_test(plan, state, 1.0, 10.0, {"B": 20.0, "C": 1.0}, first=False),
                          "in order: a shorter later test does not jump ahead")
        self.assertEqual(kit_steps.next_test(plan, state, 6.0, 10.0, {}, first=False), None,
                         f"unmeasured: {kit_steps.DEFAULT_S} s expected")
        state["cut"] = ["C"]
        self.assertEqual(kit_steps.next_test(plan, state, 0.0, 10.0, {}, first=True), "C", "the cut test first")

    def test_an_archive_over_the_file_limit_comes_back_in_parts(self) -> None:
        noise = self.t / "build" / "generated" / "cases.json"
        noise.write_bytes(os.urandom(50_000))  # does not compress
        a = argparse.Namespace(
            build=self.t / "build", state=self.t / "state", out=self.t / "out", budget=0.0, label="", regex="",
            exclude_label="selftest", name="node", durations=None, ctest=str(self.ctest), done=[])
        with mock.patch.object(kit_steps, "MAX_FILE", 16_000):
            parts = kit_steps.Call(a).write_archive()
        self.assertEqual([p.name for p in parts], [f"backendcheck-gpu-node-1.tar.gz.part{i}" for i in (1, 2, 3, 4)])
        self.assertTrue(all(p.stat().st_size <= 16_000 for p in parts))
        whole = self.t / "whole.tar.gz"
        whole.write_bytes(b"".join(p.read_bytes() for p in parts))
        with tarfile.open(whole) as tf:
            self.assertIn("node-1/cases.json", tf.getnames())
        with mock.patch.object(kit_steps, "MAX_FILE", 5_000), self.assertRaises(SystemExit) as e:
            kit_steps.Call(a).write_archive()
        self.assertIn("over 8 files", str(e.exception))

    def test_sigterm_cuts_the_running_test_and_writes_the_archive(self) -> None:
        proc = subprocess.Popen([sys.executable, "-m", "ci.kit_steps", *self.argv(0)], cwd=ROOT,
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 60
        state = self.t / "state" / "state.json"
        running = self.t / "state" / "running"
        while time.monotonic() < deadline:  # until A and B are done and Slow has written its first record
            if (state.exists() and len(json.loads(state.read_text())["done"]) == 2
                    and any('"Slow"' in _text(f) for f in running.glob("*/*.jsonl"))):
                break
            time.sleep(0.05)
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=30)
        self.assertEqual(proc.returncode, 128 + signal.SIGTERM, err)
        steps, records = self.archive(1)
        self.assertEqual(([x["test"] for x in steps["ran"]], steps["cut"]), (["A", "B"], ["Slow"]))
        self.assertNotIn("Slow", {r["test"] for r in records})
        self.assertEqual(json.loads(state.read_text())["cut"], ["Slow"], "it runs first in the next call")


if __name__ == "__main__":
    unittest.main()
