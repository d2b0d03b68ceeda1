"""The report's figures as coordinates: the template draws each as inline
SVG from what these return, so the page needs no script or plotting library.

strip_plot      A and B samples of a comparison, with their medians
interval_plot   a comparison's median ratio, its interval and the claim's bound
roofline_plot   a device's benchmarks against its compute and bandwidth roofs
"""

from __future__ import annotations

import math
import statistics
from typing import Any


def strip_plot(figures: dict[str, Any], a: list[float], b: list[float]) -> dict[str, Any]:
    """Coordinates of a two-row strip plot of A and B samples (ms) with their
    medians, on one linear axis: the template draws them as SVG."""
    values = [x for x in a + b if isinstance(x, (int, float))]
    if not values:
        return {}
    lo, hi = min(values), max(values)
    span = (hi - lo) or (abs(hi) or 1.0)
    lo, hi = lo - 0.05 * span, hi + 0.05 * span

    def x(v: float) -> float:
        return round(60 + 400 * (v - lo) / (hi - lo), 1)

    return {"a": [x(v) for v in a], "b": [x(v) for v in b], "ma": x(statistics.median(a)),
            "mb": x(statistics.median(b)),
            "lo": lo, "hi": hi, "unit": figures.get("unit", "")}


def interval_plot(figures: dict[str, Any]) -> dict[str, Any]:
    """Coordinates of the median ratio B/A, its 90% interval and the claim's
    bound (or the two edges of its band, for a claim of a magnitude) on one
    log axis, or {} when a value is not finite."""
    edges = list(figures.get("band") or [figures.get("bound")])
    values = [figures.get("ratio"), *figures.get("ci", []), *edges]
    if len(values) != 3 + len(edges) or not all(isinstance(v, (int, float)) and math.isfinite(v) and v > 0
                                                for v in values):
        return {}
    lo, hi = math.log(min(values)) - 0.1, math.log(max(values)) + 0.1

    def x(v: float) -> float:
        return round(60 + 400 * (math.log(v) - lo) / (hi - lo), 1)

    name = "band" if figures.get("band") else "bound"
    return {"ratio": x(values[0]), "lo": x(values[1]), "hi": x(values[2]),
            "edges": [{"x": x(v), "label": f"{name} {v:.3g}"} for v in edges],
            "labels": {"min": math.exp(lo), "max": math.exp(hi)}}


def roofline_plot(summary: dict[str, Any], device: str) -> dict[str, Any]:
    """Coordinates of a log-log roofline (arithmetic intensity in flop/byte
    against GFLOP/s) for one device: the roofs and one point per benchmark
    that ran; {} without a peak or points."""
    roof = summary["roofs"][device]
    peak, bw = roof.get("peak_gflops"), roof.get("bandwidth_gbs")
    points = [e for e in summary["engines"] if e["device"] == device and e["gflops"] and e["intensity"]]
    if not peak or not points:
        return {}
    xs = [p["intensity"] for p in points]
    ys = [p["gflops"] for p in points]
    x_lo, x_hi = math.log10(min(xs) / 2), math.log10(max(xs) * 2)
    y_lo, y_hi = math.log10(min(ys) / 2), math.log10(peak * 2)
    w, h, left, top = 480, 240, 60, 10

    def px(x: float) -> float:
        return round(left + w * (math.log10(x) - x_lo) / (x_hi - x_lo), 1)

    def py(y: float) -> float:
        return round(top + h * (1 - (math.log10(y) - y_lo) / (y_hi - y_lo)), 1)

    roof_line = []
    if bw:  # the bandwidth roof, from the left edge to the ridge (clipped to the plot)
        start, end = 10 ** x_lo, 10 ** x_hi
        ridge = min(max(peak / bw, start), end)
        roof_line = [(px(start), py(max(start * bw, 10 ** y_lo))), (px(ridge), py(min(peak, ridge * bw)))]
    engines = sorted({p["engine"] for p in points})
    return {
        "width": left + w + 10, "height": top + h + 40, "left": left, "top": top, "w": w, "h": h,
        "peak_y": py(peak), "peak": peak, "bandwidth": bw, "roof": roof_line,
        "points": [{"x": px(p["intensity"]), "y": py(p["gflops"]), "engine": p["engine"],
                    "color": engines.index(p["engine"]),
                    "title": f"{p['engine']} {p['op']} {p['direction']} {p['layer']}: {p['gflops']:.3g} GFLOP/s, "
                             f"{p['intensity']:.3g} flop/byte" +
                             (f", {100 * p['peak_fraction']:.0f}% of peak" if p["peak_fraction"] else "")}
                   for p in points],
        "engines": engines,
        "x_ticks": [{"x": px(10 ** k), "label": f"{10 ** k:g}"} for k in range(math.ceil(x_lo), math.floor(x_hi) + 1)],
        "y_ticks": [{"y": py(10 ** k), "label": f"{10 ** k:g}"} for k in range(math.ceil(y_lo), math.floor(y_hi) + 1)],
    }
