"""./backendcheck's command line, in-process through main(argv): every
option declared once and typed, a wrong command line refused in one line
(exit 2) before anything is installed, built or run, paths read from the
caller's directory, the build tree of a preset and torch, the lock, the run
directories and `latest`, the install state, the stages of a run of several
installs, Ctrl-C during ctest, and the exit statuses."""

from __future__ import annotations

import contextlib
import io
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
import unittest
from pathlib import Path
from unittest import mock

from cli import builds, commands, exits, installs, options
from cli.main import main
from cli.options import Options, parse
from cli.torch_spec import main as torch_spec_main
from inputs import install_state
from inputs.errors import SpecError
from reports.pipeline import read_install

ROOT = Path(__file__).resolve().parents[2]
SPEC = ROOT / "catalog" / "matrices" / "cpu.toml"
REPORT = ROOT / "reports" / "tests" / "data"


class Forbidden(AssertionError):
    pass


def forbidden(*args: object, **kwargs: object) -> None:
    raise Forbidden(f"called before the command line was checked: {args[:1]}")


class Invocation(unittest.TestCase):
    """main(argv) with nothing able to install, build or run: subprocess,
    apt, venvs and the torch resolution fail the test if called, and the
    cache is an empty directory that must stay empty."""

    def setUp(self) -> None:
        self.tmp = Path(tempfile.mkdtemp(prefix="bc-cli-"))
        self.addCleanup(lambda: subprocess.run(["rm", "-rf", str(self.tmp)], check=False))
        self.cache = self.tmp / "cache"
        self.cache.mkdir()
        env = {k: v for k, v in os.environ.items() if k not in ("BACKENDCHECK_TORCH_PYTHON", "CTEST_PARALLEL_LEVEL",
                                                                "CMAKE_BUILD_PARALLEL_LEVEL")}
        env["BACKENDCHECK_CACHE"] = str(self.cache)
        # An empty checkout: no build tree of any preset or torch.
        patches = [mock.patch.dict(os.environ, env, clear=True), mock.patch.object(commands, "ROOT", self.tmp)]
        for target in ("subprocess.run", "subprocess.Popen", "os.execv", "cli.installs.install_packages",
                       "cli.installs.ensure_env", "cli.installs.resolve_torch", "cli.commands.execute"):
            patches.append(mock.patch(target, side_effect=forbidden))
        for p in patches:
            p.start()
            self.addCleanup(p.stop)
        self.cwd = os.getcwd()
        os.chdir(self.tmp)
        self.addCleanup(os.chdir, self.cwd)

    def invoke(self, *argv: str) -> tuple[int, str, str]:
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            rc = main(list(argv))
        return rc, out.getvalue(), err.getvalue()


class BadInvocationTest(Invocation):
    MISSING = "missing.json"
    TABLE: tuple[tuple[tuple[str, ...], str], ...] = (
        # unknown commands and options, options spelt wrong
        ((), "no command"),
        (("frob",), "unknown command 'frob'"),
        (("run", "--tire", "nightly"), "unrecognized arguments: --tire"),
        (("run", "--stirct"), "unrecognized arguments: --stirct"),
        (("run", "--tier=nightly", "--stirct"), "--stirct"),
        (("test", "--fail-on-chang"), "--fail-on-chang"),
        (("report", "--case=x", "."), "unrecognized arguments: --case=x"),
        (("setup", "--tier", "ci"), "--tier"),
        (("validate",), "required: SPEC"),
        (("bench", "--benchmark-filter=x"), "--benchmark-filter=x"),
        (("bench", "--mb=big"), "--mb=big"),
        (("run", "positional"), "unrecognized arguments: positional"),
        # bad values, = forms included
        (("run", "--tier", "bogus"), "invalid choice: 'bogus'"),
        (("--tier=bogus", "run"), "invalid choice: 'bogus'"),
        (("run", "--tier=bogus"), "invalid choice: 'bogus'"),
        (("test", "--require", "tpu"), "invalid choice: 'tpu'"),
        (("run", "--require=tpu"), "invalid choice: 'tpu'"),
        (("run", "--preset", "nope"), "invalid choice: 'nope'"),
        (("report", "--preset=nope"), "invalid choice: 'nope'"),
        (("run", "--repeats", "x"), "'x' is not a positive whole number"),
        (("run", "--repeats=0"), "'0' is not a positive whole number"),
        (("run", "--repeats=-3"), "'-3' is not a positive whole number"),
        (("run", "--search-budget", "x"), "'x' is not a positive number of seconds"),
        (("test", "--search-budget=0"), "'0' is not a positive number of seconds"),
        (("run", "--search-budget=nan"), "'nan' is not a positive number of seconds"),
        (("run", "--search-budget=inf"), "'inf' is not a positive number of seconds"),
        (("run", "--max-cases", "1e3"), "'1e3' is not a positive whole number"),
        (("test", "--jobs=two"), "'two' is not a positive whole number"),
        (("bench", "-j", "0"), "'0' is not a positive whole number"),
        (("run", "--torch", "torch==latest"), "not a release number"),
        (("run", "--torch=torch==latest"), "not a release number"),
        (("run", "--torch", "./no/python"), "no such interpreter"),
        (("run", "--torch=no-such-python-here"), "no such interpreter"),
        # values that look like flags, missing values
        (("report", "--preset", "--strict"), "argument --preset: expected one argument"),
        (("run", "--tier", "--strict"), "argument --tier: expected one argument"),
        (("run", "--out", "--strict"), "argument --out: expected one argument"),
        (("run", "--case", "--repeats", "3"), "argument --case: expected one argument"),
        (("run", "--torch"), "argument --torch: expected one argument"),
        (("run", "--known"), "argument --known: expected one argument"),
        (("test", "--expect-platform"), "expected one argument"),
        (("run", "--out="), "an empty path"),
        # missing files
        (("report", "--baseline", MISSING, "."), "missing.json: no such file"),
        (("run", "--baseline=" + MISSING), "missing.json: no such file"),
        (("run", "--known", "team.toml"), "team.toml: no such file"),
        (("run", "--claims", "ours.toml"), "ours.toml: no such file"),
        (("test", "--claims=bad-workloads.toml"), "bad-workloads.toml:3: 'statement' must be a non-empty string"),
        (("test", "--expect-platforms=platforms.txt"), "platforms.txt: no such file"),
        (("run", "--matrix", "mine.toml"), "mine.toml: no such matrix spec"),
        (("run", "--matrix=a;b.toml"), "cannot contain ';'"),
        (("report", "no-such-evidence"), "no-such-evidence: no such directory"),
        (("validate", "nope.toml"), "nope.toml: no such file"),
        # report with no build of this preset and torch
        (("report",), "no build of preset default"),
        (("report", "--torch", "/usr/bin/python3", "."), "no build of preset default"),
    )

    def test_every_bad_invocation_is_one_line_and_exit_2_before_anything_runs(self) -> None:
        (self.tmp / "a;b.toml").write_text("")
        (self.tmp / "bad-workloads.toml").write_text('path = "."\n\n[[workload]]\nid = "x"\n')
        for argv, want in self.TABLE:
            with self.subTest(argv=argv):
                started = time.monotonic()
                rc, out, err = self.invoke(*argv)
                took = time.monotonic() - started
                self.assertEqual(rc, exits.USAGE, err)
                lines = err.splitlines()
                self.assertEqual(len(lines), 1, err)
                self.assertTrue(lines[0].startswith("backendcheck: error: "), lines[0])
                self.assertIn(want, lines[0])
                self.assertEqual(out, "")
                self.assertLess(took, 2.0)
        self.assertEqual(list(self.cache.iterdir()), [], "the cache was written")
        self.assertFalse((self.tmp / "build").exists())

    def test_a_bad_workload_file_in_the_environment_is_refused_too(self) -> None:
        (self.tmp / "ours.toml").write_text('path = "."\n\n[[workload]]\nid = "Bad Id"\n')
        with mock.patch.dict(os.environ, {"BACKENDCHECK_CLAIMS": str(self.tmp / "ours.toml")}):
            rc, _, err = self.invoke("run")
        self.assertEqual(rc, exits.USAGE)
        self.assertEqual(len(err.splitlines()), 1, err)
        self.assertIn("ours.toml:3: 'statement' must be a non-empty string", err)
        self.assertFalse((self.tmp / "build").exists())

    def test_a_bad_torch_in_the_environment_is_refused_too(self) -> None:
        with mock.patch.dict(os.environ, {"BACKENDCHECK_TORCH_PYTHON": "/no/such/python"}):
            rc, _, err = self.invoke("run")
        self.assertEqual(rc, exits.USAGE)
        self.assertEqual(err.splitlines(), ["backendcheck: error: BACKENDCHECK_TORCH_PYTHON: /no/such/python: "
                                            "no such interpreter"])

    def test_the_control_a_good_command_line_reaches_the_command(self) -> None:
        # The patched execute() is what a checked command line reaches: the table's refusals are the checks'.
        with self.assertRaises(Forbidden):
            self.invoke("run", "--tier=smoke", "--torch=/usr/bin/python3", "--jobs=3")


class OptionsTest(Invocation):
    def test_every_option_has_its_equals_form_and_its_type(self) -> None:
        (self.tmp / "old").mkdir()
        (self.tmp / "old" / "report.json").write_text("{}")
        (self.tmp / "team.toml").write_text("")
        (self.tmp / "platforms.txt").write_text("")
        o = parse(["run", "--torch=/usr/bin/python3", "--torch=torch==2.7.1", "--torch=pinned", "--preset=cpu-only",
                   "--tier=nightly", "--matrix=" + str(SPEC), "--max-cases=100", "--require=cuda", "--jobs=3",
                   "--offline", "--case=conv2d:fwd:f32:mb1ic1ih4oc1kh1 device=cpu", "--repeats=7",
                   "--out=rep", "--baseline=old/report.json", "--fail-on-change", "--expect-platform=a",
                   "--expect-platforms=platforms.txt", "--strict", "--known=team.toml", "--write-findings=new.toml",
                   "--label=smoke", "--search-budget=12.5"], self.tmp)
        self.assertEqual(o.search_budget, 12.5)
        self.assertEqual(o.torches, ["/usr/bin/python3", "torch==2.7.1", "pinned"])
        self.assertEqual((o.preset, o.tier, o.require, o.label), ("cpu-only", "nightly", "cuda", "smoke"))
        self.assertEqual((o.max_cases, o.jobs, o.repeats), (100, 3, 7))
        self.assertEqual(o.matrix, [SPEC])
        self.assertTrue(o.offline and o.strict and o.fail_on_change)
        self.assertEqual(o.case, "conv2d:fwd:f32:mb1ic1ih4oc1kh1 device=cpu")
        self.assertEqual(o.out, self.tmp / "rep")
        self.assertEqual(o.report_args(), ["--baseline", str(self.tmp / "old" / "report.json"), "--fail-on-change",
                                           "--expect-platform", "a", "--expect-platforms",
                                           str(self.tmp / "platforms.txt")])
        self.assertEqual(o.known_args(ROOT), ["--known", str(ROOT / "catalog" / "known_findings.toml"), "--known",
                                              str(self.tmp / "team.toml"), "--write-findings",
                                              str(self.tmp / "new.toml"), "--strict"])
        same = parse(["run", "--torch", "/usr/bin/python3", "--torch", "torch==2.7.1", "--torch", "pinned",
                      "--preset", "cpu-only", "--tier", "nightly", "--matrix", str(SPEC), "--max-cases", "100",
                      "--require", "cuda", "--jobs", "3", "--offline", "--case",
                      "conv2d:fwd:f32:mb1ic1ih4oc1kh1 device=cpu", "--repeats", "7", "--out", "rep", "--baseline",
                      "old/report.json", "--fail-on-change", "--expect-platform", "a", "--expect-platforms",
                      "platforms.txt", "--strict", "--known", "team.toml", "--write-findings", "new.toml", "-L",
                      "smoke", "--search-budget", "12.5"], self.tmp)
        self.assertEqual(o, same)

    def test_the_search_budget_reaches_ctests_tests_only_where_given(self) -> None:
        from cli.commands import State, judging_env
        given = judging_env(State(options=parse(["run", "--search-budget=7"], self.tmp)), report=False)
        self.assertEqual(given["BACKENDCHECK_SEARCH_BUDGET"], "7")
        self.assertNotIn("BACKENDCHECK_SEARCH_BUDGET", judging_env(State(options=parse(["run"], self.tmp)), False),
                         "the environment's own value, or the tier's, stands")

    def test_paths_are_read_from_the_callers_directory(self) -> None:
        (self.tmp / "sub").mkdir()
        (self.tmp / "sub" / "mine.toml").write_text("")
        os.chdir(self.tmp / "sub")
        o = parse(["run", "--matrix", "mine.toml", "--out", "../rep", "--torch", "/usr/bin/../bin/python3"],
                  Path(os.getcwd()))
        self.assertEqual(o.matrix, [self.tmp / "sub" / "mine.toml"])
        self.assertEqual(o.out, self.tmp / "rep")
        self.assertEqual(o.torches, ["/usr/bin/python3"])
        venv = self.tmp / "sub" / "venv" / "bin"
        venv.mkdir(parents=True)
        (venv / "python").symlink_to("/usr/bin/python3")
        self.assertEqual(parse(["run", "--torch", "./venv/bin/python"], Path(os.getcwd())).torches,
                         [str(venv / "python")])

    def test_the_presets_are_those_of_cmake_presets_json(self) -> None:
        listed = json.loads((ROOT / "CMakePresets.json").read_text())["configurePresets"]
        self.assertEqual(options.presets(ROOT), [p["name"] for p in listed if not p.get("hidden")])
        self.assertIn("default", options.presets(ROOT))
        self.assertEqual(parse(["setup", "--preset", "debug"], self.tmp).preset, "debug")

    def test_the_job_count_is_the_environment_s_else_the_cpus(self) -> None:
        self.assertEqual(options.default_jobs({"CTEST_PARALLEL_LEVEL": "6", "CMAKE_BUILD_PARALLEL_LEVEL": "4"}), 6)
        self.assertEqual(options.default_jobs({"CMAKE_BUILD_PARALLEL_LEVEL": "4"}), 4)
        self.assertEqual(options.default_jobs({"CTEST_PARALLEL_LEVEL": "x"}), os.cpu_count())
        self.assertEqual(parse(["run"], self.tmp).jobs, os.cpu_count())
        self.assertEqual(parse(["run", "-j", "5"], self.tmp).jobs, 5)

    def test_bench_passes_benchmark_flags_on(self) -> None:
        o = parse(["bench", "--benchmark_filter=Conv.*", "--mb=8", "--tier", "smoke"], self.tmp)
        self.assertEqual((o.bench_flags, o.tier), (["--benchmark_filter=Conv.*", "--mb=8"], "smoke"))

    def test_help_shows_the_exit_statuses_from_exits_py(self) -> None:
        rc, out, _ = self.invoke("help")
        self.assertEqual(rc, 0)
        for code, meaning in exits.MEANINGS.items():
            self.assertIn(f"{code:<3} {meaning[:40]}", out)
        rc2, out2, _ = self.invoke("--help")
        self.assertEqual((rc2, out2), (0, out))
        rc3, out3, _ = self.invoke("run", "--help")
        self.assertEqual(rc3, 0)
        self.assertIn("--repeats", out3)
        self.assertIn("130 interrupted", out3)

    def test_the_torches_of_each_command(self) -> None:
        listed = installs.test_torches()
        self.assertGreaterEqual(len(listed), 2, "test compares two torch versions")
        self.assertEqual(commands.select_torches(parse(["test"], self.tmp), "test"), listed)
        self.assertEqual(commands.select_torches(parse(["run"], self.tmp), "run"), ["pinned"])
        two = parse(["test", "--torch", "/usr/bin/python3", "--torch", "torch==2.7.1"], self.tmp)
        self.assertEqual(commands.select_torches(two, "test"), ["/usr/bin/python3", "torch==2.7.1"])
        with mock.patch.dict(os.environ, {"BACKENDCHECK_TORCH_PYTHON": "/usr/bin/python3"}):
            self.assertEqual(commands.select_torches(parse(["test"], self.tmp), "test"), ["/usr/bin/python3"])


class ReportWithABuildTest(Invocation):
    def test_report_reads_the_tree_of_the_torch_a_run_would_use(self) -> None:
        with mock.patch.object(commands, "ROOT", self.tmp):
            o = parse(["report", "--torch", "/usr/bin/python3"], self.tmp)
            self.assertIsNone(commands.built_tree(o))
            tree = builds.tree(self.tmp, "default", "/usr/bin/python3")
            (tree / "generated").mkdir(parents=True)
            (tree / "generated" / "cases.json").write_text('{"cases": []}')
            self.assertEqual(commands.built_tree(o), tree)
            pinned = builds.tree(self.tmp, "default", str(self.cache / f"torch-{installs.pinned_torch()}" / "bin" /
                                                          "python"))
            self.assertIsNone(commands.built_tree(parse(["report"], self.tmp)), "not the newest tree: pinned's")
            (pinned / "generated").mkdir(parents=True)
            (pinned / "generated" / "cases.json").write_text('{"cases": []}')
            self.assertEqual(commands.built_tree(parse(["report"], self.tmp)), pinned)


class BuildsTest(unittest.TestCase):
    def setUp(self) -> None:
        self.tmp = Path(tempfile.mkdtemp(prefix="bc-builds-"))
        self.addCleanup(lambda: subprocess.run(["rm", "-rf", str(self.tmp)], check=False))

    def test_one_tree_per_preset_and_torch(self) -> None:
        self.assertEqual(builds.tree(Path("/r"), "default", "/usr/bin/python3"),
                         Path("/r/build/default/torch/usr/bin/python3"))
        self.assertEqual(builds.versions_tree(Path("/r"), "cpu-only"), Path("/r/build/cpu-only/versions"))
        with self.assertRaises(ValueError):
            builds.tree(Path("/r"), "default", "python3")

    def test_a_second_holder_of_the_lock_is_refused_in_one_line(self) -> None:
        with builds.Lock(self.tmp / "tree"):
            with self.assertRaises(builds.Refused) as refused:
                builds.Lock(self.tmp / "tree").acquire()
            self.assertIn(f"another ./backendcheck (pid {os.getpid()}) is using {self.tmp / 'tree'}",
                          str(refused.exception))
            self.assertNotIn("\n", str(refused.exception))
        with builds.Lock(self.tmp / "tree"):  # the control: released, it is taken again
            pass

    def test_run_directories_latest_and_the_newest_five_kept(self) -> None:
        root = self.tmp / "evidence"
        root.mkdir()
        (root / "notes.txt").write_text("mine")
        (root / "run-unmarked").mkdir()
        made = []
        for _ in range(7):
            made.append(builds.new_run_dir(root))
            self.assertTrue((root / "latest").is_symlink())
            self.assertEqual((root / "latest").resolve(), made[-1])
            self.assertEqual(builds.latest_run(root), made[-1])
        marked = sorted(d for d in root.glob("run-2*") if (d / builds.RUN_MARKER).exists())
        self.assertEqual(marked, made[-builds.KEEP_RUNS:])
        self.assertTrue((root / "notes.txt").exists() and (root / "run-unmarked").is_dir())
        self.assertEqual([p.name for p in root.iterdir() if p.name.startswith(".latest")], [])
        (made[-1] / "determinism_tests-1.jsonl").write_text("{}\n")
        bench = builds.new_run_dir(root)
        builds.carry_evidence(made[-1], bench)
        self.assertEqual(builds.latest_run(root), bench)
        self.assertEqual((bench / "determinism_tests-1.jsonl").read_text(), "{}\n")
        self.assertNotEqual((bench / builds.RUN_MARKER).read_text(), "")
        self.assertEqual(len(list(made[-1].iterdir())), 2, "the tests' run is left as it was")

    def test_latest_is_swapped_by_a_rename(self) -> None:
        root = self.tmp / "ev"
        root.mkdir()
        renames = []
        real = os.replace
        with mock.patch("cli.builds.os.replace", side_effect=lambda a, b: (renames.append((a, b)), real(a, b))):
            builds.swap_latest(root, "run-a")
            builds.swap_latest(root, "run-b")
        self.assertEqual([Path(b).name for _, b in renames], ["latest", "latest"])
        self.assertEqual(os.readlink(root / "latest"), "run-b")
        (root / "latest").unlink()
        (root / "latest").mkdir()  # not the tool's link: left alone
        builds.swap_latest(root, "run-c")
        self.assertTrue((root / "latest").is_dir() and not (root / "latest").is_symlink())

    def test_the_last_report_is_set_aside_but_a_foreign_previous_is_kept(self) -> None:
        out = self.tmp / "rep"
        out.mkdir()
        (out / "report.json").write_text("{}")
        (out / "index.html").write_text("<html></html>")
        theirs = self.tmp / "rep.previous"
        theirs.mkdir()
        (theirs / "keep.txt").write_text("mine")
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            builds.set_report_aside(out)
        self.assertTrue((theirs / "keep.txt").exists() and (out / "report.json").exists())
        self.assertIn("not a report of this tool", err.getvalue())
        (theirs / "keep.txt").unlink()
        theirs.rmdir()
        builds.set_report_aside(out)
        self.assertFalse(out.exists())
        self.assertTrue((theirs / "report.json").exists())


class InstallStateTest(unittest.TestCase):
    def setUp(self) -> None:
        self.tmp = Path(tempfile.mkdtemp(prefix="bc-state-"))
        self.addCleanup(lambda: subprocess.run(["rm", "-rf", str(self.tmp)], check=False))

    def test_written_and_read_by_one_module(self) -> None:
        path = self.tmp / "install-1.state"
        state = {"torch": "pinned", "version": "2.15.0+cu132", "stage": "done", "exit": 0, "log": "x.log"}
        install_state.write(path, state)
        self.assertEqual(install_state.read(path), state)
        self.assertEqual(read_install(path)["status"], "ok")

    def test_what_is_not_an_install_state_is_one_line_naming_the_file(self) -> None:
        for text, want in (("torch=pinned\nstage=done\n", "JSON"), ("{}", "torch: missing"),
                           ('{"torch": "x", "exit": "0"}', "exit: expected a number"),
                           ('{"torch": "x", "stage": "nowhere"}', "stage: 'nowhere'"),
                           ('{"torch": "x", "colour": "red"}', "colour: not a field")):
            path = self.tmp / "bad.state"
            path.write_text(text)
            with self.subTest(text=text), self.assertRaises(SpecError) as e:
                install_state.read(path)
            self.assertTrue(str(e.exception).startswith(f"{path}:"), str(e.exception))
            self.assertIn(want, str(e.exception))
        with self.assertRaises(ValueError):
            install_state.write(self.tmp / "x.state", {"torch": "x", "colour": "red"})


class StagesTest(unittest.TestCase):
    """A run of three installs whose second fails its build (a real failing
    command through the build stage): it is "stopped during build", the
    others go on, and the command's exit status is the tool's (1)."""

    def setUp(self) -> None:
        self.tmp = Path(tempfile.mkdtemp(prefix="bc-stages-"))
        self.addCleanup(lambda: subprocess.run(["rm", "-rf", str(self.tmp)], check=False))

    def test_a_failed_build_stops_its_install_and_the_others_go_on(self) -> None:
        seen: list[str] = []

        def setup(state: commands.State, spec: str) -> None:
            state.torch = installs.Torch(f"/opt/{spec}/bin/python", spec, "", "", None)

        def configure_and_build(state: commands.State, target: str = "") -> None:
            assert state.torch is not None
            tree = builds.tree(self.tmp, "default", state.torch.python)
            state.build_dir = tree
            state.mark(version=state.torch.version, build_dir=str(tree), stage="configure")
            (tree / "generated").mkdir(parents=True)
            (tree / "generated" / "cases.json").write_text('{"cases": []}')
            state.mark(stage="build")
            failing = state.torch.version == "2.0"
            commands.call(state, ["sh", "-c", "echo compiling; exit 7" if failing else "echo compiled"], "build")

        def run_ctest(state: commands.State, args: list[str], require: str = "") -> int:
            assert state.torch is not None
            seen.append(state.torch.version)
            state.run_dir = self.tmp / f"run-{state.torch.version}"
            state.mark(run_dir=str(state.run_dir), stage="tests")
            return 0

        def make_report(state: commands.State, inputs: list[str] | None = None, quiet: bool = False) -> int:
            seen.append("report " + " ".join(inputs or []))
            return 0

        o = Options("run", torches=["1.0", "2.0", "3.0"], jobs=1)
        state = commands.State(o, python=sys.executable)
        out, err = io.StringIO(), io.StringIO()
        with mock.patch.object(commands, "ROOT", self.tmp), mock.patch.object(commands, "setup", setup), \
                mock.patch.object(commands, "configure_and_build", configure_and_build), \
                mock.patch.object(commands, "run_ctest", run_ctest), \
                mock.patch.object(commands, "make_report", make_report), \
                mock.patch.object(commands, "report_python", lambda: sys.executable), \
                contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            rc = commands.run_versions(state, o.torches, "run")
        self.assertEqual(rc, exits.TOOL, err.getvalue())
        self.assertEqual(seen[:2], ["1.0", "3.0"], "the install after the failed one went on")
        directory = builds.versions_tree(self.tmp, "default")
        states = [read_install(directory / f"install-{i}.state") for i in (1, 2, 3)]
        self.assertEqual([s["status"] for s in states], ["ok", "error", "ok"])
        self.assertTrue(states[1]["why"].startswith("stopped during build (exit 7)"), states[1]["why"])
        self.assertIn("compiling", (directory / "install-2.log").read_text())
        self.assertIn(f"--install {directory / 'install-2.state'}", seen[2])
        self.assertIn("torch install 2 (2.0) failed (exit 7); the others go on", out.getvalue())


class InterruptTest(unittest.TestCase):
    """Ctrl-C during ctest stops it and the test it runs, keeps the evidence
    and says so (exit 130): a real ctest and a real test that hangs."""

    def test_ctrl_c_stops_ctest_and_its_tests(self) -> None:
        tmp = Path(tempfile.mkdtemp(prefix="bc-int-"))
        self.addCleanup(lambda: subprocess.run(["rm", "-rf", str(tmp)], check=False))
        project = tmp / "project"
        project.mkdir()
        marker = f"bc-hang-{os.getpid()}"
        hang = ("import os, sys, time; open(os.environ['BACKENDCHECK_EVIDENCE_DIR'] + '/t.jsonl.part', 'w')"
                ".write('x'); time.sleep(120)")
        (project / "CTestTestfile.cmake").write_text(f'add_test(hang "{sys.executable}" "-c" "{hang}" "{marker}")\n')
        state = commands.State(Options("run"), python=sys.executable)
        state.build_dir = tmp / "build"
        state.build_dir.mkdir()
        with mock.patch.dict(os.environ, {"BACKENDCHECK_EVIDENCE_DIR": str(tmp / "ev")}):
            def ctrl_c() -> None:
                deadline = time.monotonic() + 30
                while not list((tmp / "ev").glob("latest/*.part")) and time.monotonic() < deadline:
                    time.sleep(0.1)
                os.kill(os.getpid(), signal.SIGINT)
            threading.Thread(target=ctrl_c, daemon=True).start()
            started = time.monotonic()
            with contextlib.redirect_stdout(io.StringIO()), self.assertRaises(commands.Interrupted) as e:
                commands.run_ctest(state, ["--test-dir", str(project)])
        self.assertLess(time.monotonic() - started, 30)
        self.assertIn("kept the evidence written so far (1 file(s))", str(e.exception))
        time.sleep(0.3)
        left = subprocess.run(["pgrep", "-f", marker], capture_output=True, text=True, check=False).stdout.split()
        self.assertEqual(left, [], "a test process outlived the run")


class JudgingTest(unittest.TestCase):
    """ctest judges: a claim's test that fails is the report's to say (the
    command exits with the status the report test's page holds), a failed
    test of any other kind is the tool's own health; the report test gets
    this command's findings files and report options. A real ctest on tests
    that stand in for the claims', the report's and an evidence test."""

    def project(self, evidence_fails: bool) -> tuple[commands.State, Path]:
        tmp = Path(tempfile.mkdtemp(prefix="bc-judge-"))
        self.addCleanup(lambda: subprocess.run(["rm", "-rf", str(tmp)], check=False))
        project = tmp / "project"
        project.mkdir()
        known = tmp / "team.toml"
        known.write_text("")
        report = ("import json, os, pathlib, sys; d = pathlib.Path(os.environ['BACKENDCHECK_REPORT_DIR']); "
                  "d.mkdir(parents=True, exist_ok=True); o = json.loads(os.environ['BACKENDCHECK_REPORT_OPTIONS']); "
                  "k = os.environ['BACKENDCHECK_KNOWN']; "
                  "(d / 'report.json').write_text(json.dumps({'exit_status': 4, 'options': o, 'known': k})); "
                  "sys.exit(4)")
        tests = {"claim.a": "import sys; print('UNEXPECTED a'); sys.exit(1)", "claim.b": "pass", "report": report,
                 "Cpu.Evidence": "import sys; sys.exit(1 if %s else 0)" % evidence_fails}
        (project / "CTestTestfile.cmake").write_text("".join(
            f'add_test("{name}" "{sys.executable}" "-c" "{code}")\n' for name, code in tests.items()))
        o = Options("run")
        o.strict, o.known = True, [known]
        state = commands.State(o, python=sys.executable)
        state.build_dir = tmp / "build"
        state.build_dir.mkdir()
        state.report_dir = tmp / "report"
        return state, project

    def judge(self, state: commands.State, project: Path) -> int:
        with mock.patch.dict(os.environ, {"BACKENDCHECK_EVIDENCE_DIR": str(state.build_dir / "ev")}), \
                contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            rc = commands.run_ctest(state, ["--test-dir", str(project)], report=True)
            return commands.report_after_tests(state, rc, browser=False)

    def test_a_claim_that_fails_is_the_reports_verdict(self) -> None:
        state, project = self.project(evidence_fails=False)
        self.assertEqual(self.judge(state, project), 4)
        page = json.loads((state.report_dir / "report.json").read_text())
        self.assertIn("--strict", page["options"])
        self.assertIn("--tests", page["options"])
        self.assertTrue(page["known"].endswith("team.toml"))

    def test_the_control_a_failed_evidence_test_is_the_tools_health(self) -> None:
        state, project = self.project(evidence_fails=True)
        self.assertEqual(self.judge(state, project), exits.TOOL)

    def test_the_judging_tests_are_named_once(self) -> None:
        from inputs import labels
        self.assertTrue(labels.judges("claim.cublas-config"))
        self.assertTrue(labels.judges(labels.REPORT_TEST) and labels.judges(labels.MODEL_TEST))
        self.assertFalse(labels.judges("TorchPython.Defaults") or labels.judges("report.browser"))


class ExitsTest(unittest.TestCase):
    def test_final_status(self) -> None:
        with contextlib.redirect_stderr(io.StringIO()) as err:
            self.assertEqual(commands.final_status(8, 0), exits.TOOL)
            self.assertEqual(commands.final_status(0, 0), exits.OK)
            for code in (3, 4, 5, 6):
                self.assertEqual(commands.final_status(0, code), code)
            self.assertEqual(commands.final_status(0, 2), exits.TOOL)
        self.assertIn("the report failed (exit 2)", err.getvalue())

    def test_the_statuses_are_declared_once_with_2(self) -> None:
        self.assertEqual(sorted(exits.MEANINGS), [0, 1, 2, 3, 4, 5, 6, 130])
        self.assertIn("command line", exits.MEANINGS[exits.USAGE])


class ManagedTorchTest(unittest.TestCase):
    def test_a_release_gets_its_own_managed_environment_pinned_as_the_default(self) -> None:
        tmp = Path(tempfile.mkdtemp(prefix="bc-env-"))
        self.addCleanup(lambda: subprocess.run(["rm", "-rf", str(tmp)], check=False))
        asked = []

        def ensure_env(cache: Path, name: str, requirements: Path, what: str, offline: bool) -> Path:
            asked.append((name, requirements.read_text()))
            return Path("/envs") / name
        with mock.patch.object(installs, "ensure_env", ensure_env):
            self.assertEqual(installs.managed_torch(tmp, "2.7.1", False), "/envs/torch-2.7.1/bin/python")
            self.assertEqual(installs.managed_torch(tmp, "", False),
                             f"/envs/torch-{installs.pinned_torch()}/bin/python")
        self.assertIn("\ntorch==2.7.1\n", asked[0][1])
        self.assertEqual(asked[1][1], installs.REQUIREMENTS.read_text())

    def test_the_cache_is_where_the_environment_says(self) -> None:
        self.assertEqual(installs.cache_root({"BACKENDCHECK_CACHE": "/c"}), Path("/c"))
        self.assertEqual(installs.cache_root({"XDG_CACHE_HOME": "/x"}), Path("/x/backendcheck"))
        self.assertEqual(installs.cache_root({"HOME": "/h"}), Path("/h/.cache/backendcheck"))


class TorchSpecTest(unittest.TestCase):
    """One spelling of the torch under test for ./backendcheck, ci/gpu-kit
    and ci/nightly-gpu.sh (python3 -m cli.torch_spec)."""

    def spec(self, *argv: str) -> tuple[int, str, str]:
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            rc = torch_spec_main(list(argv))
        return rc, out.getvalue().strip(), err.getvalue().strip()

    def test_the_same_values_as_the_command_line(self) -> None:
        self.assertEqual(self.spec("torch==2.11.0"), (0, "torch==2.11.0", ""))
        self.assertEqual(self.spec("pinned"), (0, "pinned", ""))
        self.assertEqual(self.spec("/usr/bin/python3"), (0, "/usr/bin/python3", ""))
        self.assertEqual(self.spec("--interpreter", "/usr/bin/python3"), (0, "/usr/bin/python3", ""))
        rc, out, err = self.spec("2.11.0")
        self.assertEqual((rc, out, err), (exits.USAGE, "", "--torch 2.11.0: '2.11.0': no such interpreter (an "
                                          "interpreter, torch==VERSION or pinned)"))
        rc, _, err = self.spec("--interpreter", "torch==2.11.0")
        self.assertEqual(rc, exits.USAGE)
        self.assertIn("name the interpreter of the torch installed here", err)


class ShimTest(unittest.TestCase):
    def test_the_shim_runs_the_package_from_anywhere(self) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            r = subprocess.run([str(ROOT / "backendcheck"), "run", "--tier=bogus"], cwd=tmp, capture_output=True,
                               text=True, timeout=30, check=False)
        self.assertEqual(r.returncode, 2)
        self.assertEqual(r.stderr.splitlines(), ["backendcheck: error: argument --tier: invalid choice: 'bogus' "
                                                 "(choose from 'smoke', 'ci', 'nightly')"])
        self.assertLess(len((ROOT / "backendcheck").read_text().splitlines()), 20)


if __name__ == "__main__":
    unittest.main()
