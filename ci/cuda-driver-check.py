#!/usr/bin/env python3
"""Checks, before a GPU run, that the machine's NVIDIA driver supports the CUDA
runtime the build uses, and fails with that reason; otherwise every GPU test
would skip with cudaErrorInsufficientDriver and the run would prove nothing.

    ci/cuda-driver-check.py [--cuda-home DIR] [--runtime NNNNN] [--from FILE]

The runtime version is CUDART_VERSION from DIR/include/cuda_runtime_api.h
(DIR: --cuda-home, else $CUDA_HOME, else /usr/local/cuda), or --runtime
(13000 for 13.0). The driver's is the "CUDA Version" that nvidia-smi prints,
or that of a saved nvidia-smi output (--from). A driver for an older major
version fails; an older minor version of the same major passes with a note
(CUDA's minor version compatibility, which some features lack).
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
from pathlib import Path


def runtime_version(cuda_home: Path) -> int:
    header = cuda_home / "include" / "cuda_runtime_api.h"
    match = re.search(r"#define\s+CUDART_VERSION\s+(\d+)", header.read_text(errors="replace"))
    if not match:
        raise ValueError(f"{header}: no CUDART_VERSION")
    return int(match.group(1))


def driver_version(smi_output: str) -> int:
    match = re.search(r"CUDA Version\s*:\s*(\d+)\.(\d+)", smi_output)
    if not match:
        raise ValueError("nvidia-smi printed no 'CUDA Version'")
    return int(match.group(1)) * 1000 + int(match.group(2)) * 10


def dotted(version: int) -> str:
    return f"{version // 1000}.{version % 1000 // 10}"


def verdict(driver: int, runtime: int) -> tuple[bool, str]:
    """(ok, message) for a driver's CUDA version against the runtime's."""
    if driver >= runtime:
        return True, f"the driver supports CUDA {dotted(driver)}; the build uses CUDA {dotted(runtime)}"
    if driver // 1000 == runtime // 1000:
        return True, (f"the driver supports CUDA {dotted(driver)}, older than the build's CUDA {dotted(runtime)}: "
                      "running under CUDA's minor version compatibility")
    return False, (f"the driver supports CUDA {dotted(driver)} but the build uses the CUDA {dotted(runtime)} runtime: "
                   f"every GPU test would skip with cudaErrorInsufficientDriver; install a driver for CUDA "
                   f"{runtime // 1000}.x, or build with a CUDA {driver // 1000}.x toolkit (CUDA_HOME)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cuda-home", type=Path, default=Path(os.environ.get("CUDA_HOME") or "/usr/local/cuda"))
    parser.add_argument("--runtime", type=int)
    parser.add_argument("--from", dest="saved", type=Path, help="a saved nvidia-smi output")
    args = parser.parse_args(argv)
    try:
        runtime = args.runtime or runtime_version(args.cuda_home)
    except (OSError, ValueError) as e:
        print(f"cuda-driver-check: cannot read the CUDA runtime version: {e}", file=sys.stderr)
        return 1
    try:
        if args.saved:
            smi = args.saved.read_text(errors="replace")
        else:
            smi = subprocess.run(["nvidia-smi"], capture_output=True, text=True, timeout=60, check=True).stdout
        driver = driver_version(smi)
    except FileNotFoundError:
        print("cuda-driver-check: no NVIDIA driver here (nvidia-smi not found)", file=sys.stderr)
        return 1
    except (OSError, ValueError, subprocess.SubprocessError) as e:
        print(f"cuda-driver-check: cannot read the driver's CUDA version: {e}", file=sys.stderr)
        return 1
    ok, message = verdict(driver, runtime)
    print(f"cuda-driver-check: {message}", file=sys.stdout if ok else sys.stderr)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
