"""Probes of what PyTorch does when it calls cuDNN on a CUDA device: which
plans a benchmark search times, what it caches, which plan it keeps, what
fresh processes pick, whether a plan run under the deterministic flags
carries cuDNN's NONDETERMINISTIC note, and what the flags cost. Each is
decided by PyTorch's own calls (torch_backends.py registers them;
probes/declared.toml declares each one's TEST, which
suites/pytorch_python_test.cc runs; catalog/claims.toml maps them to claims). Without a CUDA device each is not evaluated, naming
itself.

How PyTorch's calls are seen: cuDNN reads CUDNN_LOGLEVEL_DBG and
CUDNN_LOGDEST_DBG once, as it loads, so PyTorch runs in a fresh child
interpreter (`python cudnn_choices.py child`, the steps as JSON on its
standard input) whose cuDNN logs to a file. Between the calls it wants told
apart, the child writes a mark into the same log: a tensor descriptor of
the shape 1x1x1x1x(MARK_BASE + N), which no PyTorch call sets. The parent
reads the file through bc_cudnn_log (the one parser of cuDNN's log,
harness/cudnn_log; $BACKENDCHECK_CUDNN_LOG_TOOL, set by the test binary),
one JSON object per execution, plan built and mark, and reads each call
from its executions (read_call; tested without a device on recorded and
constructed logs, probes/tests/test_cudnn_choices.py):

- a benchmark search (PyTorch's Conv_v8.cpp hands every candidate plan to
  cuDNN's frontend, time_sorted_plan): each plan executed once to warm up,
  then timed (executed again; the frontend waits for the timed run before
  its next call), up to benchmark_limit plans that ran; then the plan kept
  runs the call, and the later calls of the same key run it alone;
- a plan's time in the search: from its timed run's call to the next call
  the log shows, that is its run on the device plus the log's own writing,
  alike for every plan (the last plan timed is followed by PyTorch's
  clean-up after the search, so its time is only an upper bound);
- a plan's numerical notes: where cuDNN's log shows an engine's notes,
  bc_cudnn_log gives them to the plans of that engine; where it does not
  (cuDNN 9.19 prints "numericalNotes: val=NULL_PTR" in a plan's entries),
  bc_cudnn_log asks cuDNN for that engine's notes, by its global index and
  knobs on the convolution the log describes. Notes that neither gives are
  unknown, with the reason: a check that needs them is then not evaluated
  (no device, another cuDNN than the log's) or the harness's error (asking
  failed), never mistrusted and never passed.

Speed and memory are timed without the log, in two long-lived worker
interpreters (`python cudnn_choices.py worker`), one per setting, measured
in alternation (A first on even reps), REPS paired reps: the samples of a
Compare record, judged by the report's perf rule.
"""

from __future__ import annotations

import ctypes
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import children
from common import NotHere, digest, need_device

# The base of the marks' last dimension: harness/cudnn_log.h's
# kCudnnMarkBase (held to it by the probes' test).
MARK_BASE = 7770000
# Paired reps of a comparison (the report's ratio rule needs at least 9,
# reports/catalog.py MIN_REPS) and the steps timed in each.
REPS = 9
STEPS = 20
# Fresh processes per distribution probe.
PROCESSES = 5
# A plan beats the one kept only when its time in the search is lower by
# more than this share and this many microseconds: the log's own writing
# (about 0.1 ms a call on an H100, cuDNN 9.19), the host's jitter and the
# run's noise are on every plan's time.
TOLERANCE = 0.15
SLACK_US = 50.0
CHILD_TIMEOUT_S = 450  # a child of many searches (cudnn_bench_cache) builds every plan of each
NONDETERMINISTIC = "NONDETERMINISTIC"
SUCCESS = "CUDNN_STATUS_SUCCESS"
# The flags a child step or a worker sets, with PyTorch's defaults: every
# step states them all, so none carries over from the step before.
DEFAULT_FLAGS = {"enabled": True, "benchmark": False, "deterministic": False, "benchmark_limit": 10,
                 "allow_tf32": True, "matmul_allow_tf32": False, "deterministic_algorithms": False}
# The log's own variables, which a timing worker must not inherit.
LOG_VARIABLES = ("CUDNN_LOGLEVEL_DBG", "CUDNN_LOGDEST_DBG", "CUDNN_LOGINFO_DBG", "CUDNN_LOGWARN_DBG",
                 "CUDNN_LOGERR_DBG")


# --- what a probe asks of a convolution --------------------------------------

def conv(direction: str, dtype: str, n: int, c: int, h: int, k: int, r: int = 3, stride: int = 1, pad: int = 1,
         dilation: int = 1, groups: int = 1, layout: str = "nchw") -> dict:
    """One convolution: `direction` fwd, bwd_data or bwd_weights; square
    images h x h and filters r x r."""
    return {"direction": direction, "dtype": dtype, "n": n, "c": c, "h": h, "k": k, "r": r, "stride": stride,
            "pad": pad, "dilation": dilation, "groups": groups, "layout": layout}


def describe(spec: dict) -> str:
    """"fwd f32 64x128x56x56, 128 3x3 filters" (and what differs from the
    usual: stride, padding, dilation, groups, layout)."""
    s = spec
    extra = [f"{name} {s[key]}" for key, name, usual in (("stride", "stride", 1), ("pad", "padding", 1),
                                                         ("dilation", "dilation", 1), ("groups", "groups", 1))
             if s[key] != usual] + (["channels_last"] if s["layout"] == "nhwc" else [])
    return (f"{s['direction']} {s['dtype']} {s['n']}x{s['c']}x{s['h']}x{s['h']}, {s['k']} {s['r']}x{s['r']} filters"
            + (f" ({', '.join(extra)})" if extra else ""))


def key_of(spec: dict, flags: dict) -> str:
    """The fields of PyTorch's cache key (ConvolutionParams: shape, dtype,
    layout, padding, stride, dilation, groups, deterministic, allow_tf32)
    that a probe varies, as one string."""
    deterministic = flags.get("deterministic") or flags.get("deterministic_algorithms")
    return f"{describe(spec)} deterministic={bool(deterministic)} allow_tf32={flags.get('allow_tf32', True)}"


def flags_text(flags: dict) -> str:
    """The settings that differ from PyTorch's defaults, as a user writes them."""
    names = {"enabled": "cudnn.enabled", "benchmark": "cudnn.benchmark", "deterministic": "cudnn.deterministic",
             "benchmark_limit": "cudnn.benchmark_limit", "allow_tf32": "cudnn.allow_tf32",
             "matmul_allow_tf32": "cuda.matmul.allow_tf32",
             "deterministic_algorithms": "use_deterministic_algorithms"}
    set_ = [f"{names[k]}={v}" for k, v in flags.items() if k in names and v != DEFAULT_FLAGS[k]]
    return " ".join(set_) or "defaults"


# --- the readings (no torch, no device) ------------------------------------

def read_events(text: str) -> list[dict]:
    """bc_cudnn_log's lines, parsed; a line that is not one of its events is
    a ValueError naming it (the harness's error, never a verdict)."""
    events = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            e = json.loads(line)
        except json.JSONDecodeError as err:
            raise ValueError(f"bc_cudnn_log's line {n} is not JSON: {line[:120]!r}") from err
        if not isinstance(e, dict) or e.get("kind") not in ("execution", "plan", "mark"):
            raise ValueError(f"bc_cudnn_log's line {n} is no event: {line[:120]!r}")
        events.append(e)
    return events


def split_calls(events: list[dict], calls: int) -> list[list[dict]]:
    """The events of each of `calls` calls, which the child wrote between its
    marks 0 to `calls`; marks missing or out of order are a ValueError (the
    log cannot be told apart by call)."""
    at = [i for i, e in enumerate(events) if e["kind"] == "mark"]
    numbers = [events[i]["mark"] for i in at]
    if numbers != list(range(calls + 1)):
        shown = ", ".join(map(str, numbers[:12])) + (", ..." if len(numbers) > 12 else "")
        raise ValueError(f"cuDNN's log shows the marks [{shown}], not 0 to {calls} that the child wrote around its "
                         f"{calls} calls, so its calls cannot be told apart")
    return [events[at[j] + 1:at[j + 1]] for j in range(calls)]


def plan_of(e: dict) -> str:
    """A plan's name: its engine and knob choices ("eng28 TILE_SIZE=4"), or the
    legacy algorithm, without its notes."""
    return str(e.get("name") or e.get("function", "?")).split(" [", 1)[0]


def _ran(e: dict) -> bool:
    return not e.get("status") or SUCCESS in str(e["status"])


def read_call(events: list[dict]) -> dict:
    """What one call did, from its events: "executions"; "built", the plans
    it built (finalised without an error), and "built_plans" their names;
    "tried", the plans its executions before the last one ran, in
    their order (consecutive executions of one plan being one try: the
    frontend's warm-up and timed run); "timed", those of them that ran
    (a status of success, or none logged); "failed", the others;
    "times_us", each timed plan's time (its last run's call to the next
    call); "last_timed"; "kept", the plan of the call's last execution,
    the one PyTorch kept; "notes" and "engines", each plan's numerical
    notes where the log shows them and its engine. A call with no search
    (a cached plan, or the first plan of cuDNN's heuristics, which runs
    once) tries nothing. "notes_from": who gave each plan's notes (the
    log, or the cuDNN asked); "notes_unknown": for each plan of an engine
    whose notes neither gave, why, and whether asking failed with an error
    ({"why", "error"})."""
    ex = [e for e in events if e["kind"] == "execution"]
    built = [e for e in events if e["kind"] == "plan" and _ran(e)]
    out: dict = {"executions": len(ex), "built": len(built), "built_plans": sorted({plan_of(e) for e in built}),
                 "tried": [], "timed": [], "failed": [], "times_us": {}, "last_timed": "",
                 "kept": plan_of(ex[-1]) if ex else "", "notes": {}, "engines": {}, "notes_from": {},
                 "notes_unknown": {}}
    for e in built + ex:
        if e.get("notes_known"):
            out["notes"].setdefault(plan_of(e), list(e.get("numerical_notes", [])))
            out["notes_from"].setdefault(plan_of(e), e.get("notes_from") or "the log")
        out["engines"].setdefault(plan_of(e), e.get("engine"))
    for e in built + ex:
        if e.get("engine") is not None and plan_of(e) not in out["notes"]:
            out["notes_unknown"].setdefault(plan_of(e), {
                "why": e.get("notes_unknown") or f"cuDNN's log gives no notes for engine {e['engine']}",
                "error": bool(e.get("notes_error"))})
    runs: list[tuple[str, list[dict]]] = []
    for e in ex[:-1]:
        if runs and runs[-1][0] == plan_of(e):
            runs[-1][1].append(e)
        else:
            runs.append((plan_of(e), [e]))
    for name, group in runs:
        out["tried"].append(name)
        good = [e for e in group if _ran(e)]
        if not good:
            out["failed"].append(name)
            continue
        if name not in out["timed"]:
            out["timed"].append(name)
        last = good[-1]
        if last.get("time_us", -1) >= 0 and last.get("next_call_us", -1) >= 0:
            t = last["next_call_us"] - last["time_us"]
            out["times_us"][name] = min(t, out["times_us"].get(name, t))
        out["last_timed"] = name
    return out


def legacy(events: list[dict]) -> bool:
    """Whether the log's executions are of cuDNN's legacy API (PyTorch with
    TORCH_CUDNN_V8_API_DISABLED=1), whose benchmark search cuDNN runs inside
    one call (cudnnFind*AlgorithmEx) that its log does not break down."""
    ex = [e for e in events if e["kind"] == "execution"]
    return bool(ex) and all(e.get("engine") is None and e.get("legacy_algo") for e in ex)


def _ms(us: float) -> str:
    return f"{us / 1000:.3f} ms"


def _times(call: dict, first: int = 6) -> str:
    ranked = sorted(call["times_us"].items(), key=lambda x: x[1])
    shown = ", ".join(f"{p} {_ms(t)}" for p, t in ranked[:first])
    return shown + (f" and {len(ranked) - first} more" if len(ranked) > first else "")


def kept_fastest(call: dict) -> tuple[bool | None, str]:
    """Whether the search kept the plan it timed fastest: True; False, with
    the plan that was faster by more than TOLERANCE and SLACK_US (or when
    no plan was timed, or the kept one was not); None when the log cannot
    tell (the kept plan was the last one timed, whose time is only an upper
    bound, and another plan beat that bound)."""
    timed, times, kept = call["timed"], call["times_us"], call["kept"]
    if not timed:
        return False, (f"no plan was timed: the call ran {call['executions']} execution(s), of "
                       f"{', '.join(call['tried'] + [kept])}")
    if kept not in timed:
        return False, f"it kept {kept}, which its search did not time (it timed {', '.join(timed)})"
    if kept not in times:
        return None, f"the log gives no time for the plan kept, {kept}"
    t = times[kept]
    faster = sorted((u, p) for p, u in times.items() if p != kept and u < t * (1 - TOLERANCE) and t - u > SLACK_US)
    said = f"timed {len(timed)} plan(s) ({_times(call)}) and kept {kept} ({_ms(t)})"
    if not faster:
        return True, said + ", the fastest"
    if kept == call["last_timed"]:
        return None, (said + f"; the plan kept was the last one timed, whose time in the log includes PyTorch's "
                              f"clean-up after the search, and {faster[0][1]} took {_ms(faster[0][0])}: not told")
    return False, said + f", although {faster[0][1]} took {_ms(faster[0][0])}"


def searches_per_key(calls: list[dict], keys: list[str], benchmark: list[bool]) -> list[str]:
    """What differs from one search per distinct key under benchmark=True, a
    later call of a key running the plan its first call kept, and no search
    under benchmark=False: one line per call that differs (none when the
    cache does what PyTorch says)."""
    kept: dict[str, str] = {}
    wrong = []
    for j, (c, key, bench) in enumerate(zip(calls, keys, benchmark)):
        searched = bool(c["timed"])
        expected = bench and key not in kept
        where = f"call {j + 1} ({key}, benchmark={bench})"
        if searched and not expected:
            why = "with benchmark off" if not bench else "for a key it had searched before"
            wrong.append(f"{where} searched again {why}: timed {', '.join(c['timed'])}")
        elif expected and not searched:
            wrong.append(f"{where} did not search for a new key: ran {c['kept']}")
        if key in kept and c["kept"] != kept[key]:
            wrong.append(f"{where} ran {c['kept']}, not {kept[key]}, which its key's first call kept")
        kept.setdefault(key, c["kept"])
    return wrong


def limits_hold(by: dict[int, dict]) -> tuple[list[str], str, str]:
    """(what differs, what was seen, why it is mistrusted or ""): each
    search of `by` (benchmark_limit -> its read_call) timed at most its
    limit, and the one with limit 0 tried every plan it built (or, where
    the log shows no plan built, timed as many as any other); mistrusted
    when that search timed 3 plans or fewer, too few to show a limit."""
    wrong = [f"limit {lim} timed {len(c['timed'])}" for lim, c in by.items() if lim and len(c["timed"]) > lim]
    everything = by[0]
    if everything["built"]:
        # A plan built twice (heuristics and the fallback list may both name
        # it) is one try where its two tries follow each other.
        untried = set(everything["built_plans"]) - set(everything["tried"])
        if len(everything["tried"]) < everything["built"] and untried:
            wrong.append(f"limit 0 tried {len(everything['tried'])} of the {everything['built']} plans built, not "
                         f"{', '.join(sorted(untried)[:5])}")
        all_said = f"limit 0 tried {len(everything['tried'])} of the {everything['built']} plans it built"
    else:
        most = max(len(c["timed"]) for c in by.values())
        if len(everything["timed"]) < most:
            wrong.append(f"limit 0 timed {len(everything['timed'])}, fewer than another limit's {most}")
        all_said = (f"limit 0 timed {len(everything['timed'])} (the log shows no plan built, so all is what the "
                    "largest search timed)")
    said = (", ".join(f"limit {lim}: timed {len(c['timed'])} of {len(c['tried'])} tried" for lim, c in by.items())
            + f"; {all_said}" + (f"; differs: {'; '.join(wrong)}" if wrong else ""))
    mistrusted = (f"the search with limit 0 timed {len(everything['timed'])} plan(s): too few to show a limit"
                  if len(everything["timed"]) <= 3 else "")
    return wrong, said, mistrusted


def nondeterministic(call: dict) -> set[str]:
    """The plans a call built or ran that cuDNN's log shows with the
    NONDETERMINISTIC note."""
    return {p for p, notes in call["notes"].items() if NONDETERMINISTIC in notes}


def deterministic_only(control: dict, calls: list[dict]) -> tuple[bool, str, str]:
    """(holds, what was seen, why it is mistrusted or ""): no plan tried,
    timed or run in `calls` carries the NONDETERMINISTIC note, by its own
    notes or by its engine's in `control` (the same convolution without the
    deterministic flags, whose search must time such a plan, or "no
    NONDETERMINISTIC plan" would prove nothing)."""
    flagged = nondeterministic(control)
    engines = {control["engines"].get(p) for p in flagged} - {None}
    ran = [p for c in calls for p in c["tried"] + [c["kept"]]]
    leaks = sorted({p for c in calls for p in c["tried"] + [c["kept"]]
                    if p in nondeterministic(c) or c["engines"].get(p) in engines})
    seen = (f"without the flags the search timed {len(control['timed'])} plan(s), and built or ran "
            f"{len(flagged)} NONDETERMINISTIC ({', '.join(sorted(flagged)) or 'none'}); with them the calls tried "
            f"or ran {len(set(ran))} plan(s) ({', '.join(dict.fromkeys(ran))})")
    if leaks:
        return False, seen + f"; NONDETERMINISTIC among them: {', '.join(leaks)}", ""
    if not flagged:
        return True, seen, ("without the flags no plan the search built or timed carries cuDNN's NONDETERMINISTIC "
                            "note in the log, so its absence with them shows nothing")
    return True, seen + "; none NONDETERMINISTIC", ""


def notes_unknown(calls: list[dict]) -> tuple[str, bool]:
    """Why the notes of some plan the calls built, tried or ran are known
    neither from cuDNN's log nor from cuDNN asked ("" when every plan's
    are), and whether that is the harness's error (asking cuDNN failed) rather
    than what this machine cannot evaluate (no device, another cuDNN than
    the log's)."""
    unknown = {p: u for c in calls for p, u in c["notes_unknown"].items()}
    if not unknown:
        return "", False
    errors = {p: u for p, u in unknown.items() if u["error"]}
    shown = errors or unknown
    first = next(iter(shown))
    return (f"the numerical notes of {len(unknown)} plan(s) ({', '.join(sorted(unknown)[:6])}) are not known: "
            f"{first}: {shown[first]['why']}"), bool(errors)


def distribution(choices: list[str]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for c in choices:
        counts[c] = counts.get(c, 0) + 1
    return counts


def sample(times_ns: list[float]) -> dict:
    """One rep's sample: the median step (steady_ns), all steps (total_ns)
    and the first (first_ns)."""
    return {"steady_ns": statistics.median(times_ns), "total_ns": int(sum(times_ns)), "first_ns": int(times_ns[0])}


# --- the child: PyTorch's calls under cuDNN's log ------------------------------

def _torch_dtype(torch, name: str):
    return {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}[name]


def _apply(torch, flags: dict) -> None:
    f = {**DEFAULT_FLAGS, **flags}
    b = torch.backends
    b.cudnn.enabled = f["enabled"]
    b.cudnn.benchmark = f["benchmark"]
    b.cudnn.deterministic = f["deterministic"]
    if hasattr(b.cudnn, "benchmark_limit"):
        b.cudnn.benchmark_limit = f["benchmark_limit"]
    if b.cudnn.allow_tf32 != f["allow_tf32"]:
        b.cudnn.allow_tf32 = f["allow_tf32"]
    if b.cuda.matmul.allow_tf32 != f["matmul_allow_tf32"]:
        b.cuda.matmul.allow_tf32 = f["matmul_allow_tf32"]
    torch.use_deterministic_algorithms(f["deterministic_algorithms"])


def _tensors(torch, spec: dict, seed: int = 0) -> dict:
    """The operands of one convolution, seeded: x, w and the output's gradient."""
    g = torch.Generator(device="cuda").manual_seed(seed)
    dtype = _torch_dtype(torch, spec["dtype"])
    s = spec
    out = (s["h"] + 2 * s["pad"] - s["dilation"] * (s["r"] - 1) - 1) // s["stride"] + 1
    shapes = {"x": (s["n"], s["c"], s["h"], s["h"]), "w": (s["k"], s["c"] // s["groups"], s["r"], s["r"]),
              "gy": (s["n"], s["k"], out, out)}
    t = {name: torch.randn(*shape, generator=g, device="cuda", dtype=dtype) for name, shape in shapes.items()}
    if s["layout"] == "nhwc":
        t = {name: x.contiguous(memory_format=torch.channels_last) for name, x in t.items()}
    return t


def _convolve(torch, spec: dict, t: dict):
    s = spec
    stride, pad, dil = [s["stride"]] * 2, [s["pad"]] * 2, [s["dilation"]] * 2
    if s["direction"] == "fwd":
        return torch.nn.functional.conv2d(t["x"], t["w"], None, stride, pad, dil, s["groups"])
    mask = [s["direction"] == "bwd_data", s["direction"] == "bwd_weights", False]
    grads = torch.ops.aten.convolution_backward(t["gy"], t["x"], t["w"], None, stride, pad, dil, False, [0, 0],
                                                s["groups"], mask)
    return grads[0] if s["direction"] == "bwd_data" else grads[1]


class _Marks:
    """Writes mark N into this process's cuDNN log: cuDNN logs
    cudnnSetTensorNdDescriptor with its dimensions, 1x1x1x1x(MARK_BASE + N)."""

    def __init__(self, torch) -> None:
        torch.backends.cudnn.version()  # cuDNN loaded, as PyTorch loads it
        with open("/proc/self/maps") as maps:
            paths = [line.split()[-1] for line in maps if "/libcudnn.so" in line]
        if not paths:
            raise RuntimeError("no libcudnn.so is mapped in the child after torch.backends.cudnn.version()")
        lib = ctypes.CDLL(paths[0])
        self.create, self.set_nd, self.destroy = (lib.cudnnCreateTensorDescriptor, lib.cudnnSetTensorNdDescriptor,
                                                  lib.cudnnDestroyTensorDescriptor)
        self.create.argtypes = [ctypes.POINTER(ctypes.c_void_p)]
        self.set_nd.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_int, ctypes.POINTER(ctypes.c_int),
                                ctypes.POINTER(ctypes.c_int)]
        self.destroy.argtypes = [ctypes.c_void_p]

    def write(self, n: int) -> None:
        d = ctypes.c_void_p()
        if self.create(ctypes.byref(d)) != 0:
            raise RuntimeError("cudnnCreateTensorDescriptor failed in the child")
        v = MARK_BASE + n
        dims, strides = (ctypes.c_int * 5)(1, 1, 1, 1, v), (ctypes.c_int * 5)(v, v, v, v, 1)
        try:
            self.set_nd(d, 0, 5, dims, strides)  # CUDNN_DATA_FLOAT; logged as it is called
        finally:
            self.destroy(d)


def child(spec: dict) -> dict:
    """Runs spec["steps"], each {"flags", "conv", "calls", "digest"}, with
    mark N before the N-th call and one after the last, each call
    synchronised; returns per call its step and (where the step asks) its
    output's digest, and cuDNN's version."""
    import torch
    marks = _Marks(torch)
    calls = []
    for i, step in enumerate(spec["steps"]):
        _apply(torch, step.get("flags", {}))
        t = _tensors(torch, step["conv"])
        for _ in range(step.get("calls", 1)):
            marks.write(len(calls))
            out = _convolve(torch, step["conv"], t)
            torch.cuda.synchronize()
            calls.append({"step": i, "digest": digest([out]) if step.get("digest") else ""})
    marks.write(len(calls))
    return {"calls": calls, "cudnn": torch.backends.cudnn.version(), "threads": torch.get_num_threads()}


def _tool() -> str:
    tool = os.environ.get("BACKENDCHECK_CUDNN_LOG_TOOL", "")
    if not tool or not os.access(tool, os.X_OK):
        raise RuntimeError(f"cuDNN's log reader bc_cudnn_log is not at BACKENDCHECK_CUDNN_LOG_TOOL "
                           f"({tool or 'unset'}); "
                           "the test binary sets it")
    return tool


def log_events(path: Path) -> list[dict]:
    """The events of a cuDNN log file, through bc_cudnn_log."""
    ran = children.run([_tool(), str(path)], timeout=300)
    if ran.failure:
        raise RuntimeError(f"bc_cudnn_log {path.name}: {ran.failure}")
    return read_events(ran.stdout)


def _child_run(steps: list[dict], env: dict) -> dict:
    out = children.run_json([sys.executable, str(Path(__file__).resolve()), "child"], env, CHILD_TIMEOUT_S,
                            input=json.dumps({"steps": steps}))
    if "error" in out:
        raise RuntimeError(f"the child interpreter failed: {out['error']}")
    return out


def run_plain(steps: list[dict]) -> dict:
    """Runs `steps` in a fresh child without cuDNN's log (whose writing
    would take part in the search's timings): what the child printed."""
    return _child_run(steps, {k: v for k, v in os.environ.items() if k not in LOG_VARIABLES})


def run_logged(steps: list[dict]) -> tuple[dict, list[dict]]:
    """Runs `steps` in a fresh child whose cuDNN logs its calls; (what the
    child printed, each call's read_call, in order). A child that failed, a
    log that is missing or cannot be split by call is the harness's error."""
    with tempfile.TemporaryDirectory(prefix="bc-cudnn-log-") as tmp:
        log = Path(tmp) / "cudnn.log"
        env = {k: v for k, v in os.environ.items() if k not in LOG_VARIABLES}
        env.update(CUDNN_LOGLEVEL_DBG="3", CUDNN_LOGDEST_DBG=str(log))
        out = _child_run(steps, env)
        if not log.is_file() or log.stat().st_size == 0:
            raise RuntimeError(f"cuDNN wrote no log to {log} with CUDNN_LOGLEVEL_DBG=3")
        events = log_events(log)
    if legacy(events):
        raise NotHere("PyTorch runs cuDNN's legacy API here (TORCH_CUDNN_V8_API_DISABLED=1), whose benchmark search "
                      "cuDNN runs inside one call that its log does not break down; the graph API's would show it")
    calls = [read_call(c) for c in split_calls(events, len(out["calls"]))]
    for j, c in enumerate(calls):
        if c["executions"] == 0:
            raise RuntimeError(f"cuDNN's log shows no convolution execution in call {j + 1} of the child, which "
                               "ran one: the log is not read as cuDNN wrote it")
    return out, calls


# --- the worker: timing one setting -------------------------------------------

def _train_step(torch, dtype, deterministic_safe: bool = False):
    """A training step of a small convolutional network (four 3x3
    convolutions with batch norm and ReLU, a linear head) on 64 images of
    3x64x64: forward, backward and an SGD update. `deterministic_safe`: the
    same network pooled by AvgPool2d(32) and trained on a mean squared
    error, operations whose CUDA backward has a deterministic
    implementation (AdaptiveAvgPool2d's and NLLLoss's raise under
    use_deterministic_algorithms(True); the documented list)."""
    nn = torch.nn
    torch.manual_seed(0)
    pool = nn.AvgPool2d(32) if deterministic_safe else nn.AdaptiveAvgPool2d(1)
    net = nn.Sequential(nn.Conv2d(3, 64, 3, padding=1), nn.BatchNorm2d(64), nn.ReLU(),
                        nn.Conv2d(64, 64, 3, padding=1), nn.BatchNorm2d(64), nn.ReLU(),
                        nn.Conv2d(64, 128, 3, stride=2, padding=1), nn.BatchNorm2d(128), nn.ReLU(),
                        nn.Conv2d(128, 128, 3, padding=1), nn.BatchNorm2d(128), nn.ReLU(),
                        pool, nn.Flatten(), nn.Linear(128, 10)).to("cuda", dtype)
    opt = torch.optim.SGD(net.parameters(), lr=1e-3)
    g = torch.Generator(device="cuda").manual_seed(0)
    x = torch.randn(64, 3, 64, 64, generator=g, device="cuda", dtype=dtype)
    y = torch.randint(0, 10, (64,), generator=g, device="cuda")

    target = torch.eye(10, device="cuda", dtype=dtype)[y]

    def step():
        opt.zero_grad(set_to_none=True)
        out = net(x)
        loss = (torch.nn.functional.mse_loss(out, target) if deterministic_safe
                else torch.nn.functional.cross_entropy(out, y))
        loss.backward()
        opt.step()
    return step


def _workload(torch, w: dict):
    kind = w["kind"]
    if kind == "train":
        return _train_step(torch, _torch_dtype(torch, w["dtype"]), bool(w.get("deterministic_safe")))
    if kind == "conv":
        t = _tensors(torch, w["conv"])
        return lambda: _convolve(torch, w["conv"], t)
    if kind == "matmul":
        g = torch.Generator(device="cuda").manual_seed(0)
        a, b = (torch.randn(w["n"], w["n"], generator=g, device="cuda") for _ in range(2))
        return lambda: torch.mm(a, b)
    raise ValueError(f"unknown workload {kind!r}")


def _timed(torch, fn, steps: int) -> list[float]:
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(steps):
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) * 1e6)
    return times


def _schedule(torch, base: dict, sizes: list[int]) -> dict:
    """A run whose input shapes keep changing: the convolution `base` on each
    image size of `sizes` in turn, sizes this process has not seen; its wall
    time and the most memory PyTorch allocated for one call beyond what it
    held before it (the output, and the workspace of the plan or plans
    tried)."""
    started = time.perf_counter_ns()
    peak = 0
    for size in sizes:
        spec = {**base, "h": size}
        t = _tensors(torch, spec)
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        before = torch.cuda.memory_allocated()
        _convolve(torch, spec, t)
        torch.cuda.synchronize()
        peak = max(peak, torch.cuda.max_memory_allocated() - before)
        del t
    return {"total_ns": time.perf_counter_ns() - started, "workspace_bytes": peak}


def worker(commands, answer) -> None:
    """Serves one setting's timing: {"setup": {"flags", "workload"}} (the
    workload built and run three times, its searches done), {"measure":
    {"steps"}} (the steps' times on the device), {"schedule": {"conv",
    "sizes"}} (see _schedule), {"quit": true}; one JSON answer a command."""
    import torch
    fn = None
    for line in commands:
        cmd = json.loads(line)
        if "quit" in cmd:
            answer({"ok": True})
            return
        if "setup" in cmd:
            _apply(torch, cmd["setup"]["flags"])
            w = cmd["setup"]["workload"]
            if w["kind"] != "schedule":
                fn = _workload(torch, w)
                for _ in range(3):
                    fn()
            torch.cuda.synchronize()
            answer({"ok": True})
        elif "measure" in cmd:
            answer({"times_ns": _timed(torch, fn, cmd["measure"]["steps"])})
        elif "schedule" in cmd:
            answer(_schedule(torch, cmd["schedule"]["conv"], cmd["schedule"]["sizes"]))


class _Worker:
    def __init__(self, label: str) -> None:
        self.label = label
        env = {k: v for k, v in os.environ.items() if k not in LOG_VARIABLES}
        self.err = tempfile.TemporaryFile(mode="w+")
        self.proc = subprocess.Popen([sys.executable, str(Path(__file__).resolve()), "worker"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=self.err, text=True, env=env, bufsize=1)

    def send(self, cmd: dict) -> None:
        self.proc.stdin.write(json.dumps(cmd) + "\n")
        self.proc.stdin.flush()

    def receive(self) -> dict:
        line = self.proc.stdout.readline()
        if not line:
            self.proc.wait(timeout=30)
            self.err.seek(0)
            raise RuntimeError(f"the timing worker for {self.label} ended (exit {self.proc.returncode}): "
                               f"{self.err.read().strip()[-600:]}")
        return json.loads(line)

    def ask(self, cmd: dict) -> dict:
        self.send(cmd)
        return self.receive()

    def close(self) -> None:
        try:
            if self.proc.poll() is None:
                self.ask({"quit": True})
            self.proc.wait(timeout=60)
        except Exception:  # noqa: BLE001 - a worker that will not stop is killed
            self.proc.kill()
            self.proc.wait()
        finally:
            self.err.close()


def compare(probe: str, workload: dict, flags_a: dict, flags_b: dict, reps: int = REPS) -> dict:
    """A and B timed in two workers, in alternation over `reps` paired reps:
    a Compare record's fields. A "schedule" workload runs new shapes each
    rep (workload["sizes"] offset by 8 pixels a rep) and records its wall
    time and memory; the others record STEPS timed steps."""
    workers = [_Worker(flags_text(flags_a)), _Worker(flags_text(flags_b))]
    samples: list[list[dict]] = [[], []]
    try:
        for w, flags in zip(workers, (flags_a, flags_b)):
            w.send({"setup": {"flags": flags, "workload": workload}})
        for w in workers:
            w.receive()
        for rep in range(reps):
            for k in ((0, 1) if rep % 2 == 0 else (1, 0)):
                if workload["kind"] == "schedule":
                    sizes = [s + 8 * rep for s in workload["sizes"]]
                    samples[k].append(workers[k].ask({"schedule": {"conv": workload["conv"], "sizes": sizes}}))
                else:
                    samples[k].append(sample(workers[k].ask({"measure": {"steps": STEPS}})["times_ns"]))
    finally:
        for w in workers:
            w.close()
    return compare_record(probe, flags_a, flags_b, samples[0], samples[1])


def compare_record(probe: str, flags_a: dict, flags_b: dict, a: list[dict], b: list[dict]) -> dict:
    """The Compare record's fields as the test reads them (runner/records.h
    CompareFromJson): each side's repro (the probe and its settings), its
    samples, and the settings B changes ("versus_flags")."""
    versus = {k: v for k, v in flags_b.items() if flags_a.get(k, DEFAULT_FLAGS.get(k)) != v}
    return {"repro_a": f"torch_backends.py {probe} {flags_text(flags_a)}",
            "repro_b": f"torch_backends.py {probe} {flags_text(flags_b)}", "a": a, "b": b, "versus_flags": versus}


def _medians(c: dict, metric: str) -> str:
    a = statistics.median(s[metric] for s in c["a"])
    b = statistics.median(s[metric] for s in c["b"])
    unit = (lambda x: f"{x / 2**20:.1f} MiB") if metric.endswith("bytes") else (lambda x: f"{x / 1e6:.3f} ms")
    side = {k: c[f"repro_{k}"].split(" ", 2)[2] for k in "ab"}
    return f"{metric} median {unit(a)} ({side['a']}) against {unit(b)} ({side['b']})"


# --- the probes ---------------------------------------------------------------

def _need_cuda(probe: str) -> None:
    import torch
    need_device(torch, probe, cudnn=True)


# The convolutions the probes run: large enough that each plan of a search
# takes a tenth of a millisecond or more (bench-fastest), small where plans
# should tie (fresh processes), and one whose backward-filter search has
# NONDETERMINISTIC plans on an H100 (cuDNN 9.19: eng20, GPU.md).
FASTEST = (conv("fwd", "f32", 64, 128, 56, 128), conv("fwd", "f16", 64, 256, 56, 256))
CACHE_BASE = conv("fwd", "f32", 8, 32, 28, 32)
LIMIT_BASE = conv("fwd", "f32", 16, 64, 28, 64)
TIED = (conv("fwd", "f32", 2, 16, 14, 16), conv("fwd", "f16", 2, 16, 14, 16), conv("fwd", "f32", 4, 32, 7, 32))
TIED_BWD = (conv("bwd_weights", "f32", 2, 16, 14, 16), conv("bwd_weights", "f32", 4, 32, 7, 32),
            conv("bwd_weights", "f16", 2, 16, 14, 16))
HEURISTIC = (conv("fwd", "f32", 8, 64, 28, 64), conv("fwd", "f16", 8, 64, 28, 64),
             conv("fwd", "f32", 8, 64, 28, 128, r=1, stride=2, pad=0), conv("bwd_weights", "f32", 8, 64, 28, 64),
             conv("bwd_data", "f16", 8, 64, 28, 64))
NONDET = conv("bwd_weights", "f32", 8, 64, 56, 64)
TF32_CONV = conv("fwd", "f32", 32, 256, 56, 256)


def cudnn_bench_fastest() -> tuple[bool | None, str, dict]:
    """bench-fastest: with cudnn.benchmark=True the first call of a shape
    times the candidate plans and runs the fastest; later calls run it.
    For each convolution of FASTEST (three calls each): the plans timed,
    each plan's time in the search, the plan kept, and the plan the later
    calls ran. Passes when every decided search kept its fastest; fails on
    one that kept a slower plan, or timed none; mistrusted when no search
    could be decided."""
    _need_cuda("cudnn_bench_fastest")
    steps = [{"flags": {"benchmark": True}, "conv": p, "calls": 3} for p in FASTEST]
    _, calls = run_logged(steps)
    said, verdicts, seen = [], [], {}
    for i, p in enumerate(FASTEST):
        first, later = calls[3 * i], calls[3 * i + 1:3 * i + 3]
        verdict, text = kept_fastest(first)
        reused = [c["kept"] for c in later]
        if verdict and any(k != first["kept"] for k in reused):
            verdict, text = False, text + f"; the later calls ran {', '.join(reused)}"
        verdicts.append(verdict)
        said.append(f"{describe(p)}: {text}")
        seen[describe(p)] = {"search": first, "later": reused, "fastest": verdict}
    decided = [v for v in verdicts if v is not None]
    if decided and not all(decided):
        return False, "; ".join(said), seen
    if not decided:
        seen["mistrusted"] = "no search could be decided from the log's times: " + "; ".join(said)
    return True, "; ".join(said), seen


def cudnn_bench_cache() -> tuple[bool | None, str, dict]:
    """bench-cache: the benchmark choice is cached per key (shape, dtype,
    layout, padding, stride, dilation, groups, deterministic, allow_tf32):
    under benchmark=True one search per new key and none for a key seen
    before, whose later calls run the plan kept; under benchmark=False no
    search at all, for new keys too. One process, calls of CACHE_BASE and of
    one variant per field of the key, in an order that repeats keys.
    Mistrusted when no call searched, even the first under benchmark=True."""
    _need_cuda("cudnn_bench_cache")
    b = CACHE_BASE
    variants = {"base": (b, {}), "shape": ({**b, "n": 16}, {}), "dtype": ({**b, "dtype": "f16"}, {}),
                "layout": ({**b, "layout": "nhwc"}, {}), "padding": ({**b, "pad": 2}, {}),
                "stride": ({**b, "stride": 2}, {}), "dilation": ({**b, "dilation": 2, "pad": 2}, {}),
                "groups": ({**b, "groups": 2}, {}), "deterministic": (b, {"deterministic": True}),
                "allow_tf32": (b, {"allow_tf32": False})}
    order = [("base", 3), ("shape", 2), ("base", 1), ("dtype", 2), ("layout", 2), ("padding", 1), ("stride", 1),
             ("dilation", 1), ("groups", 1), ("deterministic", 2), ("allow_tf32", 2), ("base", 1)]
    steps = [{"flags": {"benchmark": True, **variants[v][1]}, "conv": variants[v][0], "calls": n} for v, n in order]
    # benchmark off: keys this process has not seen, each twice
    off = [({**b, "n": 24}, {}), ({**b, "n": 24, "dtype": "f16"}, {})]
    steps += [{"flags": {"benchmark": False, **f}, "conv": spec, "calls": 2} for spec, f in off]
    _, calls = run_logged(steps)
    keys, bench = [], []
    for s in steps:
        keys += [key_of(s["conv"], s["flags"])] * s["calls"]
        bench += [s["flags"]["benchmark"]] * s["calls"]
    wrong = searches_per_key(calls, keys, bench)
    searched = sum(bool(c["timed"]) for c in calls)
    distinct = len(set(k for k, on in zip(keys, bench) if on))
    seen = {"calls": [{"key": k, "benchmark": on, "timed": c["timed"], "kept": c["kept"]}
                      for k, on, c in zip(keys, bench, calls)]}
    said = (f"{len(calls)} calls of {len(set(keys))} keys ({distinct} under benchmark=True): {searched} searched"
            + (f"; differs: {'; '.join(wrong)}" if wrong else
               "; one search per new key under benchmark=True, none for a key seen before, none under "
               "benchmark=False, and every later call ran the plan its key's search kept"))
    if not any(c["timed"] for c, on in zip(calls, bench) if on):
        seen["mistrusted"] = "no call searched, not even the first under benchmark=True: the log shows no search here"
    return not wrong, said, seen


def cudnn_bench_limit() -> tuple[bool | None, str, dict]:
    """bench-limit: cudnn.benchmark_limit bounds the plans a search times
    (1, 3 and the default 10), and 0 tries every plan PyTorch built for the
    search. One process, one search per limit, of LIMIT_BASE at batch 16 to
    19 (distinct keys). Mistrusted when the search with 0 timed 3 plans or
    fewer: too few to show a limit."""
    _need_cuda("cudnn_bench_limit")
    import torch
    if not hasattr(torch.backends.cudnn, "benchmark_limit"):
        raise NotHere(f"PyTorch {torch.__version__} has no torch.backends.cudnn.benchmark_limit")
    limits = (1, 3, 10, 0)
    steps = [{"flags": {"benchmark": True, "benchmark_limit": lim}, "conv": {**LIMIT_BASE, "n": 16 + i}, "calls": 1}
             for i, lim in enumerate(limits)]
    _, calls = run_logged(steps)
    wrong, said, mistrusted = limits_hold(dict(zip(limits, calls)))
    seen = {str(lim): {"timed": c["timed"], "tried": c["tried"], "built": c["built"], "kept": c["kept"]}
            for lim, c in zip(limits, calls)}
    if mistrusted:
        seen["mistrusted"] = mistrusted
    return not wrong, said, seen


def _processes(flags: dict, problems: tuple, logged: bool, processes: int = PROCESSES) -> tuple[list[dict], dict]:
    """`processes` fresh children, each running every problem twice under
    `flags`: per process the plans kept (where `logged`: cuDNN's log names
    them; otherwise told apart by their output's bits, since a search timed
    under the log's own writing is not the search users run), the digests,
    and whether each problem's second call gave its first's bits; and the
    CrossProcess record ("chosen": the plans named, or "bits DIGEST")."""
    steps = [{"flags": flags, "conv": p, "calls": 2, "digest": True} for p in problems]
    runs = []
    for _ in range(processes):
        if logged:
            out, calls = run_logged(steps)
            kept = [calls[2 * i]["kept"] for i in range(len(problems))]
            again = [calls[2 * i + 1]["kept"] for i in range(len(problems))]
            searched = [bool(calls[2 * i]["timed"]) for i in range(len(problems))]
        else:
            out = run_plain(steps)
            kept, again, searched = [""] * len(problems), [""] * len(problems), []
        digests = [out["calls"][2 * i]["digest"] for i in range(len(problems))]
        repeat = [again[i] == kept[i] and out["calls"][2 * i + 1]["digest"] == digests[i] for i in range(len(problems))]
        runs.append({"kept": kept, "digests": digests, "repeats": repeat, "cudnn": out["cudnn"],
                     "threads": out["threads"], "searched": searched})
    env = ("CUDNN_LOGLEVEL_DBG=3 " if logged else "") + flags_text(flags)
    record = {"processes": [{"env": env, "chosen": "; ".join(r["kept"]) if logged else "bits " + " ".join(r["digests"]),
                             "digest": " ".join(r["digests"]), "implementation": f"cuDNN {r['cudnn']}",
                             "threads": r["threads"]} for r in runs]}
    return runs, record


def _choices_text(runs: list[dict], problems: tuple, logged: bool) -> str:
    per = []
    for i, p in enumerate(problems):
        d = distribution([r["kept"][i] if logged else r["digests"][i] for r in runs])
        per.append(f"{describe(p)}: " + ", ".join(f"{k} x{n}" for k, n in sorted(d.items(), key=lambda x: -x[1])))
    whole = distribution([" ".join(r["kept"] if logged else r["digests"]) for r in runs])
    what = "plan choice(s), as cuDNN's log names them" if logged else "result(s), the plans told apart by their bits"
    return f"{len(whole)} distinct {what}, in {len(runs)} fresh processes ({'; '.join(per)})"


def cudnn_bench_processes() -> tuple[bool | None, str, dict]:
    """bench-unstable: fresh processes with cudnn.benchmark=True, each
    searching the small convolutions of TIED (which many plans run in about
    the same time), without cuDNN's log: the bits each process's kept plans
    gave, as a CrossProcess record (the report's distribution rule counts the
    distinct results: different bits of one computation are different plans,
    each process rerunning its own to the same bits; plans that give the
    same bits are not told apart, so variation is undercounted, never
    invented). Fails when a process's second call of a convolution gave
    other bits than its first."""
    _need_cuda("cudnn_bench_processes")
    runs, record = _processes({"benchmark": True}, TIED, logged=False)
    broken = [i for i, r in enumerate(runs) if not all(r["repeats"])]
    said = _choices_text(runs, TIED, False) + (f"; processes {broken} gave other bits on a second call" if broken
                                               else "; each process reran its plans to the same bits")
    return not broken, said, {"processes": runs, "cross_process": record}


def cudnn_det_bench_processes() -> tuple[bool | None, str, dict]:
    """det-bench-cross-run: fresh processes with cudnn.benchmark and
    cudnn.deterministic both True, each searching the backward-filter
    convolutions of TIED_BWD twice, without cuDNN's log: within a process
    the second call gives the first's bits (each run deterministic; fails
    otherwise); across processes the bits, as a CrossProcess record (the
    distribution rule counts the distinct results)."""
    _need_cuda("cudnn_det_bench_processes")
    runs, record = _processes({"benchmark": True, "deterministic": True}, TIED_BWD, logged=False)
    broken = [i for i, r in enumerate(runs) if not all(r["repeats"])]
    said = _choices_text(runs, TIED_BWD, False) + (f"; processes {broken} gave other bits on a second call"
                                                   if broken else "; each process reran its plans to the same bits")
    return not broken, said, {"processes": runs, "cross_process": record}


def cudnn_heuristic_processes() -> tuple[bool | None, str, dict]:
    """heuristic-stable: with cudnn.benchmark=False every fresh process runs
    the same plan for each convolution of HEURISTIC (forward, backward data
    and filter, fp32 and fp16, 3x3 and strided 1x1). Positive control: the
    log names different plans for different convolutions, so the readout can
    tell choices apart; when it names one plan for all, agreement proves
    nothing (mistrusted)."""
    _need_cuda("cudnn_heuristic_processes")
    runs, record = _processes({"benchmark": False}, HEURISTIC, logged=True)
    choices = distribution(["; ".join(r["kept"]) for r in runs])
    searched = [i for i, r in enumerate(runs) if any(r["searched"])]
    said = _choices_text(runs, HEURISTIC, True) + (f"; processes {searched} timed plans with benchmark off"
                                                   if searched else "")
    seen: dict = {"processes": runs, "cross_process": record}
    if len(set(runs[0]["kept"])) < 2:
        seen["mistrusted"] = (f"the log named one plan, {runs[0]['kept'][0]}, for all {len(HEURISTIC)} "
                              "convolutions, so processes agreeing shows nothing")
    return len(choices) == 1 and not searched, said, seen


def _deterministic_plans(probe: str, flags: dict) -> tuple[bool | None, str, dict]:
    """NONDET's backward-filter search of every plan (benchmark_limit 0)
    without the deterministic flags (the control) and with `flags` (two
    calls), in one process: whether the plans tried and run with them carry
    the NONDETERMINISTIC note."""
    _need_cuda(probe)
    # benchmark_limit 0: every candidate timed, the NONDETERMINISTIC ones of
    # the control included, wherever cuDNN's heuristics rank them.
    steps = [{"flags": {"benchmark": True, "benchmark_limit": 0}, "conv": NONDET, "calls": 1},
             {"flags": {"benchmark": True, "benchmark_limit": 0, **flags}, "conv": NONDET, "calls": 2}]
    _, calls = run_logged(steps)
    holds, said, seen, not_here = deterministic_reading(calls[0], calls[1:])
    if not_here:
        raise NotHere(not_here)
    return holds, said, seen


def deterministic_reading(control: dict, calls: list[dict]) -> tuple[bool | None, str, dict, str]:
    """The deterministic-plans probes' reading of their calls: (holds, what
    was seen, the record, why it is not evaluated or ""). A NONDETERMINISTIC
    plan seen run with the flags refutes, whatever else is unknown;
    otherwise a plan whose notes are known neither from the log nor from
    cuDNN leaves the check not evaluated, with the reason, or, where asking
    cuDNN failed, the harness's error (holds None); with every plan's notes
    known, deterministic_only decides (mistrusted where the control shows no
    NONDETERMINISTIC plan)."""
    holds, said, mistrusted = deterministic_only(control, calls)
    said = f"{describe(NONDET)} with cudnn.benchmark=True: {said}"
    sources = sorted({who for c in [control] + calls for who in c["notes_from"].values()})
    if sources:
        said += f" (notes from {' and '.join(sources)})"
    seen = {"control": control, "deterministic": calls}
    if holds:
        why, error = notes_unknown([control] + calls)
        if error:
            return None, f"{said}; {why}", seen, ""
        if why:
            return None, said, seen, why
    if mistrusted:
        seen["mistrusted"] = mistrusted
    return holds, said, seen, ""


def cudnn_det_bench_plans() -> tuple[bool | None, str, dict]:
    """det-bench-leaks: with cudnn.benchmark and cudnn.deterministic both
    True, no plan the search times or runs carries cuDNN's NONDETERMINISTIC
    note; the same search without cudnn.deterministic times such plans (the
    control, or the fact is mistrusted). Passing refutes the claim that a
    nondeterministic algorithm may still be picked."""
    return _deterministic_plans("cudnn_det_bench_plans", {"deterministic": True})


def cudnn_det_algorithms_plans() -> tuple[bool | None, str, dict]:
    """det-alg-implies-cudnn: use_deterministic_algorithms(True), with
    cudnn.deterministic False, keeps every plan PyTorch's cuDNN search times
    or runs free of the NONDETERMINISTIC note; the control as for
    cudnn_det_bench_plans."""
    return _deterministic_plans("cudnn_det_algorithms_plans", {"deterministic": False,
                                                               "deterministic_algorithms": True})


def cudnn_det_bench_search() -> tuple[bool | None, str, dict]:
    """det-overrides-bench: with cudnn.benchmark and cudnn.deterministic both
    True, PyTorch still searches, timing two or more deterministic plans and
    keeping one (the benchmark setting is not wasted). Passing refutes the
    claim; a search of one plan or none holds it."""
    _need_cuda("cudnn_det_bench_search")
    _, calls = run_logged([{"flags": {"benchmark": True, "deterministic": True}, "conv": NONDET, "calls": 2}])
    first = calls[0]
    flagged = nondeterministic(first)
    said = (f"{describe(NONDET)} with cudnn.benchmark=True and cudnn.deterministic=True: timed {len(first['timed'])} "
            f"plan(s) ({_times(first)}), kept {first['kept']}"
            + (f"; NONDETERMINISTIC among them: {', '.join(sorted(flagged))}" if flagged else ""))
    return len(first["timed"]) >= 2, said, {"search": first, "later": calls[1]["kept"]}


def _compared(probe: str, workload: dict, flags_a: dict, flags_b: dict, metrics: tuple[str, ...]) -> tuple:
    _need_cuda(probe)
    c = compare(probe, workload, flags_a, flags_b)
    said = f"{REPS} interleaved reps in two worker processes; " + "; ".join(_medians(c, m) for m in metrics)
    return True, said, {"compare": c}


TRAIN_F32 = {"kind": "train", "dtype": "f32"}


def cudnn_bench_fixed() -> tuple[bool | None, str, dict]:
    """bench-fixed-faster: a training step of a small CNN with fixed shapes,
    its steps after the searches timed with cudnn.benchmark False (A) and
    True (B): a Compare of steady_ns."""
    return _compared("cudnn_bench_fixed", TRAIN_F32, {"benchmark": False}, {"benchmark": True}, ("steady_ns",))


def cudnn_bench_varying() -> tuple[bool | None, str, dict]:
    """bench-varying-slower and bench-memory: a convolution over image sizes
    that keep changing (128, 256, 512, each rep 8 pixels larger, so every
    size is new to the process) with cudnn.benchmark False (A) and True (B):
    a Compare of the whole run's time (total_ns) and of the most memory one
    call allocated (workspace_bytes)."""
    workload = {"kind": "schedule", "conv": conv("fwd", "f32", 4, 16, 128, 32), "sizes": [128, 256, 512]}
    return _compared("cudnn_bench_varying", workload, {"benchmark": False}, {"benchmark": True},
                     ("total_ns", "workspace_bytes"))


def cudnn_det_speed() -> tuple[bool | None, str, dict]:
    """det-slower: the training step with cudnn.deterministic False (A) and
    True (B): a Compare of steady_ns."""
    return _compared("cudnn_det_speed", TRAIN_F32, {"deterministic": False}, {"deterministic": True},
                     ("steady_ns",))


def cudnn_disabled_f32() -> tuple[bool | None, str, dict]:
    """disabled-2x, fp32: the training step with cudnn.enabled False (A) and
    True (B): a Compare of steady_ns."""
    return _compared("cudnn_disabled_f32", TRAIN_F32, {"enabled": False}, {"enabled": True}, ("steady_ns",))


def cudnn_disabled_f16() -> tuple[bool | None, str, dict]:
    """disabled-2x, fp16: as cudnn_disabled_f32, the network in fp16."""
    return _compared("cudnn_disabled_f16", {"kind": "train", "dtype": "f16"}, {"enabled": False}, {"enabled": True},
                     ("steady_ns",))


def tf32_conv_speed() -> tuple[bool | None, str, dict]:
    """tf32-speed, convolution: an fp32 forward convolution (TF32_CONV) with
    cudnn.allow_tf32 False (A) and True (B): a Compare of steady_ns."""
    return _compared("tf32_conv_speed", {"kind": "conv", "conv": TF32_CONV}, {"allow_tf32": False},
                     {"allow_tf32": True}, ("steady_ns",))


def tf32_matmul_speed() -> tuple[bool | None, str, dict]:
    """tf32-speed, matmul: torch.mm of two 4096x4096 fp32 matrices with
    cuda.matmul.allow_tf32 False (A) and True (B): a Compare of steady_ns."""
    return _compared("tf32_matmul_speed", {"kind": "matmul", "n": 4096}, {"matmul_allow_tf32": False},
                     {"matmul_allow_tf32": True}, ("steady_ns",))


PROBES = {
    "cudnn_bench_fastest": cudnn_bench_fastest,
    "cudnn_bench_cache": cudnn_bench_cache,
    "cudnn_bench_limit": cudnn_bench_limit,
    "cudnn_bench_fixed": cudnn_bench_fixed,
    "cudnn_bench_varying": cudnn_bench_varying,
    "cudnn_bench_processes": cudnn_bench_processes,
    "cudnn_heuristic_processes": cudnn_heuristic_processes,
    "cudnn_det_speed": cudnn_det_speed,
    "cudnn_det_bench_search": cudnn_det_bench_search,
    "cudnn_det_bench_plans": cudnn_det_bench_plans,
    "cudnn_det_bench_processes": cudnn_det_bench_processes,
    "cudnn_det_algorithms_plans": cudnn_det_algorithms_plans,
    "cudnn_disabled_f32": cudnn_disabled_f32,
    "cudnn_disabled_f16": cudnn_disabled_f16,
    "tf32_conv_speed": tf32_conv_speed,
    "tf32_matmul_speed": tf32_matmul_speed,
}


def main(argv: list[str]) -> int:
    if argv[1:] == ["child"]:
        print(json.dumps(child(json.loads(sys.stdin.read()))))
        return 0
    if argv[1:] == ["worker"]:
        worker(sys.stdin, lambda x: (sys.stdout.write(json.dumps(x) + "\n"), sys.stdout.flush()))
        return 0
    print("usage: cudnn_choices.py child|worker (the probes run through torch_backends.py)", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
