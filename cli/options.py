"""Every command and option of ./backendcheck, declared once, typed and
checked before anything is installed, built or run: choices are choices,
numbers are numbers, paths are resolved against the caller's directory and
input files must exist. A wrong command line is one line on standard error
(``backendcheck: error: ...``) and exit 2 (exits.USAGE)."""

from __future__ import annotations

import argparse
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, NoReturn

from cli import exits

ROOT = Path(__file__).resolve().parents[1]
TIERS = ("smoke", "ci", "nightly")
DEVICES = ("cpu", "cuda")
COMMANDS = ("run", "test", "bench", "validate", "list", "report", "setup", "help")
RELEASE = re.compile(r"^[0-9]+(\.[0-9]+)+([a-z0-9.]*)$")
# What `bench` passes on to backend_benchmarks (Google Benchmark's flags, --mb).
BENCH_FLAG = re.compile(r"^--(benchmark_[a-z_]+(=.*)?|mb=[0-9]+)$")


class UsageError(Exception):
    """A wrong command line: printed as one line, exit 2."""


class Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UsageError(message)


def presets(root: Path = ROOT) -> list[str]:
    """The configure presets of CMakePresets.json."""
    with (root / "CMakePresets.json").open(encoding="utf-8") as f:
        data = json.load(f)
    return [p["name"] for p in data.get("configurePresets", []) if not p.get("hidden")]


def positive_int(text: str) -> int:
    if not re.fullmatch(r"[0-9]+", text) or int(text) < 1:
        raise argparse.ArgumentTypeError(f"'{text}' is not a positive whole number")
    return int(text)


def positive_seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not value > 0 or value != value or value == float("inf"):
        raise argparse.ArgumentTypeError(f"'{text}' is not a positive number of seconds")
    return value


def default_jobs(env: dict[str, str] | None = None) -> int:
    """--jobs when not given: CTEST_PARALLEL_LEVEL, CMAKE_BUILD_PARALLEL_LEVEL,
    else the CPUs of this machine."""
    env = os.environ if env is None else env
    for name in ("CTEST_PARALLEL_LEVEL", "CMAKE_BUILD_PARALLEL_LEVEL"):
        value = env.get(name, "")
        if re.fullmatch(r"[0-9]+", value) and int(value) > 0:
            return int(value)
    return os.cpu_count() or 1


def torch_spec(cwd: Path) -> Callable[[str], str]:
    """--torch: pinned, torch==VERSION, or an interpreter (a path, resolved
    against the caller's directory, or a command on PATH) that exists."""
    def check(text: str) -> str:
        if text == "pinned":
            return text
        if text.startswith("torch=="):
            if not RELEASE.match(text.removeprefix("torch==")):
                raise argparse.ArgumentTypeError(f"'{text}' is not a release number (e.g. torch==2.7.1)")
            return text
        if "/" in text:
            path = Path(os.path.abspath(cwd / text))
            if not (path.is_file() and os.access(path, os.X_OK)):
                raise argparse.ArgumentTypeError(f"{path}: no such interpreter")
            return str(path)
        import shutil
        found = shutil.which(text)
        if not found:
            raise argparse.ArgumentTypeError(f"'{text}': no such interpreter (an interpreter, torch==VERSION or "
                                             "pinned)")
        return found
    return check


def path_in(cwd: Path, must: str = "") -> Callable[[str], Path]:
    """A path against the caller's directory; `must` is "file" or "dir" when
    it has to exist as one."""
    def check(text: str) -> Path:
        if not text:
            raise argparse.ArgumentTypeError("an empty path")
        path = Path(os.path.abspath(cwd / text))
        if must == "file" and not path.is_file():
            raise argparse.ArgumentTypeError(f"{path}: no such file")
        if must == "dir" and not path.is_dir():
            raise argparse.ArgumentTypeError(f"{path}: no such directory")
        if must == "spec":
            if not path.is_file():
                raise argparse.ArgumentTypeError(f"{path}: no such matrix spec")
            if ";" in str(path):
                raise argparse.ArgumentTypeError(f"{path}: a matrix path cannot contain ';' (CMake lists are "
                                                 "';'-separated); rename it")
        return path
    return check


@dataclass
class Options:
    """The parsed command line (every field typed and checked)."""
    command: str
    torches: list[str] = field(default_factory=list)
    preset: str = "default"
    tier: str = "ci"
    label: str = ""
    matrix: list[Path] = field(default_factory=list)
    max_cases: int | None = None
    search_budget: float | None = None
    one_process_per_case: bool = False
    require: str = ""
    jobs: int = 1
    offline: bool = False
    case: str = ""
    repeats: int = 5
    out: Path | None = None
    baseline: Path | None = None
    fail_on_change: bool = False
    expect_platform: list[str] = field(default_factory=list)
    expect_platforms: Path | None = None
    strict: bool = False
    known: list[Path] = field(default_factory=list)
    claims: list[Path] = field(default_factory=list)  # a team's workload files (inputs/workloads.py)
    write_findings: Path | None = None
    evidence: list[Path] = field(default_factory=list)
    specs: list[Path] = field(default_factory=list)
    bench_flags: list[str] = field(default_factory=list)
    self_parts: tuple[str, ...] = ()  # bench --self: what of the harness's own speed to measure (cli/selfbench.py)
    cwd: Path = field(default_factory=Path.cwd)

    def report_args(self) -> list[str]:
        """--baseline, --fail-on-change, --expect-platform(s), --known,
        --write-findings and --strict, as `python -m reports` takes them."""
        args: list[str] = []
        if self.baseline:
            args += ["--baseline", str(self.baseline)]
        if self.fail_on_change:
            args.append("--fail-on-change")
        for name in self.expect_platform:
            args += ["--expect-platform", name]
        if self.expect_platforms:
            args += ["--expect-platforms", str(self.expect_platforms)]
        return args

    def workload_files(self) -> list[str]:
        """A team's workload files: BACKENDCHECK_CLAIMS's, then each --claims."""
        return [p for p in os.environ.get("BACKENDCHECK_CLAIMS", "").split(":") if p] + [str(p) for p in self.claims]

    def workload_args(self) -> list[str]:
        """The workload files, as `python -m reports` takes them."""
        return [a for f in self.workload_files() for a in ("--workloads", str(Path(f).resolve()))]

    def known_args(self, root: Path = ROOT) -> list[str]:
        """The repository's findings, then each --known; --write-findings and --strict."""
        args = ["--known", str(root / "catalog" / "known_findings.toml")]
        for path in self.known:
            args += ["--known", str(path)]
        return args + self.finding_args()

    def finding_args(self) -> list[str]:
        """--write-findings and --strict, as `python -m reports` takes them."""
        return (["--write-findings", str(self.write_findings)] if self.write_findings else []) + \
            (["--strict"] if self.strict else [])


USAGE = """./backendcheck COMMAND [OPTIONS]

  run      install what is missing, build, run what decides claims (every test but those labelled selftest),
           write the report (build/PRESET/torchPYTHON/report/; several --torch: build/PRESET/versions/report/)
  run --case 'REPRO' [--repeats N]   build, then re-run exactly that case (JSON)
  test     the same set-up, then every test, the project's own (selftest) included; with several installs,
           those labelled torch-free on the first one only; default installs: requirements/test-torches.txt
  bench    build, run the performance suite (3 repetitions, medians) into a fresh run directory's
           benchmarks.json, and redo the report; --benchmark_*=... and --mb=N go to backend_benchmarks
  bench --self[=run|test]   the harness's own speed on fresh clones of this commit: cold and warm run, the
           per-case overhead of the evidence tests (run), ./backendcheck test (test); both by default (about an
           hour on 2 cores); into BENCHMARKS.md and build/self-bench.json, which the report's environment shows
  validate SPEC...   check matrix specs, one line per error
  list SPEC...       print every case: id, test name, repro
  report [EVIDENCE_DIR...]   the report of one or more runs' evidence (several machines: merged, judged per
           platform); default: the latest run of the build of this preset and torch
  setup    only install the dependencies
  help     this text

--torch TORCH (repeatable; or BACKENDCHECK_TORCH_PYTHON): an interpreter (the torch it imports), torch==VERSION
(that release from PyPI, in a managed environment) or pinned (the release requirements/torch.txt pins, the
default of run). Managed environments live under ${BACKENDCHECK_CACHE:-${XDG_CACHE_HOME:-~/.cache}/backendcheck}.
Every option also takes the form --option=value. Paths are read from the directory you run it in.
"""


def build_parser(cwd: Path, root: Path = ROOT) -> Parser:
    """The parser of every command; paths resolve against `cwd`."""
    epilog = "exit status:\n" + exits.table()
    top = Parser(prog="backendcheck", usage=USAGE, add_help=True, allow_abbrev=False, epilog=epilog,
                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = top.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)

    def command(name: str, help_text: str) -> Parser:
        return sub.add_parser(name, help=help_text, allow_abbrev=False, epilog=epilog,
                              formatter_class=argparse.RawDescriptionHelpFormatter)

    def installs(p: Parser) -> None:
        p.add_argument("--torch", dest="torches", action="append", default=[], type=torch_spec(cwd),
                       metavar="TORCH", help="an interpreter, torch==VERSION or pinned (repeatable)")
        p.add_argument("--preset", choices=presets(root), default="default", help="a configure preset")
        p.add_argument("--offline", action="store_true", help="download nothing")
        p.add_argument("--jobs", "-j", type=positive_int, default=None, metavar="N",
                       help="parallel build and test jobs (default: CTEST_PARALLEL_LEVEL, "
                            "CMAKE_BUILD_PARALLEL_LEVEL, else the CPUs)")

    def builds(p: Parser) -> None:
        p.add_argument("--tier", choices=TIERS, default="ci")
        p.add_argument("--matrix", action="append", default=[], type=path_in(cwd, "spec"), metavar="SPEC")
        p.add_argument("--max-cases", type=positive_int, default=None, metavar="N")
        p.add_argument("-L", "--label", default="", metavar="LABEL", help="only the tests of this ctest label")
        p.add_argument("--search-budget", type=positive_seconds, default=None, metavar="SECONDS",
                       help="seconds the search for counter-examples spends (default: the tier's, "
                            "probes/counterexamples.py)")
        p.add_argument("--one-process-per-case", action="store_true",
                       help="run each generated case in a process of its own, as plain ctest does, rather than "
                            "in batches (runner/batch.py)")

    def reports(p: Parser) -> None:
        p.add_argument("--out", type=path_in(cwd), default=None, metavar="DIR")
        p.add_argument("--baseline", type=path_in(cwd, "file"), default=None, metavar="OLD/report.json")
        p.add_argument("--fail-on-change", action="store_true")
        p.add_argument("--expect-platform", action="append", default=[], metavar="NAME")
        p.add_argument("--expect-platforms", type=path_in(cwd, "file"), default=None, metavar="FILE")
        p.add_argument("--strict", action="store_true")
        p.add_argument("--known", action="append", default=[], type=path_in(cwd, "file"), metavar="FILE")
        p.add_argument("--claims", action="append", default=[], type=path_in(cwd, "file"), metavar="FILE",
                       help="a team's workloads, each a claim (docs/workloads.md); repeatable, after those "
                            "BACKENDCHECK_CLAIMS lists")
        p.add_argument("--write-findings", type=path_in(cwd), default=None, metavar="FILE")

    for name, text in (("run", "build and run what decides claims, then the report"),
                       ("test", "build and run every test, the report and its browser check")):
        p = command(name, text)
        installs(p)
        builds(p)
        reports(p)
        p.add_argument("--require", choices=DEVICES, default="", help="fail when every test of that device skipped")
        if name == "run":
            p.add_argument("--case", default="", metavar="REPRO")
            p.add_argument("--repeats", type=positive_int, default=5, metavar="N")
    p = command("bench", "the performance suite")
    p.add_argument("--self", dest="self_parts", nargs="?", const=",".join(SELF_PARTS), default=None,
                   type=self_parts, metavar="PARTS")
    installs(p)
    builds(p)
    reports(p)
    p = command("report", "the report of one or more runs' evidence")
    installs(p)
    reports(p)
    p.add_argument("evidence", nargs="*", type=path_in(cwd, "dir"), metavar="EVIDENCE_DIR")
    for name in ("validate", "list"):
        p = command(name, "check matrix specs" if name == "validate" else "print every case")
        installs(p)
        p.add_argument("specs", nargs="+", type=path_in(cwd, "file"), metavar="SPEC")
    p = command("setup", "only install the dependencies")
    installs(p)
    command("help", "this text")
    return top


SELF_PARTS = ("run", "test")  # cli/selfbench.py PARTS


def self_parts(value: str) -> tuple[str, ...]:
    """bench --self's parts: run, test, or both (comma-separated)."""
    parts = tuple(dict.fromkeys(p.strip() for p in value.split(",") if p.strip()))
    wrong = [p for p in parts if p not in SELF_PARTS]
    if not parts or wrong:
        raise argparse.ArgumentTypeError(f"{value!r}: --self takes {' or '.join(SELF_PARTS)}, or both")
    return parts


def parse(argv: list[str], cwd: Path, env: dict[str, str] | None = None, root: Path = ROOT) -> Options:
    """The Options of `argv`; UsageError for a wrong command line."""
    parser = build_parser(cwd, root)
    if argv and argv[0].startswith("-"):
        # Options before the command (./backendcheck --tier ci run): the command first.
        at = next((i for i, a in enumerate(argv) if a in COMMANDS), None)
        if at is not None:
            argv = [argv[at], *argv[:at], *argv[at + 1:]]
    if not argv:
        raise UsageError(f"no command ({', '.join(COMMANDS)}); ./backendcheck help shows them")
    if argv[0] not in COMMANDS and not argv[0].startswith("-"):
        raise UsageError(f"unknown command '{argv[0]}' ({', '.join(COMMANDS)})")
    if argv[0] == "bench":
        ns, extra = parser.parse_known_args(argv)
        wrong = [a for a in extra if not BENCH_FLAG.match(a)]
        if wrong:
            raise UsageError(f"unrecognized arguments: {' '.join(wrong)} (bench passes on --benchmark_*=... and "
                             "--mb=N only)")
        ns.bench_flags = extra
    else:
        ns = parser.parse_args(argv)
    values: dict[str, Any] = {k: v for k, v in vars(ns).items() if v is not None}
    values["jobs"] = ns.jobs if getattr(ns, "jobs", None) else default_jobs(env)
    values["cwd"] = cwd
    return Options(**values)
