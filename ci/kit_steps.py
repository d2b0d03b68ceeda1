"""The GPU kit's test calls on a short-lived runner (ci/gpu-kit test): each
call runs what is left of a label's tests within a time budget and brings
back an archive of what it completed, small enough for the runner's return
limits; the next call resumes.

    python3 -m ci.kit_steps test --build BUILD --state DIR --out DIR --budget SECONDS \\
        [--label L] [--exclude-label L] [--regex R] [--name NAME] [--durations FILE]

- The tests are ctest's for the label (and --regex), less those of the
  excluded label (by default selftest: the harness's checks of itself,
  which record no evidence of a backend and run in ./backendcheck test),
  in the order of what they decide (claim_order), fixed
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
- Exit status: 75 when tests are left (call again); 2 on bad input; when
  every test is done: 1 when one failed (the tool's own health), else the
  status of the report of every call's evidence on this machine, held to
  suites/known_findings.toml, then BACKENDCHECK_KNOWN's files and each
  --known FILE, as ./backendcheck run holds it: 0 when every
  verdict is what is known for its platform, 3 for a guarantee refuted with
  no known finding, 4 for another unexpected verdict, 5 for a disagreement
  of the model with PyTorch that has no known reason (reports/__main__.py).

Merge the calls' archives: tar xzf each, then
    ./backendcheck report NAME-1/evidence NAME-2/evidence ...

The calls a runner's session will take, from recorded durations, before it
runs (predict): the kit's own order and start rule over the tier a recorded
run listed, with the matrix cases of a newer manifest in place of its own:

    python3 -m ci.kit_steps predict --recorded CALL_DIR --manifest CASES.json \\
        --durations FILE... [--setup SECONDS] [--calls N] [--limit SECONDS] [--reserve SECONDS] \\
        [--later-budget SECONDS]
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
EXIT_LEFT = 75               # tests are left: call again (EX_TEMPFAIL)
ROOT = Path(__file__).resolve().parents[1]
CLAIMS = ROOT / "suites" / "claims.toml"
# Expected seconds of the GPU tests no recorded run has timed yet, each with
# its basis: they fit a test into a call's budget but never order the plan
# (a recorded time does; an estimate is a guess like DEFAULT_S).
ESTIMATES = ROOT / "ci" / "gpu-expected-seconds.json"
GROUPS = ("claims' evidence", "predictions", "the rest")


def load_durations(paths: list[Path]) -> dict[str, float]:
    """Expected seconds per test from recorded runs: a call's kit-steps.json
    (the seconds of what it ran), an object {"seconds": {test: s}} (with a
    "source" saying where they come from), or {test: s}; a later file wins."""
    out: dict[str, float] = {}
    for path in paths:
        doc = json.loads(Path(path).read_text())
        if isinstance(doc, dict) and isinstance(doc.get("ran"), list):
            out.update({x["test"]: float(x["seconds"]) for x in doc["ran"]})
        elif isinstance(doc, dict) and isinstance(doc.get("seconds"), dict):
            out.update({t: float(s) for t, s in doc["seconds"].items()})
        elif isinstance(doc, dict):
            out.update({t: float(s) for t, s in doc.items()})
        else:
            raise SystemExit(f"kit_steps: {path}: not a kit-steps.json nor an object of test to seconds")
    return out


def read_manifest(path: Path) -> list[dict[str, Any]]:
    """The generator's cases.json, or none where the build wrote none."""
    return json.loads(path.read_text()).get("cases", []) if path.exists() else []


def claim_selection(tests: list[str], manifest: list[dict[str, Any]], claims: Path = CLAIMS
                    ) -> tuple[dict[str, list[str]], set[str], list[str]]:
    """Of `tests`: what each claim's evidence block selects (claim id ->
    tests, as reports/verdicts.py select_tests selects them), what the
    predictions select, and the positive controls."""
    from reports.catalog import load_catalog  # the catalog is read when a plan is made
    from reports.evidence import Evidence
    from reports.verdicts import select_tests

    here, known = set(tests), Evidence(registered=set(tests))
    evidence: dict[str, list[str]] = {}
    predicted: set[str] = set()
    for claim in load_catalog(claims):
        if claim.rule == "out-of-scope":
            continue
        chosen = [t for t in select_tests(claim.tests, claim.cases, manifest, known) if t in here]
        if chosen:
            evidence[claim.id] = chosen
        if claim.prediction is not None:
            p = claim.prediction
            predicted |= {t for t in select_tests(p.tests, p.cases, manifest, known) if t in here}
    # The documented list is a claim per entry, read from the installed torch
    # (reports/documented.py): its test decides them, as a claim's evidence.
    from reports.documented import TEST as DOCUMENTED
    if DOCUMENTED in here:
        evidence["the documented list"] = [DOCUMENTED]
    controls = [c["test"] for c in manifest if c.get("positive_control") and c["test"] in here]
    return evidence, predicted, controls


def claim_order(tests: list[str], manifest: list[dict[str, Any]], expected: dict[str, float],
                claims: Path = CLAIMS) -> tuple[list[str], dict[str, int]]:
    """The tests in the order of what they decide, and each one's group
    (an index of GROUPS):
    0. the claims' evidence: the tests a claim's [claim.evidence] selects,
       and the positive controls (a missed one makes every bitwise fact of
       its device inconclusive);
    1. the tests only a [claim.prediction] selects (the model's evidence,
       shown beside a verdict, never deciding);
    2. the rest.
    Within a group: the tests a recorded run timed before those nothing
    timed (whose DEFAULT_S is a guess that must not push out evidence of
    known cost); then by the fewest tests of any claim a test decides (a
    claim one test decides before a claim of 48, so that a claim's few
    tests are not left behind a claim's many; the controls count as one
    claim); then the shortest first; then ctest's order."""
    evidence, predicted, controls = claim_selection(tests, manifest, claims)
    rank: dict[str, int] = {}
    for chosen in [*evidence.values(), controls]:
        for t in chosen:
            rank[t] = min(rank.get(t, len(chosen)), len(chosen))
    group = {t: 0 if t in rank else 1 if t in predicted else 2 for t in tests}

    def key(item: tuple[int, str]) -> tuple[int, bool, int, float, int]:
        i, t = item
        return group[t], t not in expected, rank.get(t, 0), expected.get(t, DEFAULT_S), i

    return [t for _, t in sorted(enumerate(tests), key=key)], group


def plan_tests(build: Path, label: str, regex: str, ctest: str, exclude: str = "",
               expected: dict[str, float] | None = None, claims: Path = CLAIMS) -> list[str]:
    """ctest's tests for the label and regex, less the excluded label's, in
    the order of what they decide (claim_order)."""
    cmd = [ctest, "--test-dir", str(build), "--show-only=json-v1"]
    if label:
        cmd += ["-L", label]
    if exclude:
        cmd += ["-LE", exclude]
    if regex:
        cmd += ["-R", regex]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    names = [t["name"] for t in json.loads(out).get("tests", [])]
    return claim_order(names, read_manifest(build / "generated" / "cases.json"), expected or {}, claims)[0]


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
        self.expected = load_durations(a.durations or [])
        self.expected.update(self.state["seconds"])
        self.estimates = load_durations(getattr(a, "estimates", None) or [])
        plan_file = self.state_dir / "plan.json"
        if not plan_file.exists():
            plan_file.write_text(json.dumps(plan_tests(a.build, a.label, a.regex, a.ctest, a.exclude_label,
                                                       self.expected)))
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
            test = next_test(self.plan, self.state, elapsed, a.budget or float("inf"),
                             {**self.estimates, **self.expected}, first)
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
            return EXIT_LEFT
        return 1 if failed else self.judge()

    def judge(self) -> int:
        """The report of every call's evidence kept on this machine, held to
        the known findings (the repository's, BACKENDCHECK_KNOWN's, each
        --known), as ./backendcheck run holds a run: its status.
        The report runs on the kit's Python path (its wheels of jinja2 and
        jsonschema), this tree first."""
        calls = [self.state_dir / f"{self.a.name}-{k}" for k in range(1, self.k + 1)]
        evidence = [str(c / "evidence") for c in calls if any((c / "evidence").glob("*.jsonl"))]
        manifest = self.work / "cases.json"
        if not evidence or not manifest.exists():
            print("kit_steps: no evidence records to judge")
            return 0
        r = subprocess.run([sys.executable, "-m", "reports", "--claims", str(ROOT / "suites" / "claims.toml"),
                            "--manifest", str(manifest), "--known", str(ROOT / "suites" / "known_findings.toml"),
                            *[f"--known={p}" for p in getattr(self.a, "known", [])],
                            "--partial", "--out", str(self.state_dir / "report"), *evidence],
                           cwd=ROOT, env=dict(os.environ, PYTHONPATH=os.pathsep.join(
                               [str(ROOT)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p])),
                           capture_output=True, text=True)
        sys.stdout.write(r.stdout)
        sys.stderr.write(r.stderr)
        return r.returncode


# A runner's session (ci/gpu-kit session): calls of at most CALL_S seconds,
# each leaving RESERVE_S for the kit's start, its last archive, the report
# of the last call and the runner's own start; the first also unpacks,
# configures and builds (SETUP_S on the H100: a 53 s build, GPU.md).
CALL_S, RESERVE_S, SETUP_S, OVERHEAD_S = 600.0, 60.0, 83.0, 10.0
WIDTH = 110  # predict's lines


def cmake_labelled(path: Path, label: str, exclude: str = "") -> list[str]:
    """The tests a CMake file's set_tests_properties(... PROPERTIES LABELS
    "...") gives the label (and not the excluded one)."""
    found: list[str] = []
    text = path.read_text() if path.exists() else ""
    for names, props in re.findall(r"set_tests_properties\((.*?)PROPERTIES(.*?)\)", text, re.S):
        labels = re.search(r'LABELS\s+"([^"]*)"', props)
        have = labels.group(1).split(";") if labels else []
        if label in have and exclude not in have:
            found += [n for _, n in re.findall(r"\[(=*)\[(.*?)\]\1\]", names)]
    return found


def tier_tests(recorded: Path, manifest: list[dict[str, Any]] | None, label: str, exclude: str = "",
               cmake: list[Path] = ()) -> list[str]:
    """The tests a kit's plan holds for the label, as a recorded call listed
    them (its ctest-tests.json, with their labels) but with the matrix cases
    of `manifest` in place of its own (its cases.json): the cases cut since
    left out, new ones added; and the tests CMake files label so that it did
    not list (PyTorch's probes, suites/cpu/pytorch_test_properties.cmake)."""
    listed = json.loads((recorded / "ctest-tests.json").read_text()).get("tests", [])
    own = {c["test"] for c in read_manifest(recorded / "cases.json")}
    keep = None if manifest is None else {c["test"] for c in manifest}

    def labels(t: dict[str, Any]) -> list[str]:
        return next((p["value"] for p in t.get("properties", []) if p.get("name") == "LABELS"), [])

    tests = [t["name"] for t in listed if label in labels(t) and (not exclude or exclude not in labels(t))
             and (keep is None or t["name"] not in own or t["name"] in keep)]
    if manifest is not None:
        tests += [c["test"] for c in manifest if label in c.get("labels", [])
                  and (not exclude or exclude not in c.get("labels", []))]
    for f in cmake:
        tests += cmake_labelled(f, label, exclude)
    return list(dict.fromkeys(tests))


def predict(plan: list[str], expected: dict[str, float], calls: int = 2, setup: float = SETUP_S,
            limit: float = CALL_S, reserve: float = RESERVE_S, overhead: float = OVERHEAD_S,
            later_budget: float | None = None) -> tuple[list[dict[str, Any]], list[str], list[str]]:
    """The calls of a session as the kit takes them (next_test) if every
    test takes its expected time: call 1 builds, then tests within
    limit - reserve - setup, each later call within limit - reserve (or
    later_budget, where less: session --budget). Each call's tests, seconds,
    wall time (setup, tests and `overhead`) and margin to `limit`; the tests
    left; those too long for a call."""
    state: dict[str, Any] = {"done": {}, "cut": [], "too_long": []}
    out: list[dict[str, Any]] = []
    for k in range(calls):
        budget = limit - reserve - (setup if k == 0 else 0.0)
        if k > 0 and later_budget is not None:
            budget = min(budget, later_budget)
        elapsed, ran, first = 0.0, [], True
        while (test := next_test(plan, state, elapsed, budget, expected, first)) is not None:
            first = False
            seconds = expected.get(test, DEFAULT_S)
            if elapsed + seconds > budget:  # the first of a call, cut at the budget
                state["too_long"].append(test)
                elapsed = budget
                break
            elapsed += seconds
            ran.append(test)
            state["done"][test] = "passed"
        wall = (setup if k == 0 else 0.0) + elapsed + overhead
        out.append({"call": k + 1, "budget": budget, "ran": ran, "seconds": elapsed, "wall": wall,
                    "margin": limit - wall})
        if not remaining(plan, state):
            break
    return out, remaining(plan, state), state["too_long"]


def _families(tests: list[str], expected: dict[str, float]) -> str:
    """Tests counted by family (the name up to its case), in run order."""
    seen: dict[str, list[float]] = {}
    for t in tests:
        seen.setdefault(t.rsplit("/", 1)[0] if "/" in t else t, []).append(expected.get(t, DEFAULT_S))
    return "; ".join(f"{f} {len(s)} ({sum(s):.0f} s)" if len(s) > 1 else f"{f} ({s[0]:.0f} s)"
                     for f, s in seen.items())


def render_prediction(plan: list[str], group: dict[str, int], expected: dict[str, float],
                      evidence: dict[str, list[str]], calls: list[dict[str, Any]], left: list[str],
                      too_long: list[str], setup: float, limit: float, overhead: float, label: str,
                      estimated: set[str] = frozenset(), estimated_by: str = "") -> str:
    """predict's account: the plan by group, the tests counted at their
    estimate (ESTIMATES) and at DEFAULT_S, each call's tests, seconds, margin
    and the claims it completes, what is left."""
    lines = []
    total = sum(expected.get(t, DEFAULT_S) for t in plan)
    parts = []
    for g, name in enumerate(GROUPS):
        mine = [t for t in plan if group[t] == g]
        parts.append(f"{name} {len(mine)} ({sum(expected.get(t, DEFAULT_S) for t in mine):.0f} s)")
    guessed = [t for t in plan if t in estimated]
    lines.append(f"The plan: {len(plan)} tests labelled {label}, {total:.0f} s of tests by the recorded durations"
                 + (" and the estimates" if guessed else "") + ": " + ", ".join(parts) + ".")
    if guessed:
        lines.append(f"Not measured, expected by {estimated_by or ESTIMATES.relative_to(ROOT)} "
                     f"({sum(expected[t] for t in guessed):.0f} s): "
                     + ", ".join(f"{t} ({expected[t]:g} s)" for t in guessed) + ".")
    unmeasured = [t for t in plan if t not in expected]
    lines.append(f"Not measured, counted at DEFAULT_S = {DEFAULT_S:g} s each: "
                 + (", ".join(unmeasured) if unmeasured else "none") + ".")
    done: set[str] = set()
    for c in calls:
        head = f"call {c['call']}: " + (f"build {setup:.0f} s + " if c["call"] == 1 else "")
        lines.append(f"{head}{len(c['ran'])} tests {c['seconds']:.0f} s (budget {c['budget']:.0f} s) + the kit's own "
                     f"{overhead:.0f} s = {c['wall']:.0f} s of {limit:.0f} s, margin {c['margin']:.0f} s")
        for g, name in enumerate(GROUPS):
            mine = [t for t in c["ran"] if group[t] == g]
            if mine:
                lines.append(f"  {name}: {_families(mine, expected)}")
        before, done = done, done | set(c["ran"])
        decided = [cid for cid, tests in evidence.items() if set(tests) <= done and not set(tests) <= before]
        lines.append("  claims whose evidence is then complete: " + (", ".join(decided) or "none"))
    lines.append("left: " + (", ".join(f"{t} ({GROUPS[group[t]]})" for t in left) if left else "none"))
    if too_long:
        lines.append("too long for a call: " + ", ".join(too_long))
    wall = sum(c["wall"] for c in calls)
    lines.append(f"all {len(calls)} call(s): {wall:.0f} s of {limit * len(calls):.0f} s, "
                 f"margin {limit * len(calls) - wall:.0f} s")
    return "\n".join(_fill(line) for line in lines)


def _shown(path: Path) -> str:
    """A path as the repository names it, where it is the repository's."""
    path = Path(path).resolve()
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)


def _fill(line: str) -> str:
    """A line of predict's output in lines of at most WIDTH, broken after a
    comma or semicolon only (a figure keeps its unit)."""
    out = [""]
    for word in re.split(r"(?<=[,;]) ", line):
        if out[-1].strip() and len(out[-1]) + 1 + len(word) > WIDTH:
            out.append("    " + word)
        else:
            out[-1] += (" " if out[-1] else "") + word
    return "\n".join(out)


def predict_main(a: argparse.Namespace) -> int:
    manifest = read_manifest(a.manifest) if a.manifest else None
    tests = tier_tests(a.recorded, manifest, a.label, a.exclude_label, a.cmake)
    if manifest is None:
        manifest = read_manifest(a.recorded / "cases.json")
    recorded = load_durations(a.durations)
    estimates = {t: s for t, s in load_durations(a.estimates).items() if t not in recorded}
    plan, group = claim_order(tests, manifest, recorded, a.claims)
    evidence, _, _ = claim_selection(plan, manifest, a.claims)
    expected = {**estimates, **recorded}
    calls, left, too_long = predict(plan, expected, a.calls, a.setup, a.limit, a.reserve, a.overhead, a.later_budget)
    print(render_prediction(plan, group, expected, evidence, calls, left, too_long, a.setup, a.limit, a.overhead,
                            a.label, set(estimates), ", ".join(_shown(p) for p in a.estimates)))
    return 1 if left else 0


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
    t.add_argument("--durations", type=Path, nargs="+", action="extend", default=[],
                   help="expected times from recorded runs: kit-steps.json files or JSON {test: seconds}")
    t.add_argument("--estimates", type=Path, nargs="*", default=[ESTIMATES] if ESTIMATES.exists() else [],
                   help="expected times of tests no run has timed (fit the budget, never order the plan)")
    t.add_argument("--ctest", default="ctest")
    t.add_argument("--known", action="append", default=[], type=Path,
                   help="a findings file of your own, read after suites/known_findings.toml (repeatable)")
    t.add_argument("--done", nargs="*", default=[], type=Path,
                   help="kit-steps.json of calls on an earlier machine: their tests are not run again")
    pr = sub.add_parser("predict", help="the calls of a session, from recorded durations")
    pr.add_argument("--recorded", type=Path, required=True,
                    help="a recorded call's folder: its ctest-tests.json lists the tier, its cases.json its matrix")
    pr.add_argument("--manifest", type=Path, help="the cases.json of the specs to plan (their cases replace the "
                                                  "recorded call's)")
    pr.add_argument("--durations", type=Path, nargs="+", action="extend", default=[], required=True)
    pr.add_argument("--estimates", type=Path, nargs="*", default=[ESTIMATES] if ESTIMATES.exists() else [],
                    help="expected times of tests no run has timed, with their basis")
    pr.add_argument("--cmake", type=Path, nargs="*",
                    default=[ROOT / "suites" / "cpu" / "pytorch_test_properties.cmake"],
                    help="CMake files whose set_tests_properties label tests the recorded call did not list")
    pr.add_argument("--claims", type=Path, default=CLAIMS)
    pr.add_argument("--label", default="gpu")
    pr.add_argument("--exclude-label", default="selftest")
    pr.add_argument("--calls", type=int, default=2)
    pr.add_argument("--setup", type=float, default=SETUP_S, help="seconds to unpack, configure and build")
    pr.add_argument("--limit", type=float, default=CALL_S, help="seconds a call may take")
    pr.add_argument("--reserve", type=float, default=RESERVE_S, help="seconds a call's budget leaves")
    pr.add_argument("--overhead", type=float, default=OVERHEAD_S, help="seconds of the kit's own a call")
    pr.add_argument("--later-budget", type=float, help="the test budget of the calls after the first, where less "
                                                       "than --limit less --reserve (session --budget)")
    a = ap.parse_args(argv)
    if a.command == "predict":
        return predict_main(a)
    if not re.fullmatch(r"[A-Za-z0-9._-]+", a.name):
        ap.error("--name must be letters, digits, '.', '_' or '-'")
    if a.budget < 0:
        ap.error("--budget must be 0 (none) or positive")
    return Call(a).run()


if __name__ == "__main__":
    sys.exit(main())
