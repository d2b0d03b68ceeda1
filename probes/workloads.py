"""A team's own workload as a claim (inputs/workloads.py, docs/workloads.md):
its step run at each level it declares, its outputs' and gradients' bits
compared; where a level moves them, the first operation whose output differs
between the two sides and the smallest set of levers that holds the step,
with the step's cost under it.

- The step is `module:function(batch)`, which builds the model, the inputs
  and the optimizer and returns `step()`, the step itself, returning the
  tensors to compare (a dict: outputs, loss, gradients, parameters). It is
  built anew for every run, after torch.manual_seed(0).
- Levels: run (the step twice in this process), threads (at the first and
  the last of the declared counts), batch (the first `rows` rows of the
  tensors named by rows_of, at `batch` and at `rows`), process (the step in
  two fresh interpreters). Each has its positive control, a computation that
  must vary there (probes/invariance.py's, and for process the order of a
  sum drawn in each process): a level whose control did not vary is not
  trusted.
- Where a level moves, both sides run again under a TorchDispatchMode that
  writes, for every operation in execution order, its name, its outputs'
  shapes, dtypes and strides, their digest, forward or backward (the
  autograd node, where the torch tells it) and the line of the user's code
  that called it (for a backward operation, the forward line autograd
  recorded). The records stream to a file, one JSON line each: the memory
  they take does not grow with the model. The first index whose digest
  differs names the operation.
- Levers: the settings the project knows for the level (deterministic mode,
  mkldnn off, and in fresh processes the oneDNN ISA cap, oneMKL's CNR mode
  and a fixed thread count), tried alone then in pairs over the team's own
  settings; the first set that holds the level is the answer, with the step
  timed with and without it (paired, alternated: the report's noise rule
  decides). Where none holds, the operation that still moves under all of
  them is named.

    python3 workloads.py run FILE ID        the workload's record, as JSON
    python3 workloads.py say FILE [ID...]   each workload's verdict and its
                                            levels, a line each (exit 1 when
                                            one does not hold what its
                                            statement says, 2 on an error)
    python3 workloads.py child FILE ID SETTINGS [STREAM]
                                            (child) one step in this fresh
                                            interpreter: its digests and the
                                            process level's control, as JSON
"""

from __future__ import annotations

import contextlib
import importlib
import itertools
import json
import os
import subprocess
import sys
import tempfile
import traceback
import warnings
from pathlib import Path
from typing import Any, Callable, Iterator

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from common import NotHere, digest, order_digest, paired_times, set_by

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
from inputs.workloads import ENV_SETTINGS, LEVELS, Workload, load  # noqa: E402

TIMED_PAIRS = 9
# The levers tried where a level moves, by level: in-process settings, and
# for the process level the environment's too.
LEVERS = {
    "run": [("deterministic", True), ("mkldnn", False)],
    "threads": [("deterministic", True), ("mkldnn", False)],
    "batch": [("deterministic", True), ("mkldnn", False)],
    "process": [("deterministic", True), ("mkldnn", False), ("ONEDNN_MAX_CPU_ISA", "AVX2"),
                ("MKL_CBWR", "COMPATIBLE"), ("threads", 1)],
}
MAX_LEVERS = 2


# --- one step ------------------------------------------------------------------

def _maker(w: Workload) -> Callable[[int], Callable[[], Any]]:
    module, function = w.callable.split(":", 1)
    if str(w.path) not in sys.path:
        sys.path.insert(0, str(w.path))
    return getattr(importlib.import_module(module), function)


@contextlib.contextmanager
def _settings(settings: dict[str, Any]) -> Iterator[None]:
    """The in-process settings for the span, each restored after."""
    det, mkldnn = torch.are_deterministic_algorithms_enabled(), torch.backends.mkldnn.enabled
    precision, threads = torch.get_float32_matmul_precision(), torch.get_num_threads()
    try:
        if "deterministic" in settings:
            torch.use_deterministic_algorithms(bool(settings["deterministic"]))
        if "mkldnn" in settings:
            torch.backends.mkldnn.enabled = bool(settings["mkldnn"])
        if "matmul_precision" in settings:
            torch.set_float32_matmul_precision(settings["matmul_precision"])
        if "threads" in settings:
            torch.set_num_threads(int(settings["threads"]))
        yield
    finally:
        torch.use_deterministic_algorithms(det)
        torch.backends.mkldnn.enabled = mkldnn
        torch.set_float32_matmul_precision(precision)
        torch.set_num_threads(threads)


def _tensors(out: Any, prefix: str = "") -> dict[str, torch.Tensor]:
    """The step's result as named tensors (a dict, a list or one tensor)."""
    if isinstance(out, torch.Tensor):
        return {prefix or "output": out}
    if isinstance(out, dict):
        items = out.items()
    elif isinstance(out, (list, tuple)):
        items = ((str(i), v) for i, v in enumerate(out))
    else:
        return {}
    found: dict[str, torch.Tensor] = {}
    for k, v in items:
        found.update(_tensors(v, f"{prefix}.{k}" if prefix else str(k)))
    return found


def step_digests(w: Workload, settings: dict[str, Any], batch: int, rows: int | None = None,
                 stream: Path | None = None) -> dict[str, str]:
    """Each tensor's digest after one step at `batch` under `settings` (with
    `rows`, only the first rows of the tensors rows_of names); with
    `stream`, every operation's record written there."""
    make = _maker(w)
    with _settings(settings):
        torch.manual_seed(0)
        step = make(batch)
        recorder = Recorder(stream, w.path, (batch, rows) if rows else None) if stream else contextlib.nullcontext()
        with recorder:
            out = _tensors(step())
    if rows is not None:
        return {k: digest([t[:rows]]) for k, t in out.items() if k in w.rows_of}
    return {k: digest([t]) for k, t in sorted(out.items())}


# --- where the bits first part --------------------------------------------------

class Recorder(TorchDispatchMode):
    """Every operation's output digest, in execution order, one JSON line
    each to `path`. With `rows` (batch, k), an output whose first dimension
    is the batch is digested on its first k rows, so that the step at the
    whole batch and the step at k rows compare operation by operation."""

    def __init__(self, path: Path, user: Path, rows: tuple[int, int] | None = None) -> None:
        super().__init__()
        self.path, self.user, self.rows, self.index = path, str(user), rows, 0
        self.file: Any = None
        self.anomaly: Any = None

    def __enter__(self):
        self.file = open(self.path, "w", encoding="utf-8")
        if hasattr(torch._C, "_current_autograd_node"):
            # The forward line of a backward operation: autograd records it
            # under anomaly mode.
            with warnings.catch_warnings():  # its notice that anomaly mode is slow
                warnings.simplefilter("ignore")
                self.anomaly = torch.autograd.detect_anomaly(check_nan=False)
                self.anomaly.__enter__()
        return super().__enter__()

    def __exit__(self, *exc):
        try:
            return super().__exit__(*exc)
        finally:
            if self.anomaly is not None:
                self.anomaly.__exit__(None, None, None)
            self.file.close()

    def _where(self) -> tuple[str, str]:
        """Forward or backward, and the user's line that called the operation."""
        node = torch._C._current_autograd_node() if hasattr(torch._C, "_current_autograd_node") else None
        if node is not None:
            stack = (getattr(node, "metadata", None) or {}).get("traceback_") or []
            lines = [line for frame in stack for line in str(frame).splitlines()]
            users = [lines[i].strip() + (f": {lines[i + 1].strip()}" if i + 1 < len(lines) else "")
                     for i, line in enumerate(lines) if self.user in line]
            return f"backward ({node.name()})", users[-1] if users else ""
        frames = [f for f in traceback.extract_stack()[:-2] if f.filename.startswith(self.user)]
        phase = "forward" if hasattr(torch._C, "_current_autograd_node") else "forward or backward"
        if not frames:
            return phase, ""
        f = frames[-1]
        return phase, f'File "{f.filename}", line {f.lineno}, in {f.name}: {(f.line or "").strip()}'

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        flat = [t for t in (out if isinstance(out, (list, tuple)) else [out]) if isinstance(t, torch.Tensor)]
        shown = [t[: self.rows[1]] if self.rows and t.dim() and t.shape[0] == self.rows[0] else t for t in flat]
        phase, line = self._where()
        self.file.write(json.dumps({
            "index": self.index, "op": str(func), "phase": phase, "line": line,
            "shapes": [list(t.shape) for t in shown], "dtypes": [str(t.dtype) for t in shown],
            "strides": [list(t.stride()) for t in shown], "digest": digest(shown)}) + "\n")
        self.index += 1
        return out


def first_divergence(a: Path, b: Path) -> dict[str, Any] | None:
    """The first operation whose output differs between two streams (read a
    line at a time), or where the two took different operations; None when
    every operation agrees."""
    with open(a, encoding="utf-8") as fa, open(b, encoding="utf-8") as fb:
        for la, lb in itertools.zip_longest(fa, fb):
            if la is None or lb is None:
                one = json.loads(la or lb)
                return {**one, "why": f"one side ran {one['index']} operations, the other more"}
            ra, rb = json.loads(la), json.loads(lb)
            if ra["op"] != rb["op"]:
                return {**ra, "why": f"the two sides took different operations here: {ra['op']} and {rb['op']}"}
            if ra["digest"] != rb["digest"]:
                return {**ra, "why": "its output differs" if ra["shapes"] == rb["shapes"] else
                        f"its output's shape differs: {ra['shapes']} and {rb['shapes']}"}
    return None


# --- the levels -----------------------------------------------------------------

class ChildFailed(RuntimeError):
    """The step failed in a fresh interpreter; its message is the child's."""


def _child(w: Workload, settings: dict[str, Any], stream: Path | None = None) -> dict[str, Any]:
    """One step in a fresh interpreter under `settings` (its environment
    levers set in the child's environment)."""
    env = dict(os.environ)
    for name in ENV_SETTINGS:
        env.pop(name, None)
        if name in settings:
            env[name] = str(settings[name])
    inside = {k: v for k, v in settings.items() if k not in ENV_SETTINGS}
    argv = [sys.executable, str(Path(__file__).resolve()), "child", str(w.file), w.id, json.dumps(inside)]
    r = subprocess.run(argv + ([str(stream)] if stream else []), capture_output=True, text=True, env=env,
                       timeout=600)
    if r.returncode != 0:
        raise ChildFailed(f"in a fresh interpreter (exit {r.returncode}): "
                          f"{(r.stderr.strip().splitlines() or ['no message'])[-1]}")
    return json.loads(r.stdout)


def _sides(w: Workload, level: str, settings: dict[str, Any],
           streams: tuple[Path, Path] | None = None) -> tuple[dict[str, str], dict[str, str]]:
    """The two sides' digests of one level under `settings`."""
    s = streams or (None, None)
    if level == "run":
        return step_digests(w, settings, w.batch, stream=s[0]), step_digests(w, settings, w.batch, stream=s[1])
    if level == "threads":
        return (step_digests(w, {**settings, "threads": w.threads[0]}, w.batch, stream=s[0]),
                step_digests(w, {**settings, "threads": w.threads[-1]}, w.batch, stream=s[1]))
    if level == "batch":
        whole = step_digests(w, settings, w.batch, rows=w.rows, stream=s[0])
        alone = {k: v for k, v in step_digests(w, settings, w.rows, stream=s[1]).items() if k in w.rows_of}
        return whole, alone
    a, b = _child(w, settings, s[0]), _child(w, settings, s[1])
    return a["digests"], b["digests"]


def _control(level: str, w: Workload) -> dict[str, Any]:
    """The level's positive control: what must vary there, and whether it did."""
    if level == "process":
        a, b = _child(w, {}), _child(w, {})
        return {"what": "a sum in an order drawn in each process", "varied": a["control"] != b["control"]}
    import invariance
    threads = torch.get_num_threads()
    try:
        return invariance.controls()[level]
    finally:
        torch.set_num_threads(threads)


def _moved(a: dict[str, str], b: dict[str, str]) -> list[str]:
    return sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))


def _cost(w: Workload, settings: dict[str, Any], levers: dict[str, Any]) -> dict[str, Any]:
    """The step's time with the team's settings (A) and with the levers too
    (B), paired and alternated: what the report's noise rule decides."""
    inside = {k: v for k, v in levers.items() if k not in ENV_SETTINGS}
    if len(inside) < len(levers):
        return {"not_measured": "an environment lever holds only in a fresh process: its cost is not timed here"}
    make = _maker(w)
    torch.manual_seed(0)
    with _settings(settings):
        step = make(w.batch)
        step()  # warm
        times = paired_times(step, (lambda: set_by(lambda: None),
                                    lambda: _settings(inside)), TIMED_PAIRS, warm=True)
    return {"a": {"steady_ns": [int(t * 1e9) for t in times[0]]}, "b": {"steady_ns": [int(t * 1e9) for t in times[1]]},
            "versus_flags": inside}


def _levers(w: Workload, level: str, scratch: Path) -> dict[str, Any]:
    """The smallest set of the level's levers that holds it, tried alone
    then in pairs over the team's settings; or that none does, with the
    operation that still moves under all of them."""
    tried = []
    candidates = [lv for lv in LEVERS[level] if w.settings.get(lv[0]) != lv[1]]
    for size in range(1, min(MAX_LEVERS, len(candidates)) + 1):
        for chosen in itertools.combinations(candidates, size):
            levers = dict(chosen)
            a, b = _sides(w, level, {**w.settings, **levers})
            tried.append(levers)
            if not _moved(a, b):
                return {"held_by": levers, "tried": tried, "cost": _cost(w, w.settings, levers)}
    every = {**w.settings, **dict(candidates)}
    streams = (scratch / f"{level}-all-a.jsonl", scratch / f"{level}-all-b.jsonl")
    _sides(w, level, every, streams)
    return {"held_by": None, "tried": tried, "still_moves": first_divergence(*streams)}


def level_record(w: Workload, level: str, scratch: Path) -> dict[str, Any]:
    """One level: whether the step held its bits with the team's settings,
    the control, and where it moved the first operation and the levers."""
    a, b = _sides(w, level, w.settings)
    out: dict[str, Any] = {"compares": LEVELS[level], "control": _control(level, w)}
    moved = _moved(a, b)
    out["held"] = not moved
    out["digests"] = {"a": a, "b": b}
    if moved:
        out["moved"] = moved
        streams = (scratch / f"{level}-a.jsonl", scratch / f"{level}-b.jsonl")
        _sides(w, level, w.settings, streams)
        out["first_divergence"] = first_divergence(*streams)
        out["levers"] = _levers(w, level, scratch)
    return out


def _said(w: Workload, level: str, r: dict[str, Any]) -> str:
    """One level's line, as a user reads it."""
    if not r["control"]["varied"]:
        return f"{level}: not trusted, its control ({r['control']['what']}) did not vary"
    if r["held"]:
        return f"{level}: the same bits ({len(r['digests']['a'])} tensors)"
    d = r.get("first_divergence") or {}
    where = (f"first at operation {d['index']} {d['op']} ({d['phase']}; {', '.join(d['dtypes'])} "
             f"{' '.join(map(str, d['shapes']))}){': ' + d['line'] if d.get('line') else ''}") if d else \
        "every operation agreed when traced (the difference came and went)"
    lv = r["levers"]
    fix = (f"held by {', '.join(f'{k}={v}' for k, v in lv['held_by'].items())}" if lv["held_by"] is not None else
           f"no lever tried holds it ({len(lv['tried'])} sets)")
    return f"{level}: {', '.join(r['moved'][:3])} moved, {where}; {fix}"


def raised_at(w: Workload, e: BaseException) -> str:
    """An exception of the workload's own code, with its own line: the last
    frame in the workload's directory (else the last frame)."""
    frames = traceback.extract_tb(e.__traceback__)
    mine = [f for f in frames if f.filename.startswith(str(w.path))] or frames[-1:]
    where = f' (File "{mine[-1].filename}", line {mine[-1].lineno}, in {mine[-1].name})' if mine else ""
    return f"the workload raised {type(e).__name__}: {str(e).strip().splitlines()[0] if str(e).strip() else ''}{where}"


def run(w: Workload) -> dict[str, Any]:
    """The workload's record: each level, then whether the levels its
    statement holds to held (None where a control did not vary). A workload
    that raises is an error naming its own line, never a refutation."""
    try:
        with tempfile.TemporaryDirectory(prefix="backendcheck-workload-") as tmp:
            levels = {level: level_record(w, level, Path(tmp)) for level in w.levels}
    except Exception as e:  # noqa: BLE001 (the user's code: any exception is its error)
        return {"workload": w.as_json(), "torch": torch.__version__, "passed": None, "error": raised_at(w, e),
                "detail": raised_at(w, e)}
    lines = [_said(w, level, r) for level, r in levels.items()]
    trusted = all(levels[h]["control"]["varied"] for h in w.hold)
    passed = all(levels[h]["held"] for h in w.hold) if trusted else None
    return {"workload": w.as_json(), "torch": torch.__version__, "levels": levels, "passed": passed,
            "detail": "; ".join(lines)}


def probe() -> tuple[bool | None, str, dict[str, Any]]:
    """torch_backends.py's probe "workload": the workload BACKENDCHECK_WORKLOAD
    names (FILE:ID), for the ctest test Workload.<id>. Its fact: the levels
    its statement holds to held. A workload that raised is the harness's
    error (None), naming the workload's line; a level whose control did not
    vary makes the fact mistrusted; the step's cost under the levers that
    hold the first level that moved travels as the record's comparison."""
    named = os.environ.get("BACKENDCHECK_WORKLOAD", "")
    if not named:
        raise NotHere("no workload named: each ctest test Workload.<id> names one (./backendcheck run --claims "
                      "FILE, docs/workloads.md)")
    file, _, wid = named.rpartition(":")
    w = next((x for x in load(Path(file)) if x.id == wid), None) if file else None
    if w is None:
        raise LookupError(f"BACKENDCHECK_WORKLOAD={named} names no workload of that file")
    r = run(w)
    observed: dict[str, Any] = {"workload": r["workload"], "levels": r.get("levels", {}),
                                "lines": [line.strip() for line in say(w, r, costs=False)[1:]]}
    if r.get("error"):
        return None, r["error"], observed
    untrusted = [h for h in w.hold if not r["levels"][h]["control"]["varied"]]
    if untrusted:
        observed["mistrusted"] = f"the control of the {', '.join(untrusted)} level did not vary"
    for level, got in r["levels"].items():
        cost = (got.get("levers") or {}).get("cost") or {}
        if cost.get("a"):
            observed["compare"] = {"repro_a": f"workload {w.id} with its settings",
                                   "repro_b": f"workload {w.id} with the levers that hold its {level} level",
                                   "a": [{"steady_ns": t} for t in cost["a"]["steady_ns"]],
                                   "b": [{"steady_ns": t} for t in cost["b"]["steady_ns"]],
                                   "versus_flags": cost["versus_flags"]}
            break
    return bool(r["passed"]), "; ".join(observed["lines"]), observed


PROBES = {"workload": probe}


def say(w: Workload, r: dict[str, Any], costs: bool = True) -> list[str]:
    """The workload's verdict and a line a level, as a user reads them;
    with `costs`, each lever set's median time too (the report judges the
    recorded pairs by its own rule instead)."""
    verdict = ("error" if r.get("error") else "not evaluated" if r["passed"] is None else
               "holds" if r["passed"] else "does not hold")
    lines = [f"{w.id}: {verdict} on torch {r['torch']} ({', '.join(w.hold)} held to the statement: "
             f"{w.statement})"]
    if r.get("error"):
        return lines + [f"  {r['error']}"]
    for level, got in r["levels"].items():
        lines.append(f"  {_said(w, level, got)}")
        cost = ((got.get("levers") or {}).get("cost") or {}) if costs else {}
        if cost.get("a"):
            a, b = (sorted(cost[k]["steady_ns"]) for k in ("a", "b"))
            lines.append(f"    its cost: the step {b[len(b) // 2] / a[len(a) // 2]:.2f}x the time without it "
                         f"(median of {len(a)} alternated runs each; the report's noise rule decides)")
        elif cost.get("not_measured"):
            lines.append(f"    its cost: not measured: {cost['not_measured']}")
    return lines


def main(argv: list[str]) -> int:
    if len(argv) >= 3 and argv[1] == "say":
        chosen = [w for w in load(Path(argv[2])) if len(argv) == 3 or w.id in argv[3:]]
        worst = 0
        for w in chosen:
            r = run(w)
            print("\n".join(say(w, r)), flush=True)
            worst = max(worst, 2 if r.get("error") else 1 if r["passed"] is False else 0)
        return worst
    if len(argv) == 4 and argv[1] == "run":
        w = next((x for x in load(Path(argv[2])) if x.id == argv[3]), None)
        if w is None:
            print(f"{argv[2]}:1: no workload '{argv[3]}'", file=sys.stderr)
            return 2
        print(json.dumps(run(w), indent=1))
    elif len(argv) in (5, 6) and argv[1] == "child":
        w = next(x for x in load(Path(argv[2])) if x.id == argv[3])
        stream = Path(argv[5]) if len(argv) == 6 else None
        try:
            digests = step_digests(w, json.loads(argv[4]), w.batch, stream=stream)
        except Exception as e:  # noqa: BLE001 (the user's code)
            print(raised_at(w, e), file=sys.stderr)
            return 1
        print(json.dumps({"digests": digests, "control": order_digest(torch)}))
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
