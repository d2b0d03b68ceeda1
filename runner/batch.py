"""Cases batched per process, with a crash or a hang costing one case.

A test binary's cases pay, each in a process of its own, for loading the
libraries and for what every engine does on first use (the environment
record asks each for its version and availability). ctest keeps one test per
case; where the command line asks for batches (BACKENDCHECK_BATCH names the
list of the tests this ctest run selected, `ctest --show-only=json-v1`), a
few batch tests per binary (batch.<binary>.<n>, generated beside the cases'
labels by generators/emit.py) run first, each one gtest process over its
cases, and each case's own test then shows what its case did there.

    batch.py shard --binary B --timeout S --name N TEST...
        runs the selected TESTs in B (test_main.cc's batch mode), in order;
        when the process dies in a case (a signal, an abort, an exit) or a
        case runs past S seconds (the process is then killed), that case is
        left to its own test, and a fresh process goes on after it. Exit 0
        unless the batch itself could not run (its directory, its list).
    batch.py case B ARG...
        a case's ctest command (the binary's CROSSCOMPILING_EMULATOR): where
        the case ran to its end in a batch of this run, its output and
        outcome as its own process would have shown them; otherwise (no
        batch, a crash or a hang there, a case that needs a process of its
        own) B ARG... itself, in this process's place.

Outcomes live under $BACKENDCHECK_EVIDENCE_DIR/batch/: NAME.out and
NAME.json per case (NAME with '/' as %2F), written by the case's process.
Without BACKENDCHECK_BATCH and an evidence directory, `shard` does nothing
and every case runs alone, as plain ctest runs them.

Standard library only: this starts once per case.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

POLL_S = 0.05
VARIABLE = "BACKENDCHECK_BATCH"


def batch_dir() -> Path | None:
    """This run's batch outcomes, where the command line asked for batches."""
    evidence = os.environ.get("BACKENDCHECK_EVIDENCE_DIR", "")
    return Path(evidence) / "batch" if os.environ.get(VARIABLE) and evidence else None


def quoted(test: str) -> str:
    return test.replace("/", "%2F")


def selected(listing: str) -> set[str] | None:
    """The tests this ctest run selected (None: the listing cannot be read,
    so that every test of the batch runs)."""
    try:
        data = json.loads(Path(listing).read_text(encoding="utf-8"))
        return {t["name"] for t in data.get("tests", []) if isinstance(t, dict) and "name" in t}
    except (OSError, ValueError, AttributeError):
        return None


def outcome(directory: Path, test: str) -> dict | None:
    try:
        return json.loads((directory / f"{quoted(test)}.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _left(directory: Path, test: str, why: str) -> None:
    """A case the batch could not finish: its own test runs it alone."""
    tmp = directory / f"{quoted(test)}.json.tmp"
    tmp.write_text(json.dumps({"test": test, "outcome": "left", "why": why}) + "\n", encoding="utf-8")
    os.replace(tmp, directory / f"{quoted(test)}.json")


def shard(binary: str, timeout: float, name: str, tests: list[str]) -> int:
    directory = batch_dir()
    if directory is None:
        print(f"{name}: no batches asked for ({VARIABLE} and BACKENDCHECK_EVIDENCE_DIR): each case runs alone")
        return 0
    wanted = selected(os.environ[VARIABLE])
    todo = [t for t in tests if wanted is None or t in wanted]
    chosen = len(todo)
    state = directory / ".state" / name
    state.mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if k != VARIABLE}
    processes = 0
    while todo:
        processes += 1
        listing, log = state / f"list-{processes}", state / f"process-{processes}.log"
        listing.write_text("".join(t + "\n" for t in todo), encoding="utf-8")
        with open(log, "wb") as out:
            proc = subprocess.Popen([binary], env={**env, "BACKENDCHECK_BATCH_LIST": str(listing),
                                                   "BACKENDCHECK_BATCH_OUT": str(directory)},
                                    stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
            # The cases run one at a time: the one started and not ended is
            # the one that may run past its time.
            waiting, running, since = list(todo), "", 0.0
            while proc.poll() is None:
                time.sleep(POLL_S)
                if running and _ended(directory, running):
                    running = ""
                if not running:
                    running = next((t for t in waiting if _started(directory, t) and not _ended(directory, t)), "")
                    if running:
                        waiting.remove(running)
                        since = time.monotonic()
                if running and time.monotonic() - since > timeout:
                    os.killpg(proc.pid, signal.SIGKILL)
                    proc.wait()
                    _left(directory, running, f"ran past {timeout:g} s in batch {name}")
        # The case the process was in when it ended (a signal, an abort, an
        # exit) is left to its own test; a fresh process goes on after it.
        for t in todo:
            if _started(directory, t) and not _ended(directory, t):
                _left(directory, t, f"its batch process ({name}) ended there: {_status(proc.returncode)}")
        rest = [t for t in todo if not _ended(directory, t)]
        if len(rest) == len(todo):
            # No case started: every one runs alone.
            for t in rest:
                _left(directory, t, f"batch {name} ran none of its cases ({_status(proc.returncode)}; {log})")
            rest = []
        todo = rest
    print(f"{name}: {chosen} of {len(tests)} case(s) selected, run in {processes} process(es); outcomes in "
          f"{directory}")
    return 0


def _started(directory: Path, test: str) -> bool:
    """Whether `test` has started: its output file exists (test_main.cc's
    batch mode opens it as the case starts)."""
    return (directory / f"{quoted(test)}.out").exists()


def _ended(directory: Path, test: str) -> bool:
    """Whether `test` has its outcome (written whole, by a rename)."""
    return (directory / f"{quoted(test)}.json").exists()


def _status(rc: int | None) -> str:
    if rc is None:
        return "still running"
    if rc < 0:
        try:
            return f"signal {signal.Signals(-rc).name}"
        except ValueError:
            return f"signal {-rc}"
    return f"exit status {rc}"


def case(argv: list[str]) -> int:
    directory = batch_dir()
    filters = [a.removeprefix("--gtest_filter=") for a in argv[1:] if a.startswith("--gtest_filter=")]
    test = filters[0] if len(filters) == 1 and not any(c in filters[0] for c in "*?:-") else ""
    seen = outcome(directory, test) if directory is not None and test else None
    if seen is None or seen.get("outcome") not in ("passed", "failed", "skipped"):
        os.execv(argv[0], argv)
    try:
        shown = (directory / f"{quoted(test)}.out").read_text(encoding="utf-8", errors="replace")
    except OSError:
        shown = ""
    # What gtest prints around a case in a process of its own (its printer's
    # lines stay in the batch's log), so that ctest reads a skip as a skip.
    ms = seen.get("ms", 0)
    end = {"passed": f"[       OK ] {test} ({ms} ms)", "skipped": f"[  SKIPPED ] {test} ({ms} ms)",
           "failed": f"[  FAILED  ] {test} ({ms} ms)"}[seen["outcome"]]
    sys.stdout.write(f"[ RUN      ] {test}\n{shown}{'' if not shown or shown.endswith(chr(10)) else chr(10)}{end}\n"
                     f"(run in a batch of this run: {directory})\n")
    return 1 if seen["outcome"] == "failed" else 0


def main(argv: list[str]) -> int:
    if len(argv) >= 2 and argv[0] == "case":
        return case(argv[1:])
    if argv[:1] == ["shard"]:
        import argparse
        parser = argparse.ArgumentParser(prog="batch.py shard")
        parser.add_argument("--binary", required=True)
        parser.add_argument("--timeout", type=float, default=300.0)
        parser.add_argument("--name", required=True)
        parser.add_argument("tests", nargs="*")
        args = parser.parse_args(argv[1:])
        return shard(args.binary, args.timeout, args.name, args.tests)
    sys.stderr.write(__doc__ or "")
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
