"""One claim's ctest test (reports/tools/claim_test.py) on a recorded run (the
AVX-512 BF16 CPU's torch 2.15 install): known verdicts pass, a claim not
evaluated here skips with its reason, and a findings file that expects
otherwise for one claim fails exactly that claim's test, with its
UNEXPECTED line. The record cache gives the same verdicts and does not let
a changed file through unchecked."""

from __future__ import annotations

import contextlib
import io
import json
import os
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from reports import known

from reports.tools import claim_test
from reports.evidence import read_evidence
from reports.pipeline import Inputs, judge
from reports.records import CACHE_ENV

from .recorded import unpack_zen5

ROOT = Path(__file__).resolve().parents[2]
CLAIMS = ROOT / "catalog" / "claims.toml"
KNOWN = ROOT / "catalog" / "known_findings.toml"
# A team's file that expects, on this CPU, the verdict the repository's
# file knows is not seen: mkldnn.conv's bf16 setting "supported".
MUTATED = '''[[finding]]
claim = "mkldnn-conv-bf16"
verdict = "supported"
when = 'torch >= "2.15" and avx512bw'
reason = "A mutation of the known findings, for the claim tests' test."
first_seen = 2026-11-29
'''


class ClaimTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls._tmp = tempfile.TemporaryDirectory(prefix="backendcheck-claim-test-")
        cls.root = Path(cls._tmp.name)
        cls.rundir = unpack_zen5(cls.root)["2.15.0"]
        cls.manifest = cls.rundir / "cases.json"
        cls.mutated = cls.root / "team.toml"
        cls.mutated.write_text(MUTATED)
        cls.cache = cls.root / "cache"
        cls.statuses = cls.judge_all([KNOWN], "")  # every record checked

    @classmethod
    def tearDownClass(cls) -> None:
        cls._tmp.cleanup()

    @classmethod
    def judge_all(cls, files: list[Path], cache: str | None = None) -> dict[str, tuple[int, list[str]]]:
        inputs = Inputs(claims=CLAIMS, manifest=cls.manifest, out=Path("."), partial=True,
                        evidence=[cls.rundir / "evidence"], known=known.sources(files))
        with mock.patch.dict(os.environ, {CACHE_ENV: str(cls.cache) if cache is None else cache}):
            j = judge(inputs, out=False)
        return {v.claim.id: claim_test.claim_status(j, v.claim.id) for v in j.verdicts}

    def main(self, *args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
        out, err = io.StringIO(), io.StringIO()
        environment = {"BACKENDCHECK_EVIDENCE_DIR": str(self.rundir / "evidence"), known.ENVIRONMENT: "",
                       CACHE_ENV: str(self.cache), **(env or {})}
        with mock.patch.dict(os.environ, environment), contextlib.redirect_stdout(out), \
                contextlib.redirect_stderr(err):
            status = claim_test.main(["--claims", str(CLAIMS), "--manifest", str(self.manifest),
                                      "--known", str(KNOWN), "--partial", *args])
        return status, out.getvalue(), err.getvalue()

    def test_every_claim_has_a_status_and_a_line(self) -> None:
        self.assertEqual(len(self.statuses), 74)
        self.assertEqual({s for s, _ in self.statuses.values()}, {0, claim_test.SKIP})
        for claim, (status, lines) in self.statuses.items():
            self.assertTrue(lines, claim)

    def test_a_known_verdict_passes(self) -> None:
        status, out, _ = self.main("--claim", "mkldnn-conv-bf16")
        self.assertEqual(status, 0, out)
        self.assertIn("mkldnn-conv-bf16 on ", out)
        self.assertIn("refuted, known since 2026-11-26", out)
        self.assertIn("known_findings.toml:", out)

    def test_a_claim_not_evaluated_here_skips_with_its_reason(self) -> None:
        status, out, _ = self.main("--claim", "cublas-config")
        self.assertEqual(status, claim_test.SKIP)
        self.assertIn("NOT EVALUATED cublas-config on ", out)
        self.assertIn("sees no CUDA device", out)

    def test_a_mutated_findings_file_fails_exactly_that_claim(self) -> None:
        mutated = self.judge_all([KNOWN, self.mutated])
        changed = sorted(c for c in mutated if mutated[c][0] != self.statuses[c][0])
        self.assertEqual(changed, ["mkldnn-conv-bf16"])
        status, out, _ = self.main("--claim", "mkldnn-conv-bf16", env={known.ENVIRONMENT: str(self.mutated)})
        self.assertEqual(status, 1)
        self.assertIn("UNEXPECTED mkldnn-conv-bf16 on ", out)
        self.assertIn("expected supported, got refuted", out)
        self.assertIn("[[finding]]", out)  # the entry that would make it known
        status, _, _ = self.main("--claim", "mkldnn-rnn-bf16", env={known.ENVIRONMENT: str(self.mutated)})
        self.assertEqual(status, 0)

    def test_bad_input_is_one_line_and_fails(self) -> None:
        status, out, err = self.main("--claim", "no-such-claim")
        self.assertEqual(status, 1)
        self.assertRegex(err.strip(), r"^\S*claims\.toml:1: no claim 'no-such-claim' in the catalog$")

    def test_the_model_test_holds_the_model_to_pytorch(self) -> None:
        status, out, _ = self.main("--model")
        self.assertEqual(status, 0, out)
        self.assertRegex(out, r"model against PyTorch: \d+ case\(s\), 0 disagreement\(s\) without a known reason")

    def test_the_record_cache_gives_the_same_verdicts_and_rechecks_changed_files(self) -> None:
        with tempfile.TemporaryDirectory() as cache:
            first = self.judge_all([KNOWN], cache)
            self.assertTrue(list(Path(cache).glob("validated-*.json")))
            second = self.judge_all([KNOWN], cache)
        self.assertEqual(first, self.statuses)
        self.assertEqual(second, self.statuses)
        # A file the cache has seen, changed to hold a record that does not
        # fit: refused all the same.
        with tempfile.TemporaryDirectory() as tmp:
            evidence = Path(tmp) / "evidence"
            evidence.mkdir()
            source = next(p for p in sorted((self.rundir / "evidence").glob("*.jsonl")) if p.stat().st_size > 0)
            (evidence / source.name).write_bytes(source.read_bytes())
            cache = str(Path(tmp) / "cache")
            inputs = Inputs(claims=CLAIMS, manifest=self.manifest, out=Path("."), partial=True,
                            evidence=[evidence], known=[KNOWN])
            with mock.patch.dict(os.environ, {CACHE_ENV: cache}):
                judge(inputs, only={"defaults"}, out=False)
                lines = source.read_text().splitlines()
                record = json.loads(lines[0])
                record["unknown_field"] = 1
                (evidence / source.name).write_text("\n".join([json.dumps(record)] + lines[1:]) + "\n")
                with self.assertRaises(Exception) as refused:
                    judge(inputs, only={"defaults"}, out=False)
        self.assertIn("record refused", str(refused.exception))

    def test_a_file_closed_while_the_run_is_read_is_read_under_its_final_name(self) -> None:
        # A claim's test reads the run while other tests write: a file listed
        # as X.jsonl.part may be X.jsonl by the time it is read.
        with tempfile.TemporaryDirectory() as tmp:
            evidence = Path(tmp)
            sources = sorted((self.rundir / "evidence").glob("*.jsonl"))[:3]
            for source in sources:
                (evidence / source.name).write_bytes(source.read_bytes())
            listed = sorted(evidence.iterdir())
            stale = [listed[0].with_name(listed[0].name + ".part")] + listed[1:]
            with mock.patch.object(Path, "iterdir", lambda self: iter(stale)):
                ev = read_evidence([evidence])
        self.assertEqual(ev.refused, [])
        self.assertEqual(ev.files, 3)


if __name__ == "__main__":
    unittest.main()


class ReportOptionsTest(unittest.TestCase):
    """The report test takes the command line's report options from
    BACKENDCHECK_REPORT_OPTIONS: a JSON list of strings, else one line."""

    def test_a_list_of_strings(self) -> None:
        self.assertEqual(claim_test.report_options(""), [])
        self.assertEqual(claim_test.report_options('["--strict", "--baseline", "/a b/report.json"]'),
                         ["--strict", "--baseline", "/a b/report.json"])

    def test_anything_else_is_one_line_naming_the_variable(self) -> None:
        from inputs.errors import SpecError
        for bad in ("--strict", '{"a": 1}', '["--strict", 3]'):
            with self.assertRaises(SpecError) as e:
                claim_test.report_options(bad)
            self.assertTrue(str(e.exception).startswith("BACKENDCHECK_REPORT_OPTIONS:1: "), str(e.exception))
