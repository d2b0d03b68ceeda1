"""How the probes read what a child interpreter printed, kept apart from
torch so that it is tested on recorded and constructed outputs without a
device (probes/tests/test_readings.py)."""

from __future__ import annotations

import json
import re

from common import first_line, last_line

# What the cuBLAS probe's child (torch_backends._CUBLAS_RUN) prints, one JSON
# line: {"outcome": "raised" | "warned" | "ran", "names_variable": bool,
# "message": str, "bitwise_equal": bool | None}. names_variable is read on
# the whole message: PyTorch's alert names CUBLAS_WORKSPACE_CONFIG after its
# 350th character, past any excerpt kept for the record.
VARIABLE = "CUBLAS_WORKSPACE_CONFIG"


def child_line(outcome: str, message: str, bitwise_equal: bool | None) -> str:
    """The child's line, from what it saw."""
    return json.dumps({"outcome": outcome, "names_variable": VARIABLE in message,
                       "message": first_line(message),
                       "bitwise_equal": bitwise_equal})


def read_child(stdout: str) -> dict:
    """The child's last line, parsed; a line that is not the child's JSON is
    a ValueError that names it (the harness's error, never a verdict)."""
    lines = stdout.strip().splitlines()
    if not lines:
        raise ValueError("the cuBLAS child printed nothing")
    try:
        seen = json.loads(lines[-1])
    except json.JSONDecodeError as e:
        raise ValueError(f"the cuBLAS child printed {last_line(stdout)!r}, not its JSON line: {e}") from e
    if not isinstance(seen, dict) or seen.get("outcome") not in ("raised", "warned", "ran"):
        raise ValueError(f"the cuBLAS child printed {last_line(stdout)!r}: no outcome")
    return seen


def describe_child(seen: dict) -> str:
    """One phrase: "raised: Deterministic behavior was…", "ran; 10 runs bitwise equal"."""
    head = seen["outcome"] + (": " + seen["message"] if seen["outcome"] != "ran" and seen.get("message") else "")
    if seen["outcome"] == "raised":
        return head
    return head + ("; 10 runs bitwise equal" if seen.get("bitwise_equal") else "; runs differ")


def cublas_config_holds(seen: dict[str, dict]) -> bool:
    """The documented rule, from the three runs ("unset", "unset, warn_only",
    ":4096:8"): without the variable PyTorch raises an error naming it, with
    warn_only it warns naming it and runs, and with :4096:8 it runs and ten
    runs are bitwise equal."""
    unset, warn_only, set_ = seen["unset"], seen["unset, warn_only"], seen[":4096:8"]
    return (unset["outcome"] == "raised" and unset["names_variable"]
            and warn_only["outcome"] == "warned" and warn_only["names_variable"]
            and set_["outcome"] == "ran" and set_["bitwise_equal"] is True)


# oneMKL's verbose mode (torch.backends.mkl.verbose) prints a line per call:
#   MKL_VERBOSE oneMKL 2024.0 Update 2 Product build ... (the banner)
#   MKL_VERBOSE SGEMM(N,N,64,64,64,0x7ffe...,64) 16.09ms CNR:OFF Dyn:1 ...
MKL_MARK = "MKL_VERBOSE "


def mkl_routines(text: str) -> list[str]:
    """The oneMKL routines a verbose capture shows called (SGEMM, ...), sorted
    and unique; the banner and any other line are passed over."""
    found = set()
    for line in text.splitlines():
        if not line.startswith(MKL_MARK):
            continue
        name = line[len(MKL_MARK):].split("(", 1)[0]
        if "(" in line and name.isalnum() and name.isupper():
            found.add(name)
    return sorted(found)


# The banner names the code branch oneMKL dispatched to on this CPU: its
# AVX-512 branch on Intel's CPUs ("Intel(R) Advanced Vector Extensions 512
# (Intel(R) AVX-512) ..."), its generic one elsewhere ("Intel(R) Architecture
# processors"); each call's line names its CNR mode (CNR:OFF, CNR:AUTO,STRICT).
_MKL_BRANCHES = (("Advanced Matrix Extensions", "avx512_amx"), ("AVX-512", "avx512"), ("AVX512", "avx512"),
                 ("AVX2", "avx2"), ("Advanced Vector Extensions 2", "avx2"), ("AVX", "avx"),
                 ("SSE4.2", "sse4_2"), ("Intel(R) Architecture processors", "generic"))


def mkl_report(text: str) -> dict[str, str]:
    """What oneMKL says of itself in a verbose capture: "banner" (its first
    line, less the mark), "branch" (the code branch it names: avx512_amx,
    avx512, avx2, avx, sse4_2 or generic; "" where the banner names none
    known) and "cnr" (the CNR mode of its calls, lower case: "off",
    "auto,strict"; "" without a call, or where calls disagree). {} without
    a banner."""
    lines = [line[len(MKL_MARK):].strip() for line in text.splitlines() if line.startswith(MKL_MARK)]
    banner = next((line for line in lines if "(" not in line.split(" ", 1)[0]
                   and not line.split(" ", 1)[0].isupper()), "")
    if not banner:
        return {}
    where = banner.split(" architecture ", 1)[-1]
    branch = next((name for word, name in _MKL_BRANCHES if word in where), "")
    modes = {m.group(1).lower() for line in lines for m in [re.search(r"\bCNR:(\S+)", line)] if m}
    return {"banner": banner, "branch": branch, "cnr": modes.pop() if len(modes) == 1 else ""}


def thread_lever(lever: str, names: list[str], base: dict, under: dict) -> dict:
    """What a thread lever did (invariance.thread_levers), read from two
    processes' invariance.threads_child() output, or either's {"error": ...}:
    `base` without the lever, `under` with it. The lever is judged only on
    the cells ("op | variant") whose bits moved with the thread count in the
    baseline, its positive control; a process whose own thread control did
    not vary is not trusted. {"lever", "setting", "level": "threads", and
    "fixes" (the operations every cell of which moved in the baseline and
    holds under the lever), "still_differ", "cost" ({"ratio": {"cpu": mm's
    median time under the lever over the baseline's}, "reps", "paired":
    False}) and "blas" (what oneMKL reported under the lever), or
    "not_evaluated" / "error" with the reason}."""
    out: dict = {"lever": lever, "setting": lever, "level": "threads"}
    failed = base.get("error") or under.get("error")
    if failed:
        return out | {"error": f"a process of the lever's comparison failed: {failed}"}
    if not under.get("blas"):
        return out | {"not_evaluated": "oneMKL is not the BLAS of this torch: the lever does not reach its GEMM"}
    if not (base.get("control_varied") and under.get("control_varied")):
        return out | {"not_evaluated": "the thread count did not change the control's sum (a sum in three chunks "
                                       "per thread) in one of the processes: the comparison is not trusted"}
    moved = {cell for cell, c in base["cells"].items() if c.get("same") is False}
    if not moved:
        return out | {"not_evaluated": "no operation moved with the thread count in the process without the "
                                       "lever: nothing for it to hold"}
    still = sorted({cell.split(" | ")[0] for cell in moved if under["cells"].get(cell, {}).get("same") is not True})
    fixes = sorted({cell.split(" | ")[0] for cell in moved} - set(still))
    ratio = under["mm_ms"] / base["mm_ms"] if base.get("mm_ms") else None
    return out | {"fixes": fixes, "still_differ": still, "blas": under["blas"],
                  "cost": {"ratio": {"cpu": ratio} if ratio else {}, "reps": base.get("reps"), "paired": False}}


def child_level(level: str, setting: str, base: dict, child: dict, names: list[str]) -> dict:
    """One child-process level of the invariance grid (invariance.py), read
    from what two children printed (invariance.digests(): "refused", the
    operations PyTorch refused, name -> its message; "readings_refused",
    the readings a level's control rests on that PyTorch refused, level ->
    its message; "controls"): the base child, a fresh process with the
    defaults, and the child run under `setting`, or either one's
    {"error": ...} when the process failed (the harness's error). For each of
    `names`:

    - {"error": ...}: the child failed;
    - {"refused": PyTorch's message, "setting": the setting}: PyTorch
      refused the operation there (an observation);
    - None: both ran it, their results are to be compared.

    "refused" sums up the level's refusals ({} when none): the setting, the
    operations refused with their messages, the reading refused, and whether
    PyTorch refused every operation ("whole"). "varied": the level's positive
    control varied, which it cannot where PyTorch refused the whole level or
    the reading the control rests on."""
    cells: dict[str, dict | None] = {}
    refused: dict[str, str] = {}
    for name in names:
        if "error" in child:
            cells[name] = {"error": child["error"]}
        elif name in base.get("refused", {}):
            cells[name] = {"refused": base["refused"][name], "setting": "a fresh process with the defaults"}
        elif name in child.get("refused", {}):
            refused[name] = child["refused"][name]
            cells[name] = {"refused": refused[name], "setting": setting}
        else:
            cells[name] = None
    reading = child.get("readings_refused", {}).get(level, "")
    summary = {}
    if refused or reading:
        summary = {"setting": setting, "ops": refused, "reading": reading,
                   "whole": bool(names) and len(refused) == len(names)}
    varied = ("error" not in child and "error" not in base and not summary.get("whole") and not reading
              and child["controls"][level] != base["controls"][level])
    return {"cells": cells, "refused": summary, "varied": varied}
