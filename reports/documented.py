"""use_deterministic_algorithms's own list, judged entry by entry on each
platform (each torch install has its own list: its docstring's).

The evidence is the observed record of TorchPython.DocumentedDeterminismList
(probes/documented.py): the parsed entries and, per device, what
PyTorch did. Per entry and device:

- throws: supported when mode=True raised a RuntimeError naming the
  operation, warn_only=True warned and gave a result, and mode=False gave a
  result; refuted when mode=True ran without raising; inconclusive when the
  error does not name the operation (it may be another failure);
- deterministic: supported when the digests of repeated runs on one and two
  threads under mode=True are all equal, refuted when they differ or the
  alert was raised. The control (mode=False, inputs whose accumulation order
  matters) is reported beside: "caught" when it varied, else "deterministic
  here even without the mode", a finding, never a pass;
- a device the machine lacks: not evaluated, with that reason;
- an operation PyTorch cannot run on the device at all (it has no kernel
  for that backend or dtype: "Could not run 'aten::resize_' with arguments
  from the 'QuantizedCUDA' backend", recorded by the probe as cannot_run):
  not evaluated there, with PyTorch's reason, whatever the entry claims.

An entry that names several forms (modes, reductions, "floating point or
complex" dtypes) is judged form by form, each with its verdict and reason
(the row's "forms"); a device's verdict is the gravest of its forms', an
entry's the gravest of its devices' (error, refuted, supported,
inconclusive, not evaluated: ruling.gravest). A record from before the
probe checked each form (one observation for the whole entry) is split by
what that probe ran (_older): every mode of a list in one call, in the
docstring's order, stopping at the first error; of any other list of
values the first (reduce='sum'), of a class of dtypes a float32 tensor.
There, under each mode the mode whose kernel the error names
(upsample_linear1d for 'linear') raised it, the modes before it ran
without an error and those after it were not run (inconclusive, with what
warn_only=True showed: a warning names the kernel of its mode); the forms
that probe never ran are not evaluated. An entry the parser did not
understand is not evaluated, with "not understood" and its text. Every
verdict is untrusted (inconclusive) when the check's own positive control,
a sum in a fresh random order, did not vary. Beyond the list, an operation
that varied without the mode is a finding: an undocumented nondeterminism.
"""

from __future__ import annotations

import itertools
import re
import shlex
from typing import Any, NamedTuple

from .evidence import Evidence, torch_of
from .ruling import Ruling, gravest

TEST = "TorchPython.DocumentedDeterminismList"
PROBE = "probes/documented.py"


def _observed(evidence: Evidence) -> tuple[dict[str, Any] | None, str]:
    """The probe's observations, and where they were recorded."""
    for record in reversed(evidence.cases.get(TEST, [])):
        for check in record.get("checks", []):
            if isinstance(check.get("observed"), dict) and "entries" in check["observed"]:
                return check["observed"], str(record.get("where", ""))
    return None, ""


class Judged(NamedTuple):
    """One operation's (or one device's) ruling on an entry, with why, and
    what the entry's positive control showed ("" for a throwing entry)."""
    ruling: Ruling
    reason: str
    control: str = ""


def _warned(warn: dict[str, Any]) -> str:
    """What warn_only=True did, in words."""
    return (f"what it did is not known ({warn['not_run']})" if warn.get("not_run")
            else f"it raised '{warn['error'][:120]}'" if warn.get("error")
            else f"it warned: {warn['warnings'][0][:120]}" if warn.get("warnings") else "it gave no warning")


def _throws(op: str, seen: dict[str, Any]) -> Judged:
    """A throwing entry has no control."""
    on, warn, off = seen.get("mode_true", {}), seen.get("warn_only", {}), seen.get("mode_false", {})
    if on.get("not_run"):
        return Judged(Ruling.INCONCLUSIVE, f"{op} was not run under use_deterministic_algorithms(True) "
                                           f"({on['not_run']}); with warn_only=True {_warned(warn)}")
    if not on.get("error"):
        return Judged(Ruling.REFUTED, f"{op} ran without an error under use_deterministic_algorithms(True)")
    if not on.get("names_op"):
        return Judged(Ruling.INCONCLUSIVE, f"{op} raised a RuntimeError that does not name it: {on['error'][:200]}")
    parts = [f"{op} raised RuntimeError '{on['error'][:120]}' under use_deterministic_algorithms(True)"]
    if warn.get("not_run"):
        return Judged(Ruling.INCONCLUSIVE, f"{parts[0]}; with warn_only=True {_warned(warn)}")
    if warn.get("error") or not warn.get("warnings"):
        return Judged(Ruling.REFUTED, parts[0] + (f"; with warn_only=True it raised '{warn['error'][:120]}'"
                                                  if warn.get("error") else "; with warn_only=True it gave no warning"))
    parts.append("with warn_only=True it warned and returned a result")
    if off.get("error"):
        return Judged(Ruling.INCONCLUSIVE, "; ".join(parts) + f"; with mode=False it raised '{off['error'][:120]}'")
    parts.append("with mode=False it returned a result")
    return Judged(Ruling.SUPPORTED, "; ".join(parts))


def _deterministic(op: str, seen: dict[str, Any]) -> Judged:
    on, off = seen.get("mode_true", {}), seen.get("control", {})
    runs = on.get("runs", "?")
    if on.get("error"):
        return Judged(Ruling.REFUTED, f"{op} raised under use_deterministic_algorithms(True): {on['error'][:200]}")
    control = ("caught: without the mode it gave " f"{off.get('distinct')} different results" if off.get("distinct", 1) > 1
               else "deterministic here even without the mode" if not off.get("error")
               else f"the control raised: {off['error'][:120]}")
    if on.get("distinct", 0) == 1:
        return Judged(Ruling.SUPPORTED, f"{op} gave one result over {runs} runs on each of 1 and 2 threads under "
                                        "use_deterministic_algorithms(True)", control)
    return Judged(Ruling.REFUTED, f"{op} gave {on.get('distinct')} different results over {runs} runs on 1 and 2 "
                                  "threads under use_deterministic_algorithms(True)", control)


# PyTorch's words for an operation it has no kernel for on a backend, read
# in records from before the probe recorded cannot_run.
NO_KERNEL = re.compile(r"Could not run '[^']*' with arguments from the '[^']*' backend")


def cannot_run(seen: dict[str, Any]) -> str:
    """PyTorch's reason where it cannot run one form of an operation on a
    device at all: the probe's cannot_run of any of its runs, or, in a
    record without it, an error in PyTorch's words for a missing kernel.
    "" where it ran (the determinism alert is no such reason)."""
    for run in (seen.get(key) or {} for key in ("mode_false", "control", "mode_true", "warn_only")):
        if run.get("cannot_run"):
            return str(run["cannot_run"])
        found = NO_KERNEL.search(str(run.get("error") or "")) if "cannot_run" not in run else None
        if found:
            return found[0]
    return ""


def judge_form(entry_list: str, what: str, device: str, seen: dict[str, Any]) -> Judged:
    """One form of one operation of an entry on one device (`what`: the
    operation and the form, "torch.nn.functional.interpolate with
    mode='linear'")."""
    if seen.get("not_run"):
        return Judged(Ruling.NOT_EVALUATED, f"{what}: {seen['not_run']}")
    why = cannot_run(seen)
    if why:
        return Judged(Ruling.NOT_EVALUATED, f"PyTorch cannot run {what} on {device.upper()}: {why}")
    return (_throws if entry_list == "throws" else _deterministic)(what, seen)


def _label(form: dict[str, Any]) -> str:
    """A form as the probe labels it: "mode='linear'", "dtype=torch.float32"."""
    return ", ".join(f"dtype=torch.{v}" if k == "dtype" else f"{k}={v!r}" for k, v in form.items())


def _names_mode(text: str, mode: str) -> bool:
    """Whether the kernel a message starts with is that mode's
    (upsample_linear1d_backward_out_cuda: 'linear', not 'bilinear')."""
    return bool(re.search(rf"(?<![a-z]){re.escape(mode)}(?![a-z])", (text.split() or [""])[0]))


def _share(run: dict[str, Any], modes: list[str], mode: str) -> dict[str, Any]:
    """One mode's part of a run of all `modes` in one call, in order, which
    stopped at the first error: the error for the mode whose kernel it
    names, no error for the modes before it, not run for those after; the
    warnings that name the mode's kernel."""
    error = str(run.get("error") or "")
    raiser = next((m for m in modes if _names_mode(error, m)), None) if error else None
    if error and raiser is None:
        return dict(run)  # an error no mode's kernel names: every mode's
    if raiser is not None and modes.index(mode) > modes.index(raiser):
        return {"not_run": f"its modes ran in one call, which stopped at the error of mode={raiser!r}"}
    warned = [w for w in run.get("warnings") or [] if _names_mode(w, mode)]
    if not warned and len(run.get("warnings") or []) >= 3:
        return {"not_run": "this record kept only the first 3 warnings of the call that ran its modes"}
    return dict(run, warnings=warned, **({"names_op": True} if mode == raiser else {"error": ""}))


def _older(entry: dict[str, Any], seen: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """label -> one form's observations, from a record of one operation
    made before the probe checked each form (module docstring)."""
    axes = [[(k, x) for x in (v if isinstance(v, list) else ["float32", "complex64"])]
            for k, v in (entry.get("conditions") or {}).items()
            if (isinstance(v, list) and len(v) > 1) or (k == "dtype" and v == "floating")]
    modes = next(([v for _, v in axis] for axis in axes if axis[0][0] == "mode"), [])
    if not axes or (modes and entry.get("list") != "throws"):
        return {"": seen}
    ran = _label({axis[0][0]: axis[0][1] for axis in axes if axis[0][0] != "mode"})
    out = {}
    for combination in itertools.product(*axes):
        form = dict(combination)
        if any(form[axis[0][0]] != axis[0][1] for axis in axes if axis[0][0] != "mode"):
            out[_label(form)] = {"not_run": f"not checked in this record, whose probe (from before each form was "
                                           f"checked on its own) ran {ran} only"}
        elif "mode" in form:
            out[_label(form)] = {key: _share(seen.get(key) or {}, modes, form["mode"])
                                 for key in ("mode_true", "warn_only")} | {"mode_false": seen.get("mode_false") or {}}
        else:
            out[_label(form)] = seen
    return out


def _entry(entry: dict[str, Any], python: str, control_ok: bool) -> dict[str, Any]:
    row = {k: entry.get(k) for k in ("id", "list", "text", "ops", "devices", "backward", "conditions")}
    row["repro"] = f"{python} {PROBE} run {shlex.quote(str(entry.get('id')))}"
    if not entry.get("understood", True):
        return dict(row, verdict=Ruling.NOT_EVALUATED, control="", devices_seen={}, forms=[],
                    reason=f"not understood ({entry.get('leftover')}): {entry.get('text')}")
    result = entry.get("result") or {}
    if result.get("error"):
        return dict(row, verdict=Ruling.ERROR, reason=f"the check did not run: {result['error']}", control="",
                    devices_seen={}, forms=[])
    per: dict[str, Judged] = {}
    forms: list[dict[str, Any]] = []  # every form's verdict, where an entry names several
    for device, seen in (result.get("devices") or {}).items():
        if "not_evaluated" in seen:
            per[device] = Judged(Ruling.NOT_EVALUATED, seen["not_evaluated"])
            continue
        judged: list[tuple[str, Judged]] = []
        for op, obs in seen.items():
            for label, form in (obs["forms"] if "forms" in obs else _older(entry, obs)).items():
                j = _trusted(judge_form(str(entry.get("list")), f"{op} with {label}" if label else op, device, form),
                             control_ok)
                judged.append((label, j))
                if label:
                    forms.append({"device": device.upper(), "op": op, "form": label, "verdict": j.ruling,
                                  "reason": j.reason, "control": j.control})
        several = any(label for label, _ in judged)
        per[device] = Judged(gravest(j.ruling for _, j in judged),
                             "; ".join(f"{label}: {j.ruling}" if several else j.reason for label, j in judged),
                             "; ".join(f"{label}: {j.control}" if several else j.control for label, j in judged
                                       if j.control))
    if not per:
        return dict(row, verdict=Ruling.NOT_EVALUATED, reason="nothing recorded for this entry", control="",
                    devices_seen={}, forms=[])
    device = min(per, key=lambda d: per[d].ruling.gravity)
    verdict, reason, control = per[device]
    shown = "; ".join(f"{d.upper()}: {j.ruling}" + (f" ({j.reason})" if j.ruling == Ruling.NOT_EVALUATED else "")
                      for d, j in sorted(per.items()) if d != device)
    return dict(row, verdict=verdict, reason=f"{device.upper()}: {reason}" + (f". {shown}" if shown else ""),
                control=control, devices_seen={d: j.ruling for d, j in per.items()}, forms=forms)


def _trusted(judged: Judged, control_ok: bool) -> Judged:
    """A decided verdict is untrusted (inconclusive) where the check's own
    control missed."""
    if judged.ruling.decided and not control_ok:
        return judged._replace(ruling=Ruling.INCONCLUSIVE, reason="the check's own control missed, so its digests "
                                                                  f"are not trusted; {judged.reason}")
    return judged


def _settings(settings: dict[str, Any]) -> list[dict[str, str]]:
    """torch.utils.deterministic's settings, where the version has them: its
    docstring says fill_uninitialized_memory fills uninitialized memory with a
    known value under the mode; torch.empty's with it on and off decide."""
    if "absent" in settings:
        return [{"setting": "torch.utils.deterministic", "verdict": Ruling.NOT_EVALUATED, "reason": settings["absent"]}]
    fill = settings.get("fill_uninitialized_memory")
    if not isinstance(fill, dict):
        return []
    on, off = fill.get("empty", {}).get("True", {}), fill.get("empty", {}).get("False", {})
    filled = on.get("float_all_nan") and on.get("int_all_max")
    reason = (f"default {fill.get('default')}; under use_deterministic_algorithms(True) torch.empty gave "
              f"{'all NaN floats and all-maximum integers' if filled else 'memory not filled with a known value'} "
              f"with it on, and {'filled' if off.get('float_all_nan') else 'unfilled'} memory with it off")
    return [{"setting": "torch.utils.deterministic.fill_uninitialized_memory", "doc": fill.get("doc", ""),
             "verdict": Ruling.SUPPORTED if filled else Ruling.REFUTED, "reason": reason}]


def judge(evidence: Evidence) -> dict[str, dict[str, Any]]:
    """platform -> its torch, its entries (each with verdict, reason,
    control, repro), the findings beyond the list, the settings and counts."""
    out: dict[str, dict[str, Any]] = {}
    for platform, ev in sorted(evidence.platforms.items()):
        seen, where = _observed(ev)
        if seen is None:
            continue
        env = evidence.platform_env.get(platform, {})
        torch = env.get("torch") if isinstance(env.get("torch"), dict) else {}
        python = str(torch.get("python") or "python3")
        ctl = seen.get("control") or {}
        control_ok = ctl.get("distinct", 0) > 1
        entries = [_entry(e, python, control_ok) for e in seen.get("entries", [])]
        beyond = []
        for r in seen.get("beyond", []):
            op = str(r.get("id", "")).split(":", 1)[-1]
            obs = ((r.get("devices") or {}).get("cpu") or {}).get(op, {}).get("mode_false", {})
            if r.get("error") or obs.get("error"):
                finding, detail = "error", r.get("error") or obs.get("error")
            elif obs.get("distinct", 1) > 1:
                finding = "nondeterministic (undocumented)" if control_ok else "varied (control missed: not trusted)"
                detail = f"{obs['distinct']} different results over {obs.get('runs')} runs on each of 1 and 2 threads"
            else:
                finding, detail = "deterministic here", f"one result over {obs.get('runs')} runs on each of 1 and 2 threads"
            beyond.append({"op": op, "finding": finding, "detail": detail,
                           "repro": f"{python} {PROBE} run {shlex.quote('beyond:' + op)}"})
        counts: dict[str, int] = {}
        for e in entries:
            counts[e["verdict"]] = counts.get(e["verdict"], 0) + 1
        out[platform] = {"torch": torch_of(env), "evidence": f"{TEST}" + (f" ({where})" if where else ""),
                         "control": {"caught": control_ok, "distinct": ctl.get("distinct"), "runs": ctl.get("runs")},
                         # the checks that failed to run once on the CPU (those of CUDA and MPS entries included)
                         "smoke_failures": seen.get("smoke_failures", {}),
                         "entries": entries, "beyond": beyond, "settings": _settings(seen.get("settings", {})),
                         "counts": counts, "not_understood": sum(1 for e in seen.get("entries", [])
                                                                 if not e.get("understood", True))}
    return out


def changes(a: dict[str, Any], b: dict[str, Any]) -> list[tuple[str, str, str]]:
    """(entry id, older side, newer side) for every entry added, removed or
    judged differently between two platforms' lists, and every operation
    beyond the list found otherwise. A control that was caught on one and not
    on the other is not a change: whether a race shows in a few runs depends
    on the machine's load as much as on the version (both sides still show
    it)."""
    ea = {e["id"]: e for e in a.get("entries", [])}
    eb = {e["id"]: e for e in b.get("entries", [])}
    out = []
    shown = lambda e: (f"{e['verdict']}: {e['text']}" + (f"; control: {e['control']}" if e["control"] else "")
                       if e else "not in this version's list")
    for entry_id in sorted(set(ea) | set(eb)):
        x, y = ea.get(entry_id), eb.get(entry_id)
        if x is None or y is None or x["verdict"] != y["verdict"]:
            out.append((entry_id, shown(x), shown(y)))
    ba = {f["op"]: f for f in a.get("beyond", [])}
    bb = {f["op"]: f for f in b.get("beyond", [])}
    for op in sorted(set(ba) & set(bb)):
        if ba[op]["finding"] != bb[op]["finding"]:
            out.append((f"beyond:{op}", f"{ba[op]['finding']}: {ba[op]['detail']}",
                        f"{bb[op]['finding']}: {bb[op]['detail']}"))
    return out
