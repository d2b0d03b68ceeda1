"""The report's model, built once: `build` reads what the command line names
(the catalog, the manifest, the evidence of one or many runs, ctest's views,
the installs of a run across versions, a baseline, the known findings),
judges every claim, holds each verdict to what is known for its platform
(reports/known.py) and derives everything the report shows from the
verdicts and the evidence. The HTML page, report.json, the claims' JUnit and
the terminal summary only format the Report it returns (reports/page/render.py,
reports/page/summary.py).

Every problem with the inputs is a SpecError, printed as one line
``FILE:LINE: message`` (several lines for refused evidence records).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from inputs import install_state
from inputs.errors import SpecError, read_regular

from . import baseline as since_baseline
from . import census, documented, invariance, known, new_findings, self_speed
from .card import cards
from .catalog import WORKLOAD_KIND, Claim, load_claims
from .changes import between_versions
from .conformance import summarize as conformance_summary
from .evidence import Evidence, read_evidence, read_junit, read_manifest, read_registered
from .ruling import Ruling
from .verdicts import Verdict, judge_all, refuted_guarantees

# A claim whose verdict is an error on some platform: the harness could not
# decide it (a probe that raised, a test that crashed), as a failed test
# fails `run` (cli/exits.py TOOL).
EXIT_ERROR = 1
# A guarantee refuted with no known finding (any refuted guarantee, --strict).
EXIT_REFUTED_GUARANTEE = 3
# Any other verdict that is not what is known for its platform: a folklore
# verdict that moved, a known finding no longer seen.
EXIT_UNEXPECTED = 4
# A model-versus-PyTorch disagreement without a known reason.
EXIT_UNEXPLAINED_DISAGREEMENT = 5
MAX_SHOWN = 20  # refused records named in the error


class RefusedEvidence(SpecError):
    """Evidence records or files that do not fit the evidence's shape: each
    one line, FILE:LINE: why, then how many there were. Nothing is judged."""

    def __init__(self, refused: list[str]) -> None:
        more = len(refused) - MAX_SHOWN
        last = (f"report: not written: {len(refused)} evidence record(s) or file(s) refused"
                + (f" ({more} more not shown)" if more > 0 else "") + "; fix or remove them")
        Exception.__init__(self, "\n".join(refused[:MAX_SHOWN] + [last]))
        self.path, self.line, self.message = "report", 0, last


@dataclass
class Inputs:
    """What the command line names (see reports/__main__.py)."""
    claims: Path
    manifest: Path
    out: Path
    evidence: list[Path] = field(default_factory=list)
    junit: Path | None = None
    tests: Path | None = None
    partial: bool = False
    baseline: Path | None = None
    # the known findings files, in the order read (known.sources): one Path or a list
    known: list[Path] | Path | None = None
    strict: bool = False  # every refuted guarantee fails, known or not
    installs: list[Path] = field(default_factory=list)
    write_findings: Path | None = None  # where to append the entries the unexpected verdicts suggest
    fail_on_change: bool = False  # a verdict moved since the baseline, or a platform missing, fails the run
    expect_platform: list[str] = field(default_factory=list)  # platforms that should have reported
    expect_platforms: list[Path] = field(default_factory=list)  # files of them, one a line
    self_bench: Path | None = None  # the harness's own speed (./backendcheck bench --self, cli/selfbench.py)
    workloads: list[Path] | None = None  # a team's workload files (None: BACKENDCHECK_CLAIMS; inputs/workloads.py)


@dataclass
class Report:
    """Everything the report shows, computed once."""
    verdicts: list[Verdict]
    manifest: list[dict[str, Any]]
    evidence: Evidence
    # use_deterministic_algorithms's own list, per platform (reports/documented.py)
    listed: dict[str, dict[str, Any]]
    # what differs between torch installs on one machine (reports/changes.py)
    between: list[dict[str, Any]]
    # the model against PyTorch (reports/conformance.py)
    conformance: dict[str, Any]
    # what to set on this stack, per platform (reports/card.py)
    cards: dict[str, dict[str, Any]]
    # invariance level by level, per platform (reports/invariance.py)
    grids: dict[str, dict[str, Any]] = field(default_factory=dict)
    # determinism over PyTorch's OpInfo table, per platform (reports/census.py)
    censuses: dict[str, dict[str, Any]] = field(default_factory=dict)
    coverage: dict[str, Any] = field(default_factory=dict)
    installs: list[dict[str, Any]] = field(default_factory=list)
    baseline: since_baseline.Baseline | None = None
    # what moved since the baseline, and the platforms missing (reports/baseline.py)
    since: dict[str, Any] = field(default_factory=lambda: {"changed": [], "missing": []})
    fail_on_change: bool = False
    # the commit, the CI run and the time of this run (reports/baseline.py)
    run: dict[str, str] = field(default_factory=dict)
    # each claim on each platform held to what is known (reports/known.py)
    held: list[known.Held] = field(default_factory=list)
    strict: bool = False
    # the harness's own speed, its last measurement (read_self_bench), shown with the environment
    self_bench: dict[str, Any] | None = None

    @property
    def unexpected(self) -> list[known.Held]:
        return [h for h in self.held if h.status == "unexpected"]

    @classmethod
    def of(cls, verdicts: list[Verdict], manifest: list[dict[str, Any]], evidence: Evidence,
           **more: Any) -> Report:
        """The report of judged verdicts: what it derives from them and the
        evidence is computed here, once."""
        listed, grids, censuses = documented.judge(evidence), invariance.judge(evidence), census.judge(evidence)
        card = cards(verdicts, list(evidence.platforms))
        for platform, grid in grids.items():
            if platform in card:
                card[platform]["invariance"] = invariance.card_lines(grid)
        for platform, ev in evidence.platforms.items():
            if platform in card:
                card[platform]["no_effect_seen"] = invariance.no_effect_seen(ev)
        return cls(verdicts, manifest, evidence, listed,
                   between_versions(verdicts, evidence, listed, grids, censuses),
                   conformance_summary(evidence), card, grids=grids, censuses=censuses, **more)

    def errors(self) -> list[tuple[Verdict, str]]:
        """Each claim in error and the platform where it is (its gravest
        platform's; "" where the claim is judged once for all)."""
        out = []
        for v in self.verdicts:
            where = [p for p, pv in v.platforms.items() if pv.verdict == Ruling.ERROR]
            if where or v.verdict == Ruling.ERROR:
                out.append((v, where[0] if where else ""))
        return out

    def exit_code(self) -> int:
        """0 when every verdict is what is known for its platform; 3 when a
        guarantee or a team's workload is refuted with no known finding (with strict: when any
        guarantee is refuted); 5 when the model and PyTorch disagree without
        a known reason (a bug of the model or of the capture, not a finding
        to read past); 4 for any other unexpected verdict (a folklore verdict
        that moved, a known finding no longer seen); with fail_on_change, 6
        when a verdict moved on a platform since the baseline or a platform
        the baseline or the expected list names is missing; else 1 when a
        claim's verdict is an error (the harness could not decide it: what
        was found is named first, the harness's failure after it)."""
        unexpected = self.unexpected
        if any(h.kind in ("guarantee", WORKLOAD_KIND) and h.got == Ruling.REFUTED for h in unexpected) or (
                self.strict and refuted_guarantees(self.verdicts)):
            return EXIT_REFUTED_GUARANTEE
        if self.conformance["unexplained"]:
            return EXIT_UNEXPLAINED_DISAGREEMENT
        if unexpected:
            return EXIT_UNEXPECTED
        if self.fail_on_change and since_baseline.failed(self.since):
            return since_baseline.EXIT_CHANGED
        return EXIT_ERROR if self.errors() else 0


@dataclass
class Judged:
    """The claims judged from what `inputs` name and held to what is known:
    what both the report and one claim's ctest test (reports/tools/claim_test.py)
    read, computed the one way."""
    claims: list[Claim]
    manifest: list[dict[str, Any]]
    evidence: Evidence
    verdicts: list[Verdict]
    held: list[known.Held]
    installs: list[dict[str, Any]]


def judge(inputs: Inputs, only: set[str] | None = None, out: bool = True) -> Judged:
    """Every claim (only those `only` names, where given) judged on the
    evidence `inputs` name and held to the known findings; `out`: the report
    directory is checked first. SpecError on bad input (an unknown claim in
    `only` included)."""
    installs = [read_install(p) for p in inputs.installs]
    dirs = inputs.evidence + [Path(i["run_dir"]) for i in installs if i["run_dir"]]
    if not dirs:
        raise SpecError(str(inputs.installs[0]) if inputs.installs else "reports", 1,
                        "no evidence: no EVIDENCE_DIR, and no install got as far as its tests")
    try:
        claims = load_claims(inputs.claims, inputs.workloads)
    except OSError as e:
        raise SpecError(str(inputs.claims), 1, f"cannot read: {e.strerror or e}") from None
    unknown = sorted((only or set()) - {c.id for c in claims})
    if unknown:
        raise SpecError(str(inputs.claims), 1, f"no claim '{unknown[0]}' in the catalog")
    manifest = read_manifest(inputs.manifest)
    missing = [d for d in dirs if not d.exists()]
    if missing:
        raise SpecError(str(missing[0]), 1, "no such evidence directory or file")
    if out:
        check_out(inputs.out)
    evidence = read_evidence(dirs)
    if evidence.refused:
        raise RefusedEvidence(evidence.refused)
    _merge_ctest(evidence, inputs, installs)
    files = [inputs.known] if isinstance(inputs.known, Path) else list(inputs.known or [])
    findings = known.load_all(files, {c.id for c in claims})  # every file checked, whichever claims are judged
    judged = [c for c in claims if only is None or c.id in only]
    verdicts = judge_all(judged, manifest, evidence, partial=inputs.partial)
    held = known.judge(findings, verdicts, evidence, inputs.partial)
    new_findings.suggest(held, evidence)
    return Judged(judged, manifest, evidence, verdicts, held, installs)


def build(inputs: Inputs) -> Report:
    """The Report of what `inputs` name; SpecError on bad input."""
    baseline = since_baseline.read(inputs.baseline) if inputs.baseline else None
    expected = since_baseline.read_expected(inputs.expect_platform, inputs.expect_platforms)
    j = judge(inputs)
    return Report.of(j.verdicts, j.manifest, j.evidence, coverage=coverage(j.evidence, j.manifest),
                     installs=j.installs, baseline=baseline, held=j.held, strict=inputs.strict,
                     fail_on_change=inputs.fail_on_change,
                     since=since_baseline.compare(baseline, j.verdicts, j.evidence.platform_env, expected),
                     run=since_baseline.this_run(),
                     self_bench=read_self_bench(inputs.self_bench) if inputs.self_bench else None)


def read_self_bench(path: Path) -> dict[str, Any]:
    """The measurement `./backendcheck bench --self` wrote (cli/selfbench.py),
    with the line the report shows; SpecError where it cannot be read."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return {"line": self_speed.summary(data), "file": str(path)}
    except (OSError, ValueError) as e:
        raise SpecError(str(path), getattr(e, "lineno", 1), f"the harness's own speed: {e}") from None
    except (KeyError, TypeError, AttributeError) as e:
        raise SpecError(str(path), 1, f"the harness's own speed: not bench --self's record ({e!r})") from None


def _merge_ctest(evidence: Evidence, inputs: Inputs, installs: list[dict[str, Any]]) -> None:
    """ctest's view: --junit/--tests belong to the first run; an install's own
    are in its build directory. Each is merged into its platform and the whole."""
    first = next(iter(evidence.platforms), "")
    views = [(first, inputs.junit, inputs.tests)] if inputs.junit or inputs.tests else []
    views += [(evidence.run_platform.get(str(Path(i["run_dir"])), ""), Path(i["build_dir"]) / "ctest-junit.xml",
               Path(i["build_dir"]) / "ctest-tests.json") for i in installs if i["run_dir"] and i["build_dir"]]
    for platform, junit, tests in views:
        ctest = Evidence(problems=evidence.problems)
        if junit and junit.exists():
            read_junit(junit, ctest)
        if tests and tests.exists():
            read_registered(tests, ctest)
        if platform:
            evidence.platforms[platform].merge(ctest, platform)
        evidence.merge(ctest, platform)


def read_install(path: Path) -> dict[str, Any]:
    """One torch install's state (inputs/install_state.py: torch, version,
    stage, build_dir, run_dir, log, exit), with its status for the report."""
    state = install_state.read(path)
    stage = state.get("stage", "setup")
    code = str(state["exit"]) if "exit" in state else ""
    if stage == "done" and code == "0":
        status, why = "ok", ""
    elif stage == "done":
        status, why = "tests failed", f"ctest exit {code}; its verdicts stand, see {state.get('log', '')}"
    else:
        status = "error"
        said = _failure_lines(Path(state["log"])) if state.get("log") else ""
        why = (f"stopped during {stage}" + (f" (exit {code})" if code else "") + (f": {said}" if said else "") +
               "; nothing of this install is judged" + (f"; see {state['log']}" if state.get("log") else ""))
    return {"torch": state["torch"], "version": state.get("version", ""), "status": status, "why": why,
            "stage": stage, "build_dir": state.get("build_dir", ""),
            "run_dir": state.get("run_dir", "") if stage in ("tests", "report", "done") else "", "log": state.get("log", "")}


def _failure_lines(log: Path) -> str:
    """What a failed install's log says went wrong: its first CMake error,
    with the message under it, and the script's last word."""
    try:
        lines = read_regular(log, "the install log", 16 << 20).decode("utf-8", errors="replace").splitlines()
    except (OSError, SpecError):
        return ""
    said = []
    for i, line in enumerate(lines):
        if line.startswith("CMake Error"):
            message = []
            for follow in lines[i + 1:]:
                if not follow.startswith("  ") or follow.startswith("Call Stack"):
                    break
                message.append(follow.strip())
            said.append(" ".join(message) or line)
            break
    last = [line for line in lines if line.startswith("backendcheck: ")]
    if last:
        said.append(last[-1].removeprefix("backendcheck: "))
    return "; ".join(said)[:500]


def check_out(out: Path) -> None:
    """SpecError when the report cannot be written to `out`."""
    if out.exists() and not out.is_dir():
        raise SpecError(str(out), 1, "--out must name a directory; this is a file")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise SpecError(str(out), 1, f"cannot create the report directory: {e.strerror or e}") from None
    if not os.access(out, os.W_OK | os.X_OK):
        raise SpecError(str(out), 1, "cannot write the report there: permission denied")


def coverage(evidence: Evidence, manifest: list[dict[str, Any]]) -> dict[str, Any]:
    """How many tests the run was expected to have (ctest's list, else the
    manifest) and how many left a result (a record, or ctest's status)."""
    expected = sorted(evidence.registered) or sorted({str(c["test"]) for c in manifest})
    got = set(evidence.results) | set(evidence.ctest)
    missing = [t for t in expected if t not in got]
    return {"expected": len(expected), "got": len(got & set(expected)) if expected else len(got),
            "source": "ctest's test list" if evidence.registered else "the manifest", "missing": missing[:50],
            "missing_count": len(missing)}
