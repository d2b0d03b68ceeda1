"""Child processes, for every probe. run() runs one to its end and says its
failure in words ("exit 1: its stderr's last line", "no answer in 120 s");
run_json() reads the JSON line it printed last, or gives {"error": why}.
The rest of this module is run_resuming() and what a child's exception
says.

Many items through child interpreters that each take many, so that torch
is imported once per child rather than once per item, while one crash or
hang still costs only the item it struck: the census (one item per OpInfo)
and the documented list (one per entry).

A child started at item START runs the items from START on. Before each it
prints a line {"start": INDEX, ...what names the item}, after it one JSON
line with its result. A child that dies, or prints nothing for `hang_s`
seconds, costs the item it had started: that item's record is an error
naming what happened, and a new child goes on from the next item. Kept
apart from torch: tested with plain Python children
(probes/tests/test_children.py).

A setting a machine cannot run is an observation, not a failure: where
PyTorch itself raises while an operation runs under a setting (oneDNN under
an ISA cap, a backend forced off, the deterministic mode), call() turns its
exception into Refused, which the probe records as that cell's or item's
observation ("refused": "RuntimeError: could not create a primitive
descriptor iterator") and goes on. An exception of the probe's own code (its
raise statements, its setup outside call(), anything but a RuntimeError), a
child that dies or prints what is not its JSON stays the harness's error.

Only a run is evidence: a compiled function that did not run (Dynamo or
Inductor failed, or the C compiler and Python.h that Triton builds its
launcher with are missing) is no observation of PyTorch's. call() raises
DidNotRun for it, naming what the machine lacks where the failure's words
say so (then the check is not evaluated; otherwise it is an error).
PyTorch's deterministic-mode alert is recognised in the whole text of an
exception and the exceptions behind it (Dynamo puts it after
"backend='inductor' raised:", or in a chained exception's message).
"""

from __future__ import annotations

import dis
import json
import os
import re
import selectors
import subprocess
import tempfile
from typing import Any, Callable, NamedTuple

from common import FIRST_LINE, last_line

# PyTorch's deterministic-mode alert (alertNotDeterministic): "put_ does not
# have a deterministic implementation, but you set
# 'torch.use_deterministic_algorithms(True)'. ...", the words every probe
# recognises it by.
ALERT = "does not have a deterministic implementation"

# What a compiled function needs of the machine, by the words its failure
# says when it is missing, and the need as the user names it.
NEEDS = (("Python.h: No such file or directory", "Python.h (the C headers of the interpreter), which Triton needs "
          "to build its launcher"),
         ("Failed to find C compiler", "a C compiler (CC), which Triton needs to build its launcher"),
         ("InvalidCxxCompiler", "a working C++ compiler, which Inductor needs on the CPU"),
         ("No working C++ compiler found", "a working C++ compiler, which Inductor needs on the CPU"))
# Triton building its launcher (a main.c against libcuda) with the C
# compiler, a build that failed: the compiler's own words went to stderr.
_LAUNCHER_BUILD = re.compile(r"CalledProcessError: Command '\[[^\]]*main\.c[^\]]*-lcuda")
# The note Dynamo appends to its errors (augment_exc_message): how to debug
# it, or fall back to eager; no part of what failed.
_DYNAMO_NOTE = ("TORCHDYNAMO_VERBOSE", "TORCH_LOGS=", "suppress_errors", "You can suppress this exception",
                "import torch._dynamo")
# BackendCompilerFailed's own words (torch/_dynamo/exc.py).
_BACKEND_FAILED = re.compile(r"^\w+: backend='[^']*' raised:", re.MULTILINE)


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
    """PyTorch's alert, whole, where the exception carries it; otherwise the
    message's first line, one that ends in a colon with the line it
    introduces ("backend='inductor' raised: InvalidCxxCompiler: ...")."""
    alert = alert_line(e)
    if alert:
        return alert
    lines = [line.strip() for line in str(e).strip().splitlines() if line.strip()] or [""]
    said = lines[0] if not lines[0].endswith(":") or len(lines) < 2 else f"{lines[0]} {lines[1]}"
    return said[:FIRST_LINE]


def chain(e: BaseException) -> list[BaseException]:
    """`e` and the exceptions behind it, each once: its cause, its context
    (unless suppressed) and the inner exception that Dynamo's
    BackendCompilerFailed and Inductor's InductorError keep."""
    out: list[BaseException] = []
    todo: list[BaseException | None] = [e]
    while todo:
        x = todo.pop(0)
        if x is None or any(x is y for y in out):
            continue
        out.append(x)
        inner = getattr(x, "inner_exception", None)
        todo += [inner if isinstance(inner, BaseException) else None, x.__cause__,
                 None if x.__suppress_context__ else x.__context__]
    return out


def whole_text(e: BaseException) -> str:
    """Every message of the chain, "Type: message" each, in full."""
    return "\n".join(f"{type(x).__name__}: {x}" for x in chain(e))


def alert_line(e: BaseException | str) -> str:
    """The line that carries PyTorch's alert, whole: of `e`'s own message
    (where Dynamo wraps it, "RuntimeError: put_ does not have ..."), else of
    the exceptions behind it (each "Type: message"), or of `e`, a text; ""
    where none does."""
    for text in ([e] if isinstance(e, str) else [str(e), whole_text(e)]):
        line = next((line.strip() for line in text.splitlines() if ALERT in line), "")
        if line:
            return line
    return ""


def need_in(text: str) -> str:
    """What the machine lacks for a compiled function, by a failure's words
    (an exception's whole text, a child's stderr); "" where they name none."""
    for words, need in NEEDS:
        if words in text:
            return need
    if _LAUNCHER_BUILD.search(text):
        return "a C compiler and Python.h, with which Triton builds its launcher (its build failed)"
    return ""


class DidNotRun(Exception):
    """A compiled function that did not run: str() is its failure, in the
    words of Dynamo, Inductor or the toolchain (first lines, the rest of a
    long message cut); `need`, what this machine lacks for it ("" where the
    failure names nothing missing: then it is the harness's error)."""

    def __init__(self, said: str, need: str = "") -> None:
        super().__init__(said)
        self.need = need


def did_not_run(e: BaseException) -> DidNotRun | None:
    """DidNotRun where `e` says the compiled function did not run: Dynamo's
    or Inductor's own exception anywhere in the chain (a TorchDynamoException:
    BackendCompilerFailed, InductorError, a fake-tensor error), its words, or
    a missing toolchain's; None otherwise. PyTorch's alert is never one."""
    text = whole_text(e)
    if ALERT in text:
        return None
    dynamo = any(c.__name__ == "TorchDynamoException" and c.__module__.startswith("torch._dynamo")
                 for x in chain(e) for c in type(x).__mro__)
    need = need_in(text)
    if not (dynamo or need or _BACKEND_FAILED.search(text)):
        return None
    # Its own words, each once (an inner exception's message is in its
    # wrapper's), without Dynamo's note on how to debug it.
    lines: list[str] = []
    for line in text.splitlines():
        line = line.strip()
        if line and not any(n in line for n in _DYNAMO_NOTE) and not any(line in kept for kept in lines):
            lines.append(line)
    said = " ".join(lines[:3])
    return DidNotRun(said if len(said) <= 600 else said[:597] + "...", need)


def call(fn: Callable[..., Any], torch, *args: Any, **kwargs: Any) -> Any:
    """fn(*args, **kwargs), an operation run under a setting; a compiled
    function that did not run raises DidNotRun (did_not_run()); PyTorch's
    refusal of it (refusal(): its alert among them) raises Refused; any
    other exception passes through unchanged."""
    try:
        return fn(*args, **kwargs)
    except Exception as e:
        failed = did_not_run(e)
        if failed is not None:
            raise failed from e
        if not isinstance(e, RuntimeError) or not refusal(e, torch):
            raise
        raise Refused(type(e).__name__, _first_line(e)) from e


def _last_line(stderr) -> str:
    stderr.seek(0)
    return last_line(stderr.read().decode(errors="replace"))


class Ran(NamedTuple):
    """A child process's end: its exit status (None where it never ended or
    never started), what it printed, and `failure`, "" where it exited 0,
    else what happened in words: "exit 1: its stderr's last line", "no
    answer in 120 s", "could not start: ..."."""
    code: int | None
    stdout: str
    stderr: str
    failure: str


def run(argv: list[str], env: dict[str, str] | None = None, timeout: float = 600,
        input: str | None = None) -> Ran:
    """One child process run to its end (or killed at `timeout` seconds),
    `input` on its stdin; it never raises for the child's failure: that is
    Ran.failure, for the caller to record as the harness's error."""
    try:
        r = subprocess.run(argv, env=env, input=input, capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired as e:
        said = e.stderr.decode(errors="replace") if isinstance(e.stderr, bytes) else e.stderr or ""
        return Ran(None, "", said, f"no answer in {timeout:.0f} s")
    except OSError as e:
        return Ran(None, "", "", f"could not start: {type(e).__name__}: {e}")
    return Ran(r.returncode, r.stdout, r.stderr,
               f"exit {r.returncode}: {last_line(r.stderr, 'no message')}" if r.returncode else "")


def run_json(argv: list[str], env: dict[str, str] | None = None, timeout: float = 600,
             input: str | None = None) -> dict[str, Any]:
    """The JSON object a child prints last (run()), or {"error": why} where
    it failed, printed nothing or printed what is not JSON."""
    r = run(argv, env, timeout, input)
    if r.failure:
        return {"error": r.failure}
    lines = r.stdout.strip().splitlines()
    if not lines:
        return {"error": f"no output: {last_line(r.stderr, 'no message')}"}
    try:
        return json.loads(lines[-1])
    except ValueError as e:
        return {"error": f"printed {lines[-1][:FIRST_LINE]!r}, not JSON: {e}"}


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
