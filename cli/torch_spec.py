"""The torch under test, spelt once for every command that takes one:

    python3 -m cli.torch_spec [--interpreter] TORCH

prints TORCH as ./backendcheck's --torch reads it (options.torch_spec): an
interpreter (its absolute path; a relative one is read from the caller's
directory), torch==VERSION or pinned. --interpreter: only an interpreter
(the GPU kit builds against the node's own torch and installs none). A bad
value is one line, `--torch TORCH: why`, and exit 2 (exits.USAGE).
ci/gpu-kit and ci/nightly-gpu.sh read their --torch with it."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from cli import exits
from cli.options import torch_spec


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else list(argv)
    interpreter_only = args[:1] == ["--interpreter"]
    if interpreter_only:
        args = args[1:]
    if len(args) != 1:
        print("usage: python3 -m cli.torch_spec [--interpreter] TORCH", file=sys.stderr)
        return exits.USAGE
    value = args[0]
    try:
        spec = torch_spec(Path.cwd())(value)
    except argparse.ArgumentTypeError as e:
        print(f"--torch {value}: {e}", file=sys.stderr)
        return exits.USAGE
    if interpreter_only and (spec == "pinned" or spec.startswith("torch==")):
        print(f"--torch {value}: name the interpreter of the torch installed here (the kit installs no torch)",
              file=sys.stderr)
        return exits.USAGE
    print(spec)
    return exits.OK


if __name__ == "__main__":
    sys.exit(main())
