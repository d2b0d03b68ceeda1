"""The fixtures a spec may name, the test each defines, and the binary that
holds their cases per device: suites/fixtures.h, the TEST_Ps and CMake's test
binaries spell them too, pinned to this file by ci/tests/test_declarations.py."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Fixture:
    name: str
    test: str
    binaries: dict[str, str]  # device -> test binary
    devices: tuple[str, ...]
    checks: tuple[str, ...]   # the checks it can run; a suite's `checks` picks some (default: all)


_BOTH = ("cpu", "cuda")
_SELECTION = {"cpu": "selection_tests", "cuda": "gpu_tests"}

FIXTURES: dict[str, Fixture] = {
    "Determinism": Fixture("Determinism", "Bitwise", {"cpu": "determinism_tests", "cuda": "gpu_tests"}, _BOTH,
                           ("bitwise", "tolerance")),
    "CpuNoop": Fixture("CpuNoop", "CudnnFlagsLeaveResultUnchanged", {"cpu": "availability_tests"}, ("cpu",),
                       ("bitwise",)),
    "Conformance": Fixture("Conformance", "ModelVersusPytorch", {"cpu": "availability_tests", "cuda": "gpu_tests"},
                           _BOTH, ("conformance",)),
    "Schedule": Fixture("Schedule", "Run", _SELECTION, _BOTH, ("selection", "tolerance")),
    "Compare": Fixture("Compare", "SideBySide", _SELECTION, _BOTH, ("perf-bound",)),
    "CrossProcess": Fixture("CrossProcess", "Probe", _SELECTION, _BOTH, ("selection", "bitwise")),
}

# Every check a suite may ask for. bitwise: digests of repeated runs agree
# (or a positive control's differ); tolerance: the output is within the
# accumulation-length bound of the fp64 reference; selection: the selector's
# facts (searches, fastest chosen, benchmark_limit, deterministic only; across
# processes, the choices); perf-bound: side-by-side timings that the report
# compares with a claim's bound (never asserted in the test); conformance: the
# model and PyTorch side by side on one case.
CHECKS = ("bitwise", "tolerance", "selection", "perf-bound", "conformance")

# Every binary with a generated table, and the ctest labels CMake gives it.
BINARIES: dict[str, tuple[str, ...]] = {
    "determinism_tests": ("determinism", "cpu"),
    "availability_tests": ("availability", "cpu"),
    "selection_tests": ("selection", "cpu"),
    "gpu_tests": ("determinism", "gpu", "cudnn"),
}

# Suite keys that only some fixtures take; they travel to the fixture as the
# case row's JSON options.
FIXTURE_OPTIONS: dict[str, tuple[str, ...]] = {
    "Compare": ("versus", "reps"),
    "CrossProcess": ("processes", "env", "expect"),
}
