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
}

# Every binary with a generated table, and the ctest labels CMake gives it.
BINARIES: dict[str, tuple[str, ...]] = {
    "determinism_tests": ("determinism", "cpu"),
    "availability_tests": ("availability", "cpu"),
    "gpu_tests": ("determinism", "gpu", "cudnn"),
}
