"""Reading the performance suite's JSON into the report, and the A/A
experiment's rule."""

from __future__ import annotations

import json
import math
import random
import tempfile
import unittest
from pathlib import Path

from reports import benchmarks

from reports.page import plots
from reports.evidence import read_evidence
from reports.statistics import decide_ratio


def _row(name: str, **fields: object) -> dict:
    row = {"name": name, "run_name": name, "run_type": "iteration", "time_unit": "ms", "real_time": 1.0}
    row.update(fields)
    return row


def _file(rows: list[dict], **context: str) -> dict:
    ctx = {"cpu_peak_gflops": "400.0", "cpu_triad_gbs": "20.0", "cpu_peak_isa": "avx512f", "omp_threads": "2",
           "mode": "full"}
    ctx.update(context)
    return {"context": ctx, "benchmarks": rows}


ONEDNN = "Engine/onednn/conv2d/fwd/l1_3x3"


class SummaryTest(unittest.TestCase):
    def test_median_aggregate_is_used_over_iterations(self) -> None:
        rows = [_row(ONEDNN, **{"GFLOP/s": 100.0, "peak_fraction": 0.25, "flop": 2e9, "bytes": 1e7}),
                dict(_row(ONEDNN, **{"GFLOP/s": 150.0, "peak_fraction": 0.375, "flop": 2e9, "bytes": 1e7}),
                     run_type="aggregate", aggregate_name="median", name=ONEDNN + "_median"),
                dict(_row(ONEDNN, **{"GFLOP/s": 10.0}), run_type="aggregate", aggregate_name="mean",
                     name=ONEDNN + "_mean")]
        s = benchmarks.summarize(_file(rows))
        [e] = s["engines"]
        self.assertEqual((e["engine"], e["op"], e["direction"], e["layer"]), ("onednn", "conv2d", "fwd", "l1_3x3"))
        self.assertEqual(e["gflops"], 150.0)
        self.assertEqual(e["peak_fraction"], 0.375)
        self.assertEqual(e["intensity"], 200.0)
        self.assertEqual(s["roofs"]["cpu"]["peak_gflops"], 400.0)

    def test_not_evaluated_is_a_skip_and_other_errors_are_failures(self) -> None:
        rows = [_row("Engine/cudnn/conv2d/fwd/l1_3x3", error_occurred=True,
                     error_message="not evaluated: cudaGetDeviceCount: no CUDA-capable device"),
                _row("Engine/onednn/conv2d/fwd/conv1", error_occurred=True, error_message="INTERNAL: boom")]
        s = benchmarks.summarize(_file(rows))
        cudnn, onednn = s["engines"]
        self.assertEqual(cudnn["skipped"], "cudaGetDeviceCount: no CUDA-capable device")
        self.assertIsNone(cudnn["gflops"])
        self.assertEqual(onednn["error"], "INTERNAL: boom")
        self.assertEqual(s["failures"], ["Engine/onednn/conv2d/fwd/conv1: INTERNAL: boom"])
        [group] = [g for g in s["by_engine"] if g["engine"] == "cudnn"]
        self.assertEqual(group["ran"], 0)
        self.assertIn("no CUDA-capable device", group["skipped"])

    def test_overhead_is_harness_minus_direct(self) -> None:
        rows = [_row("Overhead/direct/tiny/iterations:1/real_time", time_unit="us", real_time=10.0),
                _row("Overhead/harness/tiny", time_unit="us", real_time=25.0),
                _row("Overhead/digest/tiny", time_unit="us", real_time=0.5)]
        o = benchmarks.summarize(_file(rows))["overhead"]["tiny"]
        self.assertAlmostEqual(o["overhead_us"], 15.0)
        self.assertAlmostEqual(o["overhead_fraction"], 1.5)
        self.assertAlmostEqual(o["digest"], 0.5e-6)
        self.assertIsNone(o["parts_us"], "not every part was timed")
        rows += [_row(f"Overhead/{part}/tiny", time_unit="us", real_time=1.0)
                 for part in ("decide_cache_hit", "poison", "fetch", "evidence_write")]
        o = benchmarks.summarize(_file(rows))["overhead"]["tiny"]
        self.assertAlmostEqual(o["parts_us"], 4.5)
        self.assertAlmostEqual(o["parts_fraction"], 0.45)

    def test_bad_files_name_the_file(self) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "benchmarks.json"
            path.write_text('{"context": {}, "benchmarks": [', encoding="utf-8")
            with self.assertRaisesRegex(benchmarks.BenchmarkError, r"benchmarks.json:1: not JSON"):
                benchmarks.load(path)
            path.write_text('{"benchmarks": []}', encoding="utf-8")
            with self.assertRaisesRegex(benchmarks.BenchmarkError, r"benchmarks.json:1: not Google Benchmark JSON"):
                benchmarks.load(path)

    def test_roofline_places_points_under_the_roofs(self) -> None:
        rows = [_row(ONEDNN, **{"GFLOP/s": 150.0, "peak_fraction": 0.375, "flop": 2e9, "bytes": 1e7}),
                _row("Engine/reference/conv2d/fwd/l1_3x3", **{"GFLOP/s": 1.0, "flop": 2e9, "bytes": 1e7})]
        plot = plots.roofline_plot(benchmarks.summarize(_file(rows)), "cpu")
        self.assertEqual(plot["engines"], ["onednn", "reference"])
        onednn, reference = plot["points"]
        self.assertLess(onednn["y"], reference["y"])  # faster is higher (smaller y)
        self.assertGreater(onednn["y"], plot["peak_y"])  # below the peak line
        self.assertEqual(plots.roofline_plot(benchmarks.summarize(_file(rows)), "cuda"), {})

    def test_evidence_directory_carries_its_benchmarks_into_the_report(self) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            d = Path(tmp)
            (d / "t-1.jsonl").write_text(json.dumps({"schema": 1, "kind": "environment", "machine": "m"}) + "\n",
                                         encoding="utf-8")
            (d / "benchmarks.json").write_text(json.dumps(_file([_row(ONEDNN, **{"GFLOP/s": 1.0})])),
                                               encoding="utf-8")
            ev = read_evidence([d])
            [summary] = ev.benchmarks.values()
            self.assertEqual(summary["engines"][0]["gflops"], 1.0)
            (d / "benchmarks.json").write_text("[]", encoding="utf-8")
            ev = read_evidence([d])
            self.assertEqual(ev.benchmarks, {})
            self.assertTrue(any("benchmarks.json:1: not Google Benchmark JSON" in p for p in ev.problems))


class RatioRuleTest(unittest.TestCase):
    """decide_ratio on synthetic samples with known truth; the A/A experiment
    (benchmarks/aa_experiment.py) measures it on real ones."""

    def test_identical_distributions_are_rarely_decisive_and_15_percent_is_seen(self) -> None:
        rng = random.Random(5)
        alarms = detected = 0
        trials = 100
        for _ in range(trials):
            a = [rng.lognormvariate(0, 0.03) for _ in range(9)]
            b = [rng.lognormvariate(0, 0.03) for _ in range(9)]
            alarms += decide_ratio(a, b, 1.0, "below")[0] != "inconclusive"
            detected += decide_ratio(a, [x * 1.15 for x in b], 1.0, "above")[0] == "supported"
        self.assertLessEqual(alarms, 0.01 * trials)
        self.assertGreaterEqual(detected, 0.95 * trials)

    def test_direction_of_the_claim_decides_support(self) -> None:
        a = [1.0 + 0.001 * i for i in range(9)]
        b = [2.0 + 0.001 * i for i in range(9)]
        self.assertEqual(decide_ratio(a, b, 1.0, "above")[0], "supported")
        self.assertEqual(decide_ratio(a, b, 1.0, "below")[0], "refuted")
        self.assertEqual(decide_ratio(a, a, 1.0, "below")[0], "inconclusive")

    def test_many_comparisons_follow_the_stated_rule(self) -> None:
        from reports.statistics import MANY_RULE, decide_many
        s, r, i = "supported", "refuted", "inconclusive"
        self.assertEqual(decide_many([s] * 10 + [i] * 5),
                         ("supported", "10 of 15 decisively for, 0 against, 5 not decisive"),
                         "mkldnn-accel's shape: a majority for and none against")
        self.assertEqual(decide_many([s] * 10 + [r] + [i] * 4)[0], "inconclusive", "one decisive counterexample")
        self.assertEqual(decide_many([s] * 7 + [i] * 8)[0], "inconclusive", "7 of 15 is no majority")
        self.assertEqual(decide_many([r] * 8 + [s] * 2 + [i] * 5)[0], "refuted")
        self.assertEqual(decide_many([s])[0], "supported", "one comparison decides alone")
        self.assertEqual(decide_many([i])[0], "inconclusive")
        self.assertEqual(decide_many([s, r])[0], "inconclusive")
        self.assertIn("more than half", MANY_RULE)

    def test_a_ratio_moves_only_beyond_both_intervals_and_the_margin(self) -> None:
        from reports.statistics import ratio_moved
        self.assertEqual(ratio_moved((0.50, 0.60), (0.70, 0.80)), "up")
        self.assertEqual(ratio_moved((0.70, 0.80), (0.50, 0.60)), "down")
        self.assertEqual(ratio_moved((0.50, 0.60), (0.61, 0.70)), "", "within the 3% margin")
        self.assertEqual(ratio_moved((0.50, 0.60), (0.55, 0.90)), "", "overlapping intervals")
        self.assertEqual(ratio_moved((1.0, math.inf), (5.0, 6.0)), "", "an unbounded interval never moves up")

    def test_two_runs_of_one_comparison_rarely_move_and_15_percent_does(self) -> None:
        from reports.statistics import bootstrap_median_ci, paired_ratios, ratio_moved
        rng = random.Random(7)
        draw = lambda: [rng.lognormvariate(0, 0.03) for _ in range(9)]
        ci = lambda a, b: bootstrap_median_ci(paired_ratios(a, b))
        alarms = detected = 0
        trials = 100
        for _ in range(trials):
            first = ci(draw(), draw())
            a, b = draw(), draw()
            alarms += ratio_moved(first, ci(a, b)) != ""
            detected += ratio_moved(first, ci(a, [x * 1.15 for x in b])) == "up"
        self.assertLessEqual(alarms, 0.01 * trials)
        self.assertGreaterEqual(detected, 0.9 * trials)


if __name__ == "__main__":
    unittest.main()
