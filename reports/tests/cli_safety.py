"""What ./backendcheck does with the user's files and processes, with the
command line's own functions (cli/) and real test processes.

    python3 -m reports.tests.cli_safety BUILD_DIR

1. BACKENDCHECK_EVIDENCE_DIR naming a directory that holds an unrelated
   file: two runs each write into a fresh run directory of their own, marked
   as the tool's, and the unrelated file is still there.
2. A second ./backendcheck in the same build directory refuses at once, with
   one line, while the first holds it. A run moves the last report aside,
   but never removes a '.previous' directory that is not a report.
3. Ctrl-C (SIGINT to the process group) during the tests stops ctest and the
   test it runs (one that hangs), within seconds, and says what was kept.
4. The evidence file system fills up mid-run (a small tmpfs in a user and
   mount namespace): the tests whose evidence was not written fail, no test
   passes without its result record, and no line is torn.
5. --case with a control character or a shape over the memory budget: one
   line and a non-zero exit, within seconds, with nothing allocated.
Exit 0 when all hold; 1 with what did not.
"""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FAST = ["DeterminismCheck.FailsADeclaredDeterministicAlgorithmThatDiffers", "DeterminismCheck.MistrustsConstantOutput"]
WRITES = [f"Cpu/Determinism.Bitwise/{d}_Onednn_T1_Small" for d in ("Fwd", "BwdData", "BwdWeights")] + \
         [f"Cpu/Determinism.Bitwise/{d}_ReferenceOwner_T2_Small" for d in ("Fwd", "BwdData", "BwdWeights")]


def _project(where: Path, binary: Path, tests: list[str], env: str = "", timeout: int = 60) -> Path:
    """A ctest project of one test per gtest test, as gtest_discover_tests makes them."""
    where.mkdir(parents=True)
    lines = []
    for t in tests:
        lines.append(f'add_test("{t}" "{binary}" "--gtest_filter={t}")')
        lines.append(f'set_tests_properties("{t}" PROPERTIES TIMEOUT {timeout}'
                     + (f' ENVIRONMENT "{env}"' if env else "") + ")")
    (where / "CTestTestfile.cmake").write_text("\n".join(lines) + "\n")
    return where


# A process running the command line's functions on a build tree (argv[1]),
# as ./backendcheck does; a harness failure is an exit of its own.
PRELUDE = """
import sys
from pathlib import Path
from cli import builds, commands
from cli.options import Options
state = commands.State(Options("run"), python=sys.executable)
state.build_dir = Path(sys.argv[1])
state.build_dir.mkdir(parents=True, exist_ok=True)
"""
RUN_CTEST = """
try:
    sys.exit(commands.run_ctest(state, ["--test-dir", sys.argv[2]]))
except commands.Interrupted as e:
    print(f"backendcheck: {e}", file=sys.stderr)
    sys.exit(130)
"""
LOCK = """
try:
    builds.Lock(state.build_dir).acquire()
except builds.Refused as e:
    print(f"backendcheck: {e}", file=sys.stderr)
    sys.exit(1)
"""


def _cli(body: str, build: Path, root: Path, *args: str) -> tuple[list[str], dict[str, str]]:
    """The command and environment of a process running `body` after
    PRELUDE, its build tree and evidence root set."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "BACKENDCHECK_EVIDENCE_DIR": str(root)}
    return [sys.executable, "-c", PRELUDE + body, str(build), *args], env


def check_evidence_dir(binary: Path, tmp: Path) -> list[str]:
    problems = []
    root = tmp / "mine"
    root.mkdir()
    (root / "notes.txt").write_text("the user's own file\n")
    (root / "sub").mkdir()
    (root / "sub" / "data.bin").write_bytes(b"\x00" * 10)
    project = _project(tmp / "p1", binary, FAST)
    build = tmp / "b1"
    for _ in range(2):
        command, env = _cli(RUN_CTEST, build, root, str(project))
        r = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120, check=False)
        if r.returncode != 0:
            problems.append(f"run_ctest exit {r.returncode}: {r.stderr.strip()[-300:]}")
    runs = sorted(p for p in root.glob("run-*") if p.is_dir())
    print(f"  evidence root after two runs: {sorted(p.name for p in root.iterdir())}")
    if (root / "notes.txt").read_text() != "the user's own file\n" or not (root / "sub" / "data.bin").exists():
        problems.append("the user's files in the evidence directory were changed or removed")
    if len(runs) != 2 or not all((r / ".backendcheck-run").exists() for r in runs):
        problems.append(f"expected two marked run directories, found {[r.name for r in runs]}")
    elif not all(list(r.glob("determinism_tests-*.jsonl")) for r in runs):
        problems.append("a run directory holds no evidence")
    if not (root / "latest").is_symlink() or (root / "latest").resolve() != runs[-1].resolve():
        problems.append("'latest' does not name the newest run")
    return problems


def check_report_aside(tmp: Path) -> list[str]:
    """A run moves the last report aside (no old report beside new evidence),
    but never removes a '.previous' directory that is not a report."""
    out = tmp / "rep"
    out.mkdir()
    (out / "report.json").write_text("{}")
    (out / "index.html").write_text("<html></html>")
    theirs = tmp / "rep.previous"
    theirs.mkdir()
    (theirs / "keep.txt").write_text("mine\n")
    command, env = _cli("builds.set_report_aside(Path(sys.argv[2]))", tmp / "b5", tmp, str(out))
    r = subprocess.run(command, env=env, capture_output=True, text=True, timeout=30, check=False)
    problems = []
    if not (theirs / "keep.txt").exists() or not (out / "report.json").exists():
        problems.append("a '.previous' directory that is not a report was replaced")
    if "not a report of this tool" not in r.stderr:
        problems.append(f"no warning about the foreign '.previous': {r.stderr!r}")
    (theirs / "keep.txt").unlink()
    theirs.rmdir()
    subprocess.run(command, env=env, capture_output=True, text=True, timeout=30, check=False)
    if out.exists() or not (theirs / "report.json").exists():
        problems.append("the last report was not moved aside")
    print(f"  report aside: {'as expected' if not problems else problems}")
    return problems


def check_lock(tmp: Path) -> list[str]:
    build = tmp / "b2"
    command, env = _cli(LOCK + "print('locked', flush=True)\nimport time\ntime.sleep(30)\n", build, tmp)
    first = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, text=True, start_new_session=True)
    try:
        assert first.stdout is not None
        if first.stdout.readline().strip() != "locked":
            return ["the first run did not take the lock"]
        started = time.monotonic()
        command, env = _cli(LOCK + "print('second-ran')\n", build, tmp)
        second = subprocess.run(command, env=env, capture_output=True, text=True, timeout=30, check=False)
        took = time.monotonic() - started
    finally:
        os.killpg(first.pid, signal.SIGKILL)
        first.wait()
    print(f"  second run: exit {second.returncode} in {took:.2f} s: {second.stderr.strip()}")
    if second.returncode == 0 or "second-ran" in second.stdout:
        return ["a second run in the same build directory was not refused"]
    if "another ./backendcheck" not in second.stderr or len(second.stderr.strip().splitlines()) != 1:
        return [f"the refusal is not one clear line: {second.stderr!r}"]
    return []


def _alive(marker: str) -> list[int]:
    pids = []
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                if marker in (proc / "cmdline").read_bytes().decode(errors="replace"):
                    pids.append(int(proc.name))
            except OSError:
                pass
    return pids


def check_interrupt(binary: Path, tmp: Path) -> list[str]:
    test = WRITES[0]
    project = _project(tmp / "p3", binary, [test], env=f"BACKENDCHECK_INJECT_FAULT=hang={test}", timeout=120)
    root = tmp / "ev3"
    command, env = _cli(RUN_CTEST, tmp / "b3", root, str(project))
    run = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           start_new_session=True)
    marker = f"--gtest_filter={test}"
    deadline = time.monotonic() + 60
    while not list(root.glob("latest/*.jsonl.part")) and time.monotonic() < deadline:
        time.sleep(0.2)  # the test has started and opened its evidence file
    if not _alive(marker):
        os.killpg(run.pid, signal.SIGKILL)
        return ["the hanging test never started"]
    os.killpg(run.pid, signal.SIGINT)  # what a terminal's Ctrl-C does
    started = time.monotonic()
    try:
        _, err = run.communicate(timeout=20)
    except subprocess.TimeoutExpired:
        os.killpg(run.pid, signal.SIGKILL)
        return ["Ctrl-C did not stop the run within 20 s"]
    took = time.monotonic() - started
    time.sleep(0.5)
    left = _alive(marker)
    print(f"  Ctrl-C: exit {run.returncode} after {took:.1f} s; {err.strip().splitlines()[-1] if err.strip() else ''}")
    problems = []
    if left:
        for pid in left:
            os.kill(pid, signal.SIGKILL)
        problems.append(f"test processes outlived the run: {left}")
    if "(1 file(s))" not in err:
        problems.append("the message does not count the hanging test's evidence file")
    if run.returncode != 130 or "interrupted" not in err or "kept the evidence" not in err:
        problems.append(f"the run did not say it was interrupted and what it kept (exit {run.returncode}): {err!r}")
    return problems


def check_disk_full(binary: Path, tmp: Path) -> list[str]:
    if subprocess.run(["unshare", "-rm", "true"], capture_output=True, check=False).returncode != 0:
        print("  disk full: skipped: no user and mount namespaces here (unshare -rm)")
        return []
    evidence = tmp / "small"
    evidence.mkdir()
    project = _project(tmp / "p4", binary, WRITES, env=f"BACKENDCHECK_EVIDENCE_DIR={evidence}")
    junit = tmp / "junit4.xml"
    # 24 KiB: room for the first few processes' records, not for all six.
    inner = (f"mount -t tmpfs -o size=24k tmpfs {shlex.quote(str(evidence))} && "
             f"ctest --test-dir {shlex.quote(str(project))} --output-on-failure --output-junit {shlex.quote(str(junit))}; "
             f"cp -r {shlex.quote(str(evidence))} {shlex.quote(str(tmp / 'kept'))}")
    r = subprocess.run(["unshare", "-rm", "bash", "-c", inner], capture_output=True, text=True, timeout=300,
                       check=False)
    status = {tc.get("name"): ("fail" if tc.find("failure") is not None else tc.get("status", ""))
              for tc in ET.parse(junit).getroot().iter("testcase")}
    results, torn = {}, 0
    for path in (tmp / "kept").glob("*.jsonl*"):
        for line in path.read_text(errors="replace").splitlines():
            try:
                rec = json.loads(line)
            except ValueError:
                torn += 1
                continue
            if rec.get("kind") == "result":
                results[rec["test"]] = rec["outcome"]
    failed = sorted(t for t, s in status.items() if s == "fail")
    print(f"  disk full: ctest {r.returncode}; {len(failed)} of {len(status)} tests failed; "
          f"{len(results)} result records kept; {torn} torn lines")
    problems = []
    if not failed:
        problems.append("the evidence file system filled up and no test failed")
    passed_without = [t for t, s in status.items() if s != "fail" and results.get(t) != "passed"]
    if passed_without:
        problems.append(f"tests passed without their result record: {passed_without}")
    if torn:
        problems.append(f"{torn} torn evidence line(s)")
    if "No space left on device" not in r.stdout + r.stderr:
        problems.append("no failure names the full file system")
    return problems


def check_case_inputs(binary: Path) -> list[str]:
    problems = []
    for case, want in (("conv2d:fwd:f32:mb1ic1ih4oc1kh1 device=cpu env.FOO=a\x1b[31mb", "control character"),
                       ("matmul:f32:m60000n60000k60000 device=cpu engine=reference", "memory budget")):
        started = time.monotonic()
        r = subprocess.run([str(binary), f"--bc_probe={case}"], capture_output=True, text=True, timeout=60,
                           check=False)
        took = time.monotonic() - started
        lines = [x for x in (r.stdout + r.stderr).strip().splitlines() if x.strip()]
        print(f"  --case {case.encode('unicode_escape').decode()!r}: exit {r.returncode} in {took:.2f} s: "
              f"{lines[-1][:160] if lines else ''}")
        if r.returncode == 0 or len(lines) != 1 or want not in lines[0] or "\x1b" in lines[0] or took > 10:
            problems.append(f"--case {case!r}: expected one line about the {want} and a non-zero exit, got "
                            f"exit {r.returncode}: {lines!r}")
    return problems


def main(argv: list[str]) -> int:
    build = Path(argv[0]).resolve()
    binary = build / "suites" / "cpu" / "determinism_tests"
    manifest = json.loads((build / "generated" / "cases.json").read_text())
    if not {WRITES[0]} <= {c["test"] for c in manifest.get("cases", [])}:
        print("cli_safety: this build lacks the default matrix's cases it runs (a --matrix build); skipped")
        return 77
    problems: list[str] = []
    with tempfile.TemporaryDirectory(prefix="backendcheck-cli-") as t:
        tmp = Path(t)
        for name, check in (("evidence directory", lambda: check_evidence_dir(binary, tmp)),
                            ("lock", lambda: check_lock(tmp)),
                            ("report aside", lambda: check_report_aside(tmp)),
                            ("Ctrl-C", lambda: check_interrupt(binary, tmp)),
                            ("disk full", lambda: check_disk_full(binary, tmp)),
                            ("--case inputs", lambda: check_case_inputs(binary))):
            print(f"{name}:")
            problems += [f"{name}: {p}" for p in check()]
    for p in problems:
        print(f"FAILED {p}")
    print("cli_safety: " + ("all hold" if not problems else f"{len(problems)} problem(s)"))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
