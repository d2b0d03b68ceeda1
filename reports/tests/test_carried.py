"""Evidence that travels (reports/carried.py): a run directory copied from
another machine, carrying its manifest and run.json, reports with no other
argument, through the report's command line and through ./backendcheck
report with no build; one recorded with another catalog is named in one
line and judged --partial; one that carries no manifest is one line and
exit 1."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

from reports import carried
from reports.tests.recorded import unpack_zen5

ROOT = Path(__file__).resolve().parents[2]
CLAIMS = ROOT / "catalog" / "claims.toml"
ENV = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONDONTWRITEBYTECODE": "1"}


class CarriedTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.tmp = tempfile.TemporaryDirectory(prefix="backendcheck-carried-")
        cls.addClassCleanup(cls.tmp.cleanup)
        cls.root = Path(cls.tmp.name)
        run = unpack_zen5(cls.root / "recorded")["2.15.0"]
        # As ./backendcheck run leaves it, then copied elsewhere.
        cls.copied = cls.root / "elsewhere" / "run-1"
        shutil.copytree(run / "evidence", cls.copied)
        carried.write(cls.copied, run / "cases.json", CLAIMS, "0123456789abcdef")

    def report(self, *argv: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "reports", *argv], cwd=ROOT, env=ENV, capture_output=True,
                              text=True, timeout=120, check=False)

    def test_a_copied_directory_reports_with_no_other_argument(self) -> None:
        out = self.root / "out-1"
        r = self.report("--claims", str(CLAIMS), "--out", str(out), "--partial", "--known",
                        str(ROOT / "catalog" / "known_findings.toml"), str(self.copied))
        self.assertEqual(r.returncode, 0, r.stderr)
        data = json.loads((out / "report.json").read_text())
        self.assertEqual(len(data["cases"]), len(json.loads((self.copied / "cases.json").read_text())["cases"]))
        self.assertNotIn("another catalog", r.stderr)

    def test_backendcheck_report_needs_no_build_for_it(self) -> None:
        out = self.root / "out-2"
        r = subprocess.run([str(ROOT / "backendcheck"), "--preset", "debug", "report", "--out", str(out),
                            str(self.copied)], cwd=self.root, env=ENV, capture_output=True, text=True, timeout=120,
                           check=False)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertTrue((out / "index.html").is_file())

    def test_another_catalog_is_named_in_one_line_and_judged_partial(self) -> None:
        other = self.root / "other-catalog"
        shutil.copytree(self.copied, other)
        (other / carried.RUN).write_text(json.dumps({"commit": "fedcba9876543210", "catalog": "0" * 32}))
        out = self.root / "out-3"
        r = self.report("--claims", str(CLAIMS), "--out", str(out), str(other))  # no --partial
        lines = [x for x in r.stderr.splitlines() if "another catalog" in x]
        self.assertEqual(len(lines), 1, r.stderr)
        self.assertTrue(lines[0].startswith(f"{other}: recorded at commit fedcba987654 with another catalog"))
        self.assertNotIn("fix catalog/claims.toml", r.stderr + r.stdout)
        # The control: the same directory with this catalog's digest, without --partial, advises the fix.
        (other / carried.RUN).write_text(json.dumps({"commit": "x", "catalog": carried.catalog_digest(CLAIMS)}))
        r = self.report("--claims", str(CLAIMS), "--out", str(self.root / "out-4"), str(other))
        self.assertIn("fix catalog/claims.toml", r.stderr + r.stdout)

    def test_no_manifest_anywhere_is_one_line_and_exit_1(self) -> None:
        bare = self.root / "bare"
        shutil.copytree(self.copied, bare)
        (bare / carried.MANIFEST).unlink()
        r = self.report("--claims", str(CLAIMS), "--out", str(self.root / "out-5"), str(bare))
        self.assertEqual(r.returncode, 1)
        self.assertEqual(r.stderr.splitlines(), [f"{bare}:1: no manifest: no evidence directory carries cases.json; "
                                                 "give --manifest"])
