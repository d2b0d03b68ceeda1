"""Every input a user can hand the command line ends, within seconds, in
one `FILE:LINE: message` line and a non-zero exit: specs, evidence,
expectation files, baselines, output paths and --matrix paths."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "reports" / "tests" / "data" / "recorded"
ONE_LINE = re.compile(r"^[^\n]+:\d+: [^\n]+$")
ENV = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONDONTWRITEBYTECODE": "1"}


class Inputs(unittest.TestCase):
    def setUp(self) -> None:
        self.tmp = Path(tempfile.mkdtemp(prefix="backendcheck-inputs-"))
        self.addCleanup(shutil.rmtree, self.tmp, True)

    def one_line(self, cmd: list[str], path: str | None = None, want: str = "") -> str:
        started = time.monotonic()
        r = subprocess.run(cmd, cwd=ROOT, env=ENV, capture_output=True, text=True, timeout=30, check=False)
        took = time.monotonic() - started
        lines = [x for x in r.stderr.splitlines() if x.strip() and not x.startswith("warning: ")]
        self.assertNotEqual(r.returncode, 0, f"{cmd}: exit 0\n{r.stdout}{r.stderr}")
        self.assertLess(took, 10, f"{cmd} took {took:.1f} s")
        self.assertNotIn("Traceback", r.stderr)
        self.assertTrue(lines and ONE_LINE.match(lines[0]), f"{cmd}: not FILE:LINE: message: {r.stderr!r}")
        if path is not None:
            self.assertTrue(lines[0].startswith(path), lines[0])
        self.assertIn(want, lines[0])
        return lines[0]

    def validate(self, path: Path | str, want: str = "") -> str:
        return self.one_line([sys.executable, "-m", "generators", "validate", str(path)], str(path), want)

    # Specs.
    def test_deep_nesting(self) -> None:
        spec = self.tmp / "deep.toml"
        spec.write_text("x = " + "[" * 600 + "]" * 600 + "\n")
        self.validate(spec, "nested too deeply")

    def test_an_integer_of_thousands_of_digits(self) -> None:
        spec = self.tmp / "big.toml"
        spec.write_text("memory_budget_mib = " + "9" * 5000 + "\n")
        self.validate(spec)

    def test_a_long_dotted_key(self) -> None:
        spec = self.tmp / "dotted.toml"
        spec.write_text(".".join(["a"] * 20000) + " = 1\n")
        self.validate(spec, "dotted parts")

    def test_not_a_regular_file(self) -> None:
        fifo = self.tmp / "fifo.toml"
        os.mkfifo(fifo)
        for path in ("/dev/zero", "/dev/urandom", str(fifo), str(self.tmp)):
            with self.subTest(path=path):
                self.validate(path, "not a regular file")

    def test_a_product_over_the_case_cap(self) -> None:
        spec = self.tmp / "product.toml"
        spec.write_text('[shapes]\nsmall = "mb1ic1ih4oc1kh1"\n[[suite]]\nname = "big"\nfixture = "Determinism"\n'
                        'prefix = "Big"\n[suite.axes]\nshape = ["small"]\nthreads = ['
                        + ", ".join(str(i) for i in range(1, 1001)) + ']\n"cudnn.benchmark" = [true, false]\n'
                        '"cudnn.deterministic" = [true, false]\n"cudnn.allow_tf32" = [true, false]\n'
                        '"mkldnn.enabled" = [true, false]\ndirection = ["fwd", "bwd_data"]\n')
        line = self.validate(spec, "more than the 20000 cases")
        self.assertIn("--max-cases", line)

    # Evidence, expectation files, baselines and output paths, through the report's command line.
    def report(self, *extra: str, evidence: Path | None = None, out: Path | None = None) -> list[str]:
        manifest = self.tmp / "cases.json"
        manifest.write_text('{"cases": []}')
        return [sys.executable, "-m", "reports", "--claims", str(ROOT / "catalog" / "claims.toml"), "--manifest",
                str(manifest), "--out", str(out or self.tmp / "out"), *extra, str(evidence or DATA)]

    def evidence_with(self, line: str) -> Path:
        d = self.tmp / "ev"
        shutil.copytree(DATA, d)
        f = d / "determinism_tests-16484.jsonl"
        f.write_text(line + "\n" + f.read_text())
        return d

    def test_a_field_of_the_wrong_type(self) -> None:
        env = json.loads((DATA / "determinism_tests-16484.jsonl").read_text().splitlines()[0])
        for field, value in (("backends", []), ("cpu_isa_flags", "avx2"), ("omp_max_threads", "2")):
            with self.subTest(field=field):
                self.setUp()
                bad = dict(env, **{field: value})
                d = self.evidence_with(json.dumps(bad))
                self.one_line(self.report(evidence=d), str(d), f"'{field}' must be")
        for record, want in (({"kind": "case", "schema": 1, "test": "T", "checks": {"a": 1}}, "'checks' must be"),
                             ({"kind": "case", "schema": 1, "test": "T", "times_ns": [1, "x"]},
                              "'times_ns[1]' must be"),
                             ({"kind": "result", "schema": 1, "test": "T", "outcome": 1}, "'outcome': unknown outcome"),
                             ({"kind": "result", "schema": 9, "test": "T", "outcome": "passed"}, "schema 9")):
            with self.subTest(record=record):
                self.setUp()
                d = self.evidence_with(json.dumps(record))
                self.one_line(self.report(evidence=d), str(d), want)

    def test_deep_nesting_and_huge_numbers_in_evidence(self) -> None:
        for line in ('{"kind":"case","schema":1,"x":' + "[" * 5000 + "]" * 5000 + "}",
                     '{"kind":"case","schema":1,"threads":' + "9" * 5000 + "}"):
            with self.subTest(line=line[:40]):
                self.setUp()
                d = self.evidence_with(line)
                self.one_line(self.report(evidence=d), str(d), "unreadable record")

    def test_a_fifo_in_the_evidence_directory(self) -> None:
        d = self.tmp / "ev"
        shutil.copytree(DATA, d)
        os.mkfifo(d / "stuck.jsonl")
        self.one_line(self.report(evidence=d), str(d / "stuck.jsonl"), "not a regular file")

    @unittest.skipIf(os.geteuid() == 0, "root reads a directory whatever its mode")
    def test_an_unreadable_evidence_directory(self) -> None:
        d = self.tmp / "ev"
        shutil.copytree(DATA, d)
        d.chmod(0)
        self.addCleanup(d.chmod, 0o755)
        self.one_line(self.report(evidence=d), str(d), "cannot read")

    def test_out_names_a_file_or_an_unwritable_place(self) -> None:
        afile = self.tmp / "a-file"
        afile.write_text("mine\n")
        self.one_line(self.report(out=afile), str(afile), "must name a directory")
        self.assertEqual(afile.read_text(), "mine\n")
        self.one_line(self.report(out=Path("/proc/backendcheck-report")), "/proc/backendcheck-report", "cannot")

    def test_a_baseline_that_is_not_a_report(self) -> None:
        for text in ('{"claims": [{"id": 1}]}', '{"claims": 5}', "[" * 5000 + "]" * 5000, "not json"):
            with self.subTest(text=text[:20]):
                base = self.tmp / "old.json"
                base.write_text(text)
                self.one_line(self.report("--baseline", str(base)), str(base), "baseline")

    def test_a_known_findings_file_that_is_not_one(self) -> None:
        known = self.tmp / "known.toml"
        ok = 'claim = "cpu-noop"\nverdict = "supported"\nreason = "r"\nfirst_seen = 2026-11-26\n'
        for text, field in (("[" * 600 + "]" * 600 + "\n", ""), ("[[finding]]\n" + ok + "when = 'avx3'\n", "when"),
                            ("[[finding]]\n" + ok + "when = 'torch >= 2.10'\n", "when"),
                            ("[[finding]]\n" + ok.replace('"supported"', '"maybe"'), "verdict"),
                            ("[[finding]]\n" + ok.replace("2026-11-26", '"yesterday"'), "first_seen"),
                            ("[[finding]]\n" + ok + "colour = 1\n", "colour")):
            with self.subTest(text=text[:60]):
                known.write_text(text)
                line = self.one_line(self.report("--known", str(known)), str(known))
                self.assertIn(f": {field}: " if field else ":", line)


class EngineRegistryTest(unittest.TestCase):
    """inputs/engines.py reads backends/engines.def, the C++ registry's list."""

    def test_the_engines_and_their_devices(self) -> None:
        from inputs import engines
        found = engines.engines()
        self.assertEqual(list(found)[:2], ["onednn", "reference"])
        self.assertEqual(found["cudnn"].device, "cuda")
        self.assertTrue(found["cudnn"].cudnn_selection)
        self.assertEqual(found["onednn"].library, "oneDNN")
        self.assertEqual(found["reference"].ops, ("*",))  # every declared operation, through its oracle
        self.assertIn("scatter_add", found["pytorch"].ops)
        self.assertEqual(engines.device_of("cublas"), "cuda")
        self.assertEqual(engines.backends()[-2:], ("openmp", "mps"))

    def test_a_line_it_cannot_read_names_file_and_line(self) -> None:
        from inputs import engines
        with tempfile.TemporaryDirectory() as d:
            f = Path(d) / "engines.def"
            f.write_text('// x\nBC_ENGINE("a", AInstance, cpu, "conv2d", true, "A", "model", "native")\nBC_ENGINE("b", gpu)\n')
            with self.assertRaisesRegex(RuntimeError, r"engines\.def:3: "):
                engines.engines.__wrapped__(f)
