"""Command line of the generator.

    python3 -m generators expand --out DIR SPEC...   write case tables + cases.json
    python3 -m generators validate SPEC...           check specs, print a summary
    python3 -m generators list SPEC...               print every case: id, test, repro
    python3 -m generators tables --out FILE.h        the model layer tables as C++
    python3 -m generators probes --inc FILE --cmake FILE DECLARED.toml
                                                     PyTorch's probes' TEST lines and ctest properties

Errors are one line, ``FILE:LINE: message``, with exit status 1.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from inputs.errors import SpecError

from .expand import MAX_CASES, expand
from inputs.flags import load_flags
from .spec import TIERS, load_spec


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="backendcheck-generate", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    p_expand = sub.add_parser("expand", help="write case tables and the manifest")
    p_expand.add_argument("--out", required=True, type=Path)
    p_expand.add_argument("--tier", default="nightly", choices=TIERS,
                          help="the largest tier to include (smoke < ci < nightly)")
    p_expand.add_argument("specs", nargs="+", type=Path)
    for name in ("validate", "list"):
        p = sub.add_parser(name)
        p.add_argument("--tier", default="nightly", choices=TIERS)
        p.add_argument("specs", nargs="+", type=Path)
    for p in (p_expand, sub.choices["validate"], sub.choices["list"]):
        p.add_argument("--max-cases", type=int, help=f"the most cases the specs may expand to (default {MAX_CASES})")
    p_tables = sub.add_parser("tables", help="write the model layer tables as a C++ header")
    p_tables.add_argument("--out", required=True, type=Path)
    p_probes = sub.add_parser("probes", help="write the probes' TEST lines and ctest properties")
    p_probes.add_argument("--inc", required=True, type=Path, help="the TEST lines, for the test file to include")
    p_probes.add_argument("--cmake", required=True, type=Path, help="the tests' properties, for ctest")
    p_probes.add_argument("declared", type=Path, help="the declarations (probes/declared.toml)")
    args = parser.parse_args(argv)
    if args.command == "probes":
        from inputs.probes import load_declared

        from .probes import write

        try:
            write(load_declared(args.declared), args.inc, args.cmake)
        except SpecError as e:
            print(str(e), file=sys.stderr)
            return 1
        return 0
    if args.command == "tables":
        from .tables import cxx_header

        text = cxx_header()
        # Rewritten only on change, so the benchmarks do not rebuild for nothing.
        if not args.out.exists() or args.out.read_text() != text:
            args.out.parent.mkdir(parents=True, exist_ok=True)
            args.out.write_text(text)
        return 0
    if getattr(args, "max_cases", None):
        os.environ["BACKENDCHECK_MAX_CASES"] = str(args.max_cases)
    try:
        flags = load_flags()
        specs = [load_spec(path, flags) for path in args.specs]
        cases = expand(specs, flags, args.tier)
    except SpecError as e:
        print(str(e), file=sys.stderr)
        return 1
    if args.command == "expand":
        from .emit import emit  # Jinja2 is needed only to write tables

        emit(cases, args.out, [str(p) for p in args.specs])
    elif args.command == "validate":
        for spec in specs:
            mine = [c for c in cases if c.spec == spec.path]
            print(f"{spec.path}: ok, {len(spec.suites)} suite(s), {len(mine)} case(s)")
    else:
        try:
            for c in cases:
                print(f"{c.id}  {c.test}\n    {c.repro}")
        except BrokenPipeError:  # `list | head`
            sys.stderr.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
