"""The fixtures a spec may name, the test each defines, and the binary that
holds their cases per device. Mirrors suites/fixtures.h and CMakeLists.txt."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Fixture:
    name: str
    test: str
    binaries: dict[str, str]  # device -> test binary
    devices: tuple[str, ...]


FIXTURES: dict[str, Fixture] = {
    "Determinism": Fixture("Determinism", "Bitwise",
                           {"cpu": "determinism_tests", "cuda": "gpu_tests"}, ("cpu", "cuda")),
    "CpuNoop": Fixture("CpuNoop", "CudnnFlagsLeaveResultUnchanged",
                       {"cpu": "availability_tests"}, ("cpu",)),
    "Schedule": Fixture("Schedule", "Run", {"cpu": "selection_tests", "cuda": "gpu_tests"}, ("cpu", "cuda")),
    "Compare": Fixture("Compare", "SideBySide", {"cpu": "selection_tests", "cuda": "gpu_tests"}, ("cpu", "cuda")),
    "CrossProcess": Fixture("CrossProcess", "Probe", {"cpu": "selection_tests", "cuda": "gpu_tests"},
                            ("cpu", "cuda")),
}

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
