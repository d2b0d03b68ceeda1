"""One interpreter answering the probes of several tests (probes/
shared_child.py), with plain Python servers in place of torch_backends.py
--serve: the tests of a group get their answers from one process, started
once even when two ask at once; one that dies while it answers leaves the
test the harness's error with its last words; one that cannot start leaves
the probe to its own interpreter; an idle one exits. And the group of
cuda_questions.SHARED_CHILD is the one its tests' declared lock names.

The forking interpreter (serve_forks, relay_fork), with a plain Python
server too: each probe runs in a child of its own, with the test's stdout
and exit status, or dies of the signal its child died of; a child whose
test went away is killed; another environment gets another server; the
server ends with its run's directory."""

from __future__ import annotations

import json
import os
import shutil
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


# A stand-in for torch_backends.py --serve-forks DIR, and for a test's
# torch_backends.py PROBE that relays to it.
FORK_SERVER = r"""
import json, os, sys, time
from pathlib import Path
sys.path.insert(0, {probes!r})
import shared_child
WHERE = Path(sys.argv[2])

def run(argv):
    probe = argv[-1]
    if probe == "segv":
        os.kill(os.getpid(), 11)
    if probe == "sleeps":
        (WHERE / "sleeping").write_text(str(os.getpid()))
        time.sleep(120)
    if probe == "raises":
        raise RuntimeError("a fault in the probe")
    print(json.dumps({{"probe": probe, "pid": os.getpid(), "server": os.getppid(),
                      "stdin": sys.stdin.read(), "env": os.environ.get("PROBE_ENV", "")}}))
    return 3 if probe == "absent" else 0

sys.exit(shared_child.serve_forks(WHERE, run, idle_s=float(sys.argv[3])))
"""
FORK_CLIENT = r"""
import sys
from pathlib import Path
sys.path.insert(0, {probes!r})
import shared_child
where = Path(sys.argv[1])
code = shared_child.relay_fork([__file__, sys.argv[2]], [sys.executable, {server!r}, "--serve-forks", str(where),
                               sys.argv[3]], where)
print("ran here" if code is None else "", end="")
sys.exit(code or 0)
"""


class ForkingServerTest(unittest.TestCase):
    def setUp(self) -> None:
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        self.t = Path(tmp.name)
        self.server = self.t / "server.py"
        self.server.write_text(FORK_SERVER.format(probes=str(PROBES)))
        self.client = self.t / "client.py"
        self.client.write_text(FORK_CLIENT.format(probes=str(PROBES), server=str(self.server)))
        self.dir = self.t / "shared"

    def ask(self, probe: str, idle_s: float = 5.0, env: dict[str, str] | None = None,
            stdin: str = "") -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, str(self.client), str(self.dir), probe, str(idle_s)],
                              input=stdin, capture_output=True, text=True, timeout=60,
                              env=dict(os.environ, **(env or {})))

    def logs(self) -> str:
        return "".join(p.read_text() for p in sorted(self.dir.glob("forks-*.log")))

    def test_each_probe_runs_in_a_child_of_its_own_with_the_test_s_streams_and_status(self) -> None:
        first = self.ask("first", stdin="the test's stdin")
        self.assertEqual(first.returncode, 0, first.stderr)
        seen = json.loads(first.stdout)
        self.assertEqual((seen["probe"], seen["stdin"]), ("first", "the test's stdin"))
        answers: list[subprocess.CompletedProcess] = []
        threads = [threading.Thread(target=lambda p=p: answers.append(self.ask(p))) for p in ("a", "b", "absent")]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        self.assertEqual(sorted((r.returncode, json.loads(r.stdout)["probe"]) for r in answers),
                         [(0, "a"), (0, "b"), (3, "absent")], "each probe's output and exit status are its test's")
        outputs = [json.loads(r.stdout) for r in answers] + [seen]
        self.assertEqual(len({o["pid"] for o in outputs}), 4, "a process for each probe")
        self.assertEqual(len({o["server"] for o in outputs}), 1, "all forked by one interpreter")
        self.assertEqual(self.logs().count("forks the probes of"), 1, self.logs())

    def test_a_probe_that_dies_of_a_signal_kills_its_test_with_it(self) -> None:
        died = self.ask("segv")
        self.assertEqual(died.returncode, -11, died.stderr)
        raised = self.ask("raises")
        self.assertEqual(raised.returncode, 1)
        self.assertIn("RuntimeError: a fault in the probe", raised.stderr, "the traceback on the test's stderr")
        self.assertEqual(self.ask("after").returncode, 0, "the server outlives its children")

    def test_a_probe_whose_test_went_away_is_killed(self) -> None:
        test = subprocess.Popen([sys.executable, str(self.client), str(self.dir), "sleeps", "5"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.addCleanup(test.wait)
        marker = self.dir / "sleeping"
        deadline = time.monotonic() + 30
        while not marker.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        child = int(marker.read_text())
        test.kill()
        deadline = time.monotonic() + 10
        while Path(f"/proc/{child}").exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        self.assertFalse(Path(f"/proc/{child}").exists(), "the probe's child outlived its test")
        self.assertIn(f"the test of child {child} went away: killed", self.logs())

    def test_another_environment_is_served_by_another_interpreter(self) -> None:
        one, other = self.ask("p", env={"PROBE_ENV": "one"}), self.ask("p", env={"PROBE_ENV": "other"})
        self.assertEqual((json.loads(one.stdout)["env"], json.loads(other.stdout)["env"]), ("one", "other"))
        self.assertNotEqual(json.loads(one.stdout)["server"], json.loads(other.stdout)["server"])

    def test_the_server_ends_with_its_run_s_directory_or_when_idle(self) -> None:
        server = json.loads(self.ask("p", idle_s=60).stdout)["server"]
        log = self.logs()
        shutil.rmtree(self.dir)
        deadline = time.monotonic() + 10
        while Path(f"/proc/{server}").exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        self.assertFalse(Path(f"/proc/{server}").exists(), log)
        self.ask("q", idle_s=0.3)
        deadline = time.monotonic() + 10
        while "done" not in self.logs() and time.monotonic() < deadline:
            time.sleep(0.05)
        self.assertIn("no question for 0.3 s: done", self.logs())

    def test_a_server_that_cannot_start_leaves_the_probe_to_its_test(self) -> None:
        self.server.write_text("import sys\nprint('cannot import torch', file=sys.stderr)\nsys.exit(3)\n")
        r = self.ask("p")
        self.assertEqual((r.returncode, r.stdout), (0, "ran here"))
        self.assertIn("did not listen (cannot import torch): p runs in its own interpreter", self.logs())


class SharedGroupTest(unittest.TestCase):
    def test_the_group_is_its_tests_lock_and_names_untimed_probes_only(self) -> None:
        declared = load_declared(DECLARED)
        for group, probes in cuda_questions.SHARED_CHILD.items():
            locked = {p.name for p in declared if p.lock == group}
            self.assertEqual(locked, set(probes), group)
            self.assertTrue(set(probes) <= set(cuda_questions.PROBES), group)
            serial = {p.name for p in declared if p.serial}
            self.assertEqual(set(probes) & serial, set(), "a probe that times the device keeps its own interpreter")

    def test_the_probes_are_forked_unless_they_say_why_not(self) -> None:
        declared = load_declared(DECLARED)
        forked = {p.name for p in declared if p.forked}
        self.assertTrue(forked, "some probe is forked")
        self.assertFalse(forked & {p.name for p in declared if p.fresh}, "a probe that says why keeps its own")

if __name__ == "__main__":
    unittest.main()
