"""How often each verdict that noise can move flips between runs of the same
install on the same machine (BENCHMARKS.md, "Verdict stability").

Only the claims whose evidence a timing decides can move with noise:
  - the ratio claims, on PyTorch (PytorchMkldnn, PytorchDetAlg, PytorchBf16)
    and on the model (CpuMkldnn, CpuBenchmark, CpuDeterministic), and
  - the model's timing-based choices: benchmark mode picks the candidate
    that timed fastest, so how many distinct choices a set of processes
    makes (CpuChoiceBenchmark) moves with the timings.
Every other verdict on this machine is a fact that does not depend on
timing: a probe's reading of a setting, bits compared (each repeat-and-
threads check carries a positive control that must vary, run until it does
within its budget, so a loaded machine shows a race sooner, not later), an
alert raised or not, a choice made by heuristics (the same in every process
by construction: heuristic-stable is that claim).

For each build directory (one torch install), the suites those claims take
evidence from (all of TIMED, or those --suites names) run RUNS times, each
into a fresh evidence directory; runs from --stress-from on have
`stress-ng --cpu 2` beside them (stopped by its PID). Each run is judged
alone by the catalog's own rules; a claim's flips are the runs whose verdict
is not its most common one. A run whose Compares were timed while other
processes took more of the CPU than the ratio rule trusts
(statistics.LOAD_LIMIT) gives no verdict: it is counted as withheld, apart
from the flips, and each run's largest share taken by others is kept.

    python3 -m reports.tools.flip_rates --claims catalog/claims.toml --runs 10 \\
        --stress-from 6 [--suites CpuBenchmark/,...] --out flips.json \\
        BUILD_DIR [BUILD_DIR ...]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from ..catalog import load_catalog
from ..evidence import Evidence, read_evidence, read_manifest
from ..verdicts import Verdict, judge_all, select_tests
from ..ruling import Ruling

# The suites whose outcome timing decides (their prefixes in ctest's names).
TIMED = ("PytorchMkldnn/", "PytorchDetAlg/", "PytorchBf16/", "CpuMkldnn/", "CpuBenchmark/", "CpuDeterministic/",
         "CpuChoiceBenchmark/")
WITHHELD = "withheld (busy machine)"


def _claims(path: Path, manifest: list[dict[str, Any]], suites: tuple[str, ...]) -> list:
    """The catalog's claims whose evidence (or prediction) comes from the
    timed suites."""
    def timed(c) -> bool:
        tests = select_tests(c.tests, c.cases, manifest, Evidence())
        return any(t.startswith(suites) for t in tests)
    return [c for c in load_catalog(path) if timed(c) or (c.prediction is not None and timed(c.prediction))]


def _others_cpu(v: Verdict) -> float | None:
    """The largest share of the CPU other processes took during the
    verdict's Compares (None where none recorded it)."""
    shares = [r["compare"]["others_cpu"] for f in v.facts for r in f.records
              if "others_cpu" in r.get("compare", {})]
    return round(max(shares), 3) if shares else None


def _run(build: Path, stress: bool, suites: tuple[str, ...]) -> tuple[Path, float]:
    out = Path(tempfile.mkdtemp(prefix="flips-"))
    env = dict(os.environ, BACKENDCHECK_EVIDENCE_DIR=str(out))
    load = subprocess.Popen(["stress-ng", "--cpu", "2", "--quiet"], start_new_session=True) if stress else None
    started = time.monotonic()
    try:
        subprocess.run(["ctest", "--test-dir", str(build), "-j", "2", "-R", "^(" + "|".join(suites) + ")"],
                       env=env, capture_output=True, text=True, check=False)
    finally:
        if load is not None:
            os.killpg(load.pid, signal.SIGTERM)
            load.wait()
    return out, time.monotonic() - started


def measure(claims_path: Path, builds: list[Path], runs: int, stress_from: int,
            suites: tuple[str, ...] = TIMED) -> dict[str, Any]:
    result: dict[str, Any] = {"runs": runs, "stress_from": stress_from, "suites": list(suites), "installs": {}}
    for build in builds:
        manifest = read_manifest(build / "generated" / "cases.json")
        claims = _claims(claims_path, manifest, suites)
        seen: dict[str, list[Verdict]] = {}
        seconds = []
        for i in range(1, runs + 1):
            evidence_dir, took = _run(build, i >= stress_from, suites)
            seconds.append(round(took, 1))
            ev = read_evidence([evidence_dir])
            for v in judge_all(claims, manifest, ev, partial=True):
                seen.setdefault(v.claim.id, []).append(v)
                if v.prediction is not None:
                    seen.setdefault(f"{v.claim.id} (model's prediction)", []).append(v.prediction)
            shutil.rmtree(evidence_dir, ignore_errors=True)
        platform = next(iter(ev.platforms), str(build))
        flips = {}
        for claim_id, judged in seen.items():
            verdicts = [WITHHELD if v.withheld else str(v.verdict) for v in judged]
            decided = [x for x in verdicts if x != WITHHELD]
            mode, count = Counter(decided).most_common(1)[0] if decided else (WITHHELD, 0)
            # Each run's comparisons, decisive or not: how often one comparison
            # alone would have decided (the rule of one's false alarms).
            comparisons = [[f.figures["outcome"] for f in v.facts if "outcome" in f.figures] for v in judged]
            flips[claim_id] = {"verdicts": verdicts, "most_common": mode, "flips": len(decided) - count,
                               "comparisons": comparisons,
                               "withheld": len(verdicts) - len(decided),
                               "others_cpu": [_others_cpu(v) for v in judged],
                               "idle": verdicts[:stress_from - 1], "loaded": verdicts[stress_from - 1:]}
        result["installs"][platform] = {"build": str(build), "seconds": seconds, "claims": flips}
    return result


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--claims", type=Path, required=True)
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--stress-from", type=int, default=6, help="the first run with stress-ng beside it")
    ap.add_argument("--suites", default=",".join(TIMED),
                    help="comma-separated prefixes of TIMED to run (default: all of them)")
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("builds", type=Path, nargs="+")
    a = ap.parse_args(argv)
    suites = tuple(x for x in a.suites.split(",") if x)
    unknown = [x for x in suites if x not in TIMED]
    if unknown or not suites:
        ap.error(f"--suites takes prefixes of {', '.join(TIMED)}; not {', '.join(unknown) or 'none'}")
    result = measure(a.claims, a.builds, a.runs, a.stress_from, suites)
    a.out.write_text(json.dumps(result, indent=1) + "\n")
    for platform, r in result["installs"].items():
        print(f"{platform}: runs of {r['seconds']} s")
        for claim_id, f in r["claims"].items():
            if set(f["verdicts"]) == {Ruling.NOT_EVALUATED}:
                continue
            print(f"  {claim_id}: {f['flips']} flip(s), {f['withheld']} withheld in {len(f['verdicts'])}: "
                  f"idle {f['idle']}, under stress-ng --cpu 2 {f['loaded']}; others' CPU share {f['others_cpu']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
