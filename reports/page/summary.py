"""The terminal summary of `run` and `test`, a format of the Report
(reports/pipeline.py): what was tested and judged, the model against
PyTorch, the documented lists, the installs and what changed between them,
then the verdict counts per platform (a machine and its torch), the
not-evaluated reasons grouped one line each with their count, and the
report's path last. What fails the run goes to standard error (alarms)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING

from .. import baseline
from ..evidence import torch_of
from ..known import one_line
from ..ruling import VERDICTS, Ruling
from ..verdicts import Verdict, refuted_guarantees
from ..changes import grouped
from ..observe import line
from ..reasons import reason_group

if TYPE_CHECKING:
    from ..pipeline import Report

MAX_SHOWN = 20  # unexplained disagreements named

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
    cov = report.coverage
    out = [f"tests: {cov['expected']} expected ({cov['source']}), {cov['got']} left a result"
               + (f"; none from {cov['missing_count']}, e.g. {cov['missing'][0]}" if cov["missing"] else "")]
    counts = Counter(v.verdict for v in report.verdicts)
    out.append("claims: " + ", ".join(f"{n} {v}" for v, n in sorted(counts.items())))
    decided = Counter(v.decided_by for v in report.verdicts if v.decided_by)
    out.append("decided by: " + (", ".join(f"{s} {n}" for s, n in sorted(decided.items())) or "none"))
    cf = report.conformance
    if cf["cases"]:
        versions = cf["onednn_versions"]
        out.append(f"model versus PyTorch: {cf['cases']} cases, {len(cf['disagreements'])} disagreement(s), "
                   f"{cf['unexplained']} not explained; oneDNN: model {', '.join(versions['model']) or '-'}, "
                   f"PyTorch {', '.join(versions['pytorch']) or '-'}"
                   + "".join(f"; {aspect} not compared on {len(n['tests'])} case(s): PyTorch's side named none"
                             for aspect, n in cf.get("not_compared", {}).items()))
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
    out += known_lines(report) + since_lines(report)
    torches = {p: torch_of(env) for p, env in report.evidence.platform_env.items()}
    return out + verdict_lines(report.verdicts, torches, page)


def known_lines(report: Report) -> list[str]:
    """The verdicts held to known findings: how many were as known, by
    which file, and each known refutation with its reason and the entry
    that decided it (FILE:LINE); the unexpected go to alarms."""
    held = [h for h in report.held if h.status == "known"]
    if not report.held:
        return []
    by_file = Counter(h.finding.file for h in held if h.finding)
    out = [f"known findings: {len(held)} verdict(s) as known"
           + (f" ({', '.join(f'{n} by {file}' for file, n in by_file.items())})" if by_file else "")
           + f", {len(report.unexpected)} unexpected, "
           f"{sum(h.status == 'not seen' for h in report.held)} applicable entry(ies) not evaluated here"]
    for h in held:
        if h.got == Ruling.REFUTED or h.overrides:
            out.append(f"  {h.got}, known: {h.claim} on {h.platform} (since {h.finding.first_seen}"
                       + (f", {h.finding.upstream}" if h.finding.upstream else "") + f") by {h.finding.where}"
                       + (f", in place of {', '.join(h.overrides)}" if h.overrides else ""))
    return out


def since_lines(report: Report) -> list[str]:
    """What moved since the baseline and the platforms missing: a count,
    then (without --fail-on-change, which sends them to alarms) one line each."""
    since = report.since
    if report.baseline is None and not since["missing"]:
        return []
    out = []
    if report.baseline is not None:
        new = len(since["changed"]) - len(baseline.moves(since))
        out.append(f"since the baseline {report.baseline.generated or report.baseline.path}: "
                   f"{len(baseline.moves(since))} verdict(s) moved on a platform"
                   + (f", {new} new claim(s)" if new else ""))
    if since["missing"]:
        out.append(f"missing platforms: {len(since['missing'])}")
    return out + ([] if report.fail_on_change else [f"  {line}" for line in baseline.lines(since)])


def disagreement_line(d: dict) -> str:
    """One line for a disagreement of the model with PyTorch that has no known reason."""
    return (f"UNEXPLAINED DISAGREEMENT in {d['aspect']}: {d['test']}: model {d['model'].get('implementation')}"
            f" {d['model'].get('digest')}, PyTorch {d['pytorch'].get('implementation')} {d['pytorch'].get('digest')}")


def alarms(report: Report) -> list[str]:
    """The lines for standard error: the evidence's warnings, and what fails
    the run (an unexplained disagreement of the model with PyTorch, a verdict
    that is not what is known for its platform, one line each, each followed
    by the entry that would make it known there (reports/new_findings.py);
    with fail_on_change, each verdict moved since the baseline and each
    missing platform; with strict, every refuted guarantee)."""
    out = [f"warning: {problem}" for problem in dict.fromkeys(report.evidence.problems)]
    out += [f"ERROR {v.claim.id}{f' on {where}' if where else ''}: the harness could not decide it: "
            f"{one_line((v.on(where) if where else v).reason, 200)}" for v, where in report.errors()]
    out += [disagreement_line(d) for d in [d for d in report.conformance["disagreements"] if not d["why"]][:MAX_SHOWN]]
    for h in report.unexpected:
        out.extend(h.lines())
        out += h.suggested.splitlines()
    if report.fail_on_change:
        out += baseline.lines(report.since)
    if report.strict:
        out += [f"REFUTED GUARANTEE {v.claim.id} (--strict): {line(v)}" for v in refuted_guarantees(report.verdicts)]
    return out
