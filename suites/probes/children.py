"""Many items through child interpreters that each take many, so that torch
is imported once per child rather than once per item, while one crash or
hang still costs only the item it struck: the census (one item per OpInfo)
and the documented list (one per entry).

A child started at item START runs the items from START on. Before each it
prints a line {"start": INDEX, ...what names the item}, after it one JSON
line with its result. A child that dies, or prints nothing for `hang_s`
seconds, costs the item it had started: that item's record is an error
naming what happened, and a new child goes on from the next item. Kept
apart from torch: tested with plain Python children
(suites/probes/tests/test_children.py).

A setting a machine cannot run is an observation, not a failure: where
PyTorch itself raises while an operation runs under a setting (oneDNN under
an ISA cap, a backend forced off, the deterministic mode), call() turns its
exception into Refused, which the probe records as that cell's or item's
observation ("refused": "RuntimeError: could not create a primitive
descriptor iterator") and goes on. An exception of the probe's own code (its
raise statements, its setup outside call(), anything but a RuntimeError), a
child that dies or prints what is not its JSON stays the harness's error.
"""

from __future__ import annotations

import dis
import json
import os
import selectors
import subprocess
import tempfile
from typing import Any, Callable


# The instructions of a raise statement: an exception whose innermost frame
# stopped at one was raised by that frame's own code.
_RAISES = ("RAISE_VARARGS", "RERAISE")


class Refused(Exception):
    """PyTorch refused an operation: raised by call() from PyTorch's own
    exception, whose type (`kind`) and first line (`message`) it keeps;
    str() is "RuntimeError: could not create a primitive descriptor
    iterator"."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(f"{kind}: {message}" if message else kind)
        self.kind, self.message = kind, message


def refusal(e: BaseException, torch) -> str:
    """"RuntimeError: its first line" when `e` is PyTorch's refusal, else
    "". PyTorch's: a RuntimeError (PyTorch's C++ errors, oneDNN's,
    NotImplementedError and PyTorch's own error classes derive from it)
    raised by PyTorch's code, that is in a file of the package `torch` (a
    module; its __file__ names the package) or by a native function (the
    innermost Python frame stopped at a call, not at a raise statement).
    Python's own RecursionError, a RuntimeError too, never is."""
    if not isinstance(e, RuntimeError) or isinstance(e, RecursionError) or e.__traceback__ is None:
        return ""
    tb = e.__traceback__
    while tb.tb_next is not None:
        tb = tb.tb_next
    code = tb.tb_frame.f_code
    package = os.path.dirname(os.path.abspath(torch.__file__)) + os.sep
    if not os.path.abspath(code.co_filename).startswith(package):
        # The instruction the frame stopped in (its last offset may fall in
        # the instruction's inline cache).
        stopped = ([i.opname for i in dis.get_instructions(code) if 0 <= i.offset <= tb.tb_lasti] or [""])[-1]
        if not stopped or stopped in _RAISES:
            return ""
    return str(Refused(type(e).__name__, _first_line(e)))


def _first_line(e: BaseException) -> str:
    """The message's first line; one that ends in a colon with the line it
    introduces ("backend='inductor' raised: InvalidCxxCompiler: ...")."""
    lines = [line.strip() for line in str(e).strip().splitlines() if line.strip()] or [""]
    said = lines[0] if not lines[0].endswith(":") or len(lines) < 2 else f"{lines[0]} {lines[1]}"
    return said[:300]


def call(fn: Callable[..., Any], torch, *args: Any, **kwargs: Any) -> Any:
    """fn(*args, **kwargs), an operation run under a setting; PyTorch's
    refusal of it (refusal()) raises Refused, any other exception passes
    through unchanged."""
    try:
        return fn(*args, **kwargs)
    except RuntimeError as e:
        if not refusal(e, torch):
            raise
        raise Refused(type(e).__name__, _first_line(e)) from e


def _last_line(stderr) -> str:
    stderr.seek(0)
    lines = stderr.read().decode(errors="replace").strip().splitlines()
    return lines[-1][:200] if lines else ""


def run_resuming(argv_from: Callable[[int], list[str]], count: int, hang_s: float,
                 env: dict[str, str] | None = None) -> list[dict[str, Any]]:
    """The records of items 0..count-1, in order: each child's result lines,
    and for an item that a child started and never finished, its start line
    (less "start") with "index" and "error". argv_from(START) is the command
    of a child that starts at item START."""
    records: list[dict[str, Any]] = []
    start = 0
    while start < count:
        # stderr to a file: a child that writes much there cannot fill a
        # pipe and stall as if it hung.
        with tempfile.TemporaryFile() as stderr:
            proc = subprocess.Popen(argv_from(start), stdout=subprocess.PIPE, stderr=stderr, env=env)
            current, failure, pending, chunk = None, "", b"", b"-"
            with selectors.DefaultSelector() as selector:
                selector.register(proc.stdout, selectors.EVENT_READ)
                while chunk:
                    # Whole lines only, read from the descriptor itself: a
                    # buffered reader could hold a line that select() no
                    # longer reports.
                    if not selector.select(timeout=hang_s):
                        proc.kill()
                        proc.wait()
                        failure = f"hung: no answer in {hang_s:.0f} s"
                        break
                    chunk = os.read(proc.stdout.fileno(), 1 << 16)
                    if not chunk:
                        proc.wait()
                        failure = (f"the process died (exit {proc.returncode}): {_last_line(stderr)}"
                                   if proc.returncode else "")
                    *lines, pending = (pending + chunk).split(b"\n")
                    for line in lines:
                        r = json.loads(line)
                        if "start" in r:
                            current = r
                        else:
                            records.append(r)
                            current = None
            proc.stdout.close()
        if current is None:
            break
        records.append({**{k: v for k, v in current.items() if k != "start"}, "index": current["start"],
                        "error": failure or "stopped without a result"})
        start = current["start"] + 1
    return records
