#!/usr/bin/env python3
"""The A/A and injected-slowdown experiment: is the ratio rule of the perf
claims (reports.statistics.decide_ratio: the median of the per-rep ratios
B/A, decisive when its 90% bootstrap interval clears the bound by 3%) quiet
when nothing changed, and does it see a 15% slowdown?

    python3 benchmarks/aa_experiment.py [--build build/default] [--trials 200]
        [--case REPRO] [--reps 9] [--repeats 3] [--slowdown 0.15]
        [--real-trials N] [--pinned-trials N] [--group N] [--out DIR] [--from DIR]

Samples come from perf_trials, which runs two cases side by side exactly as
the Compare fixture does (9 interleaved reps in alternating order, each rep
a whole case; its sample is the median run time after the first step). The
default case is a 5-step fixed schedule of a 0.4 ms oneDNN convolution
(about 0.5 s a trial); the case the cpu-benchmark-cost claims are judged on
(conv2d:fwd:f32:mb4ic3ih128iw128oc64kh3kw3sh1sw1ph1pw1dh1dw1g1*5 ...) takes
about 4.4 s a trial here, and can be given with --case.

1. A/A: the case against itself, --trials times. A false alarm is any
   decisive outcome (the bound is 1). Also judged on the first run of each
   rep (warm-up included) and on the whole schedule's time, to settle
   whether excluding the warm-up matters.
2. Injected 15% slowdown on the A/A samples: B's real samples times 1.15,
   so the noise is the machine's own; detected = the rule says B/A > 1.
3. Real slowdown (--real-trials, default 50): B is the case with its spatial
   size grown so that it does about 15% more work; the realized ratio is
   reported beside the detection rate.
4. Between runs: the rule that says a comparison's ratio moved between two
   runs (two torch installs; reports.statistics.ratio_moved) on pairs of A/A
   trials half the experiment apart, where nothing moved (false alarms), and
   with the second trial's B times 1 + --slowdown (detected = "up").
5. Pinning (--pinned-trials, default 50): the A/A again under taskset on the
   CPUs of this process with OMP_PROC_BIND=close OMP_PLACES=cores, against
   the unpinned run: the spread of the samples and the false alarms.
6. Many comparisons (--group, default 15): the rule for a claim judged on
   several comparisons (reports.statistics.decide_many) on 10000 seeded
   draws of --group A/A trials (false alarms: any verdict but inconclusive),
   and of the injected-slowdown trials (detected: supported).

Rates carry a Wilson 95% interval. Raw samples are kept in --out (default
build/<preset>/aa-experiment) as JSON Lines; --from DIR re-judges samples
recorded earlier without running anything. Exit 0 when the targets hold
(false alarms <= 1%, detection >= 95%), 1 when one is missed, 2 on error.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from reports.statistics import (bootstrap_median_ci, decide_many, decide_ratio, paired_ratios,  # noqa: E402
                                ratio_moved)

# The many-comparison rule is measured on draws of this many trials (the
# count of mkldnn-accel's comparisons, the claim judged on the most).
MANY_GROUP = 15
MANY_DRAWS = 10000
MANY_SEED = 20261124

DEFAULT_CASE = ("conv2d:fwd:f32:mb2ic16ih56iw56oc32kh3kw3sh1sw1ph1pw1dh1dw1g1*5 "
                "device=cpu engine=select:onednn threads=2")
FALSE_ALARM_TARGET = 0.01
DETECTION_TARGET = 0.95


def wilson(k: int, n: int, z: float = 1.96) -> tuple[float, float]:
    if n == 0:
        return 0.0, 1.0
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def rate_text(k: int, n: int) -> str:
    lo, hi = wilson(k, n)
    return f"{k}/{n} = {100 * k / n:.1f}% (95% CI {100 * lo:.1f}-{100 * hi:.1f}%)" if n else "no trials"


def run_trials(binary: Path, a: str, b: str, trials: int, reps: int, repeats: int, out: Path,
               pin: bool = False) -> list[dict]:
    cmd = [str(binary), "--a", a, "--b", b, "--trials", str(trials), "--reps", str(reps), "--repeats", str(repeats)]
    env = dict(os.environ)
    if pin:
        cpus = sorted(os.sched_getaffinity(0))
        cmd = ["taskset", "-c", ",".join(map(str, cpus))] + cmd
        env.update(OMP_PROC_BIND="close", OMP_PLACES="cores")
    start = time.monotonic()
    with out.open("w", encoding="utf-8") as f:
        proc = subprocess.run(cmd, stdout=f, stderr=subprocess.PIPE, text=True, env=env)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: exit {proc.returncode}: {proc.stderr.strip()}")
    print(f"  {trials} trials in {time.monotonic() - start:.0f} s -> {out}", file=sys.stderr)
    return read_trials(out)


def read_trials(path: Path) -> list[dict]:
    trials = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        try:
            trials.append(json.loads(line))
        except json.JSONDecodeError as e:
            raise RuntimeError(f"{path}:{n}: not JSON: {e.msg}") from e
    return trials


def judge(trials: list[dict], metric: str, scale_b: float = 1.0, supports_when: str = "below") -> dict:
    """Outcomes of the ratio rule (bound 1) over the trials."""
    outcomes, ratios = [], []
    for t in trials:
        a = [float(x) for x in t["a"][metric]]
        b = [float(x) * scale_b for x in t["b"][metric]]
        outcome, ratio, _ = decide_ratio(a, b, 1.0, supports_when)
        outcomes.append(outcome)
        ratios.append(ratio)
    return {"n": len(trials), "decisive": sum(o != "inconclusive" for o in outcomes),
            "supported": outcomes.count("supported"), "median_ratio": statistics.median(ratios) if ratios else None,
            "outcomes": outcomes}


def judge_many(outcomes: list[str], group: int, draws: int = MANY_DRAWS) -> dict:
    """The rule for a claim on `group` comparisons (reports.statistics.
    decide_many) over seeded draws of `group` distinct trials' outcomes: how
    often each verdict came out. The draws share trials, so the rates are
    estimates from these trials, without an interval of their own."""
    rng = random.Random(MANY_SEED)
    verdicts = [decide_many(rng.sample(outcomes, group))[0] for _ in range(draws)] if len(outcomes) >= group else []
    return {"group": group, "draws": len(verdicts), "supported": verdicts.count("supported"),
            "refuted": verdicts.count("refuted"), "decisive": sum(v != "inconclusive" for v in verdicts)}


def judge_moved(trials: list[dict], metric: str, scale_b: float = 1.0) -> dict:
    """ratio_moved over pairs of trials half the list apart (minutes apart in
    time, as two installs' runs are), the second's B scaled by scale_b."""
    half = len(trials) // 2
    moved = []
    for first, second in zip(trials[:half], trials[half:2 * half]):
        ci = []
        for t, scale in ((first, 1.0), (second, scale_b)):
            a = [float(x) for x in t["a"][metric]]
            b = [float(x) * scale for x in t["b"][metric]]
            ci.append(bootstrap_median_ci(paired_ratios(a, b)))
        moved.append(ratio_moved(ci[0], ci[1]))
    return {"n": len(moved), "moved": sum(m != "" for m in moved), "up": moved.count("up")}


def spread(trials: list[dict], metric: str) -> float:
    """Median over trials and sides of the coefficient of variation of one
    side's reps (the noise the rule has to see through)."""
    cvs = []
    for t in trials:
        for side in ("a", "b"):
            v = [float(x) for x in t[side][metric]]
            if len(v) > 1 and statistics.mean(v) > 0:
                cvs.append(statistics.stdev(v) / statistics.mean(v))
    return statistics.median(cvs) if cvs else float("nan")


def slower_case(case: str, slowdown: float) -> tuple[str, float]:
    """The case with ih and iw grown so that the work grows by about
    `slowdown`; with the exact work factor."""
    grow = math.sqrt(1 + slowdown)
    first = re.search(r"ih(\d+)iw(\d+)", case)
    if first is None:
        raise ValueError(f"--case needs conv2d steps with ih and iw to grow: {case}")
    ih, iw = int(first.group(1)), int(first.group(2))
    nih, niw = round(ih * grow), round(iw * grow)
    return re.sub(r"ih(\d+)iw(\d+)", f"ih{nih}iw{niw}", case), (nih * niw) / (ih * iw)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build", type=Path, default=ROOT / "build" / "default")
    parser.add_argument("--case", default=DEFAULT_CASE)
    parser.add_argument("--trials", type=int, default=200)
    parser.add_argument("--real-trials", type=int, default=50)
    parser.add_argument("--pinned-trials", type=int, default=50)
    parser.add_argument("--reps", type=int, default=9)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--slowdown", type=float, default=0.15)
    parser.add_argument("--group", type=int, default=MANY_GROUP,
                        help="comparisons per claim for the many-comparison rule")
    parser.add_argument("--out", type=Path)
    parser.add_argument("--from", dest="recorded", type=Path, help="re-judge the samples recorded in this directory")
    args = parser.parse_args(argv)
    out = args.recorded or args.out or args.build / "aa-experiment"
    out.mkdir(parents=True, exist_ok=True)
    binary = args.build / "perf_trials"
    slow_case, work = slower_case(args.case, args.slowdown)
    files = {"aa": out / "aa.jsonl", "real": out / "real-slowdown.jsonl", "pinned": out / "aa-pinned.jsonl"}
    try:
        if args.recorded:
            data = {k: read_trials(p) if p.exists() else [] for k, p in files.items()}
        else:
            if not binary.exists():
                print(f"{binary}: not built (cmake --build --preset default)", file=sys.stderr)
                return 2
            print(f"case: {args.case}", file=sys.stderr)
            data = {"aa": run_trials(binary, args.case, args.case, args.trials, args.reps, args.repeats, files["aa"])}
            data["real"] = run_trials(binary, args.case, slow_case, args.real_trials, args.reps, args.repeats,
                                      files["real"]) if args.real_trials else []
            data["pinned"] = run_trials(binary, args.case, args.case, args.pinned_trials, args.reps, args.repeats,
                                        files["pinned"], pin=True) if args.pinned_trials else []
    except (RuntimeError, OSError) as e:
        print(str(e), file=sys.stderr)
        return 2

    aa = data["aa"]
    results = {"case": args.case, "reps": args.reps, "repeats": args.repeats}
    lines = [f"case: {args.case}", f"reps {args.reps} a side, {args.repeats} runs a step"]
    steady = judge(aa, "steady_ns")
    results["aa"] = steady
    lines.append(f"A/A false alarms (steady_ns, the claims' metric): {rate_text(steady['decisive'], steady['n'])}; "
                 f"median ratio {steady['median_ratio']:.4f}")
    for metric, what in (("first_ns", "first run, warm-up included"), ("total_ns", "whole schedule")):
        j = judge(aa, metric)
        results[f"aa_{metric}"] = j
        lines.append(f"A/A false alarms ({metric}, {what}): {rate_text(j['decisive'], j['n'])}")
    warm = [statistics.median([float(x) for x in t["a"]["first_ns"]]) /
            statistics.median([float(x) for x in t["a"]["steady_ns"]]) for t in aa]
    results["warmup_penalty"] = statistics.median(warm) if warm else None
    lines.append(f"warm-up: first run / steady run = {results['warmup_penalty']:.3f} (median over trials); "
                 f"spread (median CV of a side's reps): steady {100 * spread(aa, 'steady_ns'):.2f}%, "
                 f"first run {100 * spread(aa, 'first_ns'):.2f}%")
    injected = judge(aa, "steady_ns", scale_b=1 + args.slowdown, supports_when="above")
    results["injected"] = injected
    lines.append(f"injected {100 * args.slowdown:.0f}% slowdown (B's real samples x {1 + args.slowdown:g}) "
                 f"detected: {rate_text(injected['supported'], injected['n'])}")
    many = judge_many(steady["outcomes"], args.group)
    many_injected = judge_many(injected["outcomes"], args.group)
    results["many"] = {"aa": many, "injected": many_injected}
    lines.append(f"a claim on {args.group} comparisons (decide_many, {many['draws']} seeded draws of {args.group} "
                 f"A/A trials): false alarms {many['decisive']}/{many['draws']} "
                 f"({100 * many['decisive'] / max(many['draws'], 1):.2f}%); injected "
                 f"{100 * args.slowdown:.0f}% slowdown on all of them supported in "
                 f"{many_injected['supported']}/{many_injected['draws']} "
                 f"({100 * many_injected['supported'] / max(many_injected['draws'], 1):.2f}%)")
    between = judge_moved(aa, "steady_ns")
    between_injected = judge_moved(aa, "steady_ns", scale_b=1 + args.slowdown)
    results["between_runs"] = {"aa": between, "injected": between_injected}
    lines.append(f"between runs (ratio_moved on A/A trials {len(aa) // 2} apart): false alarms "
                 f"{rate_text(between['moved'], between['n'])}; injected {100 * args.slowdown:.0f}% in the second "
                 f"run detected: {rate_text(between_injected['up'], between_injected['n'])}")
    if data["real"]:
        real = judge(data["real"], "steady_ns", supports_when="above")
        results["real"] = dict(real, work_factor=work, case_b=slow_case)
        lines.append(f"real slowdown ({slow_case.split()[0].split('*')[0]}: {100 * (work - 1):.1f}% more work, "
                     f"realized median B/A {real['median_ratio']:.3f}) detected: "
                     f"{rate_text(real['supported'], real['n'])}")
    if data["pinned"]:
        pinned = judge(data["pinned"], "steady_ns")
        results["pinned"] = dict(pinned, spread=spread(data["pinned"], "steady_ns"))
        lines.append(f"pinned A/A (taskset, OMP_PROC_BIND=close): false alarms "
                     f"{rate_text(pinned['decisive'], pinned['n'])}, spread "
                     f"{100 * spread(data['pinned'], 'steady_ns'):.2f}% vs unpinned "
                     f"{100 * spread(aa, 'steady_ns'):.2f}%")
    met = steady["decisive"] / max(steady["n"], 1) <= FALSE_ALARM_TARGET and \
        injected["supported"] / max(injected["n"], 1) >= DETECTION_TARGET
    lines.append(f"targets (false alarms <= {100 * FALSE_ALARM_TARGET:.0f}%, detection >= "
                 f"{100 * DETECTION_TARGET:.0f}%): {'met' if met else 'MISSED'}")
    (out / "summary.json").write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    print("\n".join(lines))
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
