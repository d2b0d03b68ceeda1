"""The GPU kit's test calls on a short-lived runner (ci/gpu-kit test): each
call runs what is left of a label's tests within a time budget and brings
back an archive of what it completed, small enough for the runner's return
limits; the next call resumes.

    python3 -m ci.kit_steps test --build BUILD --state DIR --out DIR --budget SECONDS \\
        [--label L] [--exclude-label L] [--regex R] [--name NAME] [--durations FILE]

- The tests are ctest's for the label (and --regex), less those of the
  excluded label (by default selftest: the harness's checks of itself,
  which record no evidence of a backend and run in ./backendcheck test),
  in ctest's order, fixed
  at the first call (DIR/plan.json). Each runs alone, in a process group of
  its own, with an evidence directory of its own.
- A test starts only when its expected time (measured in an earlier call, or
  given by --durations, else DEFAULT_S) fits in what is left of the budget;
  it may run until the budget ends. One the budget cuts off is neither
  passed nor failed: its evidence is dropped and it runs first in the next
  call, with the whole budget. One cut off with a whole budget of its own
  is too long for a call: it is recorded as such and not run again.
- After each test the archive of the call is written anew (a temporary file
  renamed into place), so a kill leaves the last complete archive; SIGTERM
  and SIGINT stop the running test (cut) and write it once more.
- The archive is OUT/backendcheck-gpu-NAME-K.tar.gz (K: the call's number),
  holding NAME-K/evidence/ (the completed tests' records only, so that no
  test is counted twice when calls merge), NAME-K/ctest-junit.xml,
  NAME-K/cases.json, NAME-K/ctest-tests.json and NAME-K/kit-steps.json
  (what ran, was cut and is left). Over MAX_FILE bytes it is split into
  parts of MAX_FILE (at most MAX_FILES files a call): cat them back together.
- A machine given back loses the state: on the next one, --done names the
  kit-steps.json of the calls already brought back, whose tests are done.
- Exit status: 0 when every test is done and none failed; 1 when one failed
  and none is left; 3 when tests are left (call again); 2 on bad input.

Merge the calls' archives: tar xzf each, then
    ./backendcheck report NAME-1/evidence NAME-2/evidence ...
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tarfile
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

MAX_FILE = 16 * 1024 * 1024  # the runner returns files of at most 16 MiB
MAX_FILES = 8                # and at most 8 of them
DEFAULT_S = 5.0              # the H100 GPU tests' mean (GPU.md), where nothing measured the test
OUTCOMES = ("passed", "failed", "skipped")


def plan_tests(build: Path, label: str, regex: str, ctest: str, exclude: str = "") -> list[str]:
    """ctest's tests for the label and regex, less the excluded label's, in
    ctest's order."""
    cmd = [ctest, "--test-dir", str(build), "--show-only=json-v1"]
    if label:
        cmd += ["-L", label]
    if exclude:
        cmd += ["-LE", exclude]
    if regex:
        cmd += ["-R", regex]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    return [t["name"] for t in json.loads(out).get("tests", [])]


def remaining(plan: list[str], state: dict[str, Any]) -> list[str]:
    """The tests still to run, in order: those cut in an earlier call first,
    then the plan's."""
    done = set(state["done"]) | set(state["too_long"])
    return [t for t in dict.fromkeys(state["cut"] + plan) if t not in done]


def next_test(plan: list[str], state: dict[str, Any], elapsed: float, budget: float,
              expected: dict[str, float], first: bool) -> str | None:
    """The next of the remaining tests, or None when its expected time does
    not fit in what is left (the first of a call always starts; a later,
    shorter test does not jump ahead)."""
    order = remaining(plan, state)
    if not order or not (first or elapsed + expected.get(order[0], DEFAULT_S) <= budget):
        return None
    return order[0]


def _outcome(junit: Path, returncode: int) -> str:
    """passed, failed or skipped, as ctest's JUnit says (its return code when
    the file says nothing)."""
    try:
        case = ET.parse(junit).getroot().find(".//testcase")
    except (OSError, ET.ParseError):
        case = None
    if case is not None:
        status = case.get("status", "")
        if status in ("run", "passed") and case.find("failure") is None:
            return "passed"
        if status in ("notrun", "disabled", "skipped") or case.find("skipped") is not None:
            return "skipped"
        return "failed"
    return "passed" if returncode == 0 else "failed"


class Call:
    """One test call: its state, the running test, its archive."""

    def __init__(self, a: argparse.Namespace) -> None:
        self.a = a
        self.state_dir = a.state
        self.state_dir.mkdir(parents=True, exist_ok=True)
        state_file = self.state_dir / "state.json"
        self.state = json.loads(state_file.read_text()) if state_file.exists() else {
            "calls": 0, "done": {}, "cut": [], "too_long": [], "seconds": {}}
        self.state["calls"] += 1
        self.k = self.state["calls"]
        self.tag = f"{a.name}-{self.k}"
        self.work = self.state_dir / self.tag
        shutil.rmtree(self.work, ignore_errors=True)
        (self.work / "evidence").mkdir(parents=True)
        self.running = self.state_dir / "running"  # a test's records until it completes
        shutil.rmtree(self.running, ignore_errors=True)
        plan_file = self.state_dir / "plan.json"
        if not plan_file.exists():
            plan_file.write_text(json.dumps(plan_tests(a.build, a.label, a.regex, a.ctest, a.exclude_label)))
        self.plan: list[str] = json.loads(plan_file.read_text())
        # Tests an earlier machine's calls completed (their kit-steps.json,
        # brought back): done, so that a fresh machine does not run them again.
        for f in a.done:
            for x in json.loads(Path(f).read_text()).get("ran", []):
                self.state["done"].setdefault(x["test"], x["outcome"])
        # What the report reads beside the evidence, the same all call long.
        if (a.build / "generated" / "cases.json").exists():
            shutil.copy(a.build / "generated" / "cases.json", self.work / "cases.json")
        tests = subprocess.run([a.ctest, "--test-dir", str(a.build), "--show-only=json-v1"], capture_output=True,
                               text=True)
        (self.work / "ctest-tests.json").write_text(tests.stdout)
        self.expected = dict(json.loads(a.durations.read_text())) if a.durations else {}
        self.expected.update(self.state["seconds"])
        self.ran: list[dict[str, Any]] = []
        self.cut_now: list[str] = []
        self.junit = ET.Element("testsuite", name=self.tag)
        self.proc: subprocess.Popen | None = None
        self.current = ""

    def save_state(self) -> None:
        tmp = self.state_dir / "state.json.tmp"
        tmp.write_text(json.dumps(self.state, indent=1))
        tmp.replace(self.state_dir / "state.json")

    def left(self) -> list[str]:
        return remaining(self.plan, self.state)

    def write_archive(self) -> list[Path]:
        """The call's archive, written anew: parts of at most MAX_FILE."""
        a = self.a
        summary = {"call": self.k, "label": a.label, "exclude_label": a.exclude_label, "regex": a.regex, "budget_s": a.budget,
                   "ran": self.ran, "cut": self.cut_now, "too_long": self.state["too_long"], "left": self.left()}
        (self.work / "kit-steps.json").write_text(json.dumps(summary, indent=1) + "\n")
        ET.ElementTree(self.junit).write(self.work / "ctest-junit.xml", encoding="utf-8", xml_declaration=True)
        a.out.mkdir(parents=True, exist_ok=True)
        final = a.out / f"backendcheck-gpu-{self.tag}.tar.gz"
        fd, tmp_name = tempfile.mkstemp(dir=a.out, prefix=".archive-")
        os.close(fd)
        tmp = Path(tmp_name)
        with tarfile.open(tmp, "w:gz") as tf:
            tf.add(self.work, arcname=self.tag)
        for old in a.out.glob(f"backendcheck-gpu-{self.tag}.tar.gz*"):
            old.unlink()
        size = tmp.stat().st_size
        if size <= MAX_FILE:
            tmp.replace(final)
            return [final]
        parts = []
        with tmp.open("rb") as f:
            for i in range(MAX_FILES):
                chunk = f.read(MAX_FILE)
                if not chunk:
                    break
                part = a.out / f"{final.name}.part{i + 1}"
                part.write_bytes(chunk)
                parts.append(part)
            if f.read(1):
                tmp.unlink()
                for part in parts:
                    part.unlink()
                raise SystemExit(f"kit_steps: the archive of call {self.k} is {size} bytes, over {MAX_FILES} "
                                 f"files of {MAX_FILE}")
        tmp.unlink()
        return parts

    def stop(self, signum: int, _frame: Any) -> None:
        """SIGTERM or SIGINT: the running test is cut, the archive written."""
        if self.proc is not None:
            # Not Popen.wait: the interrupted wait holds its lock.
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
                os.waitpid(self.proc.pid, 0)
            except (ProcessLookupError, ChildProcessError):
                pass
        if self.current:
            self._cut(self.current, whole=False)
        self.save_state()
        self.write_archive()
        print(f"kit_steps: stopped by signal {signum}; archive of call {self.k} written", file=sys.stderr)
        os._exit(128 + signum)

    def _cut(self, test: str, whole: bool) -> None:
        shutil.rmtree(self.running / self._slot(test), ignore_errors=True)
        if whole:
            self.state["too_long"].append(test)
            self.state["cut"] = [t for t in self.state["cut"] if t != test]
        elif test not in self.state["cut"]:
            self.state["cut"].insert(0, test)
        self.cut_now.append(test)
        self.current = ""

    def _slot(self, test: str) -> str:
        return re.sub(r"[^A-Za-z0-9._-]", "_", test)[:120] + f"-{self.plan.index(test) if test in self.plan else 0}"

    def run(self) -> int:
        a = self.a
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, self.stop)
        started = time.monotonic()
        first = True
        while True:
            elapsed = time.monotonic() - started
            test = next_test(self.plan, self.state, elapsed, a.budget or float("inf"), self.expected, first)
            if test is None:
                break
            whole = first
            first = False
            self.current = test
            evidence = self.running / self._slot(test)
            shutil.rmtree(evidence, ignore_errors=True)
            evidence.mkdir(parents=True)
            junit = self.state_dir / "one-junit.xml"
            junit.unlink(missing_ok=True)
            env = dict(os.environ, BACKENDCHECK_EVIDENCE_DIR=str(evidence))
            t0 = time.monotonic()
            self.proc = subprocess.Popen([a.ctest, "--test-dir", str(a.build), "-R", f"^{re.escape(test)}$",
                                          "--output-junit", str(junit), "--output-on-failure"],
                                         env=env, start_new_session=True, stdout=sys.stdout, stderr=sys.stderr)
            try:
                rc = self.proc.wait(timeout=max(1.0, a.budget - (time.monotonic() - started)) if a.budget else None)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
                self.proc = None
                self._cut(test, whole)
                print(f"kit_steps: {test} cut off by the budget"
                      + (" with a whole call of its own: too long for one call" if whole else "; it runs next call"))
                self.save_state()
                self.write_archive()
                break
            self.proc = None
            seconds = round(time.monotonic() - t0, 2)
            outcome = _outcome(junit, rc)
            if junit.exists():
                for case in ET.parse(junit).getroot().iter("testcase"):
                    self.junit.append(case)
            # Its records join the call's evidence (one directory, as a run's).
            for f in sorted(p for p in evidence.rglob("*") if p.is_file()):
                f.replace(self.work / "evidence" / f"{evidence.name}--{f.name}")
            shutil.rmtree(evidence)
            self.state["done"][test] = outcome
            self.state["seconds"][test] = seconds
            self.expected[test] = seconds
            self.state["cut"] = [t for t in self.state["cut"] if t != test]
            self.ran.append({"test": test, "outcome": outcome, "seconds": seconds})
            self.current = ""
            self.save_state()
            self.write_archive()
        self.save_state()
        files = self.write_archive()
        left = self.left()
        failed = [t for t, o in self.state["done"].items() if o == "failed"]
        print(f"kit_steps: call {self.k}: {len(self.ran)} test(s) ran, {len(self.cut_now)} cut, {len(left)} left, "
              f"{len(self.state['too_long'])} too long for a call; {', '.join(str(f) for f in files)}")
        if left:
            return 3
        return 1 if failed else 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="ci.kit_steps", description=__doc__.splitlines()[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="command", required=True)
    t = sub.add_parser("test")
    t.add_argument("--build", type=Path, required=True)
    t.add_argument("--state", type=Path, required=True, help="the kit's state, kept between calls")
    t.add_argument("--out", type=Path, required=True)
    t.add_argument("--budget", type=float, required=True, help="seconds; 0: no budget")
    t.add_argument("--label", default="gpu")
    t.add_argument("--exclude-label", default="selftest", help="ctest -LE: tests of this label are not run ('': none)")
    t.add_argument("--regex", default="")
    t.add_argument("--name", default="node")
    t.add_argument("--durations", type=Path, help="JSON {test: seconds} expected times (a recorded run's)")
    t.add_argument("--ctest", default="ctest")
    t.add_argument("--done", nargs="*", default=[], type=Path,
                   help="kit-steps.json of calls on an earlier machine: their tests are not run again")
    a = ap.parse_args(argv)
    if not re.fullmatch(r"[A-Za-z0-9._-]+", a.name):
        ap.error("--name must be letters, digits, '.', '_' or '-'")
    if a.budget < 0:
        ap.error("--budget must be 0 (none) or positive")
    return Call(a).run()


if __name__ == "__main__":
    sys.exit(main())
