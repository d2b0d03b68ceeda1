"""The offline GPU kit end to end: `ci/gpu-kit pack` writes one archive of at
most 60 MB; `ci/gpu-kit run` builds and runs the GPU tier from it with no
network (a new network namespace: `unshare -n`), against the torch under
test; without a GPU every GPU test skips with the CUDA runtime's no-device
error; and its evidence archive merges with another machine's evidence
(the H100 kit's recorded calls, reports/tests/data/h100) into one report,
held to the known findings. Then the
rehearsal of a short-lived runner: `ci/gpu-kit test` calls with a budget of
a few seconds over PyTorch probes that take time here, until none is left:
each call's archive within the return limits, the second resuming where the
first stopped, and their merged report judging as one call without a budget,
each held to catalog/known_findings.toml.

    python3 -m ci.tests.gpu_kit BUILD_DIR TORCH_PYTHON     (ci.gpu_kit)
    python3 -m ci.tests.gpu_kit --rehearse BUILD_DIR       (ci.gpu_kit_rehearsal, after it)
    python3 -m ci.tests.gpu_kit --calls WORK BUDGET [-L LABEL] [-R REGEX]
        the same over a kit built by hand (ci/gpu-kit build KIT --work WORK)

Exit status 77 (ctest's skip) where this machine cannot make a network
namespace.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LIMIT = 60 * 1000 * 1000
KEPT = "gpu-kit-kept"  # the kit's work and manifest, from the run to the rehearsal
# How a test without a device skips: the CUDA runtime's error (the harness's
# GPU tests), PyTorch saying so (its probes labelled gpu), or the kit's
# pre-flight having found no driver for PyTorch's CUDA runtime
# (probes/preflight.py).
NO_DEVICE = ("cudaGetDeviceCount returned", "sees no CUDA device", "needs a CUDA device",
             "lacks an NVIDIA driver for PyTorch's CUDA runtime")


def check(ok: bool, what: str) -> None:
    if not ok:
        print(f"FAIL: {what}", file=sys.stderr)
        sys.exit(1)


def main(argv: list[str]) -> int:
    if argv[0] == "--rehearse":
        return rehearsal(Path(argv[1]).resolve())
    if argv[0] == "--calls":
        return accept(Path(argv[1]).resolve(), int(argv[2]), tuple(argv[3:]))
    build, torch_python = Path(argv[0]).resolve(), argv[1]
    if subprocess.run(["unshare", "-n", "true"], capture_output=True).returncode != 0:
        print("SKIP: no network namespace here (unshare -n refused): the offline run cannot be shown")
        return 77
    # The kit's work (its build) stays for the rehearsal, which runs next.
    shutil.rmtree(build / KEPT, ignore_errors=True)
    with tempfile.TemporaryDirectory(dir=build) as tmp:
        t = Path(tmp)
        kit = t / "kit.tar.gz"
        started = time.monotonic()
        r = subprocess.run([str(ROOT / "ci" / "gpu-kit"), "pack", "--out", str(kit)], capture_output=True, text=True,
                           timeout=900)
        check(r.returncode == 0, f"pack exit {r.returncode}: {r.stderr[-2000:]}")
        size = kit.stat().st_size
        check(size <= LIMIT, f"the kit is {size} bytes, over {LIMIT}")
        print(f"pack: {size} bytes ({time.monotonic() - started:.0f} s)")
        out = t / "out"
        env = {k: v for k, v in os.environ.items() if not k.startswith("BACKENDCHECK_")}
        # Here every GPU test skips at once: they run beside each other on
        # every core (a GPU node's default is half its cores, ci/kit_steps.py JOBS).
        started = time.monotonic()
        r = subprocess.run(["unshare", "-n", str(ROOT / "ci" / "gpu-kit"), "run", str(kit), "--torch", torch_python,
                            "--name", "kit-node", "--work", str(build / KEPT / "work"), "--out", str(out),
                            "--jobs", str(os.cpu_count() or 1)],
                           cwd=t, env=env, capture_output=True, text=True, timeout=1500)
        check(r.returncode == 0, f"run exit {r.returncode}: {(r.stdout + r.stderr)[-3000:]}")
        archive = out / "backendcheck-gpu-kit-node-1.tar.gz"
        check(archive.is_file(), f"no evidence archive {archive}")
        with tarfile.open(archive) as tf:
            # The "data" filter where this Python has it (3.11.4 and later).
            kw = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}
            tf.extractall(t / "merged", **kw)
        node = t / "merged" / "kit-node-1"
        results = [json.loads(line) for f in sorted((node / "evidence").glob("*.jsonl"))
                   for line in f.read_text().splitlines() if '"kind":"result"' in line.replace(" ", "")]
        check(len(results) > 100, f"only {len(results)} result records from the GPU tier")
        odd = [f"{r['test']}: {r['outcome']} {r.get('message', '')[:120]}" for r in results
               if r["outcome"] != "passed"
               and not (r["outcome"] == "skipped" and any(n in r.get("message", "") for n in NO_DEVICE))]
        check(not odd, "GPU tests that neither passed nor skipped with the no-device error: " + "; ".join(odd[:5]))
        skipped = sum(r["outcome"] == "skipped" for r in results)
        print(f"run: {len(results)} GPU tests, {skipped} skipped with the no-device error "
              f"({time.monotonic() - started:.0f} s, build included)")
        report = t / "report"
        r = subprocess.run([sys.executable, "-m", "reports", "--claims", str(ROOT / "catalog" / "claims.toml"),
                            "--manifest", str(node / "cases.json"), "--junit", str(node / "ctest-junit.xml"),
                            "--out", str(report), "--partial", "--known", str(ROOT / "catalog" / "known_findings.toml"),
                            str(node / "evidence"),
                            *[str(d) for d in sorted((ROOT / "reports" / "tests" / "data" / "h100").glob("*/evidence"))]],
                           cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True,
                           timeout=300)
        check(r.returncode == 0, f"report exit {r.returncode}: {r.stderr[-2000:]}")
        data = json.loads((report / "report.json").read_text())
        check(len(data["platforms"]) >= 2, f"the report has {len(data['platforms'])} platform(s), not the two merged")
        atomics = next(c for c in data["claims"] if c["id"] == "atomics-cudnn")
        check(atomics["verdict"] == "supported", f"atomics-cudnn is {atomics['verdict']} in the merged report")
        print(f"report: {len(data['platforms'])} platforms merged: {'; '.join(sorted(data['platforms']))}")
        shutil.copy(node / "cases.json", build / KEPT / "cases.json")
    return 0


def rehearsal(build: Path) -> int:
    """python3 -m ci.tests.gpu_kit --rehearse BUILD_DIR: over the build that
    the kit's run left (ci.gpu_kit runs first)."""
    kept = build / KEPT
    if not (kept / "work" / "kit.env").is_file():
        print("SKIP: no kit build to rehearse on (ci.gpu_kit did not run or could not make a network namespace)")
        return 77
    env = {k: v for k, v in os.environ.items() if not k.startswith("BACKENDCHECK_")}
    with tempfile.TemporaryDirectory(dir=build) as tmp:
        t = Path(tmp)
        rehearse(t, kept / "work", env, kept / "cases.json")
    shutil.rmtree(kept, ignore_errors=True)
    return 0


# The rehearsal of a short-lived runner's calls: PyTorch probes that take a
# second or more each here (an interpreter importing torch), in test calls
# of a small budget over the build `run` made, against one call without one.
REHEARSAL = ("-L", "pytorch", "-R", "^TorchPython\\.(DefaultsAreTheDocumentedOnes|CudnnFlagsScopeSetsAndRestores|"
             "MkldnnIsAvailableReportsTheBuild|OpenmpIsAvailable|ManualSeedIsNotABackendFlag|"
             "MkldnnDeterministicFlagSetsAndRestores|OptEinsumSettings|SdpaBackendSwitchesSetAndRestore)$")
BUDGET = 12
MAX_FILE, MAX_FILES = 16 * 1024 * 1024, 8


def kit_name(work: Path) -> str:
    """The NAME the kit's build gave the node (its archives' names)."""
    for line in (work / "kit.env").read_text().splitlines():
        if line.startswith("KIT_NAME="):
            return shlex.split(line.partition("=")[2])[0]
    return "node"


def calls(t: Path, work: Path, env: dict[str, str], name: str, budget: int,
          select: tuple[str, ...] = REHEARSAL, max_calls: int = 19) -> list[Path]:
    """Test calls under unshare -n until none is left; each call's archive."""
    out, archives, node = t / name, [], kit_name(work)
    for k in range(1, max_calls + 1):
        r = subprocess.run(["unshare", "-n", str(ROOT / "ci" / "gpu-kit"), "test", "--work", str(work),
                            "--state", str(t / f"{name}-state"), "--budget", str(budget), "--out", str(out),
                            *select], env=env, capture_output=True, text=True, timeout=1800 if budget else None)
        check(r.returncode in (0, 75), f"{name} call {k} exit {r.returncode}: {(r.stdout + r.stderr)[-2000:]}")
        files = sorted(out.glob(f"backendcheck-gpu-{node}-{k}.tar.gz*"))
        check(0 < len(files) <= MAX_FILES and all(f.stat().st_size <= MAX_FILE for f in files),
              f"{name} call {k} returned {[(f.name, f.stat().st_size) for f in files]}")
        archives += files
        if r.returncode == 0:
            return archives
    check(False, f"{name}: tests still left after {max_calls} calls")
    return archives


def judged(t: Path, archives: list[Path], manifest: Path, name: str) -> tuple[dict[str, str], list[dict]]:
    """The calls' archives merged into one report: its verdicts, and each
    call's account of what it ran."""
    dirs, steps = [], []
    for a in archives:
        with tarfile.open(a) as tf:
            kw = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}
            tf.extractall(t / f"{name}-x", **kw)
        d = t / f"{name}-x" / a.name.removeprefix("backendcheck-gpu-").removesuffix(".tar.gz")
        dirs.append(d / "evidence")
        steps.append(json.loads((d / "kit-steps.json").read_text()))
    r = subprocess.run([sys.executable, "-m", "reports", "--claims", str(ROOT / "catalog" / "claims.toml"),
                        "--manifest", str(manifest), "--out", str(t / f"{name}-report"), "--partial",
                        "--known", str(ROOT / "catalog" / "known_findings.toml"), *map(str, dirs)], cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)},
                       capture_output=True, text=True, timeout=300)
    check(r.returncode == 0, f"{name} report exit {r.returncode}: {r.stderr[-2000:]}")
    data = json.loads((t / f"{name}-report" / "report.json").read_text())
    return {c["id"]: c["verdict"] for c in data["claims"]}, steps


def rehearse(t: Path, work: Path, env: dict[str, str], manifest: Path, select: tuple[str, ...] = REHEARSAL,
             budget: int = BUDGET, max_calls: int = 19) -> None:
    budgeted = calls(t, work, env, "budgeted", budget, select, max_calls)
    check(len(budgeted) >= 2, f"a budget of {budget} s took {len(budgeted)} call(s), not two or more")
    whole = calls(t, work, env, "whole", 0, select)
    v_budgeted, steps = judged(t, budgeted, manifest, "budgeted")
    v_whole, [one] = judged(t, whole, manifest, "whole")
    ran = [[x["test"] for x in s["ran"]] for s in steps]
    seen = [test for r in ran for test in r]
    check(len(seen) == len(set(seen)), f"a test ran to the end in two calls: {ran}")
    check(sorted(seen) == sorted(x["test"] for x in one["ran"]),
          f"the calls ran {sorted(seen)}, the unbudgeted run {sorted(x['test'] for x in one['ran'])}")
    check(not set(ran[1]) & set(ran[0]), "the second call ran a test the first had completed: it did not resume")
    differ = {k: (v_budgeted[k], v_whole.get(k)) for k in v_budgeted if v_budgeted[k] != v_whole.get(k)}
    check(not differ, f"the merged calls' verdicts differ from the unbudgeted run's: {differ}")
    # Per platform and prediction too, with the card's lines and the real changes.
    r = subprocess.run([sys.executable, "-m", "reports.tools.agree", str(t / "whole-report" / "report.json"),
                        str(t / "budgeted-report" / "report.json")], cwd=ROOT, capture_output=True, text=True)
    check(r.returncode == 0, f"reports.tools.agree: {(r.stdout + r.stderr)[-2000:]}")
    too_long = sorted({x for s in steps for x in s["too_long"]})
    check(not too_long, f"too long for a call of {budget} s: {too_long}")
    print(f"rehearsal: {len(steps)} calls of {budget} s ({', '.join(str(len(r)) for r in ran)} tests; "
          f"{sum(len(s['cut']) for s in steps)} cut and run again), the same {len(v_whole)} verdicts as one call; "
          f"{r.stdout.strip().splitlines()[-1]}")


def accept(work: Path, budget: int, select: tuple[str, ...]) -> int:
    """python3 -m ci.tests.gpu_kit --calls WORK BUDGET [ctest selection]: the
    rehearsal over a kit built with ci/gpu-kit build --work WORK, any label
    and budget (e.g. -L cpu and 60 s); its calls kept in WORK/calls-*."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("BACKENDCHECK_")}
    t = Path(tempfile.mkdtemp(prefix="calls-", dir=work))
    print(f"calls in {t}", flush=True)
    rehearse(t, work, env, work / "build" / "generated" / "cases.json", select, budget, max_calls=200)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
