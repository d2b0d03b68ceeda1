"""Why claims were not evaluated, grouped by what would evaluate them: one
line each in the terminal summary (reports/page/summary.py) and on the card's
"Not measured here" (reports/card.py), there in the singular."""

from __future__ import annotations

import re

# Reasons of not evaluated, grouped by what would evaluate the claims:
# (pattern, line). The first that matches names the group; a reason no
# pattern matches is its own group, by its first clause.
_GROUPS = (
    (r"^needs (cudnn|cublas|cuda_native) evidence", "need a CUDA device (the GPU library itself decides them; the "
                                                      "harness predicts their verdicts meanwhile)"),
    (r"cudaGetDeviceCount|CUDA device|no GPU|needs the same problem on the CPU and a GPU", "need a CUDA device"),
    (r"^out of scope", "are out of scope"),
    (r"^needs (\w+) evidence; the model predicts", "have only the harness's prediction (no evidence of the system they are about ran here)"),
    (r"^needs (\w+) evidence", "need evidence of another system"),
    (r"ran none of the tests that decide it", "ran none of the tests that decide them"),
    (r"no fast bf16 kernel", "need a CPU with fast bf16 kernels (avx512_bf16 or AMX)"),
    (r"has no AMX-FP16", "need a CPU with AMX-FP16 (TF32 kernels)"),
    (r"does not have|lacks|has no attribute|no such flag|has no torch\.|is not installed beside",
     "name a flag, API or package this torch lacks"),
    (r"two torch installs|merge their runs|DIR1 DIR2|two architectures", "need a second platform's evidence merged in"),
)


# A group's line, as one setting's reason on the card says it.
_ONE = {"are out of scope": "out of scope",
        "name a flag, API or package this torch lacks": "this torch lacks the flag, API or package it names",
        "ran none of the tests that decide them": "this run ran none of the tests that decide it"}


def reason_one(reason: str) -> str:
    """What one setting not measured for `reason` is waiting for, in the
    singular: "needs a CUDA device", "this torch lacks the flag, API or
    package it names"."""
    group = reason_group(reason)
    if group.startswith("need "):
        return "needs " + group.removeprefix("need ")
    if group.startswith("have only "):
        return "has only " + group.removeprefix("have only ")
    return _ONE.get(group, group)


def reason_group(reason: str) -> str:
    for pattern, line in _GROUPS:
        if re.search(pattern, reason):
            return line
    first = re.split(r"[;:(]", reason, maxsplit=1)[0].strip()
    return f"not evaluated: {first[:100]}" if first else "not evaluated, no reason given"


def needs(reason: str) -> str:
    """What one claim not evaluated for `reason` needs, as its line leads
    with it ("needs a CUDA device"): its group's words, where the group is a
    need the reason does not state first itself; "" otherwise."""
    group = reason_group(reason)
    if not group.startswith("need ") or reason.startswith("needs "):
        return ""
    return "needs " + group.removeprefix("need ")
