"""The benchmarks' smoke check (ctest benchmarks.smoke): every benchmark once,
at batch 1, and the JSON checked: each compute benchmark ran or was not
evaluated with its reason, the overhead pairs and the digest ran, nothing
failed. Usage: python3 -m reports.tools.bench_smoke BINARY OUT.json"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from inputs.engines import engines

from ..benchmarks import BenchmarkError, format_summary, load


def benchmarked_cpu_engines(context: dict[str, Any]) -> list[str]:
    """The CPU engines of engines.def that serve a benchmarked operation and
    that the benchmark binary found available (its "engine.NAME" context):
    the ones a smoke run on a machine without a GPU must have timed."""
    return [e.name for e in engines().values()
            if e.device == "cpu" and (e.serves("conv2d") or e.serves("matmul"))
            and str(context.get(f"engine.{e.name}", "")).startswith("available")]


def smoke_check(binary: Path, out: Path) -> int:
    """Runs every benchmark once (--smoke) and checks the JSON: each compute
    benchmark ran or was not evaluated with its reason, the overhead pairs
    and the digest ran, nothing failed."""
    out.parent.mkdir(parents=True, exist_ok=True)
    cmd = [str(binary), "--smoke", f"--benchmark_out={out}", "--benchmark_out_format=json",
           f"--scratch={out.parent}"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=280)
    if proc.returncode != 0:
        print(f"{binary}: exit {proc.returncode}\n{proc.stderr[-4000:]}", file=sys.stderr)
        return 1
    try:
        s = load(out)
    except BenchmarkError as e:
        print(str(e), file=sys.stderr)
        return 1
    print(format_summary(s))
    problems = [f"failed: {f}" for f in s["failures"]]
    ran = {e["engine"] for e in s["engines"] if e["gflops"]}
    problems += [f"no benchmark of {name} ran although it is available here"
                 for name in benchmarked_cpu_engines(s["context"]) if name not in ran]
    problems += [f"{e['name']}: neither a rate nor a reason" for e in s["engines"]
                 if not e["gflops"] and not e["skipped"] and not e["error"]]
    if not s["roofs"]["cpu"]["peak_gflops"] or not s["roofs"]["cpu"]["bandwidth_gbs"]:
        problems.append("the CPU roofs were not measured")
    for problem in ("l1_3x3", "tiny"):
        if s["overhead"].get(problem, {}).get("overhead_us") is None:
            problems.append(f"no harness overhead figure for {problem}")
    if not s["digest"] or any(d["gbs"] <= 0 for d in s["digest"]):
        problems.append("no digest throughput")
    for p in problems:
        print(f"{out}:1: {p}", file=sys.stderr)
    return 1 if problems else 0


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 2:
        print("usage: python3 -m reports.tools.bench_smoke BINARY OUT.json", file=sys.stderr)
        return 2
    binary, out = Path(args[0]), Path(args[1])
    # Under ./backendcheck, into the run's own evidence directory.
    run_dir = os.environ.get("BACKENDCHECK_EVIDENCE_DIR")
    return smoke_check(binary, Path(run_dir) / out.name if run_dir else out)


if __name__ == "__main__":
    sys.exit(main())
