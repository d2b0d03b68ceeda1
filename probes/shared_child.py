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

A second kind of shared interpreter serves the other probes: one that
imported torch and nothing more forks a child for each probe (serve_forks,
relay_fork). The child is that probe's interpreter: it starts from the state
a fresh interpreter has once it has imported torch (no flag set, no kernel
run, no thread pool started), runs with the test's stdin, stdout and stderr
(passed over the socket) and its exit status or the signal that ended it is
the test's. So the probes keep a process each, and pay torch's import once
per run; several run at once. The interpreter that forks is chosen by the
test's whole environment, its working directory and its Python
(fork_group): what torch reads at import is the test's own. A probe that
needs an interpreter of its own says so (probes/declared.toml, `fresh`).

Kept apart from torch: tested with plain Python servers
(probes/tests/test_shared_child.py).
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import selectors
import signal
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


def _ask(probe: str, group: str, server: list[str], directory: Path,
         send: Callable[[socket.socket], None]) -> tuple[bytes, Path] | None:
    """The reply of the group's interpreter to the question `send` puts
    (up to its first newline, or all it wrote), with that interpreter's log,
    starting it (`server`, a command) where none listens; None where it
    could not start (no torch there, say): the probe then runs in the test's
    own interpreter, as without one. A connection refused or reset before
    the question was taken (an interpreter that was ending) is made once
    more."""
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
                send(conn)
                while not reply.endswith(b"\n") and (chunk := conn.recv(1 << 16)):
                    reply += chunk
        except (ConnectionResetError, BrokenPipeError):
            if attempt == 1 and not reply:
                time.sleep(0.2)
                continue
        break
    return reply, log


def relay(probe: str, group: str, server: list[str], directory: Path) -> tuple[int, str] | None:
    """The answer of the group's interpreter to `probe`: (exit status, the
    JSON line to print), starting that interpreter (`server`, a command)
    where none listens; None where it could not start (_ask)."""
    asked = _ask(probe, group, server, directory, lambda conn: conn.sendall(probe.encode() + b"\n"))
    if asked is None:
        return None
    reply, log = asked
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


def fork_group() -> str:
    """The name of the forking interpreter that serves this process: one per
    environment, working directory and Python, so that what torch reads at
    its import (OMP_NUM_THREADS, ATEN_CPU_CAPABILITY, ...) is the test's."""
    env = "\0".join(f"{k}={v}" for k, v in sorted(os.environ.items()))
    key = hashlib.sha256(f"{sys.executable}\0{os.getcwd()}\0{env}".encode()).hexdigest()[:16]
    return f"forks-{key}"


def relay_fork(argv: list[str], server: list[str], directory: Path) -> int | None:
    """Runs `argv` (a probe's command line) in a child of the forking
    interpreter of this environment (started with `server` where none
    listens), with this process's stdin, stdout and stderr; returns its exit
    status, or ends this process with the signal that ended it. None where
    that interpreter could not start: the probe then runs here."""
    probe = argv[-1] if argv else ""

    def send(conn: socket.socket) -> None:
        sys.stdout.flush()
        sys.stderr.flush()
        socket.send_fds(conn, [json.dumps({"argv": argv}).encode() + b"\n"], [0, 1, 2])
    asked = _ask(probe, fork_group(), server, directory, send)
    if asked is None:
        return None
    reply, log = asked
    try:
        code = int(json.loads(reply)["exit"])
    except (ValueError, KeyError, TypeError):
        print(json.dumps({"error": f"the interpreter that forks the probes ended while it ran {probe}: "
                                   f"{_last_line(log)}"}), flush=True)
        return HARNESS_ERROR
    if code < 0:  # the probe's child died of a signal: so does this process, as a fresh one would have
        signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
    return code


def serve_forks(directory: Path, run: Callable[[list[str]], int], idle_s: float = IDLE_S) -> int:
    """Forks a child for each probe a test relays (relay_fork), which runs
    `run(argv)` with the test's stdin, stdout and stderr and exits with what
    it returns; tells each test its child's exit status (negative: the
    signal that ended it) and kills a child whose test went away (ctest's
    timeout, say). Exits once no child runs and none was asked for
    `idle_s` seconds, or when `directory` is gone (the run is over)."""
    group = fork_group()
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(_address(directory, group))
    listener.listen(16)
    listener.setblocking(False)
    sel = selectors.DefaultSelector()
    sel.register(listener, selectors.EVENT_READ)
    running: dict[int, socket.socket] = {}  # child pid -> its test's connection
    print(f"shared_child: pid {os.getpid()} forks the probes of {group}", file=sys.stderr, flush=True)
    last = time.monotonic()
    while True:
        for key, _ in sel.select(timeout=0.05):
            if key.fileobj is listener:
                try:
                    conn, _ = listener.accept()
                except BlockingIOError:
                    continue
                pid = _fork_one(conn, listener, sel, running, run)
                if pid is not None:
                    running[pid] = conn
                    sel.register(conn, selectors.EVENT_READ, pid)
            else:  # a test's connection readable while its child runs: the test is gone
                pid = key.data
                print(f"shared_child: the test of child {pid} went away: killed", file=sys.stderr, flush=True)
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                sel.unregister(key.fileobj)
        while running:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break
            conn = running.pop(pid, None)
            if conn is None:
                continue
            if conn.fileno() != -1 and sel.get_map().get(conn.fileno()) is not None:
                sel.unregister(conn)
            try:
                conn.sendall(json.dumps({"exit": os.waitstatus_to_exitcode(status)}).encode() + b"\n")
            except OSError:
                pass
            conn.close()
        if running:
            last = time.monotonic()
        elif not directory.exists():
            print("shared_child: the run is over: done", file=sys.stderr, flush=True)
            return 0
        elif time.monotonic() - last > idle_s:
            print(f"shared_child: no question for {idle_s:g} s: done", file=sys.stderr, flush=True)
            return 0


def _fork_one(conn: socket.socket, listener: socket.socket, sel: selectors.BaseSelector,
              running: dict[int, socket.socket], run: Callable[[list[str]], int]) -> int | None:
    """The child that runs the probe `conn` asks for, with the fds it
    passed as its stdin, stdout and stderr (None where the question was
    unreadable: the test then hears nothing and reports that)."""
    conn.setblocking(True)
    conn.settimeout(10)
    try:
        message, fds, _, _ = socket.recv_fds(conn, 1 << 16, 3)
        argv = [str(a) for a in json.loads(message)["argv"]]
    except (OSError, ValueError, KeyError, TypeError) as e:
        print(f"shared_child: an unreadable question ({e})", file=sys.stderr, flush=True)
        conn.close()
        return None
    if len(fds) != 3:
        for fd in fds:
            os.close(fd)
        conn.close()
        return None
    print(f"shared_child: {' '.join(argv[1:])}", file=sys.stderr, flush=True)
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:  # the probe's interpreter: nothing of the server's but what it imported
        code = 1
        try:
            sel.close()
            listener.close()
            conn.close()
            for other in running.values():
                other.close()
            for target, fd in enumerate(fds):
                os.dup2(fd, target)
                os.close(fd)
            sys.argv = argv
            code = run(argv)
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        except BaseException:  # noqa: BLE001 - as an interpreter would: the traceback on stderr, status 1
            import traceback
            traceback.print_exc()
        finally:
            try:
                sys.stdout.flush()
                sys.stderr.flush()
            finally:
                os._exit(code)
    for fd in fds:
        os.close(fd)
    return pid


def shared_directory() -> Path | None:
    """The directory of this run's shared interpreters, where one is named."""
    value = os.environ.get(VARIABLE, "")
    return Path(value) if value else None
