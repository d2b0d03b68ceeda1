"""The GPU kit's judge (ci/kit_steps.py) holds the calls' evidence to the
team's findings files too: those given by --known and by BACKENDCHECK_KNOWN."""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import shutil
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from ci import kit_steps
from reports import known

ROOT = Path(__file__).resolve().parents[2]


class KitJudgeTest(unittest.TestCase):
    def test_the_gpu_kit_s_judge_reads_the_team_s_files(self) -> None:
        """The H100's recorded PyTorch probes as if a torch before 2.10 had
        refuted cublas-config: exit 3 (the control); 0 with a team file given
        by --known or by BACKENDCHECK_KNOWN."""
        with tempfile.TemporaryDirectory() as tmp:
            t = Path(tmp)
            call = kit_steps.Call.__new__(kit_steps.Call)
            call.a, call.state_dir, call.k = argparse.Namespace(name="h100", known=[]), t / "state", 1
            call.work = t / "state" / "h100-1"
            shutil.copytree(ROOT / "reports" / "tests" / "data" / "h100" / "torchpython-1", call.work)
            for f in (call.work / "evidence").glob("*.jsonl"):
                f.write_text(f.read_text().replace('"version":"2.11.0+cu130"', '"version":"2.9.1+cu130"'))
            team = t / "team.toml"
            team.write_text('[[finding]]\nclaim = "cublas-config"\nverdict = "refuted"\nwhen = \'cuda and torch == "2.9"\'\n'
                            'reason = "seen by the team"\nfirst_seen = 2026-11-28\n')
            quiet = contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO())
            with mock.patch.dict(os.environ), quiet[0], quiet[1]:
                os.environ.pop(known.ENVIRONMENT, None)
                self.assertEqual(call.judge(), 3, "without the team file")
                os.environ[known.ENVIRONMENT] = str(team)
                self.assertEqual(call.judge(), 0, "BACKENDCHECK_KNOWN")
                os.environ.pop(known.ENVIRONMENT)
                call.a.known = [team]
                self.assertEqual(call.judge(), 0, "--known")
            held = json.loads((call.state_dir / "report" / "report.json").read_text())["known"]["held"]
            self.assertIn(f"{team}:1", [h.get("where") for h in held if h["claim"] == "cublas-config"])


if __name__ == "__main__":
    unittest.main()
