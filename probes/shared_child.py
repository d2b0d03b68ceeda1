"""One interpreter that answers the probes of several tests in turn, so that
torch's import and CUDA's start are paid once for them, not once per test
(children.py does that for the items of one probe; this does it across the
test processes of one run).

Where BACKENDCHECK_PROBE_SHARED_DIR names a directory (ci/kit_steps.py
names one per session) and a probe is one of a group that declares it does
not need an interpreter of its own (cuda_questions.SHARED_CHILD: the
attention and precision bits, where isolation is not the point), the
test's interpreter does not import torch: it relays the probe's name to the
group's interpreter and prints its answer as its own (relay). The first
test of the group starts that interpreter (`torch_backends.py --serve DIR
GROUP`), in a session of its own and with none of the test's pipes, under a
lock so that two tests start one; it answers one probe at a time (serve),
each exactly as a fresh interpreter would have printed it, and exits after
IDLE_S seconds without a question. Without the variable, or where that
interpreter cannot start, each probe runs in an interpreter of its own, as
before.

The answering interpreter runs with the environment of the test that
started it: the tests of one run share theirs. One that dies while it
answers leaves the test an error naming what it last wrote (its log,
DIR/GROUP.log), never a finding.

Kept apart from torch: tested with plain Python servers
(probes/tests/test_shared_child.py).
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import socket
import sys
import time
from pathlib import Path
from typing import Callable

from common import last_line

VARIABLE = "BACKENDCHECK_PROBE_SHARED_DIR"
IDLE_S = 60.0      # an answering interpreter without a question this long exits
START_S = 120.0    # how long a test waits for the interpreter it started to listen
HARNESS_ERROR = 4  # torch_backends.py's exit status for the harness's own failure


def _address(directory: Path, group: str) -> str:
    """An abstract socket (Linux: no file, no length limit of a path) named
    by the directory and the group, so that two runs on one machine never
    meet."""
    digest = hashlib.sha256(f"{directory.resolve()}\0{group}".encode()).hexdigest()[:24]
    return f"\0backendcheck-shared-{digest}"


def _connect(address: str) -> socket.socket | None:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.connect(address)
        return s
    except OSError:
        s.close()
        return None


def _last_line(log: Path) -> str:
    try:
        return last_line(log.read_text(errors="replace"), "an empty log")
    except OSError:
        return "no log"


def _listening(address: str, group: str, server: list[str], directory: Path, log: Path) -> socket.socket | None:
    """A connection to the group's interpreter, started where none listens
    (None where it could not start)."""
    conn = _connect(address)
    if conn is not None:
        return conn
    with open(directory / f"{group}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one test starts it; the others find it listening
        conn = _connect(address)
        if conn is not None:
            return conn
        # Spawned, not a Popen: it outlives this interpreter by design.
        pid = os.posix_spawnp(server[0], server, dict(os.environ), setsid=True, file_actions=[
            (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
            (os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0),
            (os.POSIX_SPAWN_OPEN, 2, str(log), os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)])
        deadline, ended = time.monotonic() + START_S, False
        while conn is None and not ended and time.monotonic() < deadline:
            time.sleep(0.05)
            ended = os.waitpid(pid, os.WNOHANG)[0] == pid
            conn = _connect(address)
        if conn is None and not ended:
            os.kill(pid, 9)
            os.waitpid(pid, 0)
        return conn


def relay(probe: str, group: str, server: list[str], directory: Path) -> tuple[int, str] | None:
    """The answer of the group's interpreter to `probe`: (exit status, the
    JSON line to print), starting that interpreter (`server`, a command)
    where none listens; None where it could not start (no torch there, say):
    the probe then runs in the test's own interpreter, as without one. A
    connection refused or reset before the question was taken (an
    interpreter that was ending) is made once more."""
    directory.mkdir(parents=True, exist_ok=True)
    address, log = _address(directory, group), directory / f"{group}.log"
    for attempt in (1, 2):
        conn = _listening(address, group, server, directory, log)
        if conn is None:
            with open(log, "a") as err:
                print(f"shared_child: did not listen ({_last_line(log)}): {probe} runs in its own interpreter",
                      file=err)
            return None
        reply = b""
        try:
            with conn:
                conn.sendall(probe.encode() + b"\n")
                while chunk := conn.recv(1 << 16):
                    reply += chunk
        except (ConnectionResetError, BrokenPipeError):
            if attempt == 1:
                time.sleep(0.2)
                continue
        break
    try:
        answer = json.loads(reply)
        return int(answer["exit"]), str(answer["line"])
    except (ValueError, KeyError, TypeError):
        return HARNESS_ERROR, json.dumps({"error": f"the interpreter shared by the probes of {group} ended while "
                                                   f"it answered {probe}: {_last_line(log)}"})


def serve(directory: Path, group: str, answer: Callable[[str], tuple[int, str]], idle_s: float = IDLE_S) -> int:
    """Answers the probes the tests relay, one at a time, in this
    interpreter, until none asks for `idle_s` seconds: `answer(probe)` gives
    the exit status and the line a fresh interpreter would have printed."""
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(_address(directory, group))
    listener.listen(16)
    listener.settimeout(idle_s)
    print(f"shared_child: pid {os.getpid()} answers the probes of {group}", file=sys.stderr, flush=True)
    while True:
        try:
            conn, _ = listener.accept()
        except socket.timeout:
            print(f"shared_child: no question for {idle_s:g} s: done", file=sys.stderr, flush=True)
            return 0
        with conn:
            conn.settimeout(None)
            name = b""
            while not name.endswith(b"\n") and (chunk := conn.recv(4096)):
                name += chunk
            probe = name.decode().strip()
            print(f"shared_child: {probe}", file=sys.stderr, flush=True)
            code, line = answer(probe)
            try:
                conn.sendall(json.dumps({"exit": code, "line": line}).encode())
            except OSError:  # the test was cut while its probe ran: nobody to tell
                pass


def shared_directory() -> Path | None:
    """The directory of this run's shared interpreters, where one is named."""
    value = os.environ.get(VARIABLE, "")
    return Path(value) if value else None
