"""The search for a universal claim's counter-example, as property-based
testing tools search (Hypothesis, QuickCheck): seeded random draws over
operations x sizes x dtypes x layouts x passes x starting states, within a
budget of seconds; the first counter-example of each operation stops that
operation's search and is shrunk to the smallest size and simplest state
that still show it. A corpus of counter-examples found before (one file per
claim, catalog/corpus/) is replayed first, as a fuzzer replays its corpus.

A case is data (Case); what it means is the program it becomes (program()):
the runnable Python snippet a user pastes into an issue is the very text the
probe executed. What a case's program does at a level (threads: the same
computation on 1 and 2 threads; run: twice on 2 threads) is the caller's
`evaluate`, which returns an Outcome. This module imports no torch
(tests/test_search.py runs it with plain Python); counterexamples.py holds
PyTorch's operations and runs them.
"""

from __future__ import annotations

import json
import random
import sys
import time
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Iterable

# The passes a case can run: the operation's result; the gradients of every
# input and parameter (torch.autograd.grad of the result's sum); one training
# step (loss, backward, optimizer step; the parameters after it).
FORWARD, BACKWARD, STEP = "forward", "backward", "step"
CONTIGUOUS, CHANNELS_LAST = "contiguous", "channels_last"
# A shrink tries at most this many cases (each a run of the operation).
SHRINK_TRIES = 40
# The lines a snippet may take (what a user pastes into an issue).
SNIPPET_LINES = 10


@dataclass(frozen=True)
class Op:
    """An operation, as Python text over `n` (its size), `dt` (its dtype)
    and the generator `g`: `setup` builds the inputs (run once, before the
    sides), `result` is the expression whose tensors are compared, `leaves`
    the inputs whose gradients the backward pass compares. `@CL` in setup
    marks where a channels-last layout converts an input. `unit` is the
    number of elements of the main input per unit of n; `max_n` bounds n.
    `needs` names what a torch must have (a dotted name under torch).
    A training step (`passes` = (STEP,)) builds its model in `body`, run on
    each side, and its result is the parameters after the step."""
    setup: str
    result: str
    unit: int = 1
    max_n: int = 1 << 21
    leaves: str = ""
    passes: tuple[str, ...] = (FORWARD, BACKWARD)
    dtypes: tuple[str, ...] = ("float32", "bfloat16", "float64")
    layouts: tuple[str, ...] = (CONTIGUOUS,)
    body: str = ""
    needs: str = ""
    shape: str = ""  # the main input's shape in words, for the coverage line
    batched: str = ""  # the inputs whose first dimension is n, the batch (the batch level slices them)


@dataclass(frozen=True)
class Case:
    """One point of the search: an operation at size n, its dtype, layout,
    pass, and the starting state (settings, each one line of Python, run
    after the claim's own)."""
    op: str
    n: int
    dtype: str = "float32"
    layout: str = CONTIGUOUS
    passes: str = FORWARD
    state: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return dict(asdict(self), state=list(self.state))

    @staticmethod
    def from_json(data: dict[str, Any], where: str = "") -> "Case":
        try:
            return Case(op=str(data["op"]), n=int(data["n"]), dtype=str(data.get("dtype", "float32")),
                        layout=str(data.get("layout", CONTIGUOUS)), passes=str(data.get("passes", FORWARD)),
                        state=tuple(str(s) for s in data.get("state", ())))
        except (KeyError, TypeError, ValueError) as e:
            raise ValueError(f"{where}: a case needs op and n (whole number): {e}") from e

    def words(self) -> str:
        extra = f", after {'; '.join(self.state)}" if self.state else ""
        return f"{self.op} at n={self.n}, {self.dtype}, {self.layout}, {self.passes}{extra}"


@dataclass
class Outcome:
    """What a case's program did at a level: `differs` (the bits moved), or
    PyTorch refused the case (`refused`, its message). A harness failure is
    an exception, never an Outcome."""
    differs: bool = False
    refused: str = ""
    fraction: float = 0.0
    max_rel: float = 0.0


@dataclass
class Level:
    """What a level's program does: the values its loop runs over, the line
    that sets one of them, and what a difference means, as the snippet's last
    comment says it; `reading` is an expression that differs between the
    sides once the side is set (the planted controls add it). A level that
    `slices` runs each side on the first `side` rows of the operation's
    batched inputs (`@BATCHED` in set_side names them; a side of None is the
    whole batch) and compares the first row of each result: the batch
    level, op(x)[:1] against op(x[:1]). `device` is where the program runs
    ("cuda": the default device and the generator there)."""
    name: str
    sides: tuple[Any, ...]
    set_side: str
    meaning: str
    reading: str = "len(outs)"
    slices: bool = False
    device: str = "cpu"


def program(op: Op, case: Case, level: Level, claim_state: Iterable[str] = ()) -> str:
    """The runnable Python of one case: the claim's settings and the case's
    starting state, the inputs, then the operation once per side of the
    level; it prints whether every side gave the same bits."""
    dt = f"torch.{case.dtype}"
    cl = ".contiguous(memory_format=torch.channels_last)" if case.layout == CHANNELS_LAST else ""
    setup = op.setup.replace("@CL", cl)
    leaves = op.leaves if case.passes == BACKWARD else ""
    tupled = f"({leaves}{',' if ',' not in leaves else ''})"
    if leaves:
        setup += f"\nfor t in {tupled}: t.requires_grad_()"
    result = (f"torch.autograd.grad(({op.result}).sum(), {tupled})" if leaves else
              op.result if case.passes == STEP else f"[{op.result}]")
    settings = "; ".join(list(claim_state) + list(case.state))
    body = f"; {op.body}" if op.body else ""
    on = "" if level.device == "cpu" else f"; torch.set_default_device({level.device!r})"
    generator = "torch.Generator()" if level.device == "cpu" else f"torch.Generator({level.device!r})"
    set_side, keep = level.set_side, ""
    if level.slices:
        if not op.batched:
            raise ValueError(f"{case.op} has no batched input: the {level.name} level cannot slice it")
        setup += f"\nwhole = ({op.batched},)"
        set_side, keep = set_side.replace("@BATCHED", op.batched), "[:1]"
    lines = [f"import torch; F = torch.nn.functional{on}"] + ([settings] if settings else []) + [
        f"n, dt, g, outs = {case.n}, {dt}, {generator}.manual_seed(0), []",
        *setup.splitlines(),
        f"for side in {tuple(level.sides)!r}:",
        f"    {set_side}{body}",
        f"    outs.append([t.detach().clone(){keep} for t in {result}])",
        "bits = lambda t: t.reshape(-1).view(torch.uint8)",
        f"print(all(torch.equal(bits(u), bits(v)) for o in outs[1:] for u, v in zip(outs[0], o)))  # {level.meaning}"]
    return "\n".join(lines)


def sizes(op: Op, thresholds: dict[str, int], thread_counts: Iterable[int]) -> list[int]:
    """The sizes n of an operation's schedule: both sides of every threshold
    (in elements of its main input, and that threshold times each thread
    count, where a split per thread changes), powers of two with odd
    remainders, and the smallest; within the operation's max_n."""
    elements: set[int] = {1, op.unit}
    for t in thresholds.values():
        for k in sorted({1, *thread_counts}):
            elements |= {t * k - 1, t * k + 1, t * k + 7}
        elements |= {t // 2 + 3, 4 * t + 5, 16 * t + 9, 64 * t + 11}
    for p in range(4, 23):
        elements |= {(1 << p) - 3, (1 << p) + 5}
    # n on both sides of each count of elements: rounded down and up.
    ns = {max(1, m) for e in elements for m in (e // op.unit, -(-e // op.unit))}
    return sorted(n for n in ns if n <= op.max_n)


@dataclass
class Found:
    """A counter-example: the case as found, as shrunk, its outcome and its
    program."""
    op: str
    found: Case
    shrunk: Case
    outcome: Outcome
    snippet: str
    shrink_tries: int

    def to_json(self) -> dict[str, Any]:
        return {"op": self.op, "found": self.found.to_json(), "case": self.shrunk.to_json(),
                "fraction": self.outcome.fraction, "max_rel": self.outcome.max_rel, "snippet": self.snippet,
                "shrink_tries": self.shrink_tries, "words": self.shrunk.words()}


@dataclass
class Searched:
    """What one search covered and found."""
    seed: int
    budget_s: float
    seconds: float = 0.0
    cases: int = 0
    found: list[Found] = field(default_factory=list)
    tried: dict[str, dict[str, set]] = field(default_factory=dict)  # op -> axis -> values
    refused: dict[str, str] = field(default_factory=dict)  # op -> PyTorch's message, every case it ran refused
    exhausted: bool = False

    def coverage(self) -> dict[str, Any]:
        axes: dict[str, set] = {"n": set(), "dtype": set(), "layout": set(), "passes": set(), "state": set()}
        for seen in self.tried.values():
            for axis, values in seen.items():
                axes[axis] |= values
        ns = sorted(axes["n"])
        return {"seed": self.seed, "budget_s": self.budget_s, "seconds": round(self.seconds, 1), "cases": self.cases,
                "ops": sorted(self.tried), "sizes": len(ns), "n_min": ns[0] if ns else None,
                "n_max": ns[-1] if ns else None, "dtypes": sorted(axes["dtype"]), "layouts": sorted(axes["layout"]),
                "passes": sorted(axes["passes"]), "states": sorted(axes["state"]), "exhausted": self.exhausted,
                "refused": dict(self.refused)}


def _note(searched: Searched, case: Case) -> None:
    seen = searched.tried.setdefault(case.op, {"n": set(), "dtype": set(), "layout": set(), "passes": set(),
                                               "state": set()})
    seen["n"].add(case.n)
    seen["dtype"].add(case.dtype)
    seen["layout"].add(case.layout)
    seen["passes"].add(case.passes)
    seen["state"].add("; ".join(case.state) or "the claim's own")


def shrink(case: Case, evaluate: Callable[[Case], Outcome], tries: int = SHRINK_TRIES) -> tuple[Case, Outcome, int]:
    """The smallest and simplest case that still differs: each simplification
    (no starting state, then the state's lines one by one, float32, contiguous,
    forward) kept where the difference stays; then the least n, by bisection
    between 0 and the case's own n. Returns
    the case, its outcome and the tries it took."""
    best, outcome = case, evaluate(case)
    used = 1
    if not outcome.differs:
        return case, outcome, used

    def attempt(candidate: Case) -> bool:
        nonlocal best, outcome, used
        if candidate == best or used >= tries:
            return False
        used += 1
        got = evaluate(candidate)
        if got.differs:
            best, outcome = candidate, got
            return True
        return False

    if best.state and not attempt(replace(best, state=())):
        for line in list(best.state):
            attempt(replace(best, state=tuple(s for s in best.state if s != line)))
    attempt(replace(best, dtype="float32"))
    attempt(replace(best, layout=CONTIGUOUS))
    if best.passes == BACKWARD:
        attempt(replace(best, passes=FORWARD))
    lo, hi = 0, best.n  # invariant: lo held (or is 0), hi differs
    while hi - lo > 1 and used < tries:
        mid = (lo + hi) // 2
        if attempt(replace(best, n=mid)):
            hi = mid
        else:
            lo = mid
    return best, outcome, used


def search(ops: dict[str, Op], schedule: dict[str, list[int]], states: list[tuple[str, ...]],
           evaluate: Callable[[Case], Outcome], budget_s: float, seed: int,
           snippet: Callable[[Case], str], clock: Callable[[], float] = time.monotonic,
           skip: Iterable[str] = ()) -> Searched:
    """A seeded random search: operations in turn (those not yet refuted),
    each time a random size of its schedule, dtype, layout, pass and
    starting state not tried before for it, until the budget is spent or
    every operation's space is exhausted; an operation's first
    counter-example stops its search and is shrunk. `skip`: operations
    whose counter-example is already known (the corpus's, replayed)."""
    rng = random.Random(seed)
    searched = Searched(seed=seed, budget_s=budget_s)
    start = clock()
    tried: dict[str, set[Case]] = {name: set() for name in ops}
    refused: dict[str, list[str]] = {name: [] for name in ops}
    live = [name for name in ops if name not in set(skip)]

    def space(name: str) -> int:
        op = ops[name]
        return len(schedule[name]) * len(op.dtypes) * len(op.layouts) * len(op.passes) * len(states)

    while live and clock() - start < budget_s:
        for name in list(live):
            if clock() - start >= budget_s:
                break
            op = ops[name]
            if len(tried[name]) >= space(name):
                live.remove(name)
                continue
            while True:
                case = Case(op=name, n=rng.choice(schedule[name]), dtype=rng.choice(op.dtypes),
                            layout=rng.choice(op.layouts), passes=rng.choice(op.passes), state=rng.choice(states))
                if case not in tried[name]:
                    break
            tried[name].add(case)
            got = evaluate(case)
            searched.cases += 1
            _note(searched, case)
            if got.refused:
                refused[name].append(got.refused)
            if not got.differs:
                continue
            shrunk, outcome, used = shrink(case, evaluate)
            searched.cases += used
            if outcome.differs:  # a difference its own re-run did not show again is no counter-example
                searched.found.append(Found(name, case, shrunk, outcome, snippet(shrunk), used))
                live.remove(name)
    searched.exhausted = all(len(tried[name]) >= space(name) for name in ops if name not in set(skip)
                             and name not in {f.op for f in searched.found})
    searched.refused = {name: said[0] for name, said in refused.items() if said and len(said) == len(tried[name])}
    searched.seconds = clock() - start
    return searched


def replay(cases: list[Case], evaluate: Callable[[Case], Outcome], ops: dict[str, Op],
           states: list[tuple[str, ...]] | None = None) -> list[dict[str, Any]]:
    """Each corpus case run again: seen (it still differs), no longer seen,
    refused by PyTorch here, or not run (this torch lacks its operation, or
    its starting state is not among `states`, those a user of this torch
    reaches: a setting another version has)."""
    out = []
    for case in cases:
        why = (f"no operation {case.op!r} here" if case.op not in ops else
               f"its starting state ({'; '.join(case.state)}) is not one this torch has"
               if states is not None and case.state not in states else "")
        if why:
            out.append({"case": case.to_json(), "words": case.words(), "state": "not run", "why": why})
            continue
        got = evaluate(case)
        state = "refused" if got.refused else "seen" if got.differs else "no longer seen"
        out.append({"case": case.to_json(), "words": case.words(), "state": state, "fraction": got.fraction,
                    "max_rel": got.max_rel, **({"why": got.refused} if got.refused else {})})
    return out


def read_corpus(directory: Path, level: str, variant: str) -> list[tuple[str, list[Case]]]:
    """(claim id, its cases) of every corpus file in `directory` for this
    level and variant. A malformed file raises ValueError naming the file."""
    out = []
    for path in sorted(directory.glob("*.json")) if directory.is_dir() else []:
        try:
            data = json.loads(path.read_text())
        except json.JSONDecodeError as e:
            raise ValueError(f"{path}:{e.lineno}: not JSON: {e.msg}") from e
        if not isinstance(data, dict) or not isinstance(data.get("cases"), list):
            raise ValueError(f"{path}:1: a corpus file is an object with claim, level, variant and cases")
        if data.get("level") != level or data.get("variant") != variant:
            continue
        out.append((str(data.get("claim", path.stem)),
                    [Case.from_json(c, f"{path}: cases[{i}]") for i, c in enumerate(data["cases"])]))
    return out


def add_to_corpus(path: Path, claim: str, level: str, variant: str, cases: list[Case]) -> int:
    """Adds the cases a corpus file lacks (written sorted, one case a line);
    returns how many were new."""
    data = json.loads(path.read_text()) if path.exists() else {"claim": claim, "level": level, "variant": variant,
                                                                 "cases": []}
    have = [Case.from_json(c, str(path)) for c in data["cases"]]
    new = list(dict.fromkeys(c for c in cases if c not in have))
    data["cases"] = [c.to_json() for c in sorted(have + new, key=lambda c: (c.op, c.n, c.dtype, c.passes))]
    body = ",\n".join("  " + json.dumps(c, sort_keys=True) for c in data["cases"])
    head = json.dumps({k: data[k] for k in ("claim", "level", "variant")})[1:-1]
    path.write_text("{" + head + ', "cases": [\n' + body + "\n]}\n")
    return len(new)


# The tests that record searches: on the CPU and on a CUDA device.
SEARCH_TESTS = ("TorchPython.CounterExampleSearch", "TorchPython.CudaCounterExampleSearch")


def claims_by_level(catalog: Path) -> dict[tuple[str, str], str]:
    """(level, variant) -> the catalog's claim judged with the search there
    (its `search`), else the claim of rule "invariance" at that level."""
    import tomllib
    data = tomllib.loads(catalog.read_text())
    out = {(c["evidence"]["level"], c["evidence"].get("variant", "defaults")): c["id"]
           for c in data.get("claim", []) if c.get("evidence", {}).get("rule") == "invariance"}
    for c in data.get("claim", []):
        level, _, variant = str(c.get("evidence", {}).get("search", "")).partition(" | ")
        if level:
            out[(level, variant)] = c["id"]
    return out


def corpus_from_evidence(corpus: Path, catalog: Path, evidence: list[Path]) -> list[str]:
    """Adds every counter-example the searches of these runs' evidence found
    to the corpus file of its claim; one line per file changed."""
    claims = claims_by_level(catalog)
    found: dict[tuple[str, str], list[Case]] = {}
    for directory in evidence:
        for path in sorted(directory.glob("*.jsonl")):
            for number, line in enumerate(path.read_text().splitlines(), 1):
                if not any(test in line for test in SEARCH_TESTS):
                    continue
                try:
                    record = json.loads(line)
                except json.JSONDecodeError as e:
                    raise ValueError(f"{path}:{number}: not JSON: {e.msg}") from e
                for check in record.get("checks", []):
                    for one in (check.get("observed") or {}).get("searches", {}).values():
                        key = (one["level"], one["variant"])
                        found.setdefault(key, []).extend(
                            Case.from_json(c["case"], f"{path}:{number}") for c in one.get("counterexamples", []))
    said = []
    for (level, variant), cases in sorted(found.items()):
        if (level, variant) not in claims or not cases:
            continue
        claim = claims[(level, variant)]
        new = add_to_corpus(corpus / f"{claim}.json", claim, level, variant, cases)
        said.append(f"{corpus / f'{claim}.json'}: {new} new of {len(cases)} counter-example(s)")
    return said


def main(argv: list[str]) -> int:
    """python3 probes/search.py corpus EVIDENCE_DIR...: adds what the runs'
    searches found to catalog/corpus/, one file per claim."""
    root = Path(__file__).resolve().parents[1]
    if len(argv) < 3 or argv[1] != "corpus":
        print(main.__doc__, file=sys.stderr)
        return 2
    try:
        lines = corpus_from_evidence(root / "catalog" / "corpus", root / "catalog" / "claims.toml",
                                     [Path(p) for p in argv[2:]])
    except ValueError as e:
        print(e, file=sys.stderr)
        return 1
    print("\n".join(lines) or "no counter-example of a catalog claim in this evidence")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
