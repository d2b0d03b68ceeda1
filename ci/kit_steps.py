"""The GPU kit's test calls on a short-lived runner (ci/gpu-kit test): each
call runs what is left of a label's tests within a time budget and brings
back an archive of what it completed, small enough for the runner's return
limits; the next call resumes.

    python3 -m ci.kit_steps test --build BUILD --state DIR --out DIR --budget SECONDS \\
        [--label L] [--exclude-label L] [--regex R] [--name NAME] [--durations FILE] [--jobs N]

- The tests are ctest's for the label (and --regex), less those of the
  excluded label (by default selftest: the harness's checks of itself,
  which record no evidence of a backend and run in ./backendcheck test),
  in the order of what they decide (claim_order: the claims no recorded run
  decided first), fixed at the first call (DIR/plan.json). Each runs in a
  process group of its own, with an evidence directory of its own: a
  RUN_SERIAL test alone, the others beside each other up to --jobs
  processors (their PROCESSORS), never two of one RESOURCE_LOCK, and, where
  the build was configured with a GPU resource spec
  (CTEST_RESOURCE_SPEC_FILE), each GPU test on a GPU with the slots its
  resource group asks for free, as ctest -j runs them (starts); the kit gives
  that GPU to the test's own ctest (--resource-spec-file naming that GPU
  alone), as separate ctest processes do not share an allocation. The PyTorch
  probes that may share an interpreter share one per session
  (BACKENDCHECK_PROBE_SHARED_DIR=DIR/shared, probes/shared_child.py).
- A test starts only when its expected time (measured in an earlier call, or
  given by --durations, else an estimate, else DEFAULT_S) fits in what is
  left of the budget; it may run until the budget ends. One the budget cuts
  off is neither passed nor failed: its evidence is dropped and it runs
  first in the next call. One cut off after a whole call of its own is too
  long for a call: it is recorded as such and not run again.
- After each test the archive of the call is written anew (a temporary file
  renamed into place), so a kill leaves the last complete archive; SIGTERM
  and SIGINT stop the running tests (cut) and write it once more.
- The archive is OUT/backendcheck-gpu-NAME-K.tar.gz (K: the call's number),
  holding NAME-K/evidence/ (the completed tests' records only, so that no
  test is counted twice when calls merge), NAME-K/ctest-junit.xml,
  NAME-K/cases.json, NAME-K/ctest-tests.json, NAME-K/kit-steps.json (what
  ran, was cut and is left) and NAME-K/preflight.json (what the kit's
  pre-flight found this machine lacks, where it ran: BACKENDCHECK_PREFLIGHT).
  Over MAX_FILE bytes it is split into parts of MAX_FILE (at most MAX_FILES
  files a call): cat them back together.
- A machine given back loses the state: on the next one, --done names the
  kit-steps.json of the calls already brought back, whose tests are done.
- Exit status: 75 when tests are left (call again); 2 on bad input; when
  every test is done: 1 when one failed (the tool's own health), else the
  status of the report of every call's evidence on this machine, held to
  catalog/known_findings.toml, then BACKENDCHECK_KNOWN's files and each
  --known FILE, as ./backendcheck run holds it: 0 when every
  verdict is what is known for its platform, 3 for a guarantee refuted with
  no known finding, 4 for another unexpected verdict, 5 for a disagreement
  of the model with PyTorch that has no known reason (reports/__main__.py).

Merge the calls' archives: tar xzf each, then
    ./backendcheck report NAME-1/evidence NAME-2/evidence ...

The calls a lease will take, before it runs (predict): the kit's own order
and start rule over the tier a recorded run listed, with the matrix cases of
a newer manifest in place of its own, each test with its seconds and their
basis (recorded, an estimate of ci/gpu-expected-seconds.json, or
DEFAULT_S), each call's margin, and what waits for another lease. With no
arguments: the H100's recorded calls and durations, the default specs' ci
tier, one lease (a call of 600 s, then one of 240 s), 4 processors:

    python3 -m ci.kit_steps predict [--recorded CALL_DIR] [--manifest CASES.json] [--durations FILE...] \\
        [--limits SECONDS...] [--setup SECONDS] [--reserve SECONDS] [--jobs N]
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
CLAIMS = ROOT / "catalog" / "claims.toml"
# Expected seconds of the GPU tests no recorded run has timed yet, each with
# its basis: they fit a test into a call's budget but never order the plan
# (a recorded time does; an estimate is a guess like DEFAULT_S).
ESTIMATES = ROOT / "ci" / "gpu-expected-seconds.json"
# The plan's groups, in order (claim_order): what no recorded run has
# evidence for first, as that is what a GPU would decide for the first time.
GROUPS = ("claims no recorded run decided", "claims recorded runs decided", "predictions", "the rest")
# Processors of tests that may run beside each other (ctest's PROCESSORS,
# default 1, of tests that are not RUN_SERIAL): half the cores, as each is a
# torch interpreter that keeps about a core busy launching kernels, building
# cuDNN's plans or writing its log, and torch.compile's checks two
# (PROCESSORS 2) with Inductor's compile workers besides. 8 on the H100's
# 16-core node; 1 (one test at a time) on a 2-core machine.
JOBS = max(1, (os.cpu_count() or 1) // 2)
H100_JOBS = 8


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
                claims: Path = CLAIMS, lanes: dict[str, dict[str, Any]] | None = None,
                estimates: dict[str, float] | None = None) -> tuple[list[str], dict[str, int]]:
    """The tests in the order of what they decide, and each one's group
    (an index of GROUPS), by claims:
    0. the evidence a claim has from no recorded run: the tests of a claim
       none of whose tests of that binary (`lanes`' "binary": the
       harness's GPU tests, PyTorch's probes) a recorded run timed
       (`expected` holds recorded times only): what a GPU would decide for
       the first time, a claim's first evidence from PyTorch itself among
       it;
    1. the evidence of the claims a recorded run has evidence for, and the
       positive controls (a missed one makes every bitwise fact of its
       device inconclusive; they count as one claim);
    2. the tests only a [claim.prediction] selects (the model's evidence,
       shown beside a verdict, never deciding);
    3. the rest.
    A test several claims select goes with the first of their groups.
    Within a group: the positive controls first; then the tests that may
    run beside others (`lanes`: not RUN_SERIAL), so that they run together,
    the longest first (by `expected`, else `estimates`; the tests of one
    RESOURCE_LOCK together, as long as their sum), so that together they
    end soonest; then the tests a recorded run timed before those
    nothing timed (whose DEFAULT_S is a guess that must not push out
    evidence of known cost); then by the fewest tests of any claim a test
    decides (a claim one test decides before a claim of 48, so that a
    claim's few tests are not left behind a claim's many); then the
    shortest first; then ctest's order."""
    evidence, predicted, controls = claim_selection(tests, manifest, claims)
    lanes = lanes or {}
    estimates = estimates or {}
    binary = {c["test"]: c.get("binary", "") for c in manifest}
    rank: dict[str, int] = {}
    group: dict[str, int] = {}
    for chosen in [*evidence.values(), controls]:
        by_binary: dict[str, list[str]] = {}
        for t in chosen:
            rank[t] = min(rank.get(t, len(chosen)), len(chosen))
            by_binary.setdefault(binary.get(t) or lanes.get(t, {}).get("binary", ""), []).append(t)
        for mine in by_binary.values():
            new = not any(t in expected for t in mine)
            for t in mine:
                group[t] = min(group.get(t, 1), 0 if new else 1)
    group = {t: group[t] if t in group else 2 if t in predicted else 3 for t in tests}
    control = set(controls)

    def seconds(t: str) -> float:
        return expected.get(t, estimates.get(t, DEFAULT_S))

    # Tests of one lock run one after another: a chain as long as their sum.
    chain: dict[tuple[int, str], float] = {}
    for t in tests:
        for lock in lanes.get(t, {}).get("locks", []):
            chain[group[t], lock] = chain.get((group[t], lock), 0.0) + seconds(t)

    def key(item: tuple[int, str]) -> tuple:
        i, t = item
        if not lanes.get(t, {}).get("serial", True):
            longest = max([seconds(t)] + [chain[group[t], lock] for lock in lanes[t].get("locks", [])])
            return group[t], t not in control, False, False, -longest, -seconds(t), i
        return group[t], t not in control, True, t not in expected, rank.get(t, 0), expected.get(t, DEFAULT_S), i

    return [t for _, t in sorted(enumerate(tests), key=key)], group


# A lane's `gpus` for a test that takes every slot of one GPU (bc_gpu_test
# ALONE, read from the CMake text, where the build's spec is not known).
WHOLE_GPU = -1


def lanes_of(listing: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """What ctest says of each test's company and origin (its
    --show-only=json-v1): serial (RUN_SERIAL: alone, as its timings are
    evidence), processors (PROCESSORS, default 1), locks (RESOURCE_LOCK:
    tests sharing one never run at once), gpus (the slots of one GPU its
    RESOURCE_GROUPS asks for, 0 for none), binary (the file its command
    runs: gpu_tests, pytorch_python_tests, ...)."""
    out = {}
    for t in listing.get("tests", []):
        props = {p.get("name"): p.get("value") for p in t.get("properties", [])}
        slots = sum(r.get("slots", 0) for g in props.get("RESOURCE_GROUPS") or []
                    for r in g.get("requirements", []) if r.get(".type") == "gpus")
        out[t["name"]] = lane(props.get("RUN_SERIAL"), props.get("PROCESSORS"), props.get("RESOURCE_LOCK"),
                              Path(t.get("command", [""])[0] or "").name, slots)
    return out


def lane(serial: Any, processors: Any, locks: Any, binary: str = "", gpus: int = 0) -> dict[str, Any]:
    locks = locks if isinstance(locks, list) else [x for x in str(locks or "").split(";") if x]
    return {"serial": str(serial).upper() in ("1", "ON", "TRUE", "YES"), "processors": max(1, int(processors or 1)),
            "locks": sorted(locks), "binary": binary, "gpus": gpus}


def with_gpus(lanes: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The lanes of a listing made without a GPU resource spec as a build
    configured with one runs them: the GPU test binary's tests and each
    GPU test alone on its GPU (all its slots) rather than RUN_SERIAL; the
    others as they are."""
    out = {}
    for t, x in lanes.items():
        gpus = x.get("gpus", 0) or (WHOLE_GPU if x.get("binary") == GPU_BINARY else 0)
        out[t] = {**x, "gpus": gpus, "serial": x["serial"] and not gpus}
    return out


def gpu_spec(build: Path) -> list[dict[str, Any]]:
    """The GPUs ({"id", "slots"}) of the resource spec the build was
    configured with (CTEST_RESOURCE_SPEC_FILE, cmake/GpuResources.cmake),
    in its order; none without one (ctest then ignores resource groups)."""
    cache = build / "CMakeCache.txt"
    text = cache.read_text(errors="replace") if cache.exists() else ""
    m = re.search(r"^CTEST_RESOURCE_SPEC_FILE:INTERNAL=(.+)$", text, re.M)
    if not m:
        return []
    return list(json.loads(Path(m.group(1).strip()).read_text())["local"][0]["gpus"])


def place(need: int, pool: list[int], used: list[int]) -> int | None:
    """The GPU (an index of pool) a test asking `need` slots of one GPU
    (WHOLE_GPU: all of them) gets, given the slots `used` on each: the
    first with enough free; None when none has."""
    for i, (slots, taken) in enumerate(zip(pool, used)):
        if (slots if need == WHOLE_GPU else need) <= slots - taken:
            return i
    return None


def starts(order: list[str], running: list[str], lanes: dict[str, dict[str, Any]], elapsed: float, budget: float,
           expected: dict[str, float], jobs: int, first: bool, gpus: list[int] | None = None,
           placed: dict[str, int] | None = None) -> list[str]:
    """The tests to start now, in order, as ctest -j would let them run:
    none beside a RUN_SERIAL test, which starts only when nothing runs;
    others beside each other up to `jobs` processors, never two of one
    RESOURCE_LOCK; with a GPU resource spec (`gpus`: each GPU's slots), a
    test whose resource group asks for slots of one GPU only where a GPU
    has them free (one waiting for a lock, for more free processors or for
    a GPU is passed over, as ctest passes it). `placed` holds the GPU of
    each running test and gets each chosen one's. A test starts only when
    its expected time fits what is left of the budget (the first of a call
    always starts), and a later test never jumps ahead of one that waits
    for the budget or for the machine to itself. A test ctest knows nothing
    of runs alone. Without a spec, ctest ignores resource groups: so does
    this."""
    alone = {"serial": True, "processors": 1, "locks": []}
    busy = [lanes.get(t, alone) for t in running]
    if any(x["serial"] for x in busy):
        return []
    placed = {} if placed is None else placed
    taken = [0] * len(gpus or [])
    for t in running:
        if gpus and t in placed and (need := lanes.get(t, alone).get("gpus", 0)):
            taken[placed[t]] += gpus[placed[t]] if need == WHOLE_GPU else need
    chosen: list[str] = []
    used = sum(x["processors"] for x in busy)
    held = {lock for x in busy for lock in x["locks"]}
    for t in order:
        if t in running:
            continue
        x = lanes.get(t, alone)
        if not ((first and not chosen) or elapsed + expected.get(t, DEFAULT_S) <= budget):
            break
        if x["serial"]:
            if not running and not chosen:
                chosen.append(t)
            break
        if held & set(x["locks"]) or (used + x["processors"] > jobs and (running or chosen)):
            continue
        if gpus and (need := x.get("gpus", 0)):
            if (gpu := place(need, gpus, taken)) is None:
                continue
            placed[t] = gpu
            taken[gpu] += gpus[gpu] if need == WHOLE_GPU else need
        chosen.append(t)
        used += x["processors"]
        held |= set(x["locks"])
        first = False
    return chosen


def plan_tests(build: Path, label: str, regex: str, ctest: str, exclude: str = "",
               expected: dict[str, float] | None = None, claims: Path = CLAIMS,
               estimates: dict[str, float] | None = None) -> list[str]:
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
    listing = json.loads(out)
    names = [t["name"] for t in listing.get("tests", [])]
    return claim_order(names, read_manifest(build / "generated" / "cases.json"), expected or {}, claims,
                       lanes_of(listing), estimates)[0]


def remaining(plan: list[str], state: dict[str, Any]) -> list[str]:
    """The tests still to run, in order: those cut in an earlier call first,
    then the plan's."""
    done = set(state["done"]) | set(state["too_long"])
    return [t for t in dict.fromkeys(state["cut"] + plan) if t not in done]


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
    """One test call: its state, the running tests, its archive."""

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
                                                       self.expected, estimates=self.estimates)))
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
        try:
            self.lanes = lanes_of(json.loads(tests.stdout))
        except json.JSONDecodeError:
            self.lanes = {}
        # The GPUs of the build's resource spec, and the one each running
        # GPU test holds: each test's own ctest is given that GPU alone.
        self.gpus = gpu_spec(a.build)
        self.placed: dict[str, int] = {}
        # What the pre-flight found this machine lacks (ci/gpu-kit build),
        # beside the evidence it explains.
        preflight = os.environ.get("BACKENDCHECK_PREFLIGHT", "")
        if preflight and Path(preflight).is_file():
            shutil.copy(preflight, self.work / "preflight.json")
        self.ran: list[dict[str, Any]] = []
        self.cut_now: list[str] = []
        self.junit = ET.Element("testsuite", name=self.tag)
        # The tests running now: test -> its process, start, JUnit file and
        # evidence directory.
        self.procs: dict[str, tuple[subprocess.Popen, float, Path, Path]] = {}
        self.first_started = ""

    def save_state(self) -> None:
        tmp = self.state_dir / "state.json.tmp"
        tmp.write_text(json.dumps(self.state, indent=1))
        tmp.replace(self.state_dir / "state.json")

    def left(self) -> list[str]:
        """The tests still to run (the running ones among them)."""
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
        """SIGTERM or SIGINT: the running tests are cut, the archive written."""
        for test in list(self.procs):
            self._kill(test)
            self._cut(test, whole=False)
        self.save_state()
        self.write_archive()
        print(f"kit_steps: stopped by signal {signum}; archive of call {self.k} written", file=sys.stderr)
        os._exit(128 + signum)

    def _kill(self, test: str) -> None:
        self.placed.pop(test, None)
        proc = self.procs.pop(test)[0]
        # Not Popen.wait: an interrupted wait holds its lock.
        try:
            os.killpg(proc.pid, signal.SIGKILL)
            os.waitpid(proc.pid, 0)
        except (ProcessLookupError, ChildProcessError):
            pass

    def _cut(self, test: str, whole: bool) -> None:
        shutil.rmtree(self.running / self._slot(test), ignore_errors=True)
        if whole:
            self.state["too_long"].append(test)
            self.state["cut"] = [t for t in self.state["cut"] if t != test]
        elif test not in self.state["cut"]:
            self.state["cut"].insert(0, test)
        self.cut_now.append(test)

    def _slot(self, test: str) -> str:
        return re.sub(r"[^A-Za-z0-9._-]", "_", test)[:120] + f"-{self.plan.index(test) if test in self.plan else 0}"

    def _start(self, test: str) -> None:
        """One test in a process group of its own, with its own evidence
        directory and JUnit file."""
        evidence = self.running / self._slot(test)
        shutil.rmtree(evidence, ignore_errors=True)
        evidence.mkdir(parents=True)
        junit = self.running / f"{self._slot(test)}.junit.xml"
        junit.unlink(missing_ok=True)
        # The probes that may share an interpreter share this session's
        # (probes/shared_child.py): torch's import and CUDA's start
        # paid once for them. On a GPU of the build's spec, that GPU's own:
        # an interpreter started on one GPU never answers for another.
        shared = self.state_dir / "shared"
        cmd = [self.a.ctest, "--test-dir", str(self.a.build), "-R", f"^{re.escape(test)}$",
               "--output-junit", str(junit), "--output-on-failure"]
        if test in self.placed:
            given = self.gpus[self.placed[test]]
            gpu = self.running / f"{self._slot(test)}.gpu.json"
            gpu.write_text(json.dumps({"version": {"major": 1, "minor": 0}, "local": [{"gpus": [given]}]}))
            cmd += ["--resource-spec-file", str(gpu)]
            shared = self.state_dir / f"shared-gpu{given['id']}"
        env = dict(os.environ, BACKENDCHECK_EVIDENCE_DIR=str(evidence), BACKENDCHECK_PROBE_SHARED_DIR=str(shared))
        proc = subprocess.Popen(cmd, env=env, start_new_session=True, stdout=sys.stdout, stderr=sys.stderr)
        self.procs[test] = (proc, time.monotonic(), junit, evidence)
        self.first_started = self.first_started or test

    def _finish(self, test: str, rc: int) -> None:
        """A completed test: its outcome, its records into the call's
        evidence, the state and the archive."""
        self.placed.pop(test, None)
        proc, t0, junit, evidence = self.procs.pop(test)
        seconds = round(time.monotonic() - t0, 2)
        outcome = _outcome(junit, rc)
        if junit.exists():
            for case in ET.parse(junit).getroot().iter("testcase"):
                self.junit.append(case)
            junit.unlink()
        # Its records join the call's evidence (one directory, as a run's).
        for f in sorted(p for p in evidence.rglob("*") if p.is_file()):
            f.replace(self.work / "evidence" / f"{evidence.name}--{f.name}")
        shutil.rmtree(evidence)
        self.state["done"][test] = outcome
        self.state["seconds"][test] = seconds
        self.expected[test] = seconds
        self.state["cut"] = [t for t in self.state["cut"] if t != test]
        self.ran.append({"test": test, "outcome": outcome, "seconds": seconds})
        self.save_state()
        self.write_archive()

    def run(self) -> int:
        a = self.a
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, self.stop)
        started = time.monotonic()
        budget = a.budget or float("inf")
        expected = {**self.estimates, **self.expected}
        first = True
        while True:
            for test, (proc, *_rest) in list(self.procs.items()):
                if (rc := proc.poll()) is not None:
                    self._finish(test, rc)
                    expected[test] = self.expected[test]
            elapsed = time.monotonic() - started
            if elapsed >= budget and self.procs:
                for test in list(self.procs):
                    whole = test == self.first_started  # it had the whole call
                    self._kill(test)
                    self._cut(test, whole)
                    print(f"kit_steps: {test} cut off by the budget"
                          + (" with a whole call of its own: too long for one call" if whole else "; it runs next call"))
                self.save_state()
                self.write_archive()
                break
            chosen = starts(self.left(), list(self.procs), self.lanes, elapsed, budget, expected, a.jobs, first,
                            [int(g["slots"]) for g in self.gpus], self.placed)
            for test in chosen:
                self._start(test)
                first = False
            if not self.procs:
                break
            time.sleep(0.05)
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
        r = subprocess.run([sys.executable, "-m", "reports", "--claims", str(ROOT / "catalog" / "claims.toml"),
                            "--manifest", str(manifest), "--known", str(ROOT / "catalog" / "known_findings.toml"),
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
# One lease of a short-lived runner: 15 minutes of device time, the
# machine's start (about a minute) included: a call of 600 s, then one of
# 240 s (GPU.md, "A short-lived runner").
LEASE_S = (CALL_S, 240.0)
WIDTH = 110  # predict's lines
H100 = ROOT / "reports" / "tests" / "data" / "h100"
H100_FIRST_RUN = ROOT / "ci" / "h100-first-run-seconds.json"
# PyTorch's probes' declarations: the build generates their tests' CMake
# properties from it, and so does the plan (generators/probes.py).
PROPERTIES = ROOT / "probes" / "declared.toml"
PROBES_BINARY = "pytorch_python_tests"  # the binary of the tests PROPERTIES names
GPU_BINARY = "gpu_tests"  # each of its tests alone on its GPU (suites/gpu/gpu_resources.cmake)


def _set_tests_properties(path: Path) -> list[tuple[list[str], str]]:
    """A CMake file's set_tests_properties calls: (the tests named, the
    properties' text). Of probes' declarations (a .toml), the CMake the
    build generates from them."""
    return [([n for _, n in re.findall(r"\[(=*)\[(.*?)\]\1\]", names)], props)
            for names, props in re.findall(r"set_tests_properties\((.*?)PROPERTIES(.*?)\)", _cmake_text(path), re.S)]


def _cmake_text(path: Path) -> str:
    """A CMake file's text; of probes' declarations (a .toml), the CMake the
    build generates from them."""
    if path.suffix == ".toml":
        from generators.probes import cmake_properties
        from inputs.probes import load_declared

        return cmake_properties(load_declared(path))
    return path.read_text() if path.exists() else ""


def cmake_labelled(path: Path, label: str, exclude: str = "") -> list[str]:
    """The tests a CMake file's set_tests_properties(... PROPERTIES LABELS
    "...") gives the label (and not the excluded one)."""
    found: list[str] = []
    for names, props in _set_tests_properties(path):
        labels = re.search(r'LABELS\s+"([^"]*)"', props)
        have = labels.group(1).split(";") if labels else []
        if label in have and exclude not in have:
            found += names
    return found


def cmake_lanes(path: Path) -> dict[str, dict[str, Any]]:
    """What a CMake file's set_tests_properties and bc_gpu_test calls say
    of each test's company (RUN_SERIAL, PROCESSORS, RESOURCE_LOCK, the
    slots of one GPU: lanes_of's fields), for the tests it names: PyTorch's
    probes, which ctest runs beside others unless RUN_SERIAL. A GPU probe
    ALONE on its GPU is read as a build without a resource spec runs it
    (RUN_SERIAL), with every slot of one GPU where there is one."""
    out: dict[str, dict[str, Any]] = {}
    calls = _set_tests_properties(path)
    for name, kind, locks in _gpu_tests(path):
        props = f"RESOURCE_LOCK {locks}" if locks else ""
        calls.append(([name], props + (" RUN_SERIAL TRUE" if kind == "ALONE" else "")))
    for names, props in calls:
        given: dict[str, Any] = {}
        if m := re.search(r"RUN_SERIAL\s+(\w+)", props):
            given["serial"] = lane(m.group(1), 1, [])["serial"]
        if m := re.search(r"PROCESSORS\s+(\d+)", props):
            given["processors"] = int(m.group(1))
        if m := re.search(r'RESOURCE_LOCK\s+"?([\w;.-]+)"?', props):
            given["locks"] = sorted(m.group(1).split(";"))
        for n in names:
            out[n] = {**out.get(n, lane(False, 1, [], PROBES_BINARY)), **given}
    for name, kind, _ in _gpu_tests(path):
        out[name]["gpus"] = WHOLE_GPU if kind == "ALONE" else 1
    return out


def _gpu_tests(path: Path) -> list[tuple[str, str, str]]:
    """A CMake file's bc_gpu_test calls (cmake/GpuResources.cmake): (the
    test, ALONE or SHARED, its own locks joined by ';')."""
    text = _cmake_text(path)
    return [(name, kind, ";".join(locks.split()))
            for name, kind, locks in re.findall(r"bc_gpu_test\(\[=*\[(.*?)\]=*\]\s+(ALONE|SHARED)(?:\s+LOCK\s+([^)]*))?\)",
                                                text)]


def tier_tests(recorded: Path, manifest: list[dict[str, Any]] | None, label: str, exclude: str = "",
               cmake: list[Path] = ()) -> list[str]:
    """The tests a kit's plan holds for the label, as a recorded call listed
    them (its ctest-tests.json, with their labels) but with the matrix cases
    of `manifest` in place of its own (its cases.json): the cases cut since
    left out, new ones added; and the tests CMake files label so that it did
    not list (PyTorch's probes, probes/declared.toml)."""
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


def tier_lanes(recorded: Path, cmake: list[Path] = ()) -> dict[str, dict[str, Any]]:
    """Each test's company as the recorded call's ctest listed it, with what
    the CMake files say now in its place (a probe no longer RUN_SERIAL, a
    new lock). A matrix case neither names runs alone, as the GPU test
    binary's cases do (RUN_SERIAL)."""
    lanes = lanes_of(json.loads((recorded / "ctest-tests.json").read_text()))
    for f in cmake:
        for test, given in cmake_lanes(f).items():
            lanes[test] = {**lanes.get(test, {}), **given}
    return lanes


def predict(plan: list[str], expected: dict[str, float], lanes: dict[str, dict[str, Any]] | None = None,
            limits: tuple[float, ...] = LEASE_S, setup: float = SETUP_S, reserve: float = RESERVE_S,
            overhead: float = OVERHEAD_S, jobs: int = 1,
            gpus: list[int] | None = None) -> tuple[list[dict[str, Any]], list[str], list[str]]:
    """The calls of a session as the kit takes them (starts, its own start
    rule) if every test takes its expected time: call k of limits[k]
    seconds, the first also building, tests within the limit less `reserve`
    (and `setup`, in the first). Each call's tests (with their start and
    seconds), the seconds its tests took, its wall time (setup, tests and
    `overhead`) and its margin to its limit; the tests left; those too long
    for a call. `gpus`: each GPU's slots in the build's resource spec
    (starts)."""
    lanes = lanes or {}
    state: dict[str, Any] = {"done": {}, "cut": [], "too_long": []}
    out: list[dict[str, Any]] = []
    for k, limit in enumerate(limits):
        budget = limit - reserve - (setup if k == 0 else 0.0)
        now, first, ran, running, placed = 0.0, True, [], {}, {}
        while True:
            for test in starts(remaining(plan, state), list(running), lanes, now, budget, expected, jobs, first,
                               gpus, placed):
                first = False
                running[test] = now + expected.get(test, DEFAULT_S)
                ran.append({"test": test, "start": now, "seconds": expected.get(test, DEFAULT_S)}
                           | ({"gpu": placed[test]} if test in placed else {}))
            if not running:
                break
            end = min(running.values())
            if end > budget:  # the first of a call, longer than its budget: cut with the call
                for test in running:
                    state["too_long"].append(test)
                ran = [x for x in ran if x["test"] not in running]
                now = budget
                break
            now = end
            for test in [t for t, e in running.items() if e <= now]:
                del running[test]
                placed.pop(test, None)
                state["done"][test] = "passed"
        wall = (setup if k == 0 else 0.0) + now + overhead
        out.append({"call": k + 1, "limit": limit, "budget": budget, "ran": ran, "seconds": now, "wall": wall,
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


def render_prediction(plan: list[str], group: dict[str, int], expected: dict[str, float], basis: dict[str, str],
                      lanes: dict[str, dict[str, Any]], evidence: dict[str, list[str]],
                      calls: list[dict[str, Any]], left: list[str], too_long: list[str], setup: float,
                      overhead: float, reserve: float, jobs: int, label: str, gpus: list[int] = ()) -> str:
    """predict's account: the plan by group; per call, each test with its
    start, its seconds, whether it runs alone or beside others, and the
    basis of its seconds (recorded, and where; an estimate, and why; or
    DEFAULT_S), the call's margin and the claims it completes; where the
    tests no recorded run timed land; what waits for another lease."""
    lines = []
    total = sum(expected.get(t, DEFAULT_S) for t in plan)
    parts = []
    for g, name in enumerate(GROUPS):
        mine = [t for t in plan if group[t] == g]
        parts.append(f"{name} {len(mine)} ({sum(expected.get(t, DEFAULT_S) for t in mine):.0f} s)")
    lines.append(f"The plan: {len(plan)} tests labelled {label}, {total:.0f} s of tests one after another: "
                 + ", ".join(parts) + ".")
    limits = " and ".join(f"{c['limit']:.0f} s" for c in calls)
    lines.append(f"The calls: {limits}, each keeping {reserve:.0f} s of its limit, the first building in "
                 f"{setup:.0f} s; tests that are not RUN_SERIAL run beside each other up to {jobs} processors"
                 + (f", GPU tests on {len(gpus)} GPU(s) of {'/'.join(map(str, gpus))} slot(s), each alone on its "
                    "GPU or sharing it by its slots." if gpus else "."))
    never = [t for t in plan if not basis.get(t, "").startswith("recorded")]
    where: dict[str, list[str]] = {}
    done: set[str] = set()
    for c in calls:
        lines.append(f"call {c['call']} ({c['limit']:.0f} s): " + (f"build {setup:.0f} s + " if c["call"] == 1 else "")
                     + f"{len(c['ran'])} tests in {c['seconds']:.0f} s (budget {c['budget']:.0f} s) + the kit's own "
                     f"{overhead:.0f} s = {c['wall']:.0f} s, margin {c['margin']:.0f} s")
        for g, name in enumerate(GROUPS):
            mine = [x for x in c["ran"] if group[x["test"]] == g]
            if mine:
                lines.append(f"  {name}:")
            for x in mine:
                t = x["test"]
                x_lane = lanes.get(t, {"serial": True})
                how = "alone" if x_lane["serial"] else "beside others"
                if "gpu" in x:
                    how = (f"alone on GPU {x['gpu']}" if x_lane.get("gpus") == WHOLE_GPU
                           else f"on GPU {x['gpu']}") + ("" if x_lane["serial"] else ", beside other GPUs' tests")
                lines.append(f"    {x['start']:4.0f} s +{x['seconds']:4.0f} s {t}, {how}; "
                             + basis.get(t, f"never timed, DEFAULT_S = {DEFAULT_S:g} s"))
        for x in c["ran"]:
            where.setdefault(f"call {c['call']}", []).append(x["test"])
        before, done = done, done | {x["test"] for x in c["ran"]}
        decided = [cid for cid, tests in evidence.items() if set(tests) <= done and not set(tests) <= before]
        lines.append("  claims whose evidence is then complete: " + (", ".join(decided) or "none"))
    placed = {t: k for k, tests in where.items() for t in tests}
    counts: dict[str, dict[str, int]] = {}
    for t in never:
        mine = counts.setdefault(lanes.get(t, {}).get("binary") or "the matrix's cases", {})
        mine[placed.get(t, "waiting")] = mine.get(placed.get(t, "waiting"), 0) + 1
    lines.append("Tests no recorded run timed, by binary: " + ("; ".join(
        f"{b} {sum(n.values())} ({', '.join(f'{k}: {x}' for k, x in n.items())})" for b, n in counts.items())
        or "none") + ".")
    if left:
        lines.append(f"Waits for another lease: {len(left)} tests, "
                     f"{sum(expected.get(t, DEFAULT_S) for t in left):.0f} s one after another:")
        for g, name in enumerate(GROUPS):
            mine = [t for t in left if group[t] == g]
            if mine:
                lines.append(f"  {name}: {_families(mine, expected)}")
    else:
        lines.append("Waits for another lease: nothing.")
    if too_long:
        lines.append("too long for a call: " + ", ".join(too_long))
    wall = sum(c["wall"] for c in calls)
    lines.append(f"all {len(calls)} call(s): {wall:.0f} s of {sum(c['limit'] for c in calls):.0f} s, "
                 f"margin {sum(c['limit'] for c in calls) - wall:.0f} s")
    return "\n".join(_fill(line) for line in lines)


def _shown(path: Path) -> str:
    """A path as the repository names it, where it is the repository's."""
    path = Path(path).resolve()
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)


def _fill(line: str) -> str:
    """A line of predict's output in lines of at most WIDTH, broken after a
    comma or semicolon only (a figure keeps its unit), continued under its
    own indent."""
    indent = " " * (len(line) - len(line.lstrip()) + 4)
    out = [""]
    for word in re.split(r"(?<=[,;]) ", line):
        if out[-1].strip() and len(out[-1]) + 1 + len(word) > WIDTH:
            out.append(indent + word)
        else:
            out[-1] += (" " if out[-1] else "") + word
    return "\n".join(out)


def bases(durations: list[Path], estimates: list[Path]) -> tuple[dict[str, float], dict[str, float], dict[str, str]]:
    """The recorded seconds (a later file wins), the estimates of what none
    recorded, and each test's basis in words: "recorded (FILE)" or
    "estimate (FILE): why"."""
    recorded: dict[str, float] = {}
    basis: dict[str, str] = {}
    for path in durations:
        mine = load_durations([path])
        recorded.update(mine)
        basis.update({t: f"recorded ({_shown(path)})" for t in mine})
    guessed: dict[str, float] = {}
    for path in estimates:
        doc = json.loads(Path(path).read_text())
        why = doc.get("basis", {}) if isinstance(doc, dict) else {}
        for t, s in load_durations([path]).items():
            if t not in recorded:
                guessed[t] = s
                basis[t] = f"estimate ({_shown(path)})" + (f": {why[t]}" if t in why else "")
    return recorded, guessed, basis


def default_manifest() -> list[dict[str, Any]]:
    """The cases the default specs expand to in the ci tier, as a build's
    cases.json lists them (the generator's own expansion)."""
    from generators.expand import expand
    from generators.spec import load_spec
    from inputs.flags import load_flags

    flags = load_flags()
    specs = [load_spec(ROOT / "catalog" / "matrices" / n, flags) for n in ("cpu.toml", "selection.toml", "gpu.toml")]
    return [{"test": c.test, "fixture": c.fixture, "suite": c.suite, "binary": c.binary, "repro": c.repro,
             "positive_control": c.positive_control, "axes": c.axes, "labels": list(c.labels)}
            for c in expand(specs, flags, "ci")]


def predict_main(a: argparse.Namespace) -> int:
    recorded_dir = a.recorded or H100 / "tier-1"
    durations = a.durations or sorted(H100.glob("*/kit-steps.json")) + [H100_FIRST_RUN]
    if a.manifest:
        manifest = read_manifest(a.manifest)
    elif a.recorded:
        manifest = None
    else:
        from inputs.errors import SpecError
        try:
            manifest = default_manifest()
        except SpecError as e:  # the specs need bc_problem, which a build makes
            print(f"kit_steps: predict expands the default specs: {e} (or name a build's cases.json: --manifest)",
                  file=sys.stderr)
            return 2
    tests = tier_tests(recorded_dir, manifest, a.label, a.exclude_label, a.cmake)
    if manifest is None:
        manifest = read_manifest(recorded_dir / "cases.json")
    lanes = tier_lanes(recorded_dir, a.cmake)
    for c in manifest:  # a matrix case the recorded call did not list: its binary's, alone
        lanes.setdefault(c["test"], lane(True, 1, [], c.get("binary", "")))
    if a.gpus:
        lanes = with_gpus(lanes)
    recorded, estimates, basis = bases(durations, a.estimates)
    plan, group = claim_order(tests, manifest, recorded, a.claims, lanes, estimates)
    evidence, _, _ = claim_selection(plan, manifest, a.claims)
    expected = {**estimates, **recorded}
    calls, left, too_long = predict(plan, expected, lanes, tuple(a.limits), a.setup, a.reserve, a.overhead, a.jobs,
                                    a.gpus or None)
    print(render_prediction(plan, group, expected, basis, lanes, evidence, calls, left, too_long, a.setup,
                            a.overhead, a.reserve, a.jobs, a.label, a.gpus))
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
    t.add_argument("--jobs", type=int, default=JOBS,
                   help=f"processors of tests that may run beside each other (default {JOBS}: half the cores)")
    t.add_argument("--known", action="append", default=[], type=Path,
                   help="a findings file of your own, read after catalog/known_findings.toml (repeatable)")
    t.add_argument("--done", nargs="*", default=[], type=Path,
                   help="kit-steps.json of calls on an earlier machine: their tests are not run again")
    pr = sub.add_parser("predict", help="the calls of a session, from recorded durations")
    pr.add_argument("--recorded", type=Path,
                    help="a recorded call's folder: its ctest-tests.json lists the tier, its cases.json its matrix "
                         "(default: the H100's, reports/tests/data/h100/tier-1, with the default specs' cases)")
    pr.add_argument("--manifest", type=Path, help="the cases.json of the specs to plan (their cases replace the "
                                                  "recorded call's)")
    pr.add_argument("--durations", type=Path, nargs="+", action="extend", default=[],
                    help="recorded times: kit-steps.json files or JSON {test: seconds} (default: the H100's "
                         "reports/tests/data/h100/*/kit-steps.json and ci/h100-first-run-seconds.json)")
    pr.add_argument("--estimates", type=Path, nargs="*", default=[ESTIMATES] if ESTIMATES.exists() else [],
                    help="expected times of tests no run has timed, with their basis")
    pr.add_argument("--cmake", type=Path, nargs="*", default=[PROPERTIES],
                    help="CMake files whose set_tests_properties (or probe declarations, .toml, whose "
                         "generated ones) label tests the recorded call did not list, and say which run alone "
                         "(RUN_SERIAL), on how many processors and under which lock")
    pr.add_argument("--claims", type=Path, default=CLAIMS)
    pr.add_argument("--label", default="gpu")
    pr.add_argument("--exclude-label", default="selftest")
    pr.add_argument("--limits", type=float, nargs="+", default=list(LEASE_S),
                    help="each call's limit in seconds (default: one lease, 600 240)")
    pr.add_argument("--setup", type=float, default=SETUP_S, help="seconds to unpack, configure and build")
    pr.add_argument("--reserve", type=float, default=RESERVE_S, help="seconds each call's test budget leaves")
    pr.add_argument("--overhead", type=float, default=OVERHEAD_S, help="seconds of the kit's own a call")
    pr.add_argument("--gpus", type=int, nargs="*", default=[],
                    help="the slots of each GPU of the runner's resource spec (ci/gpu-resource-spec.py): "
                         "plan as a build configured with it runs; none: one GPU, no spec")
    pr.add_argument("--jobs", type=int, default=H100_JOBS,
                    help=f"processors of tests beside each other (default {H100_JOBS}: the kit's default on the "
                         "H100's 16 cores)")
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
