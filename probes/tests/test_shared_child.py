"""One interpreter answering the probes of several tests (probes/
shared_child.py), with plain Python servers in place of torch_backends.py
--serve: the tests of a group get their answers from one process, started
once even when two ask at once; one that dies while it answers leaves the
test the harness's error with its last words; one that cannot start leaves
the probe to its own interpreter; an idle one exits. And the group of
cuda_questions.SHARED_CHILD is the one its tests' declared lock names."""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import threading
import time
import unittest
from pathlib import Path

PROBES = Path(__file__).resolve().parents[1]
ROOT = PROBES.parent
sys.path.insert(0, str(PROBES))
sys.path.insert(1, str(ROOT))
import cuda_questions  # noqa: E402
import shared_child  # noqa: E402
from inputs.probes import DECLARED, load_declared  # noqa: E402

# A stand-in for torch_backends.py --serve DIR GROUP: answers each probe
# with its own pid; "dies" ends the process while it answers.
SERVER = r"""
import json, os, sys, time
sys.path.insert(0, {probes!r})
import shared_child

def answer(probe):
    if probe == "dies":
        print("a fault in the probe", file=sys.stderr, flush=True)
        os._exit(1)
    time.sleep(0.2)
    return (3 if probe == "absent" else 0), json.dumps({{"probe": probe, "pid": os.getpid()}})

sys.exit(shared_child.serve(__import__("pathlib").Path(sys.argv[1]), sys.argv[2], answer, idle_s=float(sys.argv[3])))
"""


class SharedChildTest(unittest.TestCase):
    def setUp(self) -> None:
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        self.t = Path(tmp.name)
        self.server = self.t / "server.py"
        self.server.write_text(SERVER.format(probes=str(PROBES)))
        self.dir = self.t / "shared"

    def command(self, idle_s: float = 2.0) -> list[str]:
        return [sys.executable, str(self.server), str(self.dir), "group", str(idle_s)]

    def ask(self, probe: str, idle_s: float = 2.0) -> tuple[int, str] | None:
        return shared_child.relay(probe, "group", self.command(idle_s), self.dir)

    def test_the_tests_of_a_group_are_answered_by_one_interpreter_started_once(self) -> None:
        code, line = self.ask("first")
        self.assertEqual((code, json.loads(line)["probe"]), (0, "first"))
        answers: list[tuple[int, str] | None] = []
        threads = [threading.Thread(target=lambda p=p: answers.append(self.ask(p))) for p in ("a", "b", "absent")]
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
        self.assertEqual(sorted((c, json.loads(x)["probe"]) for c, x in answers), [(0, "a"), (0, "b"), (3, "absent")],
                         "each answer as its probe's, its exit status with it")
        pids = {json.loads(x)["pid"] for _, x in answers} | {json.loads(line)["pid"]}
        self.assertEqual(len(pids), 1, "one interpreter answered them all")
        log = (self.dir / "group.log").read_text()
        self.assertEqual(log.count("answers the probes of group"), 1, log)

    def test_an_interpreter_that_dies_while_it_answers_is_the_harness_s_error(self) -> None:
        code, line = self.ask("dies")
        self.assertEqual(code, shared_child.HARNESS_ERROR)
        self.assertEqual(json.loads(line)["error"], "the interpreter shared by the probes of group ended while it "
                                                    "answered dies: a fault in the probe")
        code, line = self.ask("after")
        self.assertEqual((code, json.loads(line)["probe"]), (0, "after"), "the next test starts another")

    def test_an_interpreter_that_cannot_start_leaves_the_probe_to_its_own(self) -> None:
        self.server.write_text("import sys\nprint('cannot import torch', file=sys.stderr)\nsys.exit(3)\n")
        self.assertIsNone(self.ask("p"))
        self.assertIn("did not listen (cannot import torch): p runs in its own interpreter",
                      (self.dir / "group.log").read_text())

    def test_an_idle_interpreter_exits(self) -> None:
        self.assertEqual(self.ask("p", idle_s=0.5)[0], 0)
        deadline = time.monotonic() + 20
        while "done" not in (self.dir / "group.log").read_text() and time.monotonic() < deadline:
            time.sleep(0.1)
        self.assertIn("no question for 0.5 s: done", (self.dir / "group.log").read_text())

    def test_without_the_variable_no_directory_is_named(self) -> None:
        env_free = subprocess.run([sys.executable, "-c", "import sys; sys.path.insert(0, sys.argv[1]); "
                                   "import shared_child; print(shared_child.shared_directory())", str(PROBES)],
                                  capture_output=True, text=True, env={"PATH": "/usr/bin:/bin"})
        self.assertEqual(env_free.stdout.strip(), "None")


class SharedGroupTest(unittest.TestCase):
    def test_the_group_is_its_tests_lock_and_names_untimed_probes_only(self) -> None:
        declared = load_declared(DECLARED)
        for group, probes in cuda_questions.SHARED_CHILD.items():
            locked = {p.name for p in declared if p.lock == group}
            self.assertEqual(locked, set(probes), group)
            self.assertTrue(set(probes) <= set(cuda_questions.PROBES), group)
            serial = {p.name for p in declared if p.serial}
            self.assertEqual(set(probes) & serial, set(), "a probe that times the device keeps its own interpreter")

if __name__ == "__main__":
    unittest.main()
