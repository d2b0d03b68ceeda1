"""The search for counter-examples of the universal claims at the thread and
run-to-run levels, decided by the torch under test (search.py is the
search; this module holds PyTorch's operations and runs them).

"Under use_deterministic_algorithms(True), results do not depend on the
thread count" is one counter-example from refuted. The grid
(invariance.py) runs one hand-picked shape per operation, forward only; this
search runs where PyTorch and the libraries below it change how they split
the work:

- sizes on both sides of ATen's parallel grain (at::internal::GRAIN_SIZE,
  read from this install's headers, else named from PyTorch's sources), of
  the grain times each thread count, and powers of two with odd remainders
  (the BLAS's and oneDNN's thread partitioning expose no threshold);
- whole-tensor reductions and reductions along either dimension;
- float32, bfloat16 and float64; contiguous and channels-last layouts;
- the forward pass, the gradient of every input and parameter, and one
  training step of a small CNN and of an MLP (loss, backward, SGD step);
- starting states a user of this version reaches with one line (mkldnn off,
  set_float32_matmul_precision('medium'), the fp32_precision settings of
  the versions that have them), after the claim's own setting.

The search has its own positive controls, planted operations run through
the same code: one whose bits depend on the thread count only from a size
on must be found and shrunk to that size; one that depends on the thread
count only in a starting state must be found in that state; one of the same
cost that holds must not be flagged. A search whose controls fail is not
trusted, and says so.

    python3 counterexamples.py replay LEVEL CASES   (child) the cases (JSON)
                                                    at LEVEL, as JSON
"""

from __future__ import annotations

import json
import os
import re
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import torch

import children
from common import compare, first_line, lacks
import search
from search import FORWARD, Case, Level, Op, Outcome
from search_ops import CONTROL_STATE, OPS, PLANTED_AT, controls

# Where the corpus is (one JSON file per claim), and the search's budget in
# seconds and seed; the nightly tier (BACKENDCHECK_TIER) spends more.
CORPUS = "BACKENDCHECK_CORPUS_DIR"
BUDGET = "BACKENDCHECK_SEARCH_BUDGET"
SEED = "BACKENDCHECK_SEARCH_SEED"
DEFAULT_BUDGET = {"smoke": 15.0, "ci": 40.0, "nightly": 240.0}
DEFAULT_SEED = 20261207
# The planted controls' own budget (their space is small).
CONTROL_BUDGET = 8.0
# Where ATen's parallel grain is said, in PyTorch's sources (when this
# install ships no headers to read it from).
GRAIN_SOURCE = "aten/src/ATen/TensorIterator.h (at::internal::GRAIN_SIZE)"
GRAIN_DEFAULT = 32768
THREADS_MEANING = "False here: the bits change with the thread count"
RUN_MEANING = "False here: two calls on 2 threads gave other bits"
CUDNN_MEANING = "False here: cuDNN's flags changed the bits of CPU work"
# The cuDNN level's sides: (enabled, benchmark, deterministic, allow_tf32) at
# their defaults, and each flipped.
CUDNN_FLAGS = "torch.backends.cudnn.enabled, torch.backends.cudnn.benchmark, torch.backends.cudnn.deterministic, " \
              "torch.backends.cudnn.allow_tf32"
CUDNN_SIDES = ((True, False, False, True), (False, True, True, False))

# The claims' own settings, by variant (on CUDA the mode's cuBLAS setting
# too, set before cuBLAS starts: CUDA_VARIANT_LINES).
VARIANT_LINES = {"deterministic": ("torch.use_deterministic_algorithms(True)",), "defaults": ()}
CUDA_VARIANT_LINES = {"deterministic": ("import os; os.environ['CUBLAS_WORKSPACE_CONFIG'] = ':4096:8'",
                                        "torch.use_deterministic_algorithms(True)"), "defaults": ()}
BATCH_MEANING = "False here: a sample's result depends on the batch it is computed in"
CUDA_RUN_MEANING = "False here: two calls on the GPU gave other bits"
STREAMS_MEANING = "False here: the bits change with the CUDA stream"
# The CUDA levels' budget: a share of the GPU kit's call (ci/gpu-expected-seconds.json
# holds the test's expected time, the kit's plan fits it into a call).
CUDA_BUDGET = {"smoke": 10.0, "ci": 45.0, "nightly": 240.0}


def thread_counts() -> tuple[int, ...]:
    cores = os.cpu_count() or 2
    return (1, 2) + ((cores,) if cores > 2 else ())


BATCH_SIDE = "@BATCHED, = (t[:side] for t in whole)"
# The levels whose sides are one setting run twice: a difference is the finding itself.
RUN_LEVELS = ("run", "cuda-run")


def levels() -> dict[str, Level]:
    """The levels searched: the thread count; run to run; cuDNN's flags on
    the CPU (each flipped from its default, on 2 threads); on a CUDA device,
    run to run, the batch (a sample's first row computed in the whole batch
    and alone) and the stream (the default one and a stream of its own).
    The batch level runs on the CPU too (its mechanics, tested without a
    GPU)."""
    return {"threads": Level("threads", thread_counts(), "torch.set_num_threads(side)", THREADS_MEANING,
                             "torch.get_num_threads()"),
            "run": Level("run", (1, 2), "torch.set_num_threads(2)", RUN_MEANING),
            "cudnn": Level("cudnn", CUDNN_SIDES, f"torch.set_num_threads(2); {CUDNN_FLAGS} = side", CUDNN_MEANING,
                           "int(torch.backends.cudnn.benchmark)"),
            "batch": Level("batch", (None, 1), BATCH_SIDE, BATCH_MEANING, "len(x)", slices=True),
            "cuda-run": Level("cuda-run", (1, 2), "torch.cuda.synchronize()", CUDA_RUN_MEANING, device="cuda"),
            # The batch level on the GPU: the claim it searches (batch-invariant) is
            # about both devices, so it is recorded as "batch", by its own test.
            "cuda-batch": Level("batch", (None, 1), BATCH_SIDE, BATCH_MEANING, "len(x)", slices=True, device="cuda"),
            "cuda-streams": Level("cuda-streams", (False, True), "torch.cuda.synchronize(); torch.cuda.set_stream("
                                  "torch.cuda.Stream() if side else torch.cuda.default_stream())", STREAMS_MEANING,
                                  "int(torch.cuda.current_stream() != torch.cuda.default_stream())", device="cuda")}


def level_ops(level: Level, ops: dict[str, Op]) -> dict[str, Op]:
    """The operations a level runs: at a slicing level those with a batched
    input, forward only (a gradient of the parameters sums over the batch)."""
    if not level.slices:
        return ops
    return {name: replace(op, passes=(FORWARD,)) for name, op in ops.items() if op.batched and FORWARD in op.passes}


def _has(what: str) -> bool:
    return not lacks(torch, what)


def states(level: str = "threads") -> list[tuple[str, ...]]:
    """The starting states a user of this torch reaches with one line, after
    the claim's own setting: none, mkldnn off, the 'medium' float32 matmul
    precision, and bf16 through the fp32_precision settings (the versions
    that have them; not at the cuDNN level, whose sides set the legacy
    allow_tf32 that PyTorch refuses to mix with them). On CUDA: none,
    cudnn.benchmark on, and the 'high' float32 matmul precision (TF32)."""
    if level.startswith("cuda-"):
        return [(), ("torch.backends.cudnn.benchmark = True",), ("torch.set_float32_matmul_precision('high')",)]
    out: list[tuple[str, ...]] = [(), ("torch.backends.mkldnn.enabled = False",)]
    if _has("torch.set_float32_matmul_precision"):
        out.append(("torch.set_float32_matmul_precision('medium')",))
    if _has("torch.backends.mkldnn.matmul.fp32_precision") and level != "cudnn":
        out.append(("torch.backends.mkldnn.fp32_precision = 'bf16'",))
    return out


def grain() -> dict[str, Any]:
    """ATen's parallel grain: read from this install's headers where it ships
    them (file and line), else PyTorch's value, named from its sources."""
    roots = []
    try:
        from torch.utils.cpp_extension import include_paths
        roots = [Path(p) for p in include_paths()]
    except Exception:  # noqa: BLE001 - a torch without cpp_extension's paths: the sources' value below
        pass
    for root in roots + [Path("/usr/include")]:
        for name in ("ATen/TensorIterator.h", "ATen/Parallel.h", "ATen/TensorIteratorInternal.h"):
            path = root / name
            if not path.is_file():
                continue
            for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
                found = re.search(r"GRAIN_SIZE\s*=\s*(\d+)", line)
                if found:
                    return {"value": int(found.group(1)), "source": f"{path}:{number}"}
    return {"value": GRAIN_DEFAULT, "source": f"PyTorch's sources, {GRAIN_SOURCE}; this install ships no header "
                                              "that says it"}


def _owner(path: str) -> Any:
    """The module of torch.backends that holds a dotted setting."""
    owner: Any = torch.backends
    for part in path.split(".")[:-1]:
        owner = getattr(owner, part)
    return owner


class _Restored:
    """Every setting a case can change, put back after it: the
    deterministic mode, mkldnn, the thread count, the float32 matmul
    precision and each fp32_precision setting this torch has. A setting
    that does not come back is the harness's error."""

    PRECISIONS = ("fp32_precision", "mkldnn.fp32_precision", "mkldnn.matmul.fp32_precision",
                  "mkldnn.conv.fp32_precision", "mkldnn.rnn.fp32_precision", "cuda.matmul.fp32_precision",
                  "cudnn.fp32_precision", "cudnn.conv.fp32_precision", "cudnn.rnn.fp32_precision")

    def _read(self) -> dict[str, Any]:
        out: dict[str, Any] = {"det": torch.are_deterministic_algorithms_enabled(),
                               "mkldnn": torch.backends.mkldnn.enabled, "threads": torch.get_num_threads()}
        for name in ("enabled", "benchmark", "deterministic", "allow_tf32"):
            try:
                out[f"cudnn.{name}"] = getattr(torch.backends.cudnn, name)
            except RuntimeError:  # allow_tf32 in the precision API's mixed states: left to fp32_precision below
                pass
        if _has("torch.get_float32_matmul_precision"):
            try:
                out["matmul"] = torch.get_float32_matmul_precision()
            except RuntimeError:
                out["matmul"] = None  # the mixed-API state: read through fp32_precision below
        for path in self.PRECISIONS:
            if _has(f"torch.backends.{path}"):
                out[path] = getattr(_owner(path), path.split(".")[-1])
        if _has("torch.get_default_device"):
            out["device"] = str(torch.get_default_device())
        if torch.cuda.is_available():
            out["stream"] = torch.cuda.current_stream() == torch.cuda.default_stream()
        return out

    def __enter__(self) -> "_Restored":
        self.saved = self._read()
        return self

    def __exit__(self, *exc: Any) -> None:
        s = self.saved
        torch.use_deterministic_algorithms(s["det"])
        torch.backends.mkldnn.enabled = s["mkldnn"]
        torch.set_num_threads(s["threads"])
        for name in ("enabled", "benchmark", "deterministic", "allow_tf32"):
            if f"cudnn.{name}" in s:
                setattr(torch.backends.cudnn, name, s[f"cudnn.{name}"])
        if s.get("matmul"):
            torch.set_float32_matmul_precision(s["matmul"])
        for path in self.PRECISIONS:
            if path in s:
                setattr(_owner(path), path.split(".")[-1], s[path])
        if "device" in s:
            torch.set_default_device(s["device"])
        if s.get("stream"):
            torch.cuda.synchronize()
            torch.cuda.set_stream(torch.cuda.default_stream())
        if exc[0] is None and self._read() != s:
            raise RuntimeError(f"the search could not restore PyTorch's settings after a case: {self._read()} "
                               f"instead of {s}")


def evaluator(ops: dict[str, Op], level: Level, claim_state: tuple[str, ...]):
    """evaluate(case) -> Outcome: the case's program run here (its snippet
    but the last line), its sides compared bit for bit. PyTorch's own
    refusal (an alert, an unsupported dtype) is an Outcome; anything else
    raises, as the harness's error."""
    def evaluate(case: Case) -> Outcome:
        got = run(case, level)
        if got.differs and level.name not in RUN_LEVELS:  # run to run, the sides are the same side already
            # The same side twice: a difference there is the operation's own
            # run-to-run variation, which the level's sides cannot be blamed for.
            again = run(case, replace(level, sides=(level.sides[0], level.sides[0])))
            if again.differs:
                return Outcome(refused=f"its bits vary run to run on one side ({level.sides[0]!r}), so a "
                                       f"difference between sides says nothing of the {level.name}")
        return got

    def run(case: Case, level: Level) -> Outcome:
        text = search.program(ops[case.op], case, level, claim_state)
        body = "\n".join(line for line in text.splitlines()[:-2])
        space: dict[str, Any] = {}
        with _Restored():
            try:
                exec(compile(body, f"<{case.words()}>", "exec"), space)  # noqa: S102 - the probe's own program
            except RuntimeError as e:
                said = children.refusal(e, torch)
                if not said:
                    raise
                return Outcome(refused=first_line(said))
        outs = space["outs"]
        worst: dict[str, Any] = {"same": True, "fraction": 0.0, "max_rel": 0.0}
        for other in outs[1:]:
            for a, b in zip(outs[0], other):
                c = compare(a, b)
                if not c["same"]:
                    worst = {"same": False, "fraction": max(worst["fraction"], c.get("fraction", 0.0)),
                             "max_rel": max(worst["max_rel"], c.get("max_rel", 0.0))}
        return Outcome(differs=not worst["same"], fraction=worst["fraction"], max_rel=worst["max_rel"])
    return evaluate


def available(ops: dict[str, Op]) -> tuple[dict[str, Op], dict[str, str]]:
    """The operations this torch has, and why the others are not run."""
    have, lacks = {}, {}
    for name, op in ops.items():
        if op.needs and not _has(op.needs):
            lacks[name] = f"PyTorch {torch.__version__} has no {op.needs}"
        else:
            have[name] = op
    return have, lacks


def _controls(level: Level, grain_value: int) -> dict[str, Any]:
    """The planted operations of a level (search_ops.controls, over the
    level's reading) searched as PyTorch's are: the threshold one found and
    shrunk to PLANTED_AT, the state one found in its state, the holding one
    not flagged."""
    planted = level_ops(level, controls(level.reading))
    evaluate = evaluator(planted, level, ())
    thresholds = {"grain": grain_value} if level.device == "cpu" else {}
    schedule = {name: search.sizes(op, dict(thresholds, planted=PLANTED_AT), thread_counts())
                for name, op in planted.items()}
    found = search.search(planted, schedule, [(), CONTROL_STATE], evaluate, CONTROL_BUDGET, DEFAULT_SEED,
                          lambda case: search.program(planted[case.op], case, level))
    by = {f.op: f for f in found.found}
    threshold, state = by.get("planted threshold"), by.get("planted state")
    out = {"threshold": {"planted_at": PLANTED_AT, "found": threshold is not None,
                         "shrunk_to": threshold.shrunk.n if threshold else None},
           "state": {"planted_in": list(CONTROL_STATE), "found": state is not None,
                     "state": list(state.shrunk.state) if state else None},
           "holding": {"flagged": "planted holding" in by}, "cases": found.cases,
           "seconds": round(found.seconds, 1), "reading": level.reading}
    out["trusted"] = bool(threshold and threshold.shrunk.n == PLANTED_AT and state
                          and tuple(state.shrunk.state) == CONTROL_STATE and "planted holding" not in by)
    if not out["trusted"]:
        out["why"] = ("the planted threshold operation was " + (f"shrunk to n={threshold.shrunk.n}, not {PLANTED_AT}"
                      if threshold else "not found") + "; the planted state operation was "
                      + ("found" if state else "not found") + "; the holding one was "
                      + ("flagged" if "planted holding" in by else "not flagged"))
    return out


# The most seconds the search spends, whatever is asked: its test's timeout
# (probes/declared.toml, 600 s) also holds the controls, the shrinks and the
# levers' two processes.
MAX_BUDGET = 360.0


def budget(tier: str, defaults: dict[str, float] = DEFAULT_BUDGET) -> float:
    said = os.environ.get(BUDGET, "")
    if said:
        try:
            value = float(said)
        except ValueError:
            raise ValueError(f"{BUDGET}={said!r}: a number of seconds") from None
        if not value > 0:
            raise ValueError(f"{BUDGET}={said!r}: a positive number of seconds")
        return min(value, MAX_BUDGET)
    return defaults.get(tier, defaults["ci"])


def corpus_dir() -> Path:
    return Path(os.environ.get(CORPUS) or Path(__file__).resolve().parents[1] / "catalog" / "corpus")


def run_level(level_name: str, variant: str, seconds: float, seed: int, grain_value: int) -> dict[str, Any]:
    """One level and variant: the corpus replayed first, then the search
    (skipping the operations the corpus already shows), its coverage and
    each counter-example shrunk, with its snippet."""
    level = levels()[level_name]
    claim_state = (VARIANT_LINES if level.device == "cpu" else CUDA_VARIANT_LINES)[variant]
    ops, lacks = available(OPS)
    ops = level_ops(level, ops)
    evaluate = evaluator(ops, level, claim_state)
    snippet = lambda case: search.program(ops[case.op], case, level, claim_state)  # noqa: E731
    replayed = []
    for claim, cases in search.read_corpus(corpus_dir(), level.name, variant):
        for entry in search.replay(cases, evaluate, ops, states(level_name)):
            if entry["state"] == "seen":
                entry["snippet"] = snippet(Case.from_json(entry["case"]))
            replayed.append(dict(entry, claim=claim))
    seen = {r["case"]["op"] for r in replayed if r["state"] == "seen"}
    # ATen's grain splits CPU work; on a GPU no library says where it changes
    # its split (cuBLAS's and cuDNN's heuristics): the powers of two cover it.
    thresholds = {"grain": grain_value} if level.device == "cpu" else {}
    schedule = {name: search.sizes(op, thresholds, level.sides if level_name == "threads" else (1, 2))
                for name, op in ops.items()}
    found = search.search(ops, schedule, states(level_name), evaluate, seconds, seed, snippet, skip=seen)
    return {"level": level.name, "variant": variant, "claim_settings": list(claim_state), "device": level.device,
            "threads": list(level.sides) if level_name == "threads" else [2] if level.device == "cpu" else [],
            "corpus": replayed, "coverage": found.coverage(), "not_run": lacks,
            "counterexamples": [f.to_json() for f in found.found]}


def lever_check(cases: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each thread lever (invariance.THREAD_LEVERS) tried on every
    counter-example at the thread level: the cases replayed in a fresh
    process without the lever's variables and in one with them; a case the
    lever holds differs in the first and not in the second."""
    import invariance
    if not cases:
        return []
    out = []
    spec = json.dumps(cases)
    for lever, env in invariance.THREAD_LEVERS.items():
        environ = {k: v for k, v in os.environ.items() if k not in env}
        base = children.run_json([sys.executable, __file__, "replay", "threads", spec], environ, 90)
        under = children.run_json([sys.executable, __file__, "replay", "threads", spec], dict(environ, **env), 90)
        if "error" in base or "error" in under:
            out.append({"lever": lever, "error": base.get("error") or under.get("error")})
            continue
        held, not_held, moot = [], [], []
        for case, b, u in zip(cases, base["outcomes"], under["outcomes"]):
            words = Case.from_json(case["case"]).words()
            (moot if not b["differs"] else held if not u["differs"] else not_held).append(words)
        not_held = sorted(set(not_held))
        out.append({"lever": lever, "setting": lever, "level": "threads",
                    "held": sorted(set(held) - set(not_held)), "not_held": not_held,
                    "not_seen_without": sorted(set(moot) - set(held) - set(not_held))})
    return out


def replay_child(level_name: str, cases: list[dict[str, Any]]) -> dict[str, Any]:
    """(child) The cases ({"variant", "case"}) at a level, in this fresh
    process."""
    level = levels()[level_name]
    ops, _ = available(OPS)
    outcomes = []
    for data in cases:
        got = evaluator(ops, level, VARIANT_LINES[data["variant"]])(Case.from_json(data["case"]))
        outcomes.append({"differs": got.differs, "refused": got.refused})
    return {"outcomes": outcomes}


def run(tier: str) -> dict[str, Any]:
    """The probe: the controls, then each level and variant searched, the
    levers tried on the thread level's counter-examples."""
    seconds = budget(tier)
    seed = int(os.environ.get(SEED) or DEFAULT_SEED)
    g = grain()
    torch.set_num_threads(2)
    plan = [("threads", "deterministic", 0.4), ("threads", "defaults", 0.2), ("cudnn", "defaults", 0.2),
            ("run", "deterministic", 0.1), ("batch", "defaults", 0.1)]
    checked = {lv: _controls(levels()[lv], g["value"]) for lv in dict.fromkeys(lv for lv, _, _ in plan)}
    searched = {f"{lv} | {variant}": run_level(lv, variant, seconds * share, seed, g["value"])
                for lv, variant, share in plan}
    thread_cases = [{"variant": searched[key]["variant"], "case": c["case"]}
                    for key in ("threads | deterministic", "threads | defaults")
                    for c in searched[key]["counterexamples"] + [r for r in searched[key]["corpus"]
                                                                 if r["state"] == "seen"]]
    unique = list({json.dumps(c, sort_keys=True): c for c in thread_cases}.values())
    return {"torch": str(torch.__version__), "seed": seed, "budget_s": seconds, "grain": g,
            "controls": checked, "searches": searched, "thread_counts": list(thread_counts()),
            "levers": lever_check(unique)}


# The CUDA levels and the share of the budget each takes: the mode's
# promise run to run, the stream, the batch.
CUDA_PLAN = (("cuda-run", "deterministic", 0.4), ("cuda-streams", "defaults", 0.3), ("cuda-batch", "defaults", 0.3))


def run_cuda(tier: str) -> dict[str, Any]:
    """The probe on a CUDA device: each CUDA level's planted controls, then
    its search (the corpus replayed first), as run() does on the CPU."""
    seconds = budget(tier, CUDA_BUDGET)
    seed = int(os.environ.get(SEED) or DEFAULT_SEED)
    checked = {levels()[lv].name: _controls(levels()[lv], GRAIN_DEFAULT) for lv, _, _ in CUDA_PLAN}
    searched = {f"{levels()[lv].name} | {variant}": run_level(lv, variant, seconds * share, seed, GRAIN_DEFAULT)
                for lv, variant, share in CUDA_PLAN}
    return {"torch": str(torch.__version__), "device": torch.cuda.get_device_name(0), "seed": seed,
            "budget_s": seconds, "controls": checked, "searches": searched}


def main(argv: list[str]) -> int:
    if len(argv) == 4 and argv[1] == "replay":
        print(json.dumps(replay_child(argv[2], json.loads(argv[3]))))
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
