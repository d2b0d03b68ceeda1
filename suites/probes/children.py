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
"""

from __future__ import annotations

import json
import os
import selectors
import subprocess
import tempfile
from typing import Any, Callable


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
