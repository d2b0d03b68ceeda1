"""The machinery every probe shares, in one place (as PyTorch keeps its
tests' in torch/testing/_internal, apart from the topic files): the topic
modules (settings.py, cuda_questions.py, cudnn_choices.py, documented.py,
invariance.py, census.py, compiled.py, torch_backends.py) call it and
spell none of it again.

- NotHere: not evaluated here, with the reason a reader sees.
- digest(): the bits of tensors (shape, dtype and bytes), hashed; the one
  digest of every record that carries one; compare(): two results' bits,
  and how far apart where they differ.
- first_line(): what an exception or a text says, its first line, cut at
  FIRST_LINE characters.
- version_of(): (major, minor) of a version string.
- need_device(), sync(), device_name(): the CUDA device a probe needs.
- order_digest(), order_varies(): the positive control of "the same bits",
  a sum in a fresh random order.
- median_seconds(), median_ratio(): the one median-of-N timer.

Child processes are children.py's (run(), run_json(), run_resuming()).
This module imports no torch: a probe passes its own, so that it is
tested with plain Python where it can be (tests/test_common.py).
"""

from __future__ import annotations

import contextlib
import ctypes
import hashlib
import os
import statistics
import time
from typing import Any, Callable, ContextManager, Iterable

# How much of a message a record keeps: its first line, cut here (the
# longest a message of PyTorch's first line was kept before; a reason that
# names a file and a setting fits).
FIRST_LINE = 300


class NotHere(Exception):
    """Not evaluated here: this version or machine lacks what the probe is
    about; the message names what, and what would evaluate it. A lever one
    probe cannot set among several it sets is recorded by that probe as
    named, not judged."""


def lacks(torch, what: str) -> str:
    """'' when this torch has `what` (a dotted name under torch), else why
    not, in a reader's words (1.13's torch.backends modules raise
    AssertionError for a name they lack, later ones AttributeError)."""
    value = torch
    for part in what.split(".")[1:]:
        try:
            value = getattr(value, part)
        except (AttributeError, AssertionError):
            return f"PyTorch {torch.__version__} has no {what}"
    return ""


def first_line(said: BaseException | str) -> str:
    """The first non-empty line of an exception's message (its type's name
    where it says nothing) or of a text, cut at FIRST_LINE."""
    text = str(said).strip()
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if not lines:
        return type(said).__name__ if isinstance(said, BaseException) else ""
    return lines[0][:FIRST_LINE]


def last_line(text: str, otherwise: str = "") -> str:
    """The last non-empty line of a text (a process's stderr: where a
    traceback ends in its exception), cut at FIRST_LINE."""
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[-1][:FIRST_LINE] if lines else otherwise


def version_of(text: str) -> tuple[int, ...]:
    """(2, 11) of "2.11.0+cu130", (1, 13) of "1.13.0a0", (12, 4) of "12.4"."""
    parts = []
    for piece in text.split("+")[0].split(".")[:2]:
        digits = "".join(c for c in piece if c.isdigit()) or "0"
        parts.append(int(digits))
    return tuple(parts)


def digest(tensors: Iterable[Any]) -> str:
    """The bits of the tensors (shape, dtype and bytes, in order; b"none"
    for a None), hashed with SHA-256, the first 16 hex digits: the digest
    every record carries (the documented list's, the settings', the cuDNN
    children's), so that two records' digests compare."""
    h = hashlib.sha256()
    for t in tensors:
        if t is None:
            h.update(b"none")
            continue
        t = t.detach().cpu().contiguous()
        h.update(str((tuple(t.shape), str(t.dtype))).encode())
        # The bytes as they lie in memory (every dtype, numpy or not).
        if t.numel():
            h.update(ctypes.string_at(t.data_ptr(), t.numel() * t.element_size()))
    return h.hexdigest()[:16]


def compare(a, b) -> dict[str, Any]:
    """Whether two results have the same bits (digest()); where not, the
    fraction of elements that differ (NaN against NaN is no difference) and
    the largest difference relative to the largest magnitude."""
    if digest([a]) == digest([b]):
        return {"same": True}
    a, b = a.double(), b.double()
    differ = (a != b) & ~(a.isnan() & b.isnan())
    scale = float(a.abs().max()) or 1.0
    return {"same": False, "fraction": float(differ.float().mean()),
            "max_rel": float((a - b).abs().max()) / scale}


# --- the CUDA device ----------------------------------------------------------

def need_device(torch, probe: str, cudnn: bool = False) -> None:
    """NotHere unless this torch sees a CUDA device (and, with `cudnn`,
    cuDNN on it), naming the probe (the reason a reader sees: the probe,
    not its source file); where the kit's pre-flight found no driver for
    PyTorch's CUDA runtime, that finding (preflight.py)."""
    import preflight
    if why := preflight.lacking(probe, "driver"):
        raise NotHere(why)
    if not torch.cuda.is_available():
        raise NotHere(f"needs a CUDA device: PyTorch {torch.__version__} sees none (probe {probe})")
    if cudnn and not torch.backends.cudnn.is_available():
        raise NotHere(f"needs cuDNN: PyTorch {torch.__version__} has none on its CUDA device (probe {probe})")


def sync(torch, device: str) -> None:
    """Waits for the device's work (a timing's end)."""
    if device == "cuda":
        torch.cuda.synchronize()


def device_name(torch, device: str) -> str:
    return torch.cuda.get_device_name() if device == "cuda" else "CPU"


# --- the positive control of "the same bits" ------------------------------------

def fresh_order(torch, n: int, rows: int = 0):
    """A permutation of range(n) drawn from the OS's entropy (with `rows`,
    that many, one a row): another in every call and every process,
    whatever seeds the probe set."""
    g = torch.Generator().manual_seed(int.from_bytes(os.urandom(8), "little") >> 1)
    return torch.rand(rows, n, generator=g).argsort(dim=1) if rows else torch.randperm(n, generator=g)


def order_digest(torch, device: str = "cpu") -> str:
    """The positive control of "the same bits": the same 1024 numbers in 64
    fresh orders (fresh_order), each row summed on the device pairwise by
    elementwise fp32 additions (no wider accumulator can hide the order);
    the digest of the 64 sums. Two calls, or two processes, must differ.
    (One order's sum alone gave the same bits twice in about one call of
    ten on a CPU: a pairwise sum is accurate to a few units in the last
    place.)"""
    x = torch.randn(1024, generator=torch.Generator().manual_seed(30)) * 1e3
    y = x[fresh_order(torch, x.numel(), rows=64)].to(device)
    while y.shape[1] > 1:
        y = y[:, 0::2] + y[:, 1::2]
    return digest([y])


def order_varies(torch, device: str = "cpu") -> bool:
    """Whether two order_digest()s differ, as a check that compares two
    runs' bits must see them differ."""
    return order_digest(torch, device) != order_digest(torch, device)


# --- timing ---------------------------------------------------------------------

def _seconds(run: Callable[[], Any], done: Callable[[], None]) -> float:
    started = time.perf_counter()
    run()
    done()
    return time.perf_counter() - started


def median_seconds(run: Callable[[], Any], reps: int, warmup: int = 0,
                   done: Callable[[], None] = lambda: None) -> float:
    """The median of `reps` timed calls of run() after `warmup` untimed
    ones; done() (a device's synchronisation) ends each."""
    for _ in range(warmup):
        run()
        done()
    done()
    return statistics.median(_seconds(run, done) for _ in range(reps))


def paired_times(run: Callable[[], Any], sides: tuple[Callable[[], ContextManager], Callable[[], ContextManager]],
                 reps: int, warm: bool = False, done: Callable[[], None] = lambda: None) -> list[list[float]]:
    """The seconds of run() inside sides[0]() and inside sides[1](), reps
    each, alternated (the order swapped every other rep, so that neither
    side always runs second); entering a side is outside the timed span,
    and with `warm` so is one untimed run() inside it."""
    times: list[list[float]] = [[], []]
    for rep in range(reps):
        for side in ((0, 1) if rep % 2 == 0 else (1, 0)):
            with sides[side]():
                if warm:
                    run()
                done()
                times[side].append(_seconds(run, done))
    return times


def median_ratio(run: Callable[[], Any], sides: tuple[Callable[[], ContextManager], Callable[[], ContextManager]],
                 reps: int, warm: bool = False, done: Callable[[], None] = lambda: None) -> float:
    """The median time of run() inside sides[1]() over its median inside
    sides[0]() (paired_times)."""
    times = paired_times(run, sides, reps, warm, done)
    return statistics.median(times[1]) / statistics.median(times[0])


@contextlib.contextmanager
def set_by(setup: Callable[[], Any]):
    """A side of median_ratio() that a call sets (and nothing restores)."""
    setup()
    yield
