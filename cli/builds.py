"""Build trees, their lock, and the evidence and report directories.

One build tree per preset and torch interpreter (tree()); the CMake presets
name the same binaryDir. One lock per build tree (fcntl.flock) covers the
tree, its evidence and its report: run, test, bench and report each take it,
and a second ./backendcheck on the same tree refuses at once. Every run
writes into a fresh run directory of its own, marked as the tool's; `latest`
is swapped atomically; only marked run directories beyond the newest
KEEP_RUNS are removed, never anything the tool did not create."""

from __future__ import annotations

import fcntl
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

KEEP_RUNS = 5
RUN_MARKER = ".backendcheck-run"
LOCK_NAME = ".backendcheck.lock"


class Refused(Exception):
    """What stops the command with one line (exit 1)."""


def tree(root: Path, preset: str, torch_python: str) -> Path:
    """The build tree of `preset` and the torch of the interpreter
    `torch_python` (an absolute path): root/build/PRESET/torch/usr/bin/python3,
    as CMakePresets.json's binaryDir ${sourceDir}/build/${presetName}/torch$env{BACKENDCHECK_TORCH_PYTHON}."""
    if not torch_python.startswith("/"):
        raise ValueError(f"not an absolute path: {torch_python}")
    return root / "build" / preset / ("torch" + torch_python)


def versions_tree(root: Path, preset: str) -> Path:
    """Where a run of several torch installs keeps their states, logs and report."""
    return root / "build" / preset / "versions"


class Lock:
    """One ./backendcheck at a time on a build tree (its evidence and report
    included): held from acquire() until the process ends or release()."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.fd: int | None = None

    def acquire(self) -> "Lock":
        self.directory.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.directory / LOCK_NAME, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            try:
                holder = (self.directory / ".backendcheck.pid").read_text().strip() or "unknown"
            except OSError:
                holder = "unknown"
            os.close(fd)
            raise Refused(f"another ./backendcheck (pid {holder}) is using {self.directory}; wait for it to "
                          "finish or use another --preset or --torch") from None
        (self.directory / ".backendcheck.pid").write_text(f"{os.getpid()}\n")
        self.fd = fd
        return self

    def release(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None

    def __enter__(self) -> "Lock":
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()


def swap_latest(root: Path, name: str) -> None:
    """root/latest names `name`, swapped in one rename (a reader sees the old
    link or the new one); a `latest` that is not a link is left alone."""
    latest = root / "latest"
    if latest.exists() and not latest.is_symlink():
        return
    tmp = root / f".latest-{os.getpid()}-{time.monotonic_ns()}"
    os.symlink(name, tmp)
    os.replace(tmp, latest)


def new_run_dir(root: Path) -> Path:
    """A fresh, marked run directory under the evidence root; `latest` names
    it; the marked ones beyond the newest KEEP_RUNS are removed."""
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError:
        raise Refused(f"{root}: cannot create the evidence directory") from None
    if not (root.is_dir() and os.access(root, os.W_OK | os.X_OK)):
        raise Refused(f"{root}: the evidence directory is not a writable directory")
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime()) + f".{time.time_ns() % 10**9:09d}Z"
    try:
        run = Path(tempfile.mkdtemp(prefix=f"run-{stamp}-", dir=root))
    except OSError:
        raise Refused(f"{root}: cannot create a run directory in it") from None
    (run / RUN_MARKER).write_text(f"backendcheck run, pid {os.getpid()}, "
                                  f"{time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())}\n")
    swap_latest(root, run.name)
    marked = sorted((d for d in root.glob("run-*") if d.is_dir() and not d.is_symlink()
                     and (d / RUN_MARKER).is_file() and d != run), reverse=True)
    for old in marked[KEEP_RUNS - 1:]:
        shutil.rmtree(old, ignore_errors=True)
    return run


def carry_evidence(source: Path, run: Path) -> None:
    """The evidence files of the run directory `source` into the fresh run
    directory `run` (hard links, else copies; not its marker)."""
    for f in sorted(source.iterdir()):
        if f.is_file() and not f.is_symlink() and f.name != RUN_MARKER:
            try:
                os.link(f, run / f.name)
            except OSError:
                shutil.copy2(f, run / f.name)


def latest_run(root: Path) -> Path:
    """The run directory `latest` names under the evidence root (the root
    itself when ctest was run by hand and wrote there directly)."""
    latest = root / "latest"
    return latest.resolve() if latest.is_dir() else root


def is_report(directory: Path) -> bool:
    return (directory / "report.json").is_file() and (directory / "index.html").is_file()


def set_report_aside(report: Path) -> None:
    """A new run's report replaces the last one only once written: until
    then the last one is moved to REPORT.previous, which is replaced only
    when it is a report of this tool."""
    if not is_report(report):
        return
    previous = report.with_name(report.name + ".previous")
    if previous.exists() and not is_report(previous):
        print(f"backendcheck: {previous} is not a report of this tool; the last report stays in {report}",
              file=sys.stderr)
        return
    shutil.rmtree(previous, ignore_errors=True)
    os.replace(report, previous)
