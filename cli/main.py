"""./backendcheck: main(argv) checks the whole command line (options.py)
before anything is installed, built or run, then runs the command
(commands.py). Testable in-process: main([...]) returns the exit status."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from cli import exits
from cli.options import ROOT, UsageError, build_parser, parse, torch_spec


def error(message: str) -> int:
    """A wrong command line: one line on standard error, exit 2."""
    print(f"backendcheck: error: {message.splitlines()[0] if message else 'bad command line'}", file=sys.stderr)
    return exits.USAGE


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    cwd = Path(os.getcwd())
    try:
        if argv and argv[0] in ("help", "-h", "--help"):
            build_parser(cwd).print_help()
            return exits.OK
        try:
            options = parse(argv, cwd)
        except SystemExit as e:  # --help of a command
            return int(e.code or 0)
        if not options.torches and os.environ.get("BACKENDCHECK_TORCH_PYTHON"):
            try:
                torch_spec(cwd)(os.environ["BACKENDCHECK_TORCH_PYTHON"])
            except Exception as e:  # noqa: BLE001 - argparse's type error, said in one line
                raise UsageError(f"BACKENDCHECK_TORCH_PYTHON: {e}") from None
        if options.workload_files():  # a team's workloads, read before anything runs
            from inputs.errors import SpecError
            from inputs.workloads import load_all
            try:
                load_all([Path(f) for f in options.workload_files()])
            except SpecError as e:
                raise UsageError(str(e)) from None
        from cli import commands  # after the checks: nothing of the run is loaded for a wrong line
        if options.command == "report" and not commands.carries_manifest(options) and \
                commands.built_tree(options) is None:
            raise UsageError(f"no build of preset {options.preset} for this torch under {ROOT / 'build'}: run "
                             "./backendcheck run first")
    except UsageError as e:
        return error(str(e))
    try:
        return commands.execute(options)
    except KeyboardInterrupt:
        print("backendcheck: interrupted", file=sys.stderr)
        return exits.INTERRUPTED
