"""reports/tools/flip_rates.py: each run judged alone by the catalog's rules, a
claim's flips counted against its most common verdict. The runs are the
recorded Compare records of reports/tests/data/two-torch (mkldnn on against
off, with and without use_deterministic_algorithms), one install's per run."""

from __future__ import annotations

import contextlib
import io
import json
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from reports.tools import flip_rates
from reports.evidence import read_manifest

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "reports" / "tests" / "data" / "two-torch"


class FlipRatesTest(unittest.TestCase):
    def measure(self, installs: list[str], loaded: bool = True) -> dict:
        runs = iter(installs)

        def fake_run(build: Path, stress: bool, suites: tuple[str, ...]) -> tuple[Path, float]:
            self.assertEqual(suites, flip_rates.TIMED)
            out = Path(tempfile.mkdtemp(prefix="flips-test-"))
            shutil.copytree(DATA / next(runs), out, dirs_exist_ok=True)
            if stress:  # what a Compare records beside stress-ng --cpu 2 on two cores
                for path in out.glob("*.jsonl"):
                    lines = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
                    for r in lines:
                        if "compare" in r:
                            r["compare"]["others_cpu"] = 0.5
                    path.write_text("".join(json.dumps(r) + "\n" for r in lines))
            return out, 1.0
        with tempfile.TemporaryDirectory() as tmp:
            build = Path(tmp)
            (build / "generated").mkdir()
            shutil.copy(DATA / "cases.json", build / "generated" / "cases.json")
            with mock.patch.object(flip_rates, "_run", fake_run):
                result = flip_rates.measure(ROOT / "catalog" / "claims.toml", [build], len(installs),
                                            3 if loaded else len(installs) + 1)
        [install] = result["installs"].values()
        return install["claims"]

    def test_the_same_evidence_never_flips(self) -> None:
        claims = self.measure(["torch-2.15.0"] * 4, loaded=False)
        self.assertIn("mkldnn-accel", claims)
        self.assertTrue(all(c["flips"] == 0 for c in claims.values()), claims)

    def test_runs_timed_on_a_busy_machine_are_withheld_not_flips(self) -> None:
        """Runs 3 and 4 have stress-ng beside them: their Compares record that
        others took half the CPU, so they give no verdict, whatever their
        ratios say (here another install's, which would be a flip)."""
        claims = self.measure(["torch-1.13.0a0", "torch-1.13.0a0", "torch-2.15.0", "torch-2.15.0"])
        accel = claims["mkldnn-accel"]
        self.assertEqual((accel["most_common"], accel["flips"], accel["withheld"]), ("supported", 0, 2), accel)
        self.assertEqual(accel["loaded"], [flip_rates.WITHHELD] * 2)
        self.assertEqual(accel["others_cpu"][2:], [0.5, 0.5])

    def test_a_different_verdict_is_a_flip_against_the_most_common(self) -> None:
        claims = self.measure(["torch-1.13.0a0", "torch-1.13.0a0", "torch-2.15.0", "torch-1.13.0a0"], loaded=False)
        accel = claims["mkldnn-accel"]
        self.assertEqual(accel["most_common"], "supported")
        self.assertEqual(accel["flips"], 1, accel)
        self.assertEqual((len(accel["idle"]), len(accel["loaded"])), (4, 0))
        self.assertTrue(all(c["flips"] == 0 for c in claims.values() if c["verdicts"][0] == "not evaluated"))


    def test_the_timed_claims_are_those_the_timed_suites_give_evidence(self) -> None:
        """The claims measured are those whose evidence or prediction comes
        from a timed suite, read from the generator's own expansion of the
        repository's specs: the ratio claims and the model's timing-based
        choices; --suites narrows them."""
        with tempfile.TemporaryDirectory() as tmp:
            subprocess.run([sys.executable, "-m", "generators", "expand", "--out", tmp,
                            *(str(ROOT / "catalog" / "matrices" / n) for n in ("cpu.toml", "gpu.toml", "selection.toml"))],
                           cwd=ROOT, check=True, capture_output=True)
            manifest = read_manifest(Path(tmp) / "cases.json")
        claims = ROOT / "catalog" / "claims.toml"
        ids = {c.id for c in flip_rates._claims(claims, manifest, flip_rates.TIMED)}
        self.assertTrue({"mkldnn-accel", "det-alg-slower", "cpu-bf16-speed", "bench-fixed-faster",
                         "bench-varying-slower", "bench-memory", "det-slower", "bench-unstable",
                         "det-bench-cross-run"} <= ids, ids)
        self.assertNotIn("heuristic-stable", ids)  # heuristics choose the same in every process
        self.assertNotIn("defaults", ids)
        model = {c.id for c in flip_rates._claims(claims, manifest, ("CpuBenchmark/",))}
        self.assertEqual(model, {"bench-fixed-faster", "bench-varying-slower", "bench-memory"})
        with self.assertRaises(SystemExit), contextlib.redirect_stderr(io.StringIO()) as err:
            flip_rates.main(["--claims", str(claims), "--suites", "Nope/", "--out", "/dev/null", "x"])
        self.assertIn("not Nope/", err.getvalue())


if __name__ == "__main__":
    unittest.main()
