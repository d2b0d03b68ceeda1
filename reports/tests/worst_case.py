"""The report's synthetic worst case (issue 47): whatever sits above the
claims grid at its longest, built through the real pipeline
(reports.pipeline.build, then render.write_report) so that the browser check
can hold the first screen to it.

From the recorded run of an AVX-512 BF16 CPU (both torch installs,
reports/tests/data/zen5-avx512bf16) it writes:
- a catalog derived from catalog/claims.toml (the same ids, statements,
  kinds, scopes and cards) whose every claim is decided by a few of its own
  tests (another one where none fits) that failed on every platform and
  whose records show the system the claim is about, so that every claim is
  refuted on every platform and every card line is decided;
- the evidence of both installs on two machines (four platforms): the
  processes of those tests, every result rewritten to a failure with a long
  message, the machines renamed to long host names, torch's Python to a
  long path, each run in a deeply nested directory of long names and ending
  in a torn record (an evidence problem per run);
- torch installs that all failed, during set-up or the build, each log with a
  long CMake error;
- ctest's test list with long-named tests that left no result, a baseline
  with the five changed verdicts that open its list, and the repository's
  known findings, which expect none of this.

    python3 -m reports.tests.worst_case DIR    # writes DIR/out/index.html
"""

from __future__ import annotations

import json
import sys
import tomllib
from pathlib import Path
from typing import Any

from inputs import install_state
from reports.catalog import load_catalog
from reports.evidence import Evidence
from reports.pipeline import Inputs
from reports.tests.recorded import unpack_zen5
from reports.verdicts import select_tests

ROOT = Path(__file__).resolve().parents[2]
MACHINES = ("ci-runner-eu-west-3b-rack42-node17-amd-epyc-9755-avx512bf16-vnni-vp2intersect."
            "compute.internal.example-corporation-datacenter-frankfurt",
            "gitlab-shared-runner-autoscaled-spot-instance-0f3a9c2e7b1d4c8a9e6f-zen5-avx512bf16."
            "eu-central-1.compute.amazonaws.com.nightly-benchmarks")
LONG_DIR = ("shared-evidence-archive-of-the-nightly-cpu-and-gpu-conformance-pipelines-kept-for-ninety-days",
            "merged-runs-of-every-torch-install-and-every-machine-in-the-fleet-for-the-weekly-report")
PYTHON = ("/home/ci/.cache/backendcheck/torch-installs/virtual-environments-of-the-nightly-pipeline/"
          "torch-2.15.0-cu132-python3.11-manylinux_2_28_x86_64-with-cudnn-9.26.0-and-cublas-13.4.1/bin/python3.11")
UNRUN = 8  # tests of ctest's list that left no result
TESTS_PER_CLAIM = 4
INSTALLS = (("setup", "torch==2.16.0.dev20261126+cu132", ""), ("build", PYTHON, "2.15.0+cu132"),
            ("setup", "torch==2.14.1+cpu.cxx11.abi", ""), ("build", "/usr/bin/python3", "1.13.0a0"),
            ("build", "torch==2.15.0+rocm7.1", "2.15.0+rocm7.1"), ("setup", PYTHON.replace("2.15.0", "2.13.0"), ""))


def _failure(test: str) -> str:
    return (f"{test} failed: the observed bits differ from the expected ones in 4096 of 4096 elements after the "
            "third repeat, the first at index (0, 17, 3, 9): 0x3f800000 against 0x3f800001; the check was run "
            "with use_deterministic_algorithms(True), cudnn.benchmark=False, mkldnn.enabled=True and "
            "ONEDNN_MAX_CPU_ISA=AVX512_CORE_BF16 from /home/ci/.cache/backendcheck/build/"
            "default-torch-2.15.0-cu132/suites/cpu/torch_python_tests/TorchPython.InvarianceGrid/child-process-7/"
            "stderr-of-the-child-process-that-ran-the-probe.log")


def _scan(evidence: Path, systems: dict[str, set[str]], erred: set[str]) -> dict[str, list[dict[str, Any]]]:
    """A run's records, file by file; notes the systems each test's case
    records show and the tests whose checks erred."""
    files = {}
    for f in sorted(evidence.glob("*.jsonl")):
        files[f.name] = [json.loads(line) for line in f.read_text(encoding="utf-8").splitlines()]
        for r in files[f.name]:
            if r.get("kind") == "case":
                systems.setdefault(r["test"], set()).update([r["system"]] if "system" in r else [])
                if any(c.get("outcome") == "error" for c in r.get("checks", [])):
                    erred.add(r["test"])  # a check the harness could not make: an error, not a refutation
    return files


def _rewrite(files: dict[str, list[dict[str, Any]]], dst: Path, machine: str, keep: set[str]) -> None:
    """The files of a run that hold a test of `keep` into dst (one process
    each: the rest would only slow the report down): every result a
    failure, the machine and torch's Python renamed, the last record of the
    first file torn."""
    dst.mkdir(parents=True)
    torn = '\n{"kind":"result","test":"torn'
    for name, records in files.items():
        if not any(r.get("test") in keep for r in records):
            continue
        out = []
        for r in records:
            if r.get("kind") == "environment":
                r = dict(r, machine=machine)
                if isinstance(r.get("torch"), dict):
                    r["torch"] = dict(r["torch"], python=PYTHON)
            elif r.get("kind") == "result":
                r = dict(r, outcome="failed", message=_failure(r["test"]))
            out.append(json.dumps(r, separators=(",", ":")))
        (dst / name).write_text("\n".join(out) + "\n" + torn, encoding="utf-8")
        torn = ""


def _toml(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    return "{ " + ", ".join(f"{json.dumps(k)} = {_toml(v)}" for k, v in value.items()) + " }"


def _catalog(out: Path, manifest: list[dict[str, Any]], failing: set[str],
             systems: dict[str, set[str]]) -> tuple[Path, set[str]]:
    """catalog/claims.toml with every claim decided by tests that failed
    everywhere, each test showing the system the claim is about (or one
    system, for a claim about any), so that nothing is mistrusted; and the
    tests the claims name."""
    raw = tomllib.loads((ROOT / "catalog" / "claims.toml").read_text(encoding="utf-8"))["claim"]
    loaded = {c.id: c for c in load_catalog(ROOT / "catalog" / "claims.toml")}
    known = Evidence(registered=set(failing))
    text, named = [], set()
    for c in raw:
        claim, about = loaded[c["id"]], c["about"]

        def fits(test: str) -> bool:
            shown = systems.get(test, set())
            return test in failing and (len(shown) <= 1 if about == "any" else shown <= {about})

        chosen = [t for t in select_tests(claim.tests, claim.cases, manifest, known) if fits(t)]
        chosen = chosen or [t for t in sorted(failing) if fits(t)][:1]
        shown = sorted(systems.get(chosen[0], set())) or ["any"]
        system = about if about != "any" else shown[0]
        chosen = [t for t in chosen if systems.get(t, set()) <= {system}][:TESTS_PER_CLAIM]
        named.update(chosen)
        old = c["evidence"]
        ev: dict[str, Any] = {"rule": old["rule"] if old["rule"] in ("ratio", "invariance") else "fact",
                              "system": system, "polarity": "supports", "tests": chosen}
        ev.update({k: old[k] for k in ("metric", "bound", "supports_when", "level", "variant") if k in old
                   and ev["rule"] != "fact"})
        fields = {k: c[k] for k in ("id", "statement", "source", "kind", "about", "scope") if k in c}
        text.append("[[claim]]\n" + "".join(f"{k} = {_toml(v)}\n" for k, v in fields.items())
                    + f"evidence = {_toml(ev)}\n" + (f"card = {_toml(c['card'])}\n" if "card" in c else "")
                    + (f"prediction = {_toml(c['prediction'])}\n" if "prediction" in c else ""))
    path = out / "claims.toml"
    path.write_text("\n".join(text), encoding="utf-8")
    return path, named


def _installs(root: Path) -> list[Path]:
    """State files of torch installs that all stopped before their tests."""
    states = []
    for i, (stage, torch, version) in enumerate(INSTALLS, start=1):
        where = root / LONG_DIR[0] / f"install-{i}-of-a-run-across-{len(INSTALLS)}-torch-versions"
        where.mkdir(parents=True)
        log = where / f"install-{i}.log"
        log.write_text(
            "-- The CXX compiler identification is GNU 12.2.0\n-- Detecting CXX compiler ABI info - done\n"
            f"CMake Error at {where}/build/_deps/torch-src/cmake/public/cuda.cmake:{60 + i} (message):\n"
            "  Caffe2: Couldn't find the CUDA runtime library and headers of the version that this torch was built\n"
            "  with (13.2); the toolkit found under /usr/local/cuda-12.4/targets/x86_64-linux/lib is older; set\n"
            "  CUDA_TOOLKIT_ROOT_DIR to a toolkit of that version, or install a torch built for the toolkit here\n"
            "  (pip install torch --index-url https://download.pytorch.org/whl/cu124), then run again\n"
            "Call Stack (most recent call first):\n  CMakeLists.txt:45 (find_package)\n"
            f"backendcheck: {stage} of torch install {i} ({torch}) failed with exit {i}; its log is {log}\n",
            encoding="utf-8")
        state = where / f"install-{i}.state"
        install_state.write(state, {"torch": torch, "stage": stage, **({"version": version} if version else {}),
                                    **({"build_dir": f"{where}/build"} if stage != "setup" else {}),
                                    "exit": i, "log": str(log)})
        states.append(state)
    return states


def write(root: Path) -> Inputs:
    """Writes the worst case's inputs under `root`; returns what the command
    line would name (the report goes to root/out)."""
    runs = unpack_zen5(root / "recorded")
    manifest_path = runs["2.15.0"] / "cases.json"
    manifest = json.loads(manifest_path.read_text(encoding="utf-8"))["cases"]
    systems: dict[str, set[str]] = {}
    erred: set[str] = set()
    scanned = {version: _scan(run / "evidence", systems, erred) for version, run in sorted(runs.items())}
    failing = set.intersection(*({r["test"] for records in files.values() for r in records if r.get("kind") == "result"}
                                 for files in scanned.values())) - erred  # on every platform, each a refutation
    claims, named = _catalog(root, manifest, failing, systems)
    evidence = []
    for machine in MACHINES:
        for version, files in scanned.items():
            evidence.append(root.joinpath(*LONG_DIR, f"{machine}-torch-{version}",
                                          "run-20261126T190801Z-4f9e2c7a1b3d5e6f", "evidence"))
            _rewrite(files, evidence[-1], machine, named)
    tests = json.loads((runs["2.15.0"] / "ctest-tests.json").read_text(encoding="utf-8"))
    tests["tests"] += [{"name": f"Unrun/TorchPython.AProbeWhoseProcessWasKilledBeforeItsResultRecord"
                                f"WithAVeryLongParameterisedName_threads_{2 ** i}_isa_AVX512_CORE_BF16_batch_{i}"}
                       for i in range(UNRUN)]
    ctest = root / "ctest-tests.json"
    ctest.write_text(json.dumps(tests), encoding="utf-8")
    ids = [c.id for c in load_catalog(claims)]
    baseline = root / "baseline.json"
    baseline.write_text(json.dumps({"generated": "2026-11-19T03:00:00+00:00", "claims": [
        {"id": cid, "verdict": "supported" if i < 5 else "refuted", "platforms": {}} for i, cid in enumerate(ids)]}),
        encoding="utf-8")
    return Inputs(claims=claims, manifest=manifest_path, out=root / "out", evidence=evidence, tests=ctest,
                  partial=True, baseline=baseline, known=ROOT / "catalog" / "known_findings.toml",
                  installs=_installs(root))


def main(argv: list[str]) -> int:
    from reports.pipeline import build
    from reports.page.render import write_report

    if len(argv) != 1:
        print(__doc__.rsplit("\n\n", 1)[-1].strip(), file=sys.stderr)
        return 2
    inputs = write(Path(argv[0]).resolve())
    print(write_report(inputs.out, build(inputs)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
