"""The terminal summary of `run` and `test`, a format of the Report
(reports/pipeline.py): what was tested and judged, the model against
PyTorch, the documented lists, the installs and what changed between them,
then the verdict counts per platform (a machine and its torch), the
not-evaluated reasons grouped one line each with their count, and the
report's path last. What fails the run goes to standard error (alarms)."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING

from .evidence import torch_of
from .ruling import VERDICTS, Ruling
from .verdicts import Verdict, refuted_guarantees
from .changes import grouped

if TYPE_CHECKING:
    from .pipeline import Report

MAX_SHOWN = 20  # unexplained disagreements named

# Reasons of not evaluated, grouped by what would evaluate the claims:
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
    (r"no fast bf16 kernel", "need a CPU with fast bf16 kernels (avx512_bf16 or AMX)"),
    (r"has no AMX-FP16", "need a CPU with AMX-FP16 (TF32 kernels)"),
    (r"does not have|lacks|has no attribute|no such flag|has no torch\.|is not installed beside",
     "name a flag, API or package this torch lacks"),
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
    return next((pv.reason for pv in v.platforms.values() if pv.verdict == Ruling.NOT_EVALUATED), v.reason)


def verdict_lines(verdicts: list[Verdict], platforms: dict[str, str], page: Path) -> list[str]:
    """`platforms`: platform name -> its torch version ("" when none)."""
    out = []
    for name in platforms or {"": ""}:
        counts = Counter(v.on(name).verdict for v in verdicts)
        label = f"torch {platforms[name]} ({name})" if platforms.get(name) else (name or "all evidence")
        out.append(f"{label}: " + ", ".join(f"{counts[k]} {k}" for k in VERDICTS if counts[k]))
    groups = Counter(reason_group(_own_reason(v)) for v in verdicts if v.verdict == Ruling.NOT_EVALUATED)
    for group, n in sorted(groups.items(), key=lambda kv: (-kv[1], kv[0])):
        out.append(f"  {n} claim(s) {group}")
    out.append(f"report: {page}")
    return out


def lines(report: Report, page: Path) -> list[str]:
    """The summary's lines for standard output, the page's path last."""
    out = [f"expectations: wrote {path}" for path in report.written_expectations]
    cov = report.coverage
    out.append(f"tests: {cov['expected']} expected ({cov['source']}), {cov['got']} left a result"
               + (f"; none from {cov['missing_count']}, e.g. {cov['missing'][0]}" if cov["missing"] else ""))
    counts = Counter(v.verdict for v in report.verdicts)
    out.append("claims: " + ", ".join(f"{n} {v}" for v, n in sorted(counts.items())))
    decided = Counter(v.decided_by for v in report.verdicts if v.decided_by)
    out.append("decided by: " + (", ".join(f"{s} {n}" for s, n in sorted(decided.items())) or "none"))
    cf = report.conformance
    if cf["cases"]:
        versions = cf["onednn_versions"]
        out.append(f"model versus PyTorch: {cf['cases']} cases, {len(cf['disagreements'])} disagreement(s), "
                   f"{cf['unexplained']} not explained; oneDNN: model {', '.join(versions['model']) or '-'}, "
                   f"PyTorch {', '.join(versions['pytorch']) or '-'}")
    for platform, d in report.listed.items():
        found = [b["op"] for b in d["beyond"] if "undocumented" in b["finding"]]
        out.append(f"documented list of torch {d['torch'] or platform}: {len(d['entries'])} entries ("
                   + ", ".join(f"{n} {v}" for v, n in sorted(d["counts"].items())) + f"; {d['not_understood']} not "
                   f"understood); beyond the list: {len(found)} undocumented nondeterminism(s)"
                   + (f" ({', '.join(found)})" if found else ""))
    for i in report.installs:
        out.append(f"torch install {i['version'] or i['torch']}: {i['status']}" + (f" ({i['why']})" if i["why"] else ""))
    if len(report.evidence.platforms) > 1:
        g = grouped(report.between)
        out.append(f"changed between versions: {g['real']} in {len(g['groups'])} cause(s)" +
                   (" (" + "; ".join(f"{x['count']} {x['cause']}" for x in g["groups"][:4]) +
                    ("; ..." if len(g["groups"]) > 4 else "") + ")" if g["groups"] else "") +
                   f", {g['noise']} set aside as run-to-run noise")
    torches = {p: torch_of(env) for p, env in report.evidence.platform_env.items()}
    return out + verdict_lines(report.verdicts, torches, page)


def alarms(report: Report) -> list[str]:
    """The lines for standard error: the evidence's warnings, and what fails
    the run (an unexplained disagreement of the model with PyTorch, a changed
    expectation, a refuted guarantee)."""
    out = [f"warning: {problem}" for problem in dict.fromkeys(report.evidence.problems)]
    for d in [d for d in report.conformance["disagreements"] if not d["why"]][:MAX_SHOWN]:
        out.append(f"UNEXPLAINED DISAGREEMENT in {d['aspect']}: {d['test']}: model {d['model'].get('implementation')}"
                   f" {d['model'].get('digest')}, PyTorch {d['pytorch'].get('implementation')} "
                   f"{d['pytorch'].get('digest')}")
    out += [f"EXPECTATION CHANGED {c.claim} on {c.platform}: expected {c.expected}, got {c.got}"
            for c in report.expectation_changes]
    return out + [f"REFUTED GUARANTEE {v.claim.id}: {v.reason}" for v in refuted_guarantees(report.verdicts)]
