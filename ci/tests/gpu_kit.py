"""The offline GPU kit end to end: `ci/gpu-kit pack` writes one archive of at
most 60 MB; `ci/gpu-kit run` builds and runs the GPU tier from it with no
network (a new network namespace: `unshare -n`), against the torch under
test; without a GPU every GPU test skips with the CUDA runtime's no-device
error; and its evidence archive merges with another machine's evidence
(the first H100 run's, reports/tests/data/h100) into one report.

    python3 -m ci.tests.gpu_kit BUILD_DIR TORCH_PYTHON

Exit status 77 (ctest's skip) where this machine cannot make a network
namespace.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LIMIT = 60 * 1000 * 1000
# How a test without a device skips: the CUDA runtime's error (the harness's
# GPU tests), or PyTorch saying so (its probes labelled gpu).
NO_DEVICE = ("cudaGetDeviceCount returned", "sees no CUDA device")


def check(ok: bool, what: str) -> None:
    if not ok:
        print(f"FAIL: {what}", file=sys.stderr)
        sys.exit(1)


def main(argv: list[str]) -> int:
    build, torch_python = Path(argv[0]).resolve(), argv[1]
    if subprocess.run(["unshare", "-n", "true"], capture_output=True).returncode != 0:
        print("SKIP: no network namespace here (unshare -n refused): the offline run cannot be shown")
        return 77
    with tempfile.TemporaryDirectory(dir=build) as tmp:
        t = Path(tmp)
        kit = t / "kit.tar.gz"
        r = subprocess.run([str(ROOT / "ci" / "gpu-kit"), "pack", "--out", str(kit)], capture_output=True, text=True,
                           timeout=900)
        check(r.returncode == 0, f"pack exit {r.returncode}: {r.stderr[-2000:]}")
        size = kit.stat().st_size
        check(size <= LIMIT, f"the kit is {size} bytes, over {LIMIT}")
        print(f"pack: {size} bytes")
        out = t / "out"
        env = {k: v for k, v in os.environ.items() if not k.startswith("BACKENDCHECK_")}
        r = subprocess.run(["unshare", "-n", str(ROOT / "ci" / "gpu-kit"), "run", str(kit), "--python", torch_python,
                            "--name", "kit-node", "--work", str(t / "work"), "--out", str(out)],
                           cwd=t, env=env, capture_output=True, text=True, timeout=1500)
        check(r.returncode == 0, f"run exit {r.returncode}: {(r.stdout + r.stderr)[-3000:]}")
        archive = out / "backendcheck-gpu-kit-node.tar.gz"
        check(archive.is_file(), f"no evidence archive {archive}")
        with tarfile.open(archive) as tf:
            # The "data" filter where this Python has it (3.11.4 and later).
            kw = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}
            tf.extractall(t / "merged", **kw)
        node = t / "merged" / "kit-node"
        results = [json.loads(line) for f in sorted((node / "evidence").glob("*.jsonl"))
                   for line in f.read_text().splitlines() if '"kind":"result"' in line.replace(" ", "")]
        check(len(results) > 100, f"only {len(results)} result records from the GPU tier")
        odd = [f"{r['test']}: {r['outcome']} {r.get('message', '')[:120]}" for r in results
               if r["outcome"] != "passed"
               and not (r["outcome"] == "skipped" and any(n in r.get("message", "") for n in NO_DEVICE))]
        check(not odd, "GPU tests that neither passed nor skipped with the no-device error: " + "; ".join(odd[:5]))
        skipped = sum(r["outcome"] == "skipped" for r in results)
        print(f"run: {len(results)} GPU tests, {skipped} skipped with the no-device error")
        report = t / "report"
        r = subprocess.run([sys.executable, "-m", "reports", "--claims", str(ROOT / "suites" / "claims.toml"),
                            "--manifest", str(node / "cases.json"), "--junit", str(node / "ctest-junit.xml"),
                            "--out", str(report), "--partial", str(node / "evidence"),
                            str(ROOT / "reports" / "tests" / "data" / "h100" / "evidence")],
                           cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True,
                           timeout=300)
        check(r.returncode == 0, f"report exit {r.returncode}: {r.stderr[-2000:]}")
        data = json.loads((report / "report.json").read_text())
        check(len(data["platforms"]) >= 2, f"the report has {len(data['platforms'])} platform(s), not the two merged")
        atomics = next(c for c in data["claims"] if c["id"] == "atomics-cudnn")
        check(atomics["verdict"] == "supported", f"atomics-cudnn is {atomics['verdict']} in the merged report")
        print(f"report: {len(data['platforms'])} platforms merged: {'; '.join(sorted(data['platforms']))}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
