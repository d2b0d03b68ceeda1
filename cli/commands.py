"""The commands of ./backendcheck: what run, test, bench, report, validate,
list and setup do once their command line has been checked (options.py).

A command's state is one object (State). Each torch install goes through
its stages (setup, configure, build, tests, report); a failed stage stops
that install (StageFailed), is written to its state (inputs/install_state.py)
and reported as "stopped during STAGE", and the other installs go on."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from cli import builds, exits, installs
from reports import carried
from cli.builds import Lock, Refused
from cli.options import Options
from inputs import install_state, labels
from inputs.errors import SpecError

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_SPECS = ("cpu.toml", "selection.toml", "gpu.toml")


class StageFailed(Exception):
    def __init__(self, stage: str, code: int, message: str) -> None:
        super().__init__(message)
        self.stage, self.code = stage, code


class Interrupted(Exception):
    """Ctrl-C or TERM."""


@dataclass
class State:
    """Everything one command knows as it goes."""
    options: Options
    python: str = sys.executable  # the interpreter of the generator and the report
    cache: Path = field(default_factory=installs.cache_root)
    packages: list[str] = field(default_factory=lambda: list(installs.PACKAGES))
    selection: list[str] = field(default_factory=list)  # what the command adds to ctest's selection
    torch: installs.Torch | None = None
    onednn_root: str = ""
    build_dir: Path | None = None
    run_dir: Path | None = None
    report_dir: Path | None = None
    state_file: Path | None = None
    log_file: IO[str] | None = None
    locks: list[Lock] = field(default_factory=list)

    def say(self, line: str) -> None:
        print(line, flush=True)
        if self.log_file:
            self.log_file.write(line + "\n")
            self.log_file.flush()

    def log(self, message: str) -> None:
        self.say(f"==> {message}")

    def mark(self, **fields: object) -> None:
        """Adds `fields` to this install's state file (in a run of several installs)."""
        if self.state_file is None:
            return
        state = install_state.read(self.state_file) if self.state_file.exists() else {}
        state.update(fields)
        install_state.write(self.state_file, state)


def call(state: State, args: list[str], stage: str, env: dict[str, str] | None = None, quiet: bool = False) -> None:
    """Runs `args`, its output to the terminal (and the install's log);
    StageFailed when it fails."""
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env,
                            errors="replace")
    assert proc.stdout is not None
    tail: list[str] = []
    for line in proc.stdout:
        line = line.rstrip("\n")
        tail = (tail + [line])[-40:]
        if quiet:
            if state.log_file:
                state.log_file.write(line + "\n")
        else:
            state.say(line)
    code = proc.wait()
    if code != 0:
        if quiet:
            for line in tail:
                print(line, file=sys.stderr)
        raise StageFailed(stage, code, f"{stage} failed (exit {code})")


def report_python() -> str:
    """A Python 3.11+ with tomllib, Jinja2 and jsonschema, for the generator and the report."""
    for candidate in (sys.executable, "/usr/bin/python3", "python3"):
        try:
            ok = subprocess.run([candidate, "-c", "import tomllib, jinja2, jsonschema"], capture_output=True,
                                check=False).returncode == 0
        except OSError:
            ok = False
        if ok:
            return candidate
    raise Refused("no Python 3.11+ with Jinja2 and jsonschema found (apt-get install python3-jinja2 "
                  "python3-jsonschema)")


def env_with(**extra: str | None) -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    for key, value in extra.items():
        if value is None:
            env.pop(key, None)
        else:
            env[key] = value
    return env


# --- Stages -----------------------------------------------------------------------------


def setup(state: State, spec: str) -> None:
    """Debian's packages that are missing, the torch under test, the model's oneDNN."""
    o = state.options
    packages = state.packages + (installs.DEBIAN_TORCH_PACKAGES if installs.needs_debian_torch(spec) else [])
    installs.install_packages(packages, o.offline, build_tools=True)
    state.python = report_python()
    state.torch = installs.resolve_torch(spec, state.cache, o.offline)
    state.onednn_root = installs.choose_onednn(state.torch, state.cache, o.offline)


def configure_and_build(state: State, target: str = "") -> None:
    o, torch = state.options, state.torch
    assert torch is not None
    tree = builds.tree(ROOT, o.preset, torch.python)
    state.build_dir = tree
    state.locks.append(Lock(tree).acquire())
    state.mark(version=torch.full_version, build_dir=str(tree), stage="configure")
    specs = [str(p) for p in o.matrix] or [str(ROOT / "catalog" / "matrices" / s) for s in DEFAULT_SPECS]
    env = env_with(BACKENDCHECK_TORCH_PYTHON=torch.python, BACKENDCHECK_PROBE_PATH=torch.probe_path,
                   BACKENDCHECK_MAX_CASES=str(o.max_cases) if o.max_cases else os.environ.get("BACKENDCHECK_MAX_CASES"))
    state.log(f"configuring (preset {o.preset}, tier {o.tier}) in {tree}")
    configure = ["cmake", "--preset", o.preset, "-B", str(tree), f"-DPython3_EXECUTABLE={state.python}",
                 f"-DBACKENDCHECK_TIER={o.tier}", f"-DBACKENDCHECK_SPECS={';'.join(specs)}",
                 f"-DBACKENDCHECK_TORCH_PYTHON={torch.python}", f"-DBACKENDCHECK_PROBE_PATH={torch.probe_path or ''}",
                 f"-DBACKENDCHECK_ONEDNN_ROOT={state.onednn_root}",
                 f"-DBACKENDCHECK_CLAIMS={':'.join(str(Path(f).resolve()) for f in o.workload_files())}"]
    # cmake reads CMakePresets.json from its working directory: the checkout's.
    r = subprocess.run(configure, cwd=ROOT, capture_output=True, text=True, env=env, check=False, errors="replace")
    tree.mkdir(parents=True, exist_ok=True)
    (tree / ".configure.log").write_text(r.stdout + r.stderr)
    if state.log_file:
        state.log_file.write(r.stdout + r.stderr)
    if r.returncode != 0:
        sys.stderr.write(r.stdout + r.stderr)
        raise StageFailed("configure", r.returncode, "configure failed")
    for line in r.stdout.splitlines():
        if line.startswith("-- backendcheck:"):
            state.say("==> " + line.removeprefix("-- "))
    state.mark(stage="build")
    if o.matrix:
        # A user's specs are checked, one line per error, before anything else builds.
        call(state, ["cmake", "--build", str(tree), "--target", "bc_problem"], "build", env, quiet=True)
        r = subprocess.run([state.python, "-m", "generators", "validate", *map(str, o.matrix)], env=env_with(
            BACKENDCHECK_PROBLEM_TOOL=str(tree / "bc_problem")), stdout=subprocess.DEVNULL, check=False)
        if r.returncode != 0:
            raise StageFailed("configure", 1, "a matrix spec is not valid")
    state.log("building" + (f" {target}" if target else ""))
    call(state, ["cmake", "--build", str(tree), "-j", str(o.jobs), *(["--target", target] if target else [])],
         "build", env)


def evidence_root(state: State) -> Path:
    assert state.build_dir is not None
    return Path(os.environ.get("BACKENDCHECK_EVIDENCE_DIR") or state.build_dir / "evidence")


def session_pids(sid: int) -> list[int]:
    """The processes of session `sid` (ctest and every test it started)."""
    pids = []
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                fields = (proc / "stat").read_text().rsplit(")", 1)[1].split()
            except (OSError, IndexError):
                continue
            if len(fields) > 4 and int(fields[3]) == sid:
                pids.append(int(proc.name))
    return pids


def stop_session(sid: int) -> None:
    for sig, wait in ((signal.SIGTERM, 5.0), (signal.SIGKILL, 0.0)):
        for pid in session_pids(sid):
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + wait
        while session_pids(sid) and time.monotonic() < deadline:
            time.sleep(0.2)


def run_ctest(state: State, ctest_args: list[str], require: str = "", report: bool = False) -> int:
    """The tests into a fresh run directory; ctest runs in a session of its
    own, so that Ctrl-C (or a TERM to this process) stops it and every test
    it started (Interrupted). The claims are judged by ctest's own tests
    (judging_env); with `report`, its report test writes the page into
    state.report_dir with the report options of this command. The tool's
    health: 0 when every test that failed is one that judges (its verdict is
    the report's to say), else 1 (also when --require failed)."""
    build = state.build_dir
    assert build is not None
    state.run_dir = builds.new_run_dir(evidence_root(state))
    # What the run's report needs besides its evidence, carried with it
    # (reports/carried.py): `report DIR` then works on a copy anywhere.
    carried.write(state.run_dir, build / "generated" / "cases.json", ROOT / "catalog" / "claims.toml", head_commit())
    state.mark(run_dir=str(state.run_dir), stage="tests")
    label = ["-L", state.options.label] if state.options.label else []
    if label and report:
        # The page of what the label selected: the report test beside it.
        label = ["-L", f"({state.options.label})|^{labels.REPORT_TEST}$"]
    state.log(f"running tests{f' (label {state.options.label})' if label else ''}; evidence: {state.run_dir}")
    env = env_with(BACKENDCHECK_EVIDENCE_DIR=str(state.run_dir), **judging_env(state, report))
    with (build / "ctest-tests.json").open("w") as f:
        subprocess.run(["ctest", *ctest_args, "--show-only=json-v1"], stdout=f, env=env, check=False)
    resources = (["--resource-spec-file", os.environ["BACKENDCHECK_RESOURCE_SPEC"]]
                 if os.environ.get("BACKENDCHECK_RESOURCE_SPEC") else [])
    args = ["ctest", *ctest_args, "--output-junit", str(build / "ctest-junit.xml"), *label, *resources]
    # The cases run in batches (runner/batch.py): each batch runs those of
    # its cases that this selection holds.
    env.pop("BACKENDCHECK_BATCH", None)
    if not state.options.one_process_per_case:
        selection = build / "ctest-tests.json"
        if label:  # the registered tests above less those the label leaves out
            selection = build / "ctest-selected.json"
            with selection.open("w") as f:
                subprocess.run(["ctest", *ctest_args, *label, "--show-only=json-v1"], stdout=f, env=env, check=False)
        env["BACKENDCHECK_BATCH"] = str(selection)

    # PyTorch's probes run in children of one interpreter that imported
    # torch once for this run (probes/shared_child.py); it ends with the
    # directory, when ctest is done.
    shared = Path(tempfile.mkdtemp(prefix="backendcheck-probes-"))
    env["BACKENDCHECK_PROBE_SHARED_DIR"] = str(shared)
    # The evidence files found to fit the records' contract, remembered for
    # this run's test processes (reports/records.py Validated): the report's
    # tests, one process per module, read the same recorded runs.
    records = Path(tempfile.mkdtemp(prefix="backendcheck-records-"))
    env.setdefault("BACKENDCHECK_RECORD_CACHE", str(records))

    def interrupt(signum: int, frame: object) -> None:
        raise Interrupted()
    old = {s: signal.signal(s, interrupt) for s in (signal.SIGINT, signal.SIGTERM)}
    proc = None
    try:
        proc = subprocess.Popen(args, env=env, start_new_session=True, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True, errors="replace")
        assert proc.stdout is not None
        for line in proc.stdout:
            state.say(line.rstrip("\n"))
        rc = proc.wait()
    except (Interrupted, KeyboardInterrupt):
        for s in old:
            signal.signal(s, signal.SIG_IGN)
        if proc is not None:
            stop_session(proc.pid)
            proc.wait()
            if proc.stdout:
                proc.stdout.close()
        n = len(list(state.run_dir.glob("*.jsonl*")))
        raise Interrupted(f"interrupted: stopped ctest and its tests; kept the evidence written so far ({n} file(s)) "
                          f"in {state.run_dir}; no report was written") from None
    finally:
        for s, handler in old.items():
            signal.signal(s, handler)
        shutil.rmtree(shared, ignore_errors=True)
        shutil.rmtree(records, ignore_errors=True)
    skips = subprocess.run([state.python, "-m", "reports.tools.skips", *(["--require", require] if require else []),
                            "--tests", str(build / "ctest-tests.json"), str(state.run_dir)], env=env_with(),
                           check=False)
    if rc != 0:
        failed = failed_tests(build / "ctest-junit.xml")
        if failed is not None and failed and all(labels.judges(t) for t in failed):
            state.log(f"{len(failed)} test(s) that judge failed ({', '.join(failed[:5])}"
                      f"{', ...' if len(failed) > 5 else ''}): the report says why")
            rc = 0
        else:
            rc = exits.TOOL
    if skips.returncode != 0 and rc == 0:
        rc = 1
    return rc


def judging_env(state: State, report: bool) -> dict[str, str | None]:
    """What ctest's judging tests read from this command: the findings files
    (BACKENDCHECK_KNOWN's, then each --known, for the claims' tests and the
    report's), and with `report` where the report test writes the page and
    the report's other options (--baseline, --strict, ...; the registered
    tests, listed before the run)."""
    o = state.options
    known = [p for p in os.environ.get("BACKENDCHECK_KNOWN", "").split(":") if p] + [str(p) for p in o.known]
    env: dict[str, str | None] = {"BACKENDCHECK_KNOWN": ":".join(known) or None,
                                  "BACKENDCHECK_CLAIMS": ":".join(str(Path(f).resolve()) for f in o.workload_files())
                                  or None,
                                  "BACKENDCHECK_REPORT_DIR": None, "BACKENDCHECK_REPORT_OPTIONS": None}
    if o.search_budget is not None:  # else the environment's, or the tier's (probes/counterexamples.py)
        env["BACKENDCHECK_SEARCH_BUDGET"] = f"{o.search_budget:g}"
    if report and state.report_dir is not None and state.build_dir is not None:
        more = [*o.report_args(), *o.finding_args(), *self_bench_args(), "--tests",
                str(state.build_dir / "ctest-tests.json")]
        env.update(BACKENDCHECK_REPORT_DIR=str(state.report_dir), BACKENDCHECK_REPORT_OPTIONS=json.dumps(more))
    return env


def self_bench_args() -> list[str]:
    """The harness's own speed for the report's environment section, where
    bench --self measured it on this checkout (build/self-bench.json)."""
    from cli.selfbench import RESULT
    path = ROOT / "build" / RESULT
    return ["--self-bench", str(path)] if path.is_file() else []


def failed_tests(junit: Path) -> list[str] | None:
    """The tests ctest's JUnit holds as failed, read by the report's reader;
    None when it cannot be read."""
    from reports.evidence import Evidence, read_junit  # not at start-up: a bad command line answers at once
    ev = Evidence()
    read_junit(junit, ev)
    return None if ev.problems else [name for name, status in ev.ctest.items() if status == "fail"]


def report_status(report_dir: Path) -> int | None:
    """The exit status the report test's page holds (report.json's
    exit_status); None when no page was written (the report test did not
    run, or failed before writing)."""
    try:
        status = json.loads((report_dir / "report.json").read_text(encoding="utf-8")).get("exit_status")
    except (OSError, ValueError):
        return None
    return status if isinstance(status, int) else None


def ctest_args(state: State) -> list[str]:
    assert state.build_dir is not None
    return ["--test-dir", str(state.build_dir), "--output-on-failure", "-j", str(state.options.jobs),
            "--no-tests=error", *state.selection]


def make_report(state: State, inputs: list[str] | None = None, quiet: bool = False) -> int:
    """The report into state.report_dir, of this build's run (its manifest,
    ctest's view, the run directory), or of what `inputs` name instead. Only
    a nightly run of the default matrix builds a case for every claim; in
    other runs a claim without cases is not evaluated (--partial)."""
    o, build = state.options, state.build_dir
    assert build is not None and state.report_dir is not None
    if inputs is None:
        inputs = ["--manifest", str(build / "generated" / "cases.json"), "--junit", str(build / "ctest-junit.xml"),
                  "--tests", str(build / "ctest-tests.json"), str(state.run_dir)]
    partial = ["--partial"] if o.matrix or o.tier != "nightly" else []
    args = [state.python, "-m", "reports", "--claims", str(ROOT / "catalog" / "claims.toml"), "--out",
            str(state.report_dir), *partial, *o.known_args(ROOT), *o.report_args(), *o.workload_args(),
            *self_bench_args(), *inputs]
    return subprocess.run(args, env=env_with(), stdout=subprocess.DEVNULL if quiet else None, check=False).returncode


def check_report_in_browser(state: State) -> bool:
    """The report is part of what `test` tests: it must render and pass the
    browser check; its screenshot is a CI artifact."""
    assert state.report_dir is not None
    r = subprocess.run([state.python, "-m", "reports.tools.browser", str(state.report_dir), "--screenshot",
                        str(state.report_dir / "screenshot.png")], env=env_with(), check=False)
    if r.returncode != 0:
        print("backendcheck: the report failed its browser check", file=sys.stderr)
    return r.returncode == 0


def final_status(tests_rc: int, report_rc: int) -> int:
    """The command's exit status. A failed test or install is the tool's own
    health (1, whatever ctest said); else the report's: 0, or 3, 4, 5 or 6
    for the unexpected (exits.py). Says why on standard error."""
    if tests_rc != 0:
        print(f"backendcheck: tests or a torch install failed (exit {tests_rc}): the tool's own health, see the "
              "output above", file=sys.stderr)
        if report_rc != 0:
            print(f"backendcheck: the report also exited {report_rc}", file=sys.stderr)
        return exits.TOOL
    if report_rc == exits.OK:
        return exits.OK
    if report_rc in exits.REPORT_SAYS:
        print(f"backendcheck: {exits.REPORT_SAYS[report_rc]}", file=sys.stderr)
        return report_rc
    said = ": a claim in error (its ERROR line above says which), or input it could not read" \
        if report_rc == exits.TOOL else ""
    print(f"backendcheck: the report failed (exit {report_rc}){said}", file=sys.stderr)
    return exits.TOOL


def report_after_tests(state: State, tests_rc: int, browser: bool) -> int:
    """The step after ctest: the report of this run and, for `test`, its
    browser check; the command's exit status."""
    state.mark(stage="report")
    assert state.report_dir is not None
    report_rc = report_status(state.report_dir)
    if report_rc is None:
        print(f"backendcheck: no report in {state.report_dir}: ctest's report test did not write one "
              "(not selected, or it failed: see its output above)", file=sys.stderr)
        return final_status(tests_rc or exits.TOOL, 0)
    state.log(f"report: {state.report_dir / 'index.html'}")
    if browser and not check_report_in_browser(state) and tests_rc == 0:
        tests_rc = exits.TOOL
    return final_status(tests_rc, report_rc)


# --- Commands ---------------------------------------------------------------------------


def select_torches(options: Options, command: str) -> list[str]:
    """The torch installs of this command: those named (--torch), else
    BACKENDCHECK_TORCH_PYTHON, else for `test` requirements/test-torches.txt,
    else the pinned release."""
    if options.torches:
        return options.torches
    if os.environ.get("BACKENDCHECK_TORCH_PYTHON"):
        return [os.environ["BACKENDCHECK_TORCH_PYTHON"]]
    return installs.test_torches() if command == "test" else ["pinned"]


def one_install(state: State, spec: str) -> int:
    """Set-up, build and tests of one torch install; its ctest exit status."""
    state.mark(torch=spec, stage="setup")
    setup(state, spec)
    configure_and_build(state)
    return run_ctest(state, ctest_args(state), state.options.require)


def run_versions(state: State, torches: list[str], mode: str) -> int:
    """Every install in turn, then one report of them all in
    build/PRESET/versions/report (or --out). Exit status: the first failure
    (an install's, the report's, or its browser check's), else the report's."""
    o = state.options
    directory = builds.versions_tree(ROOT, o.preset)
    state.locks.append(Lock(directory).acquire())
    for old in list(directory.glob("install-*.state")) + list(directory.glob("install-*.log")):
        old.unlink()
    rc, manifest, states = 0, "", []
    for i, spec in enumerate(torches, start=1):
        state.log(f"torch install {i} of {len(torches)}: {spec}")
        if mode == "test" and i > 1:
            # A test labelled torch-free gives the same outcome on every install.
            state.selection = ["-LE", f"{labels.TORCH_FREE}|{labels.OWN_RUN}"]
        state.state_file = directory / f"install-{i}.state"
        log_path = directory / f"install-{i}.log"
        state.torch, state.build_dir, state.run_dir = None, None, None
        with log_path.open("w", encoding="utf-8") as log_file:
            state.log_file = log_file
            install_rc = 0
            try:
                install_rc = one_install(state, spec)
                state.mark(stage="done")
            except (StageFailed, Refused) as e:
                stage = install_state.read(state.state_file).get("stage", "setup")
                install_rc = e.code if isinstance(e, StageFailed) and e.code else exits.TOOL
                state.say(f"backendcheck: {stage} of torch install {i} ({spec}) failed with exit {install_rc}: {e}; "
                          f"its log is {log_path}")
            finally:
                state.log_file = None
                for lock in state.locks[1:]:
                    lock.release()
                del state.locks[1:]
        state.mark(exit=install_rc, log=str(log_path))
        if install_rc != 0:
            state.log(f"torch install {i} ({spec}) failed (exit {install_rc}); the others go on")
            rc = rc or install_rc
        states += ["--install", str(state.state_file)]
        built = install_state.read(state.state_file).get("build_dir", "")
        if not manifest and built and (Path(built) / "generated" / "cases.json").is_file():
            manifest = str(Path(built) / "generated" / "cases.json")
    state.state_file = None
    state.python = report_python()
    if not manifest:
        raise Refused(f"no torch install was built: no report (see {directory}/install-*.log)")
    state.build_dir = directory
    state.report_dir = o.out or directory / "report"
    builds.set_report_aside(state.report_dir)
    report_rc = make_report(state, ["--manifest", manifest, *states])
    if mode == "test" and not check_report_in_browser(state) and rc == 0:
        rc = exits.TOOL
    return final_status(rc, report_rc)


def single(state: State, spec: str, mode: str) -> int:
    o = state.options
    try:
        setup(state, spec)
        configure_and_build(state)
    except StageFailed as e:
        print(f"backendcheck: {e}", file=sys.stderr)
        return exits.TOOL
    if mode == "run" and o.case:
        # The case's device decides which test binary probes it.
        assert state.build_dir is not None
        binary = state.build_dir / ("suites/gpu/gpu_tests" if "device=cuda" in o.case else "suites/cpu/determinism_tests")
        state.log("re-running one case")
        sys.stdout.flush()
        os.execv(binary, [str(binary), f"--bc_probe={o.case}", f"--bc_repeats={o.repeats}"])
    assert state.build_dir is not None
    state.report_dir = o.out or state.build_dir / "report"
    builds.set_report_aside(state.report_dir)
    tests_rc = run_ctest(state, ctest_args(state), o.require, report=True)
    return report_after_tests(state, tests_rc, browser=mode == "test")


def cmd_run_or_test(state: State) -> int:
    o = state.options
    torches = select_torches(o, o.command)
    if o.command == "test":
        state.packages += installs.TEST_PACKAGES
        state.selection = ["-LE", labels.OWN_RUN]
    else:
        state.selection = ["-LE", labels.SELFTEST]
    if len(torches) > 1:
        if o.case:
            raise Refused("--case re-runs one case on one torch: name one --torch")
        return run_versions(state, torches, o.command)
    return single(state, torches[0], o.command)


def cmd_setup(state: State) -> int:
    setup(state, select_torches(state.options, "run")[0])
    return exits.OK


def cmd_bench(state: State) -> int:
    """Build, then the performance suite into a fresh run directory of its
    own (benchmarks.json), which also holds the last tests' evidence (hard
    links, else copies), so that the report redone from it has both. With
    --self, the harness's own speed instead (cmd_self_bench)."""
    o = state.options
    if o.self_parts:
        return cmd_self_bench(state)
    try:
        setup(state, select_torches(o, "run")[0])
        configure_and_build(state)
    except StageFailed as e:
        print(f"backendcheck: {e}", file=sys.stderr)
        return exits.TOOL
    assert state.build_dir is not None
    root = evidence_root(state)
    tests_run = builds.latest_run(root) if (root / "latest").is_dir() else None
    bench = builds.new_run_dir(root)
    if tests_run is not None:
        builds.carry_evidence(tests_run, bench)
    state.run_dir = bench
    state.log(f"running the benchmarks (backend_benchmarks {' '.join(o.bench_flags)}) into {bench}")
    r = subprocess.run([str(state.build_dir / "backend_benchmarks"), "--benchmark_repetitions=3",
                        "--benchmark_report_aggregates_only=true", f"--benchmark_out={bench / 'benchmarks.json'}",
                        "--benchmark_out_format=json", f"--scratch={bench}", *o.bench_flags], check=False)
    if r.returncode != 0:
        print(f"backendcheck: the benchmarks failed (exit {r.returncode})", file=sys.stderr)
        return exits.TOOL
    subprocess.run([state.python, "-m", "reports.benchmarks", "summary", str(bench / "benchmarks.json")],
                   env=env_with(), check=False)
    if tests_run is not None and (state.build_dir / "ctest-junit.xml").is_file():
        state.report_dir = o.out or state.build_dir / "report"
        return final_status(0, make_report(state))
    return exits.OK


def cmd_self_bench(state: State) -> int:
    """bench --self: the harness's own speed on fresh clones of this
    checkout's commit (cli/selfbench.py), into BENCHMARKS.md's table and
    build/self-bench.json (the report's environment section shows it); 0
    when every command it timed exited 0."""
    from cli import selfbench
    from reports.self_speed import summary
    result = selfbench.measure(ROOT, state.options.self_parts, state.log)
    out = ROOT / "build" / selfbench.RESULT
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    selfbench.record(result, ROOT / selfbench.BENCHMARKS)
    state.log(f"the harness's own speed: {summary(result)} (in {out} and {selfbench.BENCHMARKS})")
    failed = [k for k, v in result.items() if k.endswith("_rc") and v != 0]
    return exits.TOOL if failed else exits.OK


def built_tree(options: Options, env: dict[str, str] | None = None) -> Path | None:
    """The build tree of this preset and the torch a run would use, when it
    has been built (its manifest exists); `report` reads it. A release is
    looked up in its managed environment, without installing anything."""
    env = os.environ if env is None else env
    spec = options.torches[0] if options.torches else env.get("BACKENDCHECK_TORCH_PYTHON") or "pinned"
    if spec == "pinned" or spec.startswith("torch=="):
        version = spec.removeprefix("torch==") if spec != "pinned" else installs.pinned_torch()
        python = str(installs.cache_root(env) / f"torch-{version}" / "bin" / "python")
    else:
        python = spec
    tree = builds.tree(ROOT, options.preset, python)
    return tree if (tree / "generated" / "cases.json").is_file() else None


def head_commit() -> str:
    r = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True, check=False)
    return r.stdout.strip() if r.returncode == 0 else "unknown"


def carries_manifest(options: Options) -> bool:
    """The evidence directories named carry their manifest (reports/carried.py)."""
    return carried.manifest_of(list(options.evidence)) is not None


def cmd_report(state: State) -> int:
    o = state.options
    state.python = report_python()
    if carries_manifest(o):
        # Evidence that carries its manifest needs no build here: its report
        # goes beside the first directory unless --out says where.
        manifest: list[str] = []
        state.report_dir = o.out or Path(o.evidence[0]).resolve().parent / "report"
    else:
        tree = built_tree(o)
        if tree is None:  # checked before (main), kept for a tree removed since
            raise Refused(f"no build of preset {o.preset} for this torch under {ROOT / 'build'}: run "
                          "./backendcheck run first")
        state.build_dir = tree
        state.locks.append(Lock(tree).acquire())
        manifest = ["--manifest", str(tree / "generated" / "cases.json")]
        state.report_dir = o.out or tree / "report"
    evidence = [str(p) for p in o.evidence] or [str(builds.latest_run(evidence_root(state)))]
    # Evidence from anywhere may cover only part of this build's matrix: --partial.
    args = [state.python, "-m", "reports", "--claims", str(ROOT / "catalog" / "claims.toml"), *manifest,
            "--out", str(state.report_dir), "--partial", *o.known_args(ROOT), *o.report_args(),
            *o.workload_args(), *evidence]
    return subprocess.run(args, env=env_with(), check=False).returncode


def problem_tool() -> Path | None:
    """The newest build's bc_problem (or BACKENDCHECK_PROBLEM_TOOL's), as the generator finds it."""
    from generators.problem import tool_path
    try:
        return tool_path()
    except SpecError:
        return None


def cmd_validate_or_list(state: State) -> int:
    """Shapes are read by the C++ problem code, bc_problem; with no build of
    it, one is built now (the set-up and configure of `run`, then that target)."""
    o = state.options
    tool = problem_tool()
    if tool is None:
        try:
            setup(state, select_torches(o, "run")[0])
            configure_and_build(state, target="bc_problem")
        except StageFailed as e:
            print(f"backendcheck: {e}", file=sys.stderr)
            return exits.TOOL
        assert state.build_dir is not None
        tool = state.build_dir / "bc_problem"
    python = "/usr/bin/python3" if os.access("/usr/bin/python3", os.X_OK) else "python3"
    return subprocess.run([python, "-m", "generators", o.command, *map(str, o.specs)],
                          env=env_with(BACKENDCHECK_PROBLEM_TOOL=str(tool)), check=False).returncode


COMMANDS = {"run": cmd_run_or_test, "test": cmd_run_or_test, "bench": cmd_bench, "report": cmd_report,
            "validate": cmd_validate_or_list, "list": cmd_validate_or_list, "setup": cmd_setup}


def execute(options: Options) -> int:
    state = State(options)
    try:
        return COMMANDS[options.command](state)
    except Interrupted as e:
        print(f"backendcheck: {e}", file=sys.stderr)
        return exits.INTERRUPTED
    except Refused as e:
        print(f"backendcheck: {e}", file=sys.stderr)
        return exits.TOOL
    except StageFailed as e:
        print(f"backendcheck: {e}", file=sys.stderr)
        return exits.TOOL
    finally:
        for lock in state.locks:
            lock.release()
