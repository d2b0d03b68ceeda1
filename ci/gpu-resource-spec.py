#!/usr/bin/env python3
"""Writes a ctest resource spec with one `gpus` resource per GPU, for a build
configured with -DBACKENDCHECK_GPU_RESOURCE_SPEC=FILE (cmake/GpuResources.cmake):
`ctest -j N` then runs GPU tests on every GPU at once, a test whose timings
are evidence alone on its GPU (it asks for all its slots), the others
sharing a GPU up to its slots.

    ci/gpu-resource-spec.py --out FILE [--slots N] [--from NVIDIA_SMI_CSV] [--dry-run]

GPU ids are in CUDA's order as the tests count: each test process sets
CUDA_DEVICE_ORDER=PCI_BUS_ID and CUDA_VISIBLE_DEVICES=<its id> (suites/test_main.cc),
so id k is the k-th GPU by PCI bus id, which is how this script numbers
them (sorting nvidia-smi's pci.bus_id, not trusting its index). CUDA's
default order (fastest first) may differ on a machine of mixed GPUs; the
PCI order is the one both nvidia-smi and CUDA can be made to agree on
without initialising CUDA here. Where CUDA_VISIBLE_DEVICES is set, only the
GPUs it names (by UUID, or by index in PCI order) are listed.

--slots: tests that share one GPU at most (default 1: one test per GPU).
--from reads a saved `nvidia-smi --query-gpu=pci.bus_id,uuid,name
--format=csv,noheader` instead of running it; --dry-run prints the spec
instead of writing it.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

QUERY = ["nvidia-smi", "--query-gpu=pci.bus_id,uuid,name", "--format=csv,noheader"]


def bus_key(bus_id: str) -> tuple[int, ...]:
    """A PCI bus id (domain:bus:device.function, hex) as numbers, for order."""
    domain, bus, rest = bus_id.strip().split(":")
    device, function = rest.split(".")
    return tuple(int(x, 16) for x in (domain, bus, device, function))


def spec_from_csv(text: str, slots: int = 1, visible: str | None = None) -> dict:
    """The spec of the GPUs nvidia-smi listed (pci.bus_id, uuid, name),
    numbered by PCI bus id; `visible`: CUDA_VISIBLE_DEVICES, where set."""
    gpus = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        fields = [f.strip() for f in line.split(",")]
        try:
            key = bus_key(fields[0])
        except ValueError:
            raise ValueError(f"line {number}: expected 'pci.bus_id, uuid, name', got {line!r}") from None
        gpus.append((key, fields[1] if len(fields) > 1 else ""))
    if not gpus:
        raise ValueError("nvidia-smi listed no GPU")
    gpus.sort()
    ids = list(range(len(gpus)))
    if visible is not None and visible.strip():
        chosen = []
        for entry in visible.split(","):
            entry = entry.strip()
            match = [i for i, (_, uuid) in enumerate(gpus) if uuid and uuid.startswith(entry)] if not entry.isdigit() \
                else [int(entry)] if int(entry) < len(gpus) else []
            if not match:
                raise ValueError(f"CUDA_VISIBLE_DEVICES: {entry!r} is none of the GPUs nvidia-smi lists")
            chosen.append(match[0])
        ids = chosen
    return {"version": {"major": 1, "minor": 0}, "local": [{"gpus": [{"id": str(i), "slots": slots} for i in ids]}]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--slots", type=int, default=1, help="tests that share one GPU at most (default 1)")
    parser.add_argument("--from", dest="source", type=Path)
    parser.add_argument("--dry-run", action="store_true")
    args = parser.parse_args(argv)
    if args.slots < 1:
        print(f"gpu-resource-spec: --slots: {args.slots}: expected a positive number", file=sys.stderr)
        return 2
    try:
        if args.source is not None:
            text = args.source.read_text(encoding="utf-8")
        elif args.dry_run:
            print("+ " + " ".join(QUERY))
            text = "00000000:00:00.0, GPU-dry-run, (dry run)\n"
        else:
            text = subprocess.run(QUERY, capture_output=True, text=True, check=True, timeout=60).stdout
        spec = spec_from_csv(text, args.slots, os.environ.get("CUDA_VISIBLE_DEVICES"))
    except (OSError, ValueError, subprocess.SubprocessError) as e:
        where = args.source or "nvidia-smi"
        print(f"gpu-resource-spec: {where}: {e}", file=sys.stderr)
        return 1
    rendered = json.dumps(spec, indent=2) + "\n"
    if args.dry_run:
        print(f"+ write {args.out}:\n{rendered}", end="")
        return 0
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(rendered, encoding="utf-8")
    print(f"gpu-resource-spec: {len(spec['local'][0]['gpus'])} GPU(s) of {args.slots} slot(s) -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
