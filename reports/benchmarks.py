"""Reading the performance suite's Google Benchmark JSON (backend_benchmarks
--benchmark_out_format=json) into what the report shows: the roofs, each
engine's achieved rate and fraction of peak on the roofline, the harness's
overhead against a direct engine call, and the digest's throughput.

    python3 -m reports.benchmarks summary FILE.json        the figures, as text

A benchmark that could not run here (an engine without a device) carries
Google Benchmark's error with the prefix "not evaluated: " and is shown as
not evaluated; any other error is a failure. With repetitions, the median
aggregate of each benchmark is used.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
from pathlib import Path
from typing import Any

from inputs import onednn_isa
from inputs.engines import device_of, engines

NOT_EVALUATED = "not evaluated: "
OVERHEAD_PARTS = ("direct", "harness", "decide_cache_hit", "poison", "fetch", "digest", "evidence_record",
                  "evidence_write")


SUMMED_PARTS = ("decide_cache_hit", "poison", "fetch", "digest", "evidence_write")


class BenchmarkError(ValueError):
    """Bad benchmark JSON; the message is FILE:1: what."""


def _number(x: Any) -> float | None:
    return float(x) if isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) else None


def _seconds(row: dict[str, Any]) -> float | None:
    """real_time of a row, in seconds."""
    t = _number(row.get("real_time"))
    scale = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}.get(str(row.get("time_unit", "ns")))
    return None if t is None or scale is None else t * scale


def load(path: Path) -> dict[str, Any]:
    """The summary of one benchmark file (see summarize)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as e:
        raise BenchmarkError(f"{path}:1: cannot read: {e}") from e
    except json.JSONDecodeError as e:
        raise BenchmarkError(f"{path}:{e.lineno}: not JSON: {e.msg}") from e
    try:
        return summarize(data)
    except BenchmarkError as e:
        raise BenchmarkError(f"{path}:1: {e}") from e


def _rows(data: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """run_name -> the row to use: the median aggregate when there are
    repetitions, else the (single) iteration row; errors kept."""
    rows: dict[str, dict[str, Any]] = {}
    for b in data.get("benchmarks", []):
        if not isinstance(b, dict) or not isinstance(b.get("name"), str):
            raise BenchmarkError("a benchmark entry without a name")
        name = _base_name(str(b.get("run_name", b["name"])))
        if b.get("run_type") == "aggregate":
            if b.get("aggregate_name") == "median":
                rows[name] = b
        elif name not in rows or rows[name].get("run_type") != "aggregate":
            rows.setdefault(name, b)
    return rows


def _base_name(run_name: str) -> str:
    """The benchmark's own name without Google Benchmark's suffixes
    ("/iterations:1", "/real_time", "/manual_time", "/repeats:3")."""
    return "/".join(p for p in run_name.split("/") if ":" not in p and p not in ("real_time", "manual_time"))


def summarize(data: Any) -> dict[str, Any]:
    if not isinstance(data, dict) or not isinstance(data.get("benchmarks"), list) or not isinstance(
            data.get("context"), dict):
        raise BenchmarkError("not Google Benchmark JSON (no 'context' object and 'benchmarks' list)")
    ctx = data["context"]
    roofs = {
        "cpu": {"peak_gflops": _context_number(ctx, "cpu_peak_gflops"),
                "bandwidth_gbs": _context_number(ctx, "cpu_triad_gbs"),
                "isa": ctx.get("cpu_peak_isa", ""), "threads": ctx.get("omp_threads", "")},
        "cuda": {"peak_gflops": _context_number(ctx, "gpu_peak_gflops"),
                 "bandwidth_gbs": _context_number(ctx, "gpu_memory_gbs"), "name": ctx.get("gpu_name", "")},
    }
    rows = _rows(data)
    engines, overhead, digest, failures = [], {}, [], []
    for name, row in rows.items():
        parts = name.split("/")
        error = str(row.get("error_message", "")) if row.get("error_occurred") else ""
        if error and not error.startswith(NOT_EVALUATED):
            failures.append(f"{name}: {error}")
        if parts[0] == "Engine" and len(parts) == 5:
            _, engine, op, direction, layer = parts
            gflops = _number(row.get("GFLOP/s"))
            flop, nbytes = _number(row.get("flop")), _number(row.get("bytes"))
            device = device_of(engine)
            engines.append({
                "name": name, "engine": engine, "op": op, "direction": direction, "layer": layer, "device": device,
                "gflops": None if error else gflops,
                "peak_fraction": None if error else _number(row.get("peak_fraction")),
                "intensity": flop / nbytes if flop and nbytes else None,
                "ms": None if error else (_seconds(row) or 0) * 1e3,
                "implementation": str(row.get("label", "")),
                "skipped": error[len(NOT_EVALUATED):] if error.startswith(NOT_EVALUATED) else "",
                "error": error if error and not error.startswith(NOT_EVALUATED) else ""})
        elif parts[0] == "Overhead" and len(parts) == 3 and parts[1] in OVERHEAD_PARTS:
            overhead.setdefault(parts[2], {})[parts[1]] = None if error else _seconds(row)
        elif parts[0] == "Digest" and len(parts) == 3:
            digest.append({"bytes": int(parts[2]), "gbs": (_number(row.get("bytes_per_second")) or 0) * 1e-9,
                           "error": error})
    # The probe timed beside the engines: a fraction of peak from two medians of one run.
    roof_row = rows.get("Roof/cpu_fma", {})
    side_peak = None if roof_row.get("error_occurred") else _number(roof_row.get("GFLOP/s"))
    roofs["cpu"]["side_by_side_gflops"] = side_peak
    for e in engines:
        e["side_by_side_fraction"] = e["gflops"] / side_peak if e["device"] == "cpu" and e["gflops"] and \
            side_peak else None
    for problem, p in overhead.items():
        direct, harness = p.get("direct"), p.get("harness")
        p["overhead_us"] = (harness - direct) * 1e6 if direct and harness else None
        p["overhead_fraction"] = (harness - direct) / direct if direct and harness else None
        # The sum of the parts, each timed alone: steadier than a difference of
        # two medians of a long, noisy Execute (evidence_write includes building the record).
        parts = [p.get(k) for k in SUMMED_PARTS]
        p["parts_us"] = sum(parts) * 1e6 if all(x is not None for x in parts) else None
        p["parts_fraction"] = sum(parts) / direct if p["parts_us"] is not None and direct else None
    context = {k: v for k, v in ctx.items() if isinstance(v, (str, int, float))}
    if isinstance(context.get("onednn_isa"), str):  # "isa_495" from a run before the ISA had its name
        said = context["onednn_isa"]
        version = str(context.get("engine.onednn", "")).split("; ")[1:2] or [""]
        context["onednn_isa"] = onednn_isa.name(said, version[0])
        if isinstance(context.get("engine.onednn"), str):
            context["engine.onednn"] = context["engine.onednn"].replace(f"ISA {said}", f"ISA {context['onednn_isa']}")
    return {"context": context,
            "mode": ctx.get("mode", ""), "roofs": roofs, "engines": engines, "overhead": overhead,
            "digest": sorted(digest, key=lambda d: d["bytes"]), "failures": failures,
            "by_engine": _by_engine(engines)}


def _context_number(ctx: dict[str, Any], key: str) -> float | None:
    """A context value (Google Benchmark writes them as strings) as a finite float."""
    try:
        return _number(float(ctx[key]))
    except (KeyError, TypeError, ValueError):
        return None


def _by_engine(engines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per engine, op and direction: how many layers ran, the median GFLOP/s
    and the median and best fraction of peak."""
    groups: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
    for e in engines:
        groups.setdefault((e["engine"], e["op"], e["direction"]), []).append(e)
    out = []
    for (engine, op, direction), rows in groups.items():
        ran = [r for r in rows if r["gflops"] is not None]
        fractions = [r["peak_fraction"] for r in ran if r["peak_fraction"] is not None]
        out.append({"engine": engine, "op": op, "direction": direction, "layers": len(rows), "ran": len(ran),
                    "median_gflops": statistics.median([r["gflops"] for r in ran]) if ran else None,
                    "median_fraction": statistics.median(fractions) if fractions else None,
                    "best_fraction": max(fractions) if fractions else None,
                    "skipped": next((r["skipped"] for r in rows if r["skipped"]), "")})
    return out


def format_summary(s: dict[str, Any]) -> str:
    lines = [f"mode: {s['mode']}"]
    cpu = s["roofs"]["cpu"]
    if cpu["peak_gflops"]:
        lines.append(f"cpu roofs: {cpu['peak_gflops']:.1f} GFLOP/s fp32 FMA peak ({cpu['isa']}, {cpu['threads']} "
                     f"threads), triad {cpu['bandwidth_gbs'] or 0:.1f} GB/s")
    for g in s["by_engine"]:
        if g["ran"]:
            lines.append(f"{g['engine']:12} {g['op']:7} {g['direction']:11} {g['ran']:2}/{g['layers']:2} layers  "
                         f"median {g['median_gflops']:8.2f} GFLOP/s  "
                         f"peak fraction median {100 * (g['median_fraction'] or 0):5.1f}% "
                         f"best {100 * (g['best_fraction'] or 0):5.1f}%")
        else:
            lines.append(f"{g['engine']:12} {g['op']:7} {g['direction']:11} not evaluated: {g['skipped']}")
    if cpu.get("side_by_side_gflops"):
        lines.append(f"cpu FMA probe timed beside the engines (Roof/cpu_fma): {cpu['side_by_side_gflops']:.1f} GFLOP/s")
    for e in s["engines"]:
        listed = engines().get(e["engine"])
        if listed and not listed.oracle and e["op"] == "conv2d" and e["direction"] == "fwd" \
                and e["layer"] == "l1_3x3" and e["gflops"]:
            side = e.get("side_by_side_fraction")
            lines.append(f"{e['engine']} conv2d fwd l1_3x3: {e['gflops']:.1f} GFLOP/s = "
                         f"{100 * (e['peak_fraction'] or 0):.1f}% of the best-of peak" +
                         (f", {100 * side:.1f}% of the probe beside it" if side else "") + f" ({e['implementation']})")
    for problem, p in s["overhead"].items():
        parts = ", ".join(f"{k} {p[k] * 1e6:.2f} us" for k in OVERHEAD_PARTS if p.get(k) is not None)
        if p.get("overhead_us") is not None:
            lines.append(f"overhead {problem}: harness - direct = {p['overhead_us']:.2f} us "
                         f"({100 * p['overhead_fraction']:.2f}%)" +
                         (f"; sum of the parts = {p['parts_us']:.2f} us ({100 * p['parts_fraction']:.2f}% of direct)"
                          if p.get("parts_us") is not None else "") + f"; {parts}")
    for d in s["digest"]:
        lines.append(f"digest xxh3 {d['bytes']:>10} B: {d['gbs']:.2f} GB/s")
    lines += [f"FAILED {f}" for f in s["failures"]]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="backendcheck-benchmarks", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("command", choices=["summary"])
    parser.add_argument("file", type=Path)
    args = parser.parse_args(argv)
    try:
        print(format_summary(load(args.file)))
    except BenchmarkError as e:
        print(str(e), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
