"""The terminal summary of `run` and `test`: the verdict counts per platform
(a machine and its torch), the not-evaluated reasons grouped one line each
with their count, and the report's path last."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

from .verdicts import VERDICTS, Verdict

# Reasons of "not evaluated", grouped by what would evaluate the claims:
# (pattern, line). The first that matches names the group; a reason no
# pattern matches is its own group, by its first clause.
_GROUPS = (
    (r"^needs (cudnn|cublas|cuda_native) evidence", "need a CUDA device for the GPU library's evidence (the model "
                                                      "predicts their verdicts meanwhile)"),
    (r"cudaGetDeviceCount|CUDA device|no GPU|needs the same problem on the CPU and a GPU", "need a CUDA device"),
    (r"^out of scope", "are out of scope"),
    (r"^needs (\w+) evidence; the model predicts", "have only the model's prediction (no evidence of the system they are about ran here)"),
    (r"^needs (\w+) evidence", "need evidence of another system"),
    (r"no case of this run's matrix", "have no case in this run's matrix"),
    (r"does not have|lacks|has no attribute|no such flag", "name a flag or API this torch lacks"),
    (r"two torch installs|merge their runs|DIR1 DIR2|two architectures", "need a second platform's evidence merged in"),
)


def reason_group(reason: str) -> str:
    for pattern, line in _GROUPS:
        if re.search(pattern, reason):
            return line
    first = re.split(r"[;:(]", reason, maxsplit=1)[0].strip()
    return f"not evaluated: {first[:100]}" if first else "not evaluated, no reason given"


def _own_reason(v: Verdict) -> str:
    """A platform's own reason (the overall one of several platforms lists
    them in front)."""
    return next((pv.reason for pv in v.platforms.values() if pv.verdict == "not evaluated"), v.reason)


def lines(verdicts: list[Verdict], platforms: dict[str, str], page: Path) -> list[str]:
    """`platforms`: platform name -> its torch version ("" when none)."""
    out = []
    for name in platforms or {"": ""}:
        counts = Counter(v.on(name).verdict for v in verdicts)
        label = f"torch {platforms[name]} ({name})" if platforms.get(name) else (name or "all evidence")
        out.append(f"{label}: " + ", ".join(f"{counts[k]} {k}" for k in VERDICTS if counts[k]))
    groups = Counter(reason_group(_own_reason(v)) for v in verdicts if v.verdict == "not evaluated")
    for group, n in sorted(groups.items(), key=lambda kv: (-kv[1], kv[0])):
        out.append(f"  {n} claim(s) {group}")
    out.append(f"report: {page}")
    return out
