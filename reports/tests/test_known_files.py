"""Several findings files (reports/known.py `sources`, `load_all`, `judge`):
a team's files given by --known and by BACKENDCHECK_KNOWN, the later file's
entry standing, the report naming the entry that decided; through the
report's command line on the recorded runs of an AVX-512 BF16 CPU (both
torches) merged with the H100 kit's, mutated to a new refutation; on a
one-claim catalog for the bad input; and through the shell."""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from reports import known
from reports.__main__ import main
from reports.tests.recorded import ZEN5_STATUS, RecordedRuns

ROOT = Path(__file__).resolve().parents[2]
KNOWN = ROOT / "catalog" / "known_findings.toml"
TORCH_113 = "vm (amd-avx512_bf16-2t-torch1.13.0a0)"
TORCH_215 = "vm (amd-avx512_bf16-2t-torch2.15.0_cu132)"


def entry(claim: str, verdict: str, when: str, reason: str = "seen by the team") -> str:
    return (f"[[finding]]\nclaim = {json.dumps(claim)}\nverdict = {json.dumps(verdict)}\nwhen = '{when}'\n"
            f"reason = {json.dumps(reason)}\nfirst_seen = 2026-11-28\n")


class Ran:
    """One run of `python3 -m reports`: its status, its two streams and its report.json."""

    def __init__(self, argv: list[str], out: Path, environment: str | None) -> None:
        stdout, stderr = io.StringIO(), io.StringIO()
        env = {known.ENVIRONMENT: environment} if environment is not None else {}
        with mock.patch.dict(os.environ, env), contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
            if environment is None:
                os.environ.pop(known.ENVIRONMENT, None)
            self.status = main(argv)
        self.stdout, self.stderr, self.out = stdout.getvalue(), stderr.getvalue(), out
        # exit 1: input it could not read (no report), or a claim in error (a report)
        self.json = json.loads((out / "report.json").read_text()) if (out / "report.json").is_file() else {}
        self.junit = (out / "claims-junit.xml").read_text() if (out / "claims-junit.xml").is_file() else ""

    def held(self) -> dict[tuple[str, str], dict]:
        return {(h["claim"], h["platform"]): h for h in self.json["known"]["held"]}


class MutatedRuns:
    """The recorded runs, as if torch 1.13's OpenMP check had failed: a
    guarantee refuted with no known finding (exit 3) on one platform. Mixed
    into the test cases that report on them."""
    runs: RecordedRuns

    @classmethod
    def setUpClass(cls) -> None:
        cls.runs = RecordedRuns()
        cls.addClassCleanup(cls.runs.close)
        cls.runs.edit(cls.runs.cpu["1.13.0a0"] / "evidence", "TorchPython.OpenmpIsAvailable", '"outcome":"passed"',
                      '"outcome":"failed"')

    def run_report(self, *known_files: Path, environment: str | None = None, more: tuple[str, ...] = ()) -> Ran:
        out = Path(tempfile.mkdtemp(dir=self.runs.root))
        argv = ["--claims", str(ROOT / "catalog" / "claims.toml"), "--manifest", str(self.runs.manifest), "--out",
                str(out), "--partial", "--known", str(KNOWN), *[f"--known={k}" for k in known_files], *more,
                *[str(e) for e in self.runs.evidence()]]
        return Ran(argv, out, environment)

    def team_file(self, text: str) -> Path:
        path = Path(tempfile.mkdtemp(dir=self.runs.root)) / "team.toml"
        path.write_text(text)
        return path


class TeamFilesTest(MutatedRuns, unittest.TestCase):
    def control(self) -> Ran:
        """The mutated runs held to the repository's file alone: the control
        of every test here (exit 3), run once."""
        cls = type(self)
        if not hasattr(cls, "_control"):
            cls._control = self.run_report()
        return cls._control

    def test_a_team_file_given_by_known_or_by_the_environment_turns_exit_3_into_the_runs_own_and_is_named(self) -> None:
        team = self.team_file(entry("openmp-available", "refuted", 'torch < "2.0"', "Our Debian build's check fails."))
        control = self.control()
        self.assertEqual(control.status, 3, "without the team file")
        self.assertIn(f"UNEXPECTED openmp-available on {TORCH_113}", control.stderr)
        for how, ran in (("--known", self.run_report(team)),
                         ("BACKENDCHECK_KNOWN", self.run_report(environment=f":{team}:"))):
            with self.subTest(how=how):
                self.assertEqual(ran.status, ZEN5_STATUS, ran.stderr)
                h = ran.held()[("openmp-available", TORCH_113)]
                self.assertEqual((h["status"], h["where"], h["overrides"]), ("known", f"{team}:1", []))
                self.assertIn(f"by {team}:1", ran.stdout, "the terminal summary names the file")
                self.assertIn(f"({team}:1)", ran.junit, "JUnit names the file")
                self.assertIn(f'<span class="mono">{team}:1</span>', (ran.out / "index.html").read_text(),
                              "the claim's section names the file")
                self.assertIn(f"1 by {team}", ran.stdout)

    def test_where_two_files_disagree_the_later_file_s_entry_stands(self) -> None:
        supported = self.team_file(entry("openmp-available", "supported", 'torch < "2.0"'))
        refuted = self.team_file(entry("openmp-available", "refuted", 'not cuda and torch < "2.0"'))
        later_refuted = self.run_report(refuted, environment=str(supported))
        self.assertEqual(later_refuted.status, ZEN5_STATUS, later_refuted.stderr)
        h = later_refuted.held()[("openmp-available", TORCH_113)]
        self.assertEqual((h["where"], h["overrides"]), (f"{refuted}:1", [f"{supported}:1"]))
        self.assertIn(f"by {refuted}:1, in place of {supported}:1", later_refuted.stdout)
        self.assertEqual(later_refuted.held()[("mkldnn-conv-bf16", TORCH_215)]["where"].split(":")[0],
                         "catalog/known_findings.toml")
        # The other way round: the environment's file comes first, --known's stands; and a team's
        # file stands in place of the repository's entry too.
        conv = self.team_file(entry("mkldnn-conv-bf16", "supported", 'torch == "2.15"'))
        later_supported = self.run_report(supported, conv, environment=str(refuted))
        self.assertEqual(later_supported.status, 3)
        self.assertIn(f"UNEXPECTED openmp-available on {TORCH_113}: the guarantee verdict moved ({supported}:1): "
                      "expected supported, got refuted", later_supported.stderr)
        self.assertIn(f"UNEXPECTED mkldnn-conv-bf16 on {TORCH_215}: the guarantee verdict moved ({conv}:1)",
                      later_supported.stderr)
        self.assertRegex(later_supported.held()[("mkldnn-conv-bf16", TORCH_215)]["overrides"][0],
                         r"^catalog/known_findings.toml:\d+$")
        self.assertEqual(self.control().status, 3, "the control: without the team's files")


class OneClaimCatalog:
    """A catalog of one guarantee, refuted by its one record. Mixed into
    the test cases that report on it."""
    t: Path

    def setUp(self) -> None:
        self._tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self._tmp.cleanup)
        self.t = t = Path(self._tmp.name)
        (t / "claims.toml").write_text('[[claim]]\nid = "g"\nstatement = "s"\nsource = "s"\nkind = "guarantee"\n'
                                       'about = "any"\n[claim.evidence]\nrule = "fact"\nsystem = "any"\n'
                                       'tests = ["T.a"]\n')
        (t / "cases.json").write_text('{"cases": []}')
        (t / "ev").mkdir()
        (t / "ev" / "x-1.jsonl").write_text(json.dumps({"kind": "result", "schema": 1, "test": "T.a",
                                                        "outcome": "failed"}) + "\n")

    def run_report(self, *args: str, environment: str | None = None) -> Ran:
        return Ran(["--claims", str(self.t / "claims.toml"), "--manifest", str(self.t / "cases.json"), "--out",
                    str(self.t / "out"), *args, str(self.t / "ev")], self.t / "out", environment)


class BadInputTest(OneClaimCatalog, unittest.TestCase):
    """Bad input: one line FILE:LINE: message, exit 1."""

    def test_bad_findings_files_are_one_line_and_exit_1(self) -> None:
        self.assertEqual(self.run_report().status, 3, "the control: no findings file")
        two = self.t / "two.toml"
        two.write_text(entry("g", "refuted", "not cuda") + "\n" + entry("g", "supported", 'not gpu == "x"'))
        malformed = self.t / "bad.toml"
        malformed.write_text(entry("g", "refuted", "avx3"))
        for args, environment, line in (
                (("--known", str(two)), None, f"{two}:8: when: this entry and the one at {two}:1 both apply to g on "),
                (("--known", str(self.t / "none.toml")), None, f"{self.t / 'none.toml'}:1: cannot read"),
                (("--known", str(malformed)), None, f"{malformed}:4: when: unknown name 'avx3'"),
                ((), "relative/team.toml", "BACKENDCHECK_KNOWN:1: 'relative/team.toml' is not an absolute path"),
                ((), f"/x.toml:{malformed}", "/x.toml:1: cannot read")):
            with self.subTest(line=line):
                ran = self.run_report(*args, environment=environment)
                self.assertEqual(ran.status, 1)
                self.assertEqual(len(ran.stderr.splitlines()), 1, ran.stderr)
                self.assertTrue(ran.stderr.startswith(line), ran.stderr)

    def test_the_files_are_read_repository_first_then_the_environment_s_then_known_each_once(self) -> None:
        a, b, c = self.t / "a.toml", self.t / "b.toml", self.t / "c.toml"
        self.assertEqual(known.sources([a, KNOWN, b, a], f"{c}::{b}"), [KNOWN, c, b, a])
        self.assertEqual(known.display(KNOWN), "catalog/known_findings.toml")
        self.assertEqual(known.display(a), str(a))


class ShellTest(unittest.TestCase):
    """ci/merge-reports.sh passes the team's files through to the report,
    which reads BACKENDCHECK_KNOWN (./backendcheck's: cli/tests/test_main.py;
    the GPU kit's judge: ci/tests/test_kit_known.py)."""

    def test_the_merge_job_passes_known_and_write_findings_through(self) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            (Path(tmp) / "m" / "evidence").mkdir(parents=True)
            (Path(tmp) / "m" / "cases.json").write_text('{"cases": []}')
            r = subprocess.run([str(ROOT / "ci" / "merge-reports.sh"), "--in", tmp, "--out", f"{tmp}/report",
                                "--known", "/t/a.toml", "--known", "/t/b.toml", "--write-findings", "/t/w.toml",
                                "--dry-run"], capture_output=True, text=True, timeout=60)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIn("--known catalog/known_findings.toml --known /t/a.toml --known /t/b.toml --write-findings "
                          "/t/w.toml", r.stdout)


if __name__ == "__main__":
    unittest.main()
