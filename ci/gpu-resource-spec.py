#!/usr/bin/env python3
"""Writes a ctest resource spec with one `gpus` resource per GPU that
nvidia-smi lists, so that `ctest -j N --resource-spec-file FILE` on a
multi-GPU host runs one GPU test per GPU at a time (the GPU tests ask for
`gpus:1`; the test binary maps its allocated id to CUDA_VISIBLE_DEVICES).

    ci/gpu-resource-spec.py --out FILE [--from NVIDIA_SMI_CSV] [--dry-run]

--from reads a saved `nvidia-smi --query-gpu=index,name --format=csv,noheader`
instead of running it; --dry-run prints the spec instead of writing it.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

QUERY = ["nvidia-smi", "--query-gpu=index,name", "--format=csv,noheader"]


def spec_from_csv(text: str) -> dict:
    gpus = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        index = line.split(",", 1)[0].strip()
        if not index.isdigit():
            raise ValueError(f"line {number}: expected 'index, name', got {line!r}")
        gpus.append({"id": index, "slots": 1})
    if not gpus:
        raise ValueError("nvidia-smi listed no GPU")
    return {"version": {"major": 1, "minor": 0}, "local": [{"gpus": gpus}]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--from", dest="source", type=Path)
    parser.add_argument("--dry-run", action="store_true")
    args = parser.parse_args(argv)
    try:
        if args.source is not None:
            text = args.source.read_text(encoding="utf-8")
        elif args.dry_run:
            print("+ " + " ".join(QUERY))
            text = "0, (dry run)\n"
        else:
            text = subprocess.run(QUERY, capture_output=True, text=True, check=True, timeout=60).stdout
        spec = spec_from_csv(text)
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
    print(f"gpu-resource-spec: {len(spec['local'][0]['gpus'])} GPU(s) -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
