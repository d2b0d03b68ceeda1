"""ci/kit_steps.py, the GPU kit's budgeted test calls, over a stand-in for
ctest (a script that lists five tests and runs each for a set time, writing
a record before and after): what a call starts, cuts and leaves, resuming,
a test too long for any call, the archive's limits, and a call stopped by
SIGTERM."""

from __future__ import annotations

import argparse
import base64
import contextlib
import hashlib
import io
import json
import os
import shutil
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
    # What ctest says of each test's company: TESTS_PROPERTIES (JSON {{test:
    # [{{"name": ..., "value": ...}}]}}) where a test sets it, else none.
    PROPERTIES = json.loads(os.environ.get("TESTS_PROPERTIES", "{{}}"))
    args = sys.argv[1:]
    if "--show-only=json-v1" in args:
        excluded = args[args.index("-LE") + 1] if "-LE" in args else ""
        print(json.dumps({{"tests": [{{"name": n, "properties": PROPERTIES.get(n, [])}} for n in TESTS
                                    if not (excluded == "selftest" and n in SELFTESTS)]}}))
        sys.exit(0)
    name = args[args.index("-R") + 1][1:-1].replace("\\\\", "")
    ev = os.environ["BACKENDCHECK_EVIDENCE_DIR"]
    with open(os.path.join(ev, "t-%d.jsonl" % os.getpid()), "w") as f:
        # The GPU its own ctest was given (--resource-spec-file), if any.
        spec = args[args.index("--resource-spec-file") + 1] if "--resource-spec-file" in args else None
        gpus = [g["id"] for g in json.load(open(spec))["local"][0]["gpus"]] if spec else None
        shared = os.path.basename(os.environ.get("BACKENDCHECK_PROBE_SHARED_DIR", ""))
        f.write(json.dumps({{"kind": "case", "schema": 1, "test": name, "began": time.time(), "gpus": gpus,
                            "shared": shared}}) + "\\n")
        f.flush()
        time.sleep(TESTS[name])
        outcome = "failed" if name == "Fails" else "passed"
        f.write(json.dumps({{"kind": "result", "schema": 1, "test": name, "outcome": outcome,
                            "ended": time.time()}}) + "\\n")
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
        # Equal times: the plan keeps ctest's order (none of them decides a claim).
        self.durations = self.t / "durations.json"
        self.durations.write_text(json.dumps({"A": 0.1, "B": 0.1, "Slow": 0.1, "C": 0.1, "Fails": 0.1}))

    def argv(self, budget: float) -> list[str]:
        return ["test", "--build", str(self.t / "build"), "--state", str(self.t / "state"), "--out",
                str(self.t / "out"), "--budget", str(budget), "--name", "node", "--ctest", str(self.ctest),
                "--durations", str(self.durations), "--label", "", "--jobs", "1"]

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
        self.assertEqual(rc, kit_steps.EXIT_LEFT, "tests are left")
        self.assertEqual([x["test"] for x in steps["ran"]], ["A", "B"])
        self.assertEqual(steps["cut"], ["Slow"], "Slow was expected to fit and ran into the budget")
        self.assertEqual({r["test"] for r in records}, {"A", "B"}, "the cut test's partial records are dropped")
        self.assertEqual(steps["left"], ["Slow", "C", "Fails"])
        rc, steps, records = self.call(3.0)
        self.assertEqual(rc, kit_steps.EXIT_LEFT)
        self.assertEqual((steps["ran"], steps["cut"], steps["too_long"]), ([], ["Slow"], ["Slow"]),
                         "cut again with a whole call of its own: too long for one")
        self.assertEqual(records, [])
        rc, steps, records = self.call(3.0)
        self.assertEqual(rc, 1, "all done, one failed")
        self.assertEqual([(x["test"], x["outcome"]) for x in steps["ran"]], [("C", "passed"), ("Fails", "failed")])
        self.assertEqual(steps["left"], [])
        self.assertEqual(sorted(r["test"] for r in records if r["kind"] == "result"), ["C", "Fails"])

    def test_each_archive_carries_the_pre_flight_s_findings(self) -> None:
        findings = self.t / "preflight.json"
        findings.write_text(json.dumps({"schema": 1, "needs": {"driver": {"state": "missing", "why": "no driver"}}}))
        r = subprocess.run([sys.executable, "-m", "ci.kit_steps", *self.argv(0)], cwd=ROOT, capture_output=True,
                           text=True, timeout=60, env=dict(os.environ, BACKENDCHECK_PREFLIGHT=str(findings)))
        self.assertEqual(r.returncode, 1, r.stderr)
        with tarfile.open(self.t / "out" / "backendcheck-gpu-node-1.tar.gz") as tf:
            self.assertEqual(json.loads(tf.extractfile("node-1/preflight.json").read()),
                             json.loads(findings.read_text()))

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

    def test_a_session_builds_in_its_first_call_and_then_tests_for_the_call_less_its_reserve(self) -> None:
        """ci/gpu-kit session, the one command of each call of a runner: where
        no build of this kit is in --work it builds (here refused: the
        interpreter named imports no torch); where one is, it tests for
        CALL_S less RESERVE_S."""
        kit, work = self.t / "kit.tar.gz", self.t / "work"
        kit.write_bytes(b"a kit")
        work.mkdir()
        env = dict(os.environ, PATH=f"{self.t}{os.pathsep}{os.environ['PATH']}")  # the stand-in ctest
        session = [str(ROOT / "ci" / "gpu-kit"), "session", str(kit), "--work", str(work), "--out", str(self.t / "out")]
        r = subprocess.run([*session, "--torch", "false"], env=env, capture_output=True, text=True, timeout=60)
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertIn("build: ", r.stderr, "no build of this kit: the session builds first")
        (work / "kit.env").write_text(
            f"KIT_PY={sys.executable}\nKIT_NAME=node\nKIT_BUILD={self.t / 'build'}\nKIT_SRC={ROOT}\n"
            f"KIT_SUM={hashlib.sha256(kit.read_bytes()).hexdigest()}\n")
        r = subprocess.run(session, env=env, capture_output=True, text=True, timeout=120)
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)  # all done, one failed
        self.assertIn(f"a test call of {int(kit_steps.CALL_S - kit_steps.RESERVE_S)} s", r.stdout)
        steps, _ = self.archive(1)
        self.assertEqual((steps["budget_s"], sorted(x["test"] for x in steps["ran"])),
                         (kit_steps.CALL_S - kit_steps.RESERVE_S, ["A", "B", "C", "Fails", "Slow"]))
        shutil.rmtree(work / "state")
        slow = self.t / "slow.json"  # a recorded run in which Slow took longer than any call
        slow.write_text(json.dumps({"A": 0.1, "B": 0.1, "Slow": 1000, "C": 0.1, "Fails": 0.1}))
        serial = dict(env, TESTS_PROPERTIES=json.dumps({"Slow": [{"name": "RUN_SERIAL", "value": True}]}))
        r = subprocess.run([*session, "--budget", "100", "--durations", str(slow)], env=serial, capture_output=True,
                           text=True, timeout=120)
        self.assertEqual(r.returncode, kit_steps.EXIT_LEFT, r.stdout + r.stderr)
        self.assertIn("a test call of 100 s", r.stdout, "--budget gives a call less")
        steps, _ = self.archive(1)
        self.assertEqual((steps["budget_s"], sorted(x["test"] for x in steps["ran"]), steps["left"]),
                         (100, ["A", "B", "C", "Fails"], ["Slow"]), "the durations given: Slow last, left")

    def test_the_last_call_exits_as_the_report_of_the_calls_holds_them(self) -> None:
        """Every test done, none failed: the call exits by the known findings,
        as ./backendcheck run does (here the H100's recorded PyTorch probes)."""
        call = kit_steps.Call.__new__(kit_steps.Call)
        call.a, call.state_dir, call.k = argparse.Namespace(name="h100"), self.t / "state", 1
        call.work = self.t / "state" / "h100-1"
        shutil.copytree(ROOT / "reports" / "tests" / "data" / "h100" / "torchpython-1", call.work)
        self.assertEqual(call.judge(), 0, "cublas-config is refuted, as known for CUDA and torch 2.10 on")
        for f in (call.work / "evidence").glob("*.jsonl"):  # as if a torch before 2.10 had refuted it
            f.write_text(f.read_text().replace('"version":"2.11.0+cu130"', '"version":"2.9.1+cu130"'))
        self.assertEqual(call.judge(), 3, "a guarantee refuted with no known finding")

    def test_a_test_is_started_only_where_its_expected_time_fits(self) -> None:
        state = {"done": {"A": "passed"}, "cut": [], "too_long": []}
        plan = kit_steps.remaining(["A", "B", "C"], state)

        def starts(elapsed: float, expected: dict, first: bool, order: list[str] = plan) -> list[str]:
            return kit_steps.starts(order, [], {}, elapsed, 10.0, expected, 1, first)

        self.assertEqual(starts(0.0, {"B": 20.0}, True), ["B"], "the first test of a call always starts")
        self.assertEqual(starts(1.0, {"B": 20.0}, False), [])
        self.assertEqual(starts(1.0, {"B": 20.0, "C": 1.0}, False), [],
                         "in order: a shorter later test does not jump ahead")
        self.assertEqual(starts(6.0, {}, False), [], f"unmeasured: {kit_steps.DEFAULT_S} s expected")
        state["cut"] = ["C"]
        self.assertEqual(starts(0.0, {}, True, kit_steps.remaining(["A", "B", "C"], state)), ["C"],
                         "the cut test first")

    def test_a_call_gives_each_gpu_test_its_gpu_of_the_builds_spec(self) -> None:
        """A build configured with a resource spec of two GPUs: the two
        GPU tests run at once, each test's ctest given one GPU of its own;
        a test without a resource group gets none."""
        spec = self.t / "spec.json"
        spec.write_text(json.dumps({"version": {"major": 1, "minor": 0},
                                    "local": [{"gpus": [{"id": "0", "slots": 1}, {"id": "1", "slots": 1}]}]}))
        (self.t / "build").mkdir(exist_ok=True)
        (self.t / "build" / "CMakeCache.txt").write_text(f"CTEST_RESOURCE_SPEC_FILE:INTERNAL={spec}\n")
        gpu = [{"name": "RESOURCE_GROUPS", "value": [{"requirements": [{".type": "gpus", "slots": 1}]}]}]
        props = {"A": gpu, "Slow": gpu, "B": gpu}
        r = subprocess.run([sys.executable, "-m", "ci.kit_steps", *self.argv(0)[:-2], "--jobs", "4"], cwd=ROOT,
                           capture_output=True, text=True, timeout=60,
                           env=dict(os.environ, TESTS_PROPERTIES=json.dumps(props)))
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)  # all done, one failed
        _, records = self.archive(1)
        given = {r["test"]: r["gpus"] for r in records if "began" in r}
        self.assertEqual((given["C"], given["Fails"]), (None, None))
        self.assertTrue(all(given[t] in (["0"], ["1"]) for t in props), given)
        shared = {r["test"]: r["shared"] for r in records if "began" in r}
        self.assertEqual({t: shared[t] for t in props}, {t: f"shared-gpu{given[t][0]}" for t in props},
                         "an interpreter shared on one GPU answers that GPU's tests only")
        self.assertEqual(shared["C"], "shared")
        began = {r["test"]: r["began"] for r in records if "began" in r}
        ended = {r["test"]: r["ended"] for r in records if "ended" in r}
        together = [(a, b) for a, b in (("A", "Slow"), ("A", "B"), ("B", "Slow"))
                    if began[a] < ended[b] and began[b] < ended[a]]
        self.assertTrue(together, f"two GPU tests ran at once: {began} {ended}")
        for a, b in together:
            self.assertNotEqual(given[a], given[b], f"{a} and {b} ran at once on one GPU")

    def test_tests_run_beside_each_other_as_ctest_would_let_them(self) -> None:
        """RUN_SERIAL alone; the others beside each other up to --jobs
        processors (their PROCESSORS), never two of one RESOURCE_LOCK: the
        start rule, then a call over the stand-in ctest."""
        lanes = {"S": kit_steps.lane("TRUE", 1, []), "P": kit_steps.lane(False, 2, []),
                 "Q": kit_steps.lane(False, 1, "child"), "R": kit_steps.lane(False, 1, ["child"]),
                 "T": kit_steps.lane(False, 1, [])}
        order = ["P", "Q", "R", "T", "S"]
        begin = kit_steps.starts(order, [], lanes, 0.0, 100.0, {}, 4, True)
        self.assertEqual(begin, ["P", "Q", "T"], "R waits for Q's lock and is passed over; S waits for the machine")
        self.assertEqual(kit_steps.starts(order, ["P", "Q"], lanes, 1.0, 100.0, {}, 3, False), [],
                         "T waits for a processor: R, holding Q's lock, is passed over; S waits")
        self.assertEqual(kit_steps.starts(["S", "T"], [], lanes, 0.0, 100.0, {}, 4, True), ["S"],
                         "a RUN_SERIAL test starts alone, and nothing beside it")
        self.assertEqual(kit_steps.starts(["T"], ["S"], lanes, 1.0, 100.0, {}, 4, False), [])
        self.assertEqual(kit_steps.starts(["P"], [], lanes, 0.0, 100.0, {}, 1, True), ["P"],
                         "a test asking for more processors than --jobs runs where nothing else does")
        serial = [{"name": "RUN_SERIAL", "value": True}]
        props = {"A": serial, "Slow": serial, "B": [{"name": "PROCESSORS", "value": 1}]}
        r = subprocess.run([sys.executable, "-m", "ci.kit_steps", *self.argv(0)[:-2], "--jobs", "3"], cwd=ROOT,
                           capture_output=True, text=True, timeout=60,
                           env=dict(os.environ, TESTS_PROPERTIES=json.dumps(props)))
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)  # all done, one failed
        _, records = self.archive(1)
        span = {r["test"]: [r["began"]] for r in records if "began" in r}
        for r in records:
            if "ended" in r:
                span[r["test"]].append(r["ended"])
        plan = json.loads((self.t / "state" / "plan.json").read_text())
        self.assertEqual(plan, ["B", "C", "Fails", "A", "Slow"], "those that may run beside others first")
        self.assertLess(max(span[t][0] for t in plan[:3]), min(span[t][1] for t in plan[:3]),
                        f"B, C and Fails ran at once: {span}")
        self.assertGreaterEqual(span["A"][0], max(span[t][1] for t in plan[:3]), f"A ran alone: {span}")
        self.assertGreaterEqual(span["Slow"][0], span["A"][1], f"Slow ran alone: {span}")

    def test_an_archive_over_the_file_limit_comes_back_in_parts(self) -> None:
        noise = self.t / "build" / "generated" / "cases.json"  # a manifest that hardly compresses
        noise.write_text(json.dumps({"cases": [], "noise": base64.b64encode(os.urandom(50_000)).decode()}))
        a = argparse.Namespace(
            build=self.t / "build", state=self.t / "state", out=self.t / "out", budget=0.0, label="", regex="",
            exclude_label="selftest", name="node", durations=None, ctest=str(self.ctest), done=[], jobs=1)
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


def _claim(cid: str, about: str, evidence: str, kind: str = "guarantee", prediction: str = "") -> str:
    return (f'[[claim]]\nid = "{cid}"\nstatement = "s"\nsource = "s"\nkind = "{kind}"\nabout = "{about}"\n'
            f"[claim.evidence]\n{evidence}\n" + (f"[claim.prediction]\n{prediction}\n" if prediction else ""))


# A catalog of six claims: one decided by one test, one by a prediction's
# mirror beside PyTorch's own test, one by three matrix cases (the controls
# left out), one by two PyTorch probes, one by a matrix case and a PyTorch
# probe, and one out of scope.
CATALOG = "\n".join([
    _claim("solo", "cudnn", 'rule = "fact"\nsystem = "cudnn"\ntests = ["Solo.Test"]'),
    _claim("fresh", "pytorch", 'rule = "fact"\nsystem = "pytorch"\ntests = ["TorchPython.Fresh*"]'),
    _claim("both", "any", 'rule = "fact"\nsystem = "any"\ntests = ["Gpu/Both", "TorchPython.Both"]'),
    _claim("probe", "pytorch", 'rule = "fact"\nsystem = "pytorch"\ntests = ["TorchPython.Probe"]',
           prediction='rule = "fact"\nsystem = "model"\ntests = ["Model.Mirror"]'),
    _claim("many", "cudnn", 'rule = "fact"\nsystem = "cudnn"\n'
                            'cases = { fixture = "Determinism", device = "cuda", positive_control = false }'),
    _claim("elsewhere", "cudnn", 'rule = "out-of-scope"\nreason = "r"', kind="out-of-scope"),
])


def _case(test: str, control: bool = False, labels: tuple[str, ...] = ("gpu", "ci")) -> dict:
    return {"test": test, "fixture": "Determinism", "suite": "s", "binary": "gpu_tests", "positive_control": control,
            "axes": {"device": "cuda", "engine": "cudnn"}, "labels": list(labels)}


class PlanOrderTest(unittest.TestCase):
    """The kit's plan runs what decides claims first (ci/kit_steps.py
    claim_order), and the calls of a session predicted from recorded
    durations (predict)."""

    def setUp(self) -> None:
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        self.t = Path(tmp.name)
        self.claims = self.t / "claims.toml"
        self.claims.write_text(CATALOG)
        self.manifest = [_case("Gpu/D1"), _case("Gpu/D2"), _case("Gpu/D3"), _case("Ctl/C1", True),
                         _case("Ctl/C2", True)]

    def test_claims_no_recorded_run_decided_first_then_the_controls_then_the_fewest_tests_of_a_claim(self) -> None:
        ctest = ["Other.Test", "Gpu/D1", "Gpu/D2", "Gpu/D3", "Ctl/C1", "Ctl/C2", "Model.Mirror", "Solo.Test",
                 "TorchPython.Probe", "TorchPython.FreshAlone", "TorchPython.FreshBeside", "TorchPython.FreshLong",
                 "Gpu/Both", "TorchPython.Both"]
        expected = {"Gpu/D1": 10.0, "Gpu/D2": 1.0, "Solo.Test": 30.0, "TorchPython.Probe": 2.0, "Ctl/C1": 4.0,
                    "Ctl/C2": 3.0, "Model.Mirror": 1.0, "Other.Test": 0.5, "Gpu/Both": 1.0}  # Gpu/D3: DEFAULT_S
        probes = {t: kit_steps.lane(t.endswith("Alone"), 1, [], "pytorch_python_tests")
                  for t in ctest if t.startswith("TorchPython.")}
        lanes = {**probes, **{t: kit_steps.lane(True, 1, [], "gpu_tests") for t in ctest if t.startswith("Gpu/")}}
        manifest = self.manifest + [_case("Gpu/Both")]
        plan, group = kit_steps.claim_order(ctest, manifest, expected, self.claims, lanes,
                                            {"TorchPython.FreshLong": 60.0, "TorchPython.FreshBeside": 20.0})
        self.assertEqual(plan, [
            # claims no recorded run timed a test of: fresh, wholly; both, its probe (PyTorch's first evidence
            # beside the harness's recorded case); those beside others first, the longest first by estimate
            "TorchPython.FreshLong", "TorchPython.FreshBeside", "TorchPython.Both", "TorchPython.FreshAlone",
            "Ctl/C2", "Ctl/C1",                  # the positive controls first, the shorter first
            "TorchPython.Probe",                 # beside others
            "Solo.Test", "Gpu/Both",             # claims of one test each (both's recorded half), the shorter
            "Gpu/D2", "Gpu/D1", "Gpu/D3",        # the claim of three; D3, never timed, after those timed
            "Model.Mirror",                      # a prediction's
            "Other.Test"])                       # the rest, although the shortest of all
        self.assertEqual([group[t] for t in plan], [0] * 4 + [1] * 8 + [2, 3])
        self.assertEqual(kit_steps.claim_order(ctest, manifest, {}, self.claims, lanes)[1]["Gpu/D1"], 0,
                         "nothing recorded: every claim is new")
        same = {t: 1.0 for t in ctest}
        self.assertEqual(kit_steps.claim_order(["Gpu/D2", "Gpu/D1", "Gpu/D3"], self.manifest, same, self.claims)[0],
                         ["Gpu/D2", "Gpu/D1", "Gpu/D3"], "equal ranks and times: ctest's order")

    def test_the_calls_of_a_session_as_the_kit_takes_them(self) -> None:
        plan = ["A", "B", "C", "D"]
        expected = {"A": 300.0, "B": 200.0, "C": 100.0}  # D: not measured
        calls, left, too_long = kit_steps.predict(plan, expected, {}, (600, 600), setup=83, reserve=60, overhead=10)
        self.assertEqual([([x["test"] for x in c["ran"]], c["budget"]) for c in calls],
                         [(["A"], 457), (["B", "C", "D"], 540)],
                         "B does not fit what the build left of call 1; call 2 takes the rest")
        self.assertEqual([(c["seconds"], c["wall"], c["margin"]) for c in calls],
                         [(300, 393, 207), (305, 315, 285)])
        self.assertEqual([x["start"] for x in calls[1]["ran"]], [0, 200, 300])
        self.assertEqual((left, too_long), ([], []))
        calls, left, _ = kit_steps.predict(plan, expected, {}, (600,), setup=83, reserve=60, overhead=10)
        self.assertEqual(left, ["B", "C", "D"])
        calls, left, _ = kit_steps.predict(plan, expected, {}, (600, 310))
        self.assertEqual((calls[1]["budget"], [x["test"] for x in calls[1]["ran"]], left), (250, ["B"], ["C", "D"]),
                         "a later call of a shorter limit")
        calls, left, too_long = kit_steps.predict(["Huge", "A"], {"Huge": 700.0, "A": 300.0}, {}, (600, 600),
                                                  setup=83)
        self.assertEqual((too_long, [x["test"] for x in calls[1]["ran"]], left), (["Huge"], ["A"], []),
                         "a test longer than a call takes call 1's budget and is not run again")
        # Beside each other: P (2 processors) and Q at once, R after Q (one
        # lock), T beside them when a processor is free, S alone at the end.
        lanes = {"S": kit_steps.lane(True, 1, []), "P": kit_steps.lane(False, 2, []),
                 "Q": kit_steps.lane(False, 1, ["child"]), "R": kit_steps.lane(False, 1, ["child"]),
                 "T": kit_steps.lane(False, 1, [])}
        seconds = {"P": 100.0, "Q": 30.0, "R": 30.0, "T": 50.0, "S": 10.0}
        calls, left, _ = kit_steps.predict(["P", "Q", "R", "T", "S"], seconds, lanes, (600,), setup=0, jobs=3)
        self.assertEqual([(x["test"], x["start"]) for x in calls[0]["ran"]],
                         [("P", 0), ("Q", 0), ("R", 30), ("T", 60), ("S", 110)])
        self.assertEqual((calls[0]["seconds"], left), (120, []))
        text = kit_steps.render_prediction(plan, dict.fromkeys(plan, 3), expected, {"A": "recorded (a.json)"}, {}, {},
                                           kit_steps.predict(plan, expected, {}, (600,))[0], ["B", "C", "D"], [],
                                           83, 10, 60, 1, "gpu")
        self.assertIn(f"+ 300 s A, alone; recorded (a.json)", text)
        self.assertIn("Waits for another lease: 3 tests, 305 s one after another:\n  the rest: B (200 s); C (100 s); "
                      "D (5 s)", text)
        self.assertIn("Tests no recorded run timed, by binary: the matrix's cases 3 (waiting: 3).", text)

    def test_gpu_tests_take_a_gpu_of_the_resource_spec_as_ctest_would_give_it(self) -> None:
        """With a spec (each GPU's slots), a GPU test starts where a GPU has
        the slots its resource group asks for: one alone on its GPU takes
        them all, the others one each; without a spec the groups are
        ignored, as ctest ignores them."""
        whole = kit_steps.WHOLE_GPU
        lanes = {"A": kit_steps.lane(False, 1, [], "gpu_tests", whole), "B": kit_steps.lane(False, 1, [], "", whole),
                 "C": kit_steps.lane(False, 1, [], "", 1), "D": kit_steps.lane(False, 1, [], "", 1),
                 "E": kit_steps.lane(False, 1, [], "", 1), "Cpu": kit_steps.lane(False, 1, [])}
        placed: dict[str, int] = {}
        self.assertEqual(kit_steps.starts(["A", "B", "C", "Cpu"], [], lanes, 0.0, 100.0, {}, 8, True, [2, 2], placed),
                         ["A", "B", "Cpu"], "two timing tests at once, one per GPU; C waits for a GPU; a CPU test "
                         "takes none")
        self.assertEqual(placed, {"A": 0, "B": 1})
        del placed["A"]
        self.assertEqual(kit_steps.starts(["C", "D", "E"], ["B"], lanes, 1.0, 100.0, {}, 8, False, [2, 2], placed),
                         ["C", "D"], "two tests that share a GPU of two slots, none beside B on its GPU")
        self.assertEqual((placed["C"], placed["D"]), (0, 0))
        self.assertEqual(kit_steps.starts(["A", "B"], [], lanes, 0.0, 100.0, {}, 8, True, [1], {}), ["A"],
                         "the control: one GPU runs one timing test")
        self.assertEqual(kit_steps.starts(["A", "B", "C"], [], lanes, 0.0, 100.0, {}, 8, True), ["A", "B", "C"],
                         "without a spec the groups are ignored (the build then makes a timing test RUN_SERIAL)")
        calls, left, _ = kit_steps.predict(["A", "B", "C", "D"], {"A": 10.0, "B": 20.0, "C": 5.0, "D": 5.0}, lanes,
                                           (600,), setup=0, jobs=8, gpus=[1, 1])
        self.assertEqual([(x["test"], x["start"], x["gpu"]) for x in calls[0]["ran"]],
                         [("A", 0, 0), ("B", 0, 1), ("C", 10, 0), ("D", 15, 0)])
        self.assertEqual((calls[0]["seconds"], left), (20, []))
        text = kit_steps.render_prediction(["A", "B", "C", "D"], dict.fromkeys("ABCD", 3), {}, {}, lanes, {}, calls,
                                           [], [], 0, 10, 60, 8, "gpu", [1, 1])
        self.assertIn("GPU tests on 2 GPU(s) of 1/1 slot(s)", " ".join(text.split()))
        self.assertIn("B, alone on GPU 1, beside other GPUs' tests", text)
        self.assertIn("C, on GPU 0, beside other GPUs' tests", text)
        # A listing made without a spec, as a build with one runs it: the GPU
        # binary's RUN_SERIAL tests alone on their GPU, and no longer serial.
        made = kit_steps.with_gpus({"G": kit_steps.lane(True, 1, [], "gpu_tests"), "S": kit_steps.lane(True, 1, []),
                                    "P": kit_steps.lane(True, 1, [], "pytorch_python_tests", whole)})
        self.assertEqual({t: (x["serial"], x["gpus"]) for t, x in made.items()},
                         {"G": (False, whole), "S": (True, 0), "P": (False, whole)})

    def test_a_listing_and_the_probes_cmake_say_which_gpu_tests_take_a_whole_gpu(self) -> None:
        listing = {"tests": [
            {"name": "G", "command": ["/b/gpu_tests"],
             "properties": [{"name": "RESOURCE_GROUPS", "value": [{"requirements": [{".type": "gpus", "slots": 2}]}]}]},
            {"name": "C", "command": ["/b/other"], "properties": []}]}
        self.assertEqual({t: x["gpus"] for t, x in kit_steps.lanes_of(listing).items()}, {"G": 2, "C": 0})
        cmake = self.t / "probes.cmake"
        cmake.write_text('set_tests_properties([==[TorchPython.Speed]==] PROPERTIES LABELS "pytorch;gpu" TIMEOUT 600)\n'
                         "bc_gpu_test([==[TorchPython.Speed]==] ALONE)\n"
                         "bc_gpu_test([==[TorchPython.Count]==] SHARED LOCK child)\n")
        lanes = kit_steps.cmake_lanes(cmake)
        self.assertEqual({t: (x["serial"], x["locks"], x["gpus"]) for t, x in lanes.items()},
                         {"TorchPython.Speed": (True, [], kit_steps.WHOLE_GPU),
                          "TorchPython.Count": (False, ["child"], 1)})

    def test_predict_plans_the_recorded_tier_with_the_cut_matrix_and_new_probes(self) -> None:
        recorded = self.t / "h100-1"
        recorded.mkdir()
        listed = [("Gpu/D1", "gpu;ci"), ("Gpu/Cut", "gpu;ci"), ("Solo.Test", "gpu"), ("Cpu/X", "cpu"),
                  ("Self.Check", "gpu;selftest"), ("TorchPython.Probe", "pytorch;gpu")]
        serial = [{"name": "RUN_SERIAL", "value": True}]  # as the GPU test binary's tests
        (recorded / "ctest-tests.json").write_text(json.dumps({"tests": [
            {"name": n, "properties": [{"name": "LABELS", "value": labels.split(";")}]
             + (serial if "pytorch" not in labels else []),
             "command": ["/b/" + ("gpu_tests" if n.startswith("Gpu/") else "pytorch_python_tests"
                                  if "pytorch" in labels else "other_tests")]}
            for n, labels in listed]}))
        (recorded / "cases.json").write_text(json.dumps({"cases": [_case("Gpu/D1"), _case("Gpu/Cut")]}))
        manifest = self.t / "cases.json"
        manifest.write_text(json.dumps({"cases": [_case("Gpu/D1"), _case("Gpu/D2"), _case("Cpu/Y", labels=("cpu",))]}))
        cmake = self.t / "labels.cmake"
        cmake.write_text('set_tests_properties([==[TorchPython.Probe]==]\n  [==[TorchPython.NewOnGpu]==] '
                         'PROPERTIES LABELS "pytorch;gpu")\nset_tests_properties([==[TorchPython.Cpu]==] '
                         'PROPERTIES LABELS "pytorch;cpu")\n')
        tests = kit_steps.tier_tests(recorded, json.loads(manifest.read_text())["cases"], "gpu", "selftest", [cmake])
        self.assertEqual(tests, ["Gpu/D1", "Solo.Test", "TorchPython.Probe", "Gpu/D2", "TorchPython.NewOnGpu"],
                         "the cut case left out, the new case and the newly labelled probe in")
        steps = self.t / "kit-steps.json"
        steps.write_text(json.dumps({"ran": [{"test": "Gpu/D1", "seconds": 110.0, "outcome": "passed"},
                                             {"test": "Solo.Test", "seconds": 200.0, "outcome": "passed"}]}))
        first = self.t / "first.json"
        first.write_text(json.dumps({"source": "an earlier run", "seconds": {"TorchPython.Probe": 150.0,
                                                                            "Solo.Test": 1.0}}))
        self.assertEqual(kit_steps.load_durations([first, steps]),
                         {"TorchPython.Probe": 150.0, "Solo.Test": 200.0, "Gpu/D1": 110.0}, "the later file wins")
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            rc = kit_steps.main(["predict", "--recorded", str(recorded), "--manifest", str(manifest), "--durations",
                                 str(first), str(steps), "--cmake", str(cmake), "--claims", str(self.claims)])
        text = out.getvalue()
        self.assertEqual(rc, 0, text)
        # Lines that name a file wrap where its path is long (a temporary
        # directory's): those are compared word by word.
        flat = lambda said: " ".join(said.split())  # noqa: E731
        self.assertIn("The plan: 5 tests labelled gpu, 470 s of tests one after another: claims no recorded run "
                      "decided 0 (0 s),\n    claims recorded runs decided 4 (465 s), predictions 0 (0 s), the rest 1 "
                      "(5 s).", text)
        self.assertIn(flat("call 1 (600 s): build 83 s + 2 tests in 350 s (budget 457 s) + the kit's own 10 s = 443 s, "
                      "margin 157 s\n"
                      f"  claims recorded runs decided:\n"
                      f"       0 s + 150 s TorchPython.Probe, beside others; recorded ({first})\n"
                      f"     150 s + 200 s Solo.Test, alone; recorded ({steps})\n"
                      "  claims whose evidence is then complete: solo, probe\n"), flat(text))
        self.assertIn(flat("call 2 (240 s): 3 tests in 120 s (budget 180 s) + the kit's own 10 s = 130 s, margin 110 s\n"
                      "  claims recorded runs decided:\n"
                      f"       0 s + 110 s Gpu/D1, alone; recorded ({steps})\n"
                      f"     110 s +   5 s Gpu/D2, alone; never timed, DEFAULT_S = 5 s\n"
                      "  the rest:\n"
                      "     115 s +   5 s TorchPython.NewOnGpu, beside others; never timed, DEFAULT_S = 5 s\n"
                      "  claims whose evidence is then complete: many\n"), flat(text))
        self.assertIn("Tests no recorded run timed, by binary: gpu_tests 1 (call 2: 1); pytorch_python_tests 1 "
                      "(call 2: 1).", text)
        self.assertIn("Waits for another lease: nothing.", text)
        self.assertIn("all 2 call(s): 573 s of 840 s, margin 267 s", text)
        with contextlib.redirect_stdout(io.StringIO()) as out:
            rc = kit_steps.main(["predict", "--recorded", str(recorded), "--manifest", str(manifest), "--durations",
                                 str(first), str(steps), "--cmake", str(cmake), "--claims", str(self.claims),
                                 "--limits", "600"])
        self.assertEqual(rc, 1, "tests left: exit 1")
        self.assertIn("Waits for another lease: 3 tests, 120 s one after another:\n"
                      "  claims recorded runs decided: Gpu 2 (115 s)\n  the rest: TorchPython.NewOnGpu (5 s)",
                      out.getvalue())
        # An estimate (ci/gpu-expected-seconds.json's form) fits a test into
        # the calls and is listed as such, with its basis, but does not put
        # the estimated probe before the recorded ones of its group.
        estimates = self.t / "estimates.json"
        estimates.write_text(json.dumps({"source": "guesses", "seconds": {"TorchPython.NewOnGpu": 300.0,
                                                                          "Gpu/D1": 1.0},
                                         "basis": {"TorchPython.NewOnGpu": "a guess"}}))
        with contextlib.redirect_stdout(io.StringIO()) as out:
            rc = kit_steps.main(["predict", "--recorded", str(recorded), "--manifest", str(manifest), "--durations",
                                 str(first), str(steps), "--cmake", str(cmake), "--claims", str(self.claims),
                                 "--estimates", str(estimates), "--limits", "600", "600"])
        text = out.getvalue()
        self.assertIn("765 s of tests one after another", text)
        self.assertIn("call 2 (600 s): 3 tests in 415 s (budget 540 s)", text)
        self.assertIn(flat(f"115 s + 300 s TorchPython.NewOnGpu, beside others; estimate ({estimates}): a guess"), flat(text))
        self.assertIn(flat(f"0 s + 110 s Gpu/D1, alone; recorded ({steps})"), flat(text), "a recorded time wins")


class RecordedH100PlanTest(unittest.TestCase):
    """The GPU tier of the default specs (ci tier), in the kit's order, on
    the H100's recorded durations and the estimates, over one lease (a call
    of 600 s, then one of 240 s): the build and every PyTorch probe no GPU
    has run (each with its estimate and basis) fit the first call; and
    every claim that the recorded tier's tests decided is still decided by
    what the cuts left."""

    DATA = ROOT / "reports" / "tests" / "data" / "h100"

    def test_one_lease_runs_what_no_gpu_decided_first_and_the_cuts_decide_what_it_decided(self) -> None:
        from inputs.repro import split_repro

        manifest = kit_steps.default_manifest()
        cmake = [kit_steps.PROPERTIES]
        tests = kit_steps.tier_tests(self.DATA / "tier-1", manifest, "gpu", "selftest", cmake)
        lanes = kit_steps.tier_lanes(self.DATA / "tier-1", cmake)
        recorded, estimates, basis = kit_steps.bases(sorted(self.DATA.glob("*/kit-steps.json"))
                                                     + [kit_steps.H100_FIRST_RUN], [kit_steps.ESTIMATES])
        plan, group = kit_steps.claim_order(tests, manifest, recorded, kit_steps.CLAIMS, lanes, estimates)
        expected = {**estimates, **recorded}
        calls, left, too_long = kit_steps.predict(plan, expected, lanes, kit_steps.LEASE_S, jobs=kit_steps.H100_JOBS)
        self.assertEqual(too_long, [])
        self.assertEqual([c["limit"] for c in calls], [600, 240])
        self.assertTrue(all(c["wall"] <= c["limit"] for c in calls), [c["wall"] for c in calls])
        never = [t for t in plan if lanes.get(t, {}).get("binary") == kit_steps.PROBES_BINARY and t not in recorded]
        self.assertEqual(len(never), 27, never)
        first = {x["test"] for x in calls[0]["ran"]}
        self.assertEqual([t for t in never if t not in first], [], "every probe no GPU has run, in the first call")
        self.assertTrue(all(basis[t].startswith("estimate (ci/gpu-expected-seconds.json): ") for t in never),
                        {t: basis.get(t) for t in never})
        self.assertEqual({group[t] for t in never}, {0})
        self.assertEqual({group[t] for t in left} & {0}, set(), "what waits, no GPU's first evidence")
        self.assertTrue(left, "one lease does not run the whole tier: the rest waits, and predict says so")
        # The claims' evidence before the rest: no test of another group runs
        # while one of the claims' waits.
        self.assertEqual([group[t] for t in plan], sorted(group[t] for t in plan))
        self.assertEqual([group[x["test"]] for c in calls for x in c["ran"]],
                         sorted(group[x["test"]] for c in calls for x in c["ran"]))

        recorded = kit_steps.read_manifest(self.DATA / "tier-1" / "cases.json")
        before = kit_steps.tier_tests(self.DATA / "tier-1", None, "gpu", "selftest")
        decided_before, _, _ = kit_steps.claim_selection(before, recorded)
        decided_now, _, _ = kit_steps.claim_selection(plan, manifest)
        self.assertLessEqual(set(decided_before), set(decided_now))
        self.assertIn("det-bitwise", decided_now)

        def problems(cases: list[dict], tier: list[str]) -> set[str]:  # what cpu-gpu-differ compares on a GPU
            here = set(tier)
            return {split_repro(c["repro"])[0] for c in cases if c["test"] in here and c["fixture"] == "Determinism"
                    and not c["positive_control"] and c["axes"].get("device") == "cuda"}

        self.assertEqual(problems(manifest, plan), problems(recorded, before),
                         "every problem the recorded tier ran on the GPU still runs there")


if __name__ == "__main__":
    unittest.main()
