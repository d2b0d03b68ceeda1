"""The gtest TEST lines and the ctest properties of PyTorch's probes, from
their declarations (inputs/probes.py, probes/declared.toml).

suites/pytorch_python_test.cc includes the TEST lines where RunTorchProbe
is known; ctest reads the properties after the tests' discovery; the GPU
kit (ci/kit_steps.py) plans from the same CMake text.
"""

from __future__ import annotations

from pathlib import Path

from inputs.probes import SUITE, Probe


def test_lines(probes: list[Probe]) -> str:
    """The gtest TEST of each probe, in declaration order, for
    suites/pytorch_python_test.cc to include where RunTorchProbe is known."""
    out = ["// Generated from probes/declared.toml by `python3 -m generators probes`: edit that file.\n"]
    for p in probes:
        if p.tier:
            out.append(f"TEST({SUITE}, {p.test}) {{\n  setenv(\"BACKENDCHECK_TIER\", BC_TIER, 1);\n"
                       f"  RunTorchProbe(\"{p.name}\");\n}}\n")
        else:
            out.append(f"TEST({SUITE}, {p.test}) {{ RunTorchProbe(\"{p.name}\"); }}\n")
    return "".join(out)


def cmake_properties(probes: list[Probe]) -> str:
    """The set_tests_properties of each probe with properties beyond its
    binary's, for ctest to read after the tests' discovery."""
    out = ["# Generated from probes/declared.toml by `python3 -m generators probes`: edit that file.\n"]
    if any(p.device == "gpu" for p in probes):
        # The GPU probes' resource groups: bc_gpu_test, with the build's spec.
        out.append('include("${CMAKE_CURRENT_LIST_DIR}/gpu_resources.cmake")\n')
    for p in probes:
        if props := p.properties():
            out.append(f"set_tests_properties([==[{p.full_name}]==] PROPERTIES "
                       + " ".join(f"{k} {v}" for k, v in props) + ")\n")
        if call := p.gpu_call():
            out.append(call + "\n")
    return "".join(out)


def write(probes: list[Probe], inc: Path, cmake: Path) -> None:
    """Writes both files, each only where its text changed, so that nothing
    recompiles for nothing."""
    for path, text in ((inc, test_lines(probes)), (cmake, cmake_properties(probes))):
        if not path.exists() or path.read_text() != text:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)

