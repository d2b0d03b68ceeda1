"""The census over PyTorch's own OpInfo table, per platform, held against
use_deterministic_algorithms's own list (this torch's docstring, as
probes/documented.py parses it).

The evidence is the observed record of TorchPython.OpInfoCensus
(probes/census.py): per OpInfo, how many float32 CPU samples ran, raised
PyTorch's alert under use_deterministic_algorithms(True), warned under
warn_only, and did not repeat their bits (run to run, across 1 and 2 threads,
backward). Against the entries that apply to the CPU (those naming it, or no
device), the findings are:

- raises but not listed: an operation that raised the alert, named by no
  entry;
- listed but does not raise: an entry of the throwing list whose operation
  OpInfo covers, and none of whose samples raised (its conditions, shown,
  may not hold for OpInfo's samples);
- varies but not listed: an operation whose bits moved, named by no entry
  (the operations that return uninitialized memory apart: they vary by
  nature, and fill_uninitialized_memory is checked on them instead), on
  OpInfo's samples or on its inputs tiled past ATen's parallel grain under
  the mode ("large": where the samples, a few dozen elements each, never
  reach the sizes at which ATen splits work between threads).

Each finding has a one-line repro: every sample of that OpInfo.
"""

from __future__ import annotations

import re
import shlex
from typing import Any

from .evidence import Evidence, rerun, torch_of
from .ruling import Ruling

TEST = "TorchPython.OpInfoCensus"
PROBE = "probes/census.py"
UNINITIALIZED = ("empty", "empty_like", "new_empty", "empty_strided", "empty_permuted", "new_empty_strided")
FINDINGS = {"raises_not_listed": "raises but is not listed", "listed_not_raising": "listed but does not raise",
            "varies_not_listed": "varies but is not listed"}


def base_name(name: str) -> str:
    """The name an OpInfo and a documented entry share: the last dotted
    part, without a trailing underscore, modules in snake case
    (torch.nn.MaxUnpool2d and nn.functional.max_unpool2d are both
    max_unpool2d)."""
    last = name.split(".")[-1]
    if last[:1].isupper():
        last = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1_\2", last))
    return last if last.startswith("__") else last.lower().rstrip("_")


def _observed(evidence: Evidence) -> tuple[dict[str, Any] | None, str]:
    for record in reversed(evidence.cases.get(TEST, [])):
        if record.get("skip_reason"):
            return None, str(record["skip_reason"])
        for check in record.get("checks", []):
            if isinstance(check.get("observed"), dict) and "ops" in check["observed"]:
                return check["observed"], ""
    return None, ""


def _varies(r: dict[str, Any], trusted: bool) -> str:
    """What moved in one operation's record; past the grain only where the
    census's planted control there was found (`trusted`)."""
    parts = [f"{r[k]} of {r['ran']} samples {what}" for k, what in
             (("run_differs", "differ run to run"), ("threads_differ", "differ between 1 and 2 threads"),
              ("backward_differs", "give other gradients run to run")) if r.get(k)]
    large = (r.get("large") or {}) if trusted else {}
    parts += [f"past the grain, under the mode, {large[k]} of {large['checked']} of its {large.get('from', 'inputs')} "
              f"tiled to {large['elements']:,} elements {what}" + (f" (first at shape {tuple(large['shape'])})"
                                                                   if k == "threads_differ" and large.get("shape")
                                                                   else "")
              for k, what in (("run_differs", "differ run to run"), ("threads_differ", "differ between 1 and 2 "
                                                                                       "threads")) if large.get(k)]
    return "; ".join(parts)


def _past_grain(seen: dict[str, Any]) -> dict[str, Any]:
    """What the census tried past the grain: the elements it tiled to (and
    the grain, with where it was read), the operations checked there, those
    whose bits moved, those passed over (tiled shapes that do not fit,
    outputs or costs that grow faster than the input) and the seconds;
    "missed" where the planted control was not told apart from the
    operation of the same cost that holds (then nothing past the grain
    is a finding)."""
    ops = seen.get("ops", {})
    large = {name: r["large"] for name, r in ops.items() if isinstance(r.get("large"), dict)}
    if not large:
        return {}
    control = (seen.get("large") or {}).get("control") or {}
    return {**(seen.get("large") or {}), "missed": not control.get("trusted"), "checked": sum(1 for r in large.values() if r.get("checked")),
            "of": len(large), "threads_differ": sorted(n for n, r in large.items() if r.get("threads_differ")),
            "run_differs": sorted(n for n, r in large.items() if r.get("run_differs")),
            "not_tiled": sum(1 for r in large.values() if not r.get("checked")),
            "seconds": round(sum(r.get("seconds", 0) for r in large.values()), 1)}


def judge(evidence: Evidence) -> dict[str, dict[str, Any]]:
    """platform -> its torch, the counts, the findings of each kind, the
    operations that raised, the uninitialized ones, and what failed."""
    out: dict[str, dict[str, Any]] = {}
    for platform, ev in sorted(evidence.platforms.items()):
        seen, skipped = _observed(ev)
        env = evidence.platform_env.get(platform, {})
        if seen is None:
            if skipped:
                out[platform] = {"torch": torch_of(env), "verdict": Ruling.NOT_EVALUATED, "why": skipped}
            continue
        torch = env.get("torch") if isinstance(env.get("torch"), dict) else {}
        python = str(torch.get("python") or "python3")
        repro = lambda op: f"{python} {PROBE} op {shlex.quote(op)}"  # noqa: E731
        cpu = [e for e in seen.get("listed", []) if not e.get("devices") or "cpu" in e["devices"]]
        named = {base_name(op) for e in cpu for op in e.get("ops", [])}
        ops = seen.get("ops", {})
        bases = {name: {base_name(r.get("opinfo", name))} | {base_name(a) for a in r.get("aliases", [])}
                 for name, r in ops.items()}
        findings: dict[str, list[dict[str, str]]] = {k: [] for k in FINDINGS}
        past_grain = _past_grain(seen)
        trusted = not past_grain.get("missed", True)
        for name, r in sorted(ops.items()):
            if "error" in r or r.get("no_float32"):
                continue
            if r.get("raised") and not bases[name] & named:
                findings["raises_not_listed"].append({"op": name, "detail": f"{r['raised']} of {r['ran']} samples "
                                                      f"raised: {r.get('alert', '')}", "repro": repro(name)})
            moved = _varies(r, trusted)
            if moved and not bases[name] & set(UNINITIALIZED) and not bases[name] & named:
                findings["varies_not_listed"].append({
                    "op": name, "detail": moved, "repro": repro(name),
                    "by_chance": not r.get("threads_differ") and not (trusted and (r.get("large") or {}).get(
                        "threads_differ"))})
        covered = 0
        for e in cpu:
            if e.get("list") != "throws":
                continue
            mine = [name for name in ops if bases[name] & {base_name(op) for op in e.get("ops", [])}
                    and ops[name].get("ran")]
            if not mine:
                continue
            covered += 1
            if not any(ops[name].get("raised") for name in mine):
                cond = e.get("conditions") or {}
                findings["listed_not_raising"].append({
                    "op": ", ".join(mine), "entry": e.get("id", ""),
                    "detail": f"none of {sum(ops[n]['ran'] for n in mine)} samples raised under "
                              f"use_deterministic_algorithms(True)" + (
                                  f"; the entry's conditions ({', '.join(f'{k}={v}' for k, v in cond.items())}) may "
                                  "not hold for OpInfo's samples" if cond else ""),
                    "repro": repro(mine[0])})
        out[platform] = {
            "torch": torch_of(env), "verdict": Ruling.SUPPORTED if not any(findings.values()) else Ruling.REFUTED,
            "opinfos": seen.get("opinfos"), "samples_per_op": seen.get("samples_per_op"),
            "seconds": seen.get("seconds"), "ran": sum(r.get("ran", 0) for r in ops.values()),
            "operations_run": sum(1 for r in ops.values() if r.get("ran")),
            "no_float32": sum(1 for r in ops.values() if r.get("no_float32")),
            "errors": {name: r["error"] for name, r in ops.items() if "error" in r},
            "raised": sorted(name for name, r in ops.items() if r.get("raised")),
            "warned": sorted(name for name, r in ops.items() if r.get("warned")),
            "uninitialized": {name: r.get("filled") for name, r in ops.items() if "filled" in r},
            "listed_entries_covered": covered, "control": seen.get("control", {}), "past_grain": past_grain,
            "findings": findings, "evidence": f"{TEST} ({rerun(env, TEST)})"}
    return out


# Why a finding seen on one side only may be run-to-run noise: an operation
# that varies run to run shows it in a given run by chance.
BY_CHANCE = ("it varied run to run, and whether such variation shows in one run is chance: two runs of one "
             "install can differ so")


def changes(a: dict[str, Any], b: dict[str, Any]) -> list[tuple[str, str, str, str]]:
    """(finding kind and operation, older side, newer side, why it is noise
    or "") for every finding that one torch has and the other does not;
    none when either census has no findings (it did not run). A finding of
    run-to-run variation alone (no difference between threads of a
    repeatable sample) is noise: it is not shown that the other side has
    none, only that it did not show."""
    if "findings" not in a or "findings" not in b:
        return []
    out = []
    for kind, words in FINDINGS.items():
        fa = {f["op"]: f for f in a["findings"].get(kind, [])}
        fb = {f["op"]: f for f in b["findings"].get(kind, [])}
        for op in sorted(set(fa) ^ set(fb)):
            shown = lambda f: f"{words}: {f['detail']}" if f else "not a finding"  # noqa: E731
            found = fa.get(op) or fb.get(op)
            noise = BY_CHANCE if kind == "varies_not_listed" and found.get("by_chance") else ""
            out.append((f"{op} ({words})", shown(fa.get(op)), shown(fb.get(op)), noise))
    return out
