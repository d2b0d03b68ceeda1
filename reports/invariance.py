"""Invariance, graded: per platform (a machine and its torch), per operation
and flag variant, per level, whether PyTorch's result held its bits.

The evidence is the observed record of TorchPython.InvarianceGrid
(probes/invariance.py). Each cell is

- invariant: the same bits;
- differs: with the fraction of elements that differ, the largest
  difference relative to the largest magnitude, and (batch) the slices where;
- not evaluated: with why (this torch lacks the operation, or the level
  needs what this machine lacks);
- refused: PyTorch itself raised when asked to run the operation under the
  level's setting or the row's flags (an ISA cap, a backend forced off),
  with its message: an observation of what the machine cannot run, neither
  invariant nor a difference. Where PyTorch refused every operation of a
  level, the level is not evaluated here and its control did not run;
- untrusted: the level's positive control did not vary, so "invariant"
  there proves nothing (a "differs" stays a difference).

The release level compares the digests of two installs' default rows on one
machine, where their seeded inputs have the same bits. Each level states what
PyTorch's documentation promises there (LEVELS). Nothing here is written by
hand but that table: every cell comes from the run's evidence.
"""

from __future__ import annotations

from typing import Any

from .catalog import SEARCH_TEST
from .evidence import Evidence, rerun, torch_of
from .ruling import Ruling

TEST = "TorchPython.InvarianceGrid"
PROBE = "probes/invariance.py"
# The CUDA device's grid (probes/cuda_questions.py): levels run and
# batch, rows "op dtype cuda | lever", judged with its own controls.
CUDA_TEST = "TorchPython.CudaBatchInvariance"
COMPILE_TEST = "TorchPython.TorchCompileOnTheCpu"
CUDA_COMPILE_TESTS = ("TorchPython.TorchCompileOnCudaAgainstEager", "TorchPython.TorchCompileOnCudaDeterministic")
# The library below PyTorch on the grid's matmul, through the harness's
# engines (suites/blame_test.cc), by the path PyTorch's mm took.
BLAME_TESTS = {"onednn": "Libraries/Blame.LibraryMatmulAcrossBatchSlices/onednn",
               "cblas": "Libraries/Blame.LibraryMatmulAcrossBatchSlices/cblas"}
BLAMED_ROWS = ("mm | defaults", "addmm | defaults", "linear | defaults")

_NOTES = "PyTorch docs, notes, "
# level -> (its heading, what the documentation promises there, the source).
LEVELS: dict[str, tuple[str, str, str]] = {
    "run": ("run to run", "promised under use_deterministic_algorithms(True) for deterministic operations; "
            "otherwise not promised", _NOTES + "Reproducibility"),
    "threads": ("thread count", "silent", _NOTES + "Reproducibility (no statement on the thread count)"),
    "batch": ("batch size", "explicitly not promised", _NOTES + "Numerical accuracy, 'Batched computations or "
              "slice computations': results need not be bitwise identical"),
    "process": ("fresh process", "promised for deterministic operations with the same seeds, under "
                "use_deterministic_algorithms(True)", _NOTES + "Reproducibility"),
    "capability": ("CPU capability", "explicitly not promised", _NOTES + "Reproducibility: not guaranteed across "
                   "platforms"),
    "isa": ("oneDNN ISA", "explicitly not promised", _NOTES + "Reproducibility: not guaranteed across platforms"),
    "release": ("torch release", "explicitly not promised", _NOTES + "Reproducibility: not guaranteed across "
                "PyTorch releases"),
    "compile": ("torch.compile", "silent", "not run by this grid yet"),
    "device": ("CPU against GPU", "explicitly not promised", _NOTES + "Reproducibility: not guaranteed between CPU "
               "and GPU executions"),
}
# The grid's flag variants, as a sentence says them.
VARIANT_WORDS = {"defaults": "with the defaults", "mkldnn off": "with torch.backends.mkldnn.enabled = False",
                 "deterministic": "under torch.use_deterministic_algorithms(True)"}
# Levels whose evidence the probe records per row.
RECORDED = ("run", "threads", "batch", "process", "capability", "isa")
# A cell PyTorch refused to run: its own state, never "invariant" nor
# "differs".
REFUSED = "refused"


def _observed(evidence: Evidence, test: str = TEST) -> dict[str, Any] | None:
    for record in reversed(evidence.cases.get(test, [])):
        if record.get("skip_reason"):
            return {"skipped": str(record["skip_reason"])}
        for check in record.get("checks", []):
            if isinstance(check.get("observed"), dict):
                return check["observed"]
    return None


def _engine_of(path: str) -> str:
    """The harness engine for the library PyTorch's path names ("" when the
    harness has none: oneMKL)."""
    if "through oneDNN" in path:
        return "onednn"
    if "this build's BLAS" in path:
        return "cblas"
    return ""


def _blame(cell: dict[str, Any], path: str, ev: Evidence) -> dict[str, Any]:
    """Whether the library below PyTorch varies with the batch by itself:
    the harness's engine for it on the same matmul and slices."""
    engine = _engine_of(path)
    if not engine:
        return {"state": Ruling.NOT_EVALUATED, "why": f"PyTorch ran {path.removeprefix('through ')}, a library the "
                                                       "harness has no engine for"}
    seen = _observed(ev, BLAME_TESTS[engine])
    if seen is None or "per" not in seen:
        return {"state": Ruling.NOT_EVALUATED, "why": (seen or {}).get("skipped", f"the {engine} engine's batch "
                                                                                  "slices did not run")}
    library = sorted((k for k, c in seen["per"].items() if not c.get("same")), key=int)
    torch_ks = [k for k in cell.get("at", []) if ":" not in k]
    name = f"{seen.get('library')} ({seen.get('implementation')}, through the harness's {engine} engine)"
    if not seen.get("control_varied"):
        return {"state": "untrusted", "why": f"{name}: its control did not vary"}
    if library and set(torch_ks) <= set(library):
        blamed = "the library"
    elif not library:
        blamed = "PyTorch's own code"
    else:
        blamed = "both"
    return {"state": "differs" if library else "invariant", "blamed": blamed,
            "why": f"{name} alone " + (f"differs at k = {', '.join(library)}" if library else "holds its bits at every k")
                   + f"; PyTorch differs at k = {', '.join(torch_ks) or 'none'}: {blamed} varies"}


def _compiled(seen: dict[str, Any] | None) -> list[dict[str, str]]:
    """The torch.compile checks of one platform, as lines: what was compared,
    its state and why."""
    if seen is None:
        return []
    if "skipped" in seen:
        return [{"check": "torch.compile", "state": Ruling.NOT_EVALUATED, "why": seen["skipped"]}]
    lines = []

    def add(check: str, state: str, why: str) -> None:
        lines.append({"check": check, "state": state, "why": why})
    for name, run in seen.items():
        if not isinstance(run, dict) or name == "inductor_settings":
            continue
        where = "" if " " not in name else f" (Inductor's {name.split()[1]} setting on)"
        if "error" in run:
            add(name + where, Ruling.ERROR, f"the check's process failed: {run['error']}")
        elif "did_not_run" in run:
            # No run, no result: not evaluated for want of what the machine
            # lacks, the harness's error where the failure names nothing.
            add(name + where, Ruling.NOT_EVALUATED if run.get("need") else Ruling.ERROR,
                "the compiled function did not run" + (f", for want of {run['need']}" if run.get("need") else "")
                + f": {run['did_not_run']}")
        elif "refused" in run:
            add(name + where, REFUSED, f"refused by PyTorch: {run['refused']}")
        elif name.startswith(("bits", "deterministic", "train")):
            ctl = run.get("controls", {})
            what = {"deterministic": " under use_deterministic_algorithms(True)",
                    "train": " (a training step of a small MLP)"}.get(name.split()[0], "")
            for key, words, control in (("versus_eager", "compiled against eager", "eager_one_ulp_away_differs"),
                                        ("run_to_run", "compiled, run to run", "random_order_sum_varies"),
                                        ("recompiled", "compiled against a second compilation",
                                         "random_order_sum_varies")):
                if key not in run:
                    continue
                words += what
                if control not in ctl:
                    control = "random_order_sum_varies"
                c = run.get(key, {})
                state = ("differs" if not c.get("same") else "invariant" if ctl.get(control) else "untrusted")
                add(words + where, state, "the same bits" if c.get("same") else _sized(c))
        elif name.startswith("batch"):
            for k, c in run.get("compiled", {}).items():
                e = run.get("eager", {}).get(k, {})
                add(f"compiled matmul, op(x)[:{k}] against op(x[:{k}]){where}", "invariant" if c.get("same")
                    else "differs", ("the same bits" if c.get("same") else _sized(c)) +
                    f"; eager: {'the same bits' if e.get('same') else 'differs'}")
        elif name == "alert":
            raised = run.get("alert", {})
            add("use_deterministic_algorithms(True) alert of put_(accumulate=False)",
                "invariant" if raised.get("compiled") == raised.get("eager") else "differs",
                f"eager {'raised' if raised.get('eager') else 'ran'}; compiled "
                f"{'raised' if raised.get('compiled') else 'ran without the alert'}")
        elif name == "fill":
            if "absent" in run:
                add("fill_uninitialized_memory", Ruling.NOT_EVALUATED, run["absent"])
            else:
                filled = {k: "filled" if run.get(f"{k}_filled") else "not filled" for k in ("eager", "compiled")}
                add("fill_uninitialized_memory with torch.empty",
                    "invariant" if filled["eager"] == filled["compiled"] else "differs",
                    f"eager {filled['eager']}; compiled {filled['compiled']}")
    settings = seen.get("inductor_settings", {})
    if settings:
        add("Inductor's determinism settings", "invariant" if all(settings.values()) else Ruling.NOT_EVALUATED,
            "; ".join(f"torch._inductor.config.{k} {'exists' if v else 'absent'}" for k, v in settings.items()) +
            ("" if seen.get("nightly") else "; their effect is checked by the nightly tier"))
    return lines


def _percent(x: float) -> str:
    return f"{100 * x:.3g}%"


def _cell(level: str, seen: dict[str, Any] | None, controlled: bool, grid: dict[str, Any]) -> dict[str, Any]:
    """One cell from the probe's record of one level."""
    if seen is None:
        return {"state": Ruling.NOT_EVALUATED, "why": "not run at this level for this variant (the child-process levels "
                "run with the defaults only)"}
    if "error" in seen:
        return {"state": Ruling.ERROR, "why": f"the level's process failed: {seen['error']}"}
    if "refused" in seen:
        whole = grid.get("refused", {}).get(level, {})
        if whole.get("whole") and whole.get("setting") == seen.get("setting"):
            return {"state": REFUSED, "why": f"not evaluated here: PyTorch refused the setting {seen.get('setting')}: "
                                             f"{seen['refused']}"}
        return {"state": REFUSED, "why": f"refused by PyTorch under {seen.get('setting') or 'this setting'}: "
                                         f"{seen['refused']}"}
    if level == "batch":
        per = dict(sorted(seen.get("per", {}).items(), key=lambda kv: (":" in kv[0], int(kv[0].split(":")[0]))))
        differ = {k: c for k, c in per.items() if not c.get("same")}
        if not differ:
            cell = {"state": "invariant", "why": f"op(x)[:k] equals op(x[:k]) for k in {', '.join(per)} "
                    f"(batch {grid.get('batch')}; the last is a slice from the middle)"}
        else:
            worst = max(differ.values(), key=lambda c: c.get("max_rel", 0))
            cell = {"state": "differs", "at": list(differ), "fraction": worst.get("fraction"),
                    "max_rel": worst.get("max_rel"),
                    "why": f"op(x)[:k] differs from op(x[:k]) at k = {', '.join(differ)}; equal at "
                           f"{', '.join(k for k in per if k not in differ) or 'none'}; up to "
                           f"{_percent(worst.get('fraction', 0))} of elements, largest relative difference "
                           f"{worst.get('max_rel', 0):.3g}"}
    elif level == "threads":
        per = seen.get("per", {})
        differ = {n: c for n, c in per.items() if not c.get("same")}
        counts = " and ".join(sorted(per, key=int))
        if not per:
            return {"state": Ruling.NOT_EVALUATED, "why": "this machine has no thread count besides 2 to compare"}
        cell = ({"state": "invariant", "why": f"2 threads against {counts}: the same bits"} if not differ else
                {"state": "differs", "at": list(differ), **_worst(differ),
                 "why": f"2 threads against {', '.join(differ)}: " + _sized(_worst(differ))})
    else:
        cell = ({"state": "invariant", "why": "the same bits"} if seen.get("same") else
                {"state": "differs", **_worst({"": seen}), "why": _sized(seen)})
    if cell["state"] == "invariant" and not controlled:
        cell = {"state": "untrusted", "why": "the level's positive control did not vary, so 'the same bits' proves "
                                             "nothing here"}
    return cell


def _worst(cells: dict[str, dict[str, Any]]) -> dict[str, Any]:
    worst = max(cells.values(), key=lambda c: c.get("max_rel", 0))
    return {"fraction": worst.get("fraction"), "max_rel": worst.get("max_rel")}


def _sized(c: dict[str, Any]) -> str:
    return f"{_percent(c.get('fraction') or 0)} of elements differ, largest relative difference {c.get('max_rel', 0):.3g}"


def judge(evidence: Evidence) -> dict[str, dict[str, Any]]:
    """platform -> its torch, the levels (with their promise and control),
    the rows (operation | variant -> level -> cell), and mm's kernels."""
    out: dict[str, dict[str, Any]] = {}
    for platform, ev in sorted(evidence.platforms.items()):
        cuda = _observed(ev, CUDA_TEST)
        cuda = cuda if cuda is not None and "rows" in cuda else None
        found = [g for g in (_observed(ev), cuda) if g is not None and "rows" in g]
        if not found:
            continue
        # The CPU's grid where it ran (its controls head the table), else the
        # CUDA device's; a CUDA grid's rows join the CPU's, each cell judged
        # with its own grid's control.
        grid, others = found[0], found[1:]
        env = evidence.platform_env.get(platform, {})
        controls = grid.get("controls", {})
        rows: dict[str, dict[str, Any]] = {}
        for other in others:
            for key, row in other.get("rows", {}).items():
                rows[key] = {level: _row_cell(row, level, other) for level in RECORDED}
                rows[key]["compile"] = {"state": Ruling.NOT_EVALUATED, "why": "the CUDA grid does not compile its "
                                        "operations; the compiled checks below do"}
                rows[key]["device"] = {"state": Ruling.NOT_EVALUATED, "why": "not compared with the CPU"}
        for key, row in grid.get("rows", {}).items():
            rows[key] = {level: _row_cell(row, level, grid) for level in RECORDED}
            ran = grid.get("kernels", {}).get(key.split(" | ")[0]) if key.endswith("| defaults") else None
            if ran and rows[key]["batch"]["state"] == "differs":
                rows[key]["batch"] = dict(rows[key]["batch"], why=rows[key]["batch"]["why"] + "; ran " + "; ".join(
                    f"{k}: {v.get('path')}" for k, v in ran.items()))
            path = grid.get("kernels", {}).get("mm", {}).get("full", {}).get("path", "")
            if key in BLAMED_ROWS and rows[key]["batch"]["state"] == "differs" and path:
                blame = _blame(rows[key]["batch"], path, ev)
                rows[key]["batch"] = dict(rows[key]["batch"], blame=blame,
                                          why=rows[key]["batch"]["why"] + f"; below PyTorch: {blame['why']}")
            rows[key]["compile"] = {"state": Ruling.NOT_EVALUATED, "why": "the grid does not compile its operations "
                                    "one by one; the compiled function below (matmul, softmax, layer_norm, a sum) is"}
            rows[key]["device"] = {"state": Ruling.NOT_EVALUATED, "why": "no GPU ran this grid"}
        torch = env.get("torch") if isinstance(env.get("torch"), dict) else {}
        python = str(torch.get("python") or "python3")
        out[platform] = {"torch": torch_of(env), "levels_set": grid.get("levels_set", {}),
                         "controls": {k: _control(k, v, grid) for k, v in controls.items()}, "rows": rows,
                         "refused": {k: dict(v) for k, v in grid.get("refused", {}).items()},
                         "digests": {k: r.get("digest") for k, r in grid.get("rows", {}).items()},
                         "inputs_digest": grid.get("inputs_digest"), "kernels": grid.get("kernels", {}),
                         "ks": grid.get("ks", []), "batch": grid.get("batch"),
                         "repro": f"{python} {PROBE} grid",
                         "compile": _compiled(_observed(ev, COMPILE_TEST)) + [
                             dict(line, check=f"CUDA: {line['check']}") for test in CUDA_COMPILE_TESTS
                             for line in _compiled(_observed(ev, test)) if line["state"] != Ruling.NOT_EVALUATED
                             or "CUDA device" not in line["why"]],
                         "levers": [lv for g in found for lv in lever_lines(g)],
                         "search": {variant: searched(searches([o]), "threads", variant)
                                    for o in [_observed(ev, SEARCH_TEST) or {}] for variant in ("defaults",
                                                                                               "deterministic")},
                         "cuda_device": str(cuda.get("device", "")) if cuda is not None else "",
                         "evidence": f"{TEST} ({rerun(env, TEST)})"}
    _release(out)
    return out


def _control(level: str, control: dict[str, Any], grid: dict[str, Any]) -> dict[str, Any]:
    """A level's positive control as shown: one PyTorch refused to run (the
    whole level, or the reading it rests on) did not vary, saying why."""
    whole = grid.get("refused", {}).get(level, {})
    if not control.get("refused") and not whole.get("whole"):
        return dict(control)
    said = control.get("refused") or f"PyTorch refused {whole.get('setting')}: {next(iter(whole['ops'].values()))}"
    return dict(control, varied=False, what=f"{control.get('what')}; not run here: {said}")


def _release(platforms: dict[str, dict[str, Any]]) -> None:
    """The release level: each platform's default rows against the previous
    install's on the same machine (the platform name's machine part), where
    the seeded inputs have the same bits."""
    by_machine: dict[str, list[str]] = {}
    for p in platforms:
        by_machine.setdefault(p.split(" (")[0], []).append(p)
    for names in by_machine.values():
        for p in names:
            other = next((q for q in names if q != p), None)
            grid = platforms[p]
            mine = grid["controls"].get("release", {})
            theirs_control = platforms[other]["controls"].get("release", {}) if other else {}
            mine["varied"] = bool(mine.get("digest") and theirs_control.get("digest")
                                  and mine["digest"] != theirs_control["digest"])
            for key, row in grid["rows"].items():
                if other is None:
                    row["release"] = {"state": Ruling.NOT_EVALUATED, "why": "one torch install on this machine"}
                    continue
                theirs = platforms[other]
                if not key.endswith("| defaults"):
                    row["release"] = {"state": Ruling.NOT_EVALUATED, "why": "compared with the defaults only"}
                elif row["run"]["state"] == REFUSED:
                    row["release"] = dict(row["run"])
                elif theirs["rows"].get(key, {}).get("run", {}).get("state") == REFUSED:
                    row["release"] = {"state": Ruling.NOT_EVALUATED, "why": f"torch {theirs['torch']}: "
                                      + theirs["rows"][key]["run"]["why"]}
                elif grid["inputs_digest"] != theirs["inputs_digest"]:
                    row["release"] = {"state": Ruling.NOT_EVALUATED, "why": f"the seeded inputs differ between torch "
                                      f"{grid['torch']} and {theirs['torch']}"}
                elif not grid["digests"].get(key) or not theirs["digests"].get(key):
                    row["release"] = {"state": Ruling.NOT_EVALUATED, "why": f"not run on torch {theirs['torch']}"}
                else:
                    same = grid["digests"][key] == theirs["digests"][key]
                    row["release"] = {"state": "differs" if not same else "invariant" if mine["varied"]
                                      else "untrusted",
                                      "why": f"torch {grid['torch']} against {theirs['torch']}: "
                                             + ("the same bits" if same else "other bits")}


def level_cells(grid: dict[str, Any], level: str, variant: str) -> dict[str, dict[str, Any]]:
    """operation -> its cell at `level` in the rows of `variant`, from the
    probe's own record (what a catalog claim of rule "invariance" judges)."""
    out = {}
    for key, row in grid.get("rows", {}).items():
        op, _, flags = key.partition(" | ")
        if flags == variant:
            out[op] = _row_cell(row, level, grid)
    return out


def _row_cell(row: dict[str, Any], level: str, grid: dict[str, Any]) -> dict[str, Any]:
    """One row's cell at one level, with the level's control."""
    if "not_evaluated" in row:
        return {"state": Ruling.NOT_EVALUATED, "why": row["not_evaluated"]}
    if "refused" in row or "raised" in row:
        return {"state": REFUSED, "why": f"refused by PyTorch under {row.get('setting') or 'these flags'}: "
                                         f"{row.get('refused') or row.get('raised')}"}
    return _cell(level, row.get(level), bool(grid.get("controls", {}).get(level, {}).get("varied")), grid)


# The search for counter-examples of the universal levels (threads, run),
# probes/counterexamples.py: a claim of rule "invariance" at one of these
# levels is supported only after it.


# Where each searched level looks, as a reason line says it.
SEARCH_WHERE = {"threads": "across the thread count", "run": "run to run",
                "cudnn": "with cuDNN's flags flipped, on the CPU", "batch": "across the batch",
                "cuda-run": "run to run on the GPU", "cuda-streams": "across CUDA streams"}


def searches(observed: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The searches among recorded observations (the probe's "searches")."""
    return [o for o in observed if isinstance(o.get("searches"), dict)]


def coverage_line(coverage: dict[str, Any], threads: list[int], device: str = "cpu") -> str:
    """What a search covered, in one line: "26 operations x 75 sizes (n 1
    to 1,048,578), bfloat16, float32, float64, contiguous and channels_last,
    forward, backward and step, 4 starting states, 1 and 2 threads; 295
    cases in 30.0 s of search (seed 7, budget 30.0 s)"."""
    def said(values: list[str]) -> str:
        return ", ".join(values[:-1]) + f" and {values[-1]}" if len(values) > 1 else "".join(values)
    lo, hi = coverage.get("n_min"), coverage.get("n_max")
    sizes = f" (n {lo:,} to {hi:,})" if lo is not None and hi is not None else ""
    return (f"{len(coverage.get('ops', []))} operations x {coverage.get('sizes')} sizes{sizes}, "
            f"{said(coverage.get('dtypes', []))}, {said(coverage.get('layouts', []))}, "
            f"{said(coverage.get('passes', []))}, {len(coverage.get('states', []))} starting states, "
            + (f"{said([str(t) for t in threads])} thread{'s' if threads != [1] else ''}" if device == "cpu"
               else "on the GPU") + f"; {coverage.get('cases')} cases "
            f"in {coverage.get('seconds')} s of search (seed {coverage.get('seed')}, "
            + ("every case of the space" if coverage.get("exhausted") else f"budget {coverage.get('budget_s')} s")
            + ")")


def searched(found: list[dict[str, Any]], level: str, variant: str) -> dict[str, Any] | None:
    """One level and variant of the recorded searches, every record of it
    merged (a resumed or merged run holds several): trusted only where each
    record's planted controls were found (and why not), the coverage line of
    each, the counter-examples (the corpus's still seen first, then the
    search's, each with its words and snippet, once each), the corpus's
    cases no longer seen, the levers' checks, the operations searched, and
    whether any case was evaluated at all; None where no search covered it."""
    ones = [(seen, seen["searches"][f"{level} | {variant}"]) for seen in found
            if f"{level} | {variant}" in seen.get("searches", {})]
    if not ones:
        return None
    out: dict[str, Any] = {"trusted": True, "why": "", "lines": [], "counterexamples": [], "gone": [], "levers": [],
                           "ops": set(), "evaluated": False}
    words: set[str] = set()
    for seen, one in ones:
        controls = seen.get("controls", {}).get(level, {})
        if not controls.get("trusted"):
            out["trusted"] = False
            out["why"] = out["why"] or str(controls.get("why") or "no planted control was recorded")
        coverage = one.get("coverage", {})
        replayed = one.get("corpus", [])
        gone = [c for c in replayed if c.get("state") == "no longer seen"]
        corpus = (f"; first the corpus's {len(replayed)} case{'s' if len(replayed) != 1 else ''} "
                  f"(catalog/corpus/): {len(replayed) - len(gone)} seen, {len(gone)} no longer seen here"
                  if replayed else "")
        refused = coverage.get("refused") or {}
        said_refused = (f"; PyTorch refused every case of {', '.join(sorted(refused))}" if refused else "")
        out["lines"].append(coverage_line(coverage, one.get("threads", []), one.get("device", "cpu")) + said_refused
                            + corpus)
        for c in [dict(c, op=c["case"]["op"]) for c in replayed if c.get("state") == "seen"] + list(
                one.get("counterexamples", [])):
            if c["words"] not in words:
                words.add(c["words"])
                out["counterexamples"].append(c)
        out["gone"] += gone
        out["levers"] = out["levers"] or list(seen.get("levers", []))
        out["ops"] |= set(coverage.get("ops", [])) - set(refused)
        out["evaluated"] = out["evaluated"] or bool(replayed) or bool(set(coverage.get("ops", [])) - set(refused))
    out["line"] = "; and ".join(out.pop("lines"))
    out["ops"] = sorted(out["ops"])
    return out


PRECISION_TEST = "TorchPython.CudaPrecisionSettings"


def no_effect_seen(ev: Evidence) -> list[str]:
    """The precision settings whose documented effect did not appear on this
    platform's CUDA device (the probe's observed "no_effect"): a switch that
    allows a reduced precision and left the strict bits."""
    seen = _observed(ev, PRECISION_TEST)
    return [str(line) for line in (seen or {}).get("no_effect", [])]


def lever_lines(grid: dict[str, Any]) -> list[dict[str, Any]]:
    """The levers a grid tried (the probe's "lever_effects": the CUDA grid's
    across the batch, the CPU grid's across the thread count): the setting,
    the level, the cells it made hold their bits where the defaults did not,
    those that still differ, and its measured cost (its GEMMs' median time
    over the defaults'); or why it was not evaluated."""
    out = []
    for lv in grid.get("lever_effects", []):
        cost = lv.get("cost") or {}
        ratios = cost.get("ratio", {})
        said = ", ".join(f"{r:.2f}x in {d}" for d, r in ratios.items())
        line = {"setting": lv.get("setting", lv.get("lever")), "level": lv.get("level", "batch"),
                "fixes": lv.get("fixes", []), "still_differ": lv.get("still_differ", []),
                "cost": (f"the GEMMs' median time {said} that of the defaults ({cost.get('reps')} reps, "
                         "alternated") if said and cost.get("paired")
                else "cost not measured: its time was taken in another process, at another moment and load, "
                     "not alternated with its control" if said else "not timed"}
        why = lv.get("not_evaluated") or lv.get("error")
        if why:
            line["not_evaluated"] = why
        out.append(line)
    return out


# What holds every operation's bits at a level a user controls, when no
# setting tried does.
HOLDS_ALL = {"threads": "the same thread count (torch.set_num_threads) in every run that must agree",
             "batch": "the same batch: compare a sample's result only with one computed in a batch of the same size "
                      "and place"}


def _found_at_threads(grid: dict[str, Any]) -> tuple[list[dict[str, Any]], list[dict[str, Any]], str, set[str]]:
    """The search's counter-examples at the thread level (with the defaults
    and under the deterministic mode, once each), the levers' checks on
    them, the coverage line of the search with the defaults ("" where no
    search ran) and the operations it ran."""
    found: dict[str, dict[str, Any]] = {}
    levers: list[dict[str, Any]] = []
    line, ops = "", set()
    for variant, one in (grid.get("search") or {}).items():
        if not one:
            continue
        line = line or one["line"]
        levers = levers or one["levers"]
        ops |= set(one["ops"])
        for c in one["counterexamples"]:
            found.setdefault(c["words"], dict(c, variant=variant))
    return list(found.values()), levers, line, ops


def card_lines(grid: dict[str, Any]) -> list[dict[str, Any]]:
    """The card's "Invariant here" and "Not invariant here" lines for the
    levels a user controls (batch size, thread count), over the default rows
    and, for the thread count, the search's counter-examples (an operation
    the search refuted is not "invariant here", whatever the grid's one
    shape showed); then each lever: "Invariant with" only when it holds
    every difference seen at that level, else one line of what it holds and
    what it does not, with what holds them all; for a level whose
    operations differ where levers were tried and none holds them, "No
    setting tried holds"."""
    lines = []
    for level in ("batch", "threads"):
        cells = {k.split(" | ")[0]: r[level] for k, r in grid["rows"].items() if k.endswith("| defaults")}
        found, search_levers, coverage, searched_ops = _found_at_threads(grid) if level == "threads" else (
            [], [], "", set())
        refuted = {c["op"] for c in found}
        differ = sorted(op for op, c in cells.items() if c["state"] == "differs")
        same = sorted(op for op, c in cells.items() if c["state"] == "invariant" and op not in refuted)
        name = LEVELS[level][0]
        # The search's counter-examples by their words, not in the order it happened to find them.
        shown = differ + sorted(c["words"] for c in found if c["op"] not in differ)
        if shown:
            lines.append({"says": "Not invariant here", "level": name, "ops": ", ".join(shown), "count": len(shown)})
        if same:
            both = [op for op in same if op in searched_ops]
            lines.append({"says": "Invariant here", "level": name, "ops": ", ".join(same), "count": len(same),
                          **({"searched": f"the grid's one shape each; the search found no counter-example for "
                                          f"{', '.join(both)} in {coverage}" if both else
                                          "the grid's one shape each; the search did not run them"}
                             if coverage else {})})
        tried = {lv["setting"]: lv for lv in grid.get("levers", []) if lv["level"] == level
                 and not lv.get("not_evaluated")}
        checks = {c["lever"]: c for c in search_levers if "error" not in c}
        settings = list(tried) + [c for c in checks if c not in tried]
        for setting in settings:
            lv, check = tried.get(setting, {}), checks.get(setting, {})
            fixes = list(lv.get("fixes", []))
            not_held = [op for op in differ if op not in fixes] + sorted(check.get("not_held", []))
            held = fixes + sorted(check.get("held", []))
            cost = lv.get("cost", "cost not measured")
            if held and not not_held:
                lines.append({"says": "Invariant with", "level": name, "setting": setting,
                              "ops": ", ".join(held), "count": len(held), "cost": cost})
            elif held:
                lines.append({"says": "Holds some", "level": name, "setting": setting, "ops": ", ".join(held),
                              "count": len(held), "not_held": ", ".join(not_held), "cost": cost,
                              "holds_all": HOLDS_ALL[level]})
        held_any = {op for lv in tried.values() for op in lv["fixes"]} | {
            w for c in checks.values() for w in c.get("held", [])}
        if settings and (left := [op for op in shown if op not in held_any]) and not any(
                line["says"] == "Holds some" for line in lines if line["level"] == name):
            lines.append({"says": "No setting tried holds", "level": name, "ops": ", ".join(left),
                          "count": len(left), "tried": ", ".join(settings)})
    return lines


def changes(a: dict[str, Any], b: dict[str, Any]) -> list[tuple[str, str, str]]:
    """(row and level, older cell, newer cell) for every cell whose state
    differs between two platforms' grids, neither in error."""
    out = []
    for key in sorted(set(a.get("rows", {})) & set(b.get("rows", {}))):
        for level in RECORDED:
            x, y = a["rows"][key].get(level, {}), b["rows"][key].get(level, {})
            # A level whose process failed is an error of its own (its
            # claims say so), not a change between the installs.
            if x.get("state") != y.get("state") and Ruling.ERROR not in (x.get("state"), y.get("state")):
                out.append((f"{key}: {LEVELS[level][0]}", f"{x.get('state')}: {x.get('why')}",
                            f"{y.get('state')}: {y.get('why')}"))
    return out
