"""A test session's scratch directory: on the machine's memory filesystem
(/dev/shm) when it is a writable directory with MIN_FREE bytes free, else
where tempfile would put it. The session's directory is removed at its exit;
one left by a session that was killed (its process gone) is removed by the
next. Subprocesses inherit it through TMPDIR."""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from pathlib import Path

MEMORY = Path("/dev/shm")
MIN_FREE = 2 << 30  # the report's tests hold a few hundred MB at most
PREFIX = "backendcheck-tests-"
# Where tempfile put files before this session's directory: what a test
# leaves for its reader (a screenshot) goes there, not into the session's.
OUTSIDE = ""


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _left_behind(base: Path) -> None:
    """Removes the session directories whose process no longer runs."""
    for d in base.glob(f"{PREFIX}*"):
        pid = d.name.removeprefix(PREFIX).split("-", 1)[0]
        if pid.isdigit() and int(pid) != os.getpid() and not _alive(int(pid)):
            shutil.rmtree(d, ignore_errors=True)


def _memory_has_room(base: Path = MEMORY) -> bool:
    try:
        st = os.statvfs(base)
    except OSError:
        return False
    return base.is_dir() and os.access(base, os.W_OK | os.X_OK) and st.f_bavail * st.f_frsize >= MIN_FREE


def use_memory(base: Path = MEMORY) -> Path | None:
    """Points tempfile (and, through TMPDIR, the subprocesses) at a directory
    of this session on `base` when it has room; returns it, or None. A
    process whose TMPDIR is already such a directory (a subprocess of a
    session) keeps it."""
    global OUTSIDE
    OUTSIDE = OUTSIDE or tempfile.gettempdir()
    current = os.environ.get("TMPDIR", "")
    if Path(current).name.startswith(PREFIX) and Path(current).is_dir():
        tempfile.tempdir = current
        return Path(current)
    if not _memory_has_room(base):
        return None
    _left_behind(base)
    d = Path(tempfile.mkdtemp(prefix=f"{PREFIX}{os.getpid()}-", dir=base))
    atexit.register(shutil.rmtree, d, True)
    os.environ["TMPDIR"] = str(d)
    tempfile.tempdir = str(d)
    return d


def session(prefix: str) -> str:
    """A directory of this session, removed at its exit."""
    d = tempfile.mkdtemp(prefix=prefix)
    atexit.register(shutil.rmtree, d, True)
    return d
