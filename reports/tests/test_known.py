"""Known findings (reports/known.py, catalog/known_findings.toml): the
condition language, the file's errors, and a run held to what is known, on
the recorded runs of an AVX-512 BF16 CPU (both torches) merged with the H100
kit's, and on mutations of them."""

from __future__ import annotations

import json
import unittest
from pathlib import Path

from inputs.errors import SpecError
from reports import known
from reports.pipeline import Inputs, build
from reports.tests.recorded import RecordedRuns

ROOT = Path(__file__).resolve().parents[2]
KNOWN = ROOT / "catalog" / "known_findings.toml"

ZEN5_215 = {"torch": {"version": "2.15.0+cu132", "onednn": "3.13.3", "cudnn": "92600"}, "omp_max_threads": 2,
            "platform": {"onednn_isa": "avx512_core_bf16"}, "versions": {"cublas": "13.4.1"},
            "cpu_isa_flags": ["avx2", "avx512f", "avx512_bf16", "avx512_vnni"]}
H100 = {"torch": {"version": "2.11.0+cu130", "cudnn": "91900"}, "omp_max_threads": 16,
        "gpu": {"name": "NVIDIA H100 80GB HBM3", "arch": "sm_90", "count": 1},
        "versions": {"cudnn": "9.19.0", "cublas": "13.1.0"}, "platform": {"onednn_isa": "avx512_core_amx"},
        "cpu_isa_flags": ["avx2", "avx512f", "avx512_bf16", "amx_bf16", "amx_tile"]}
AVX2 = {"torch": {"version": "2.15.0+cu132"}, "omp_max_threads": 2, "platform": {"onednn_isa": "avx2"},
        "cpu_isa_flags": ["fma", "avx", "avx2", "f16c"]}


def holds(when: str, env: dict) -> bool:
    return known.Condition(when).holds(known.platform_values(env))


class ConditionTest(unittest.TestCase):
    def test_versions_compare_as_versions_not_as_text_or_numbers(self) -> None:
        self.assertTrue(holds('torch >= "2.10"', ZEN5_215), "2.15 is past 2.10, though '2.15' < '2.9' as text")
        self.assertTrue(holds('torch > "2.9"', ZEN5_215))
        self.assertFalse(holds('torch < "2.15"', ZEN5_215), "the local part +cu132 is not a version part")
        self.assertTrue(holds('torch == "2.15"', ZEN5_215), "== holds on the parts written")
        self.assertFalse(holds('torch == "2.1"', ZEN5_215))
        self.assertTrue(holds('"2.9" <= torch < "2.16"', ZEN5_215), "a range, chained")
        self.assertTrue(holds('torch < "1.14"', {"torch": {"version": "1.13.0a0"}}), "a pre-release counts as its release")
        self.assertTrue(holds('cudnn == "9.19"', H100) and holds('cudnn >= "9"', H100))
        self.assertTrue(holds('cudnn >= "9.26"', ZEN5_215), "torch's own cuDNN number, 92600, read as 9.26.0")
        self.assertTrue(holds('gpu_arch >= "sm_90"', H100) and not holds('gpu_arch > "sm_90"', H100))

    def test_features_devices_and_names(self) -> None:
        self.assertTrue(holds("avx512_bf16 and not amx_bf16", ZEN5_215))
        self.assertFalse(holds("avx512_bf16 and not amx_bf16", H100))
        self.assertFalse(holds("avx512_bf16 or amx_bf16", AVX2))
        self.assertTrue(holds('cuda and gpu == "NVIDIA H100 80GB HBM3"', H100))
        self.assertFalse(holds("cuda", ZEN5_215))
        self.assertTrue(holds('onednn_isa in ("avx512_core_bf16", "avx512_core_amx")', ZEN5_215))
        self.assertTrue(holds('onednn_isa not in ("avx2",)', H100))
        self.assertTrue(holds("threads == 2", ZEN5_215) and holds("threads >= 16", H100))
        self.assertTrue(holds("", AVX2), "no condition: every platform")

    def test_a_part_the_platform_lacks_makes_every_comparison_false(self) -> None:
        for when in ('gpu_arch >= "sm_80"', 'gpu_arch < "sm_80"', 'gpu == "x"', 'cudnn >= "1"'):
            with self.subTest(when=when):
                self.assertFalse(holds(when, AVX2))
        self.assertTrue(holds('not gpu_arch >= "sm_80"', AVX2))

    def test_what_is_not_a_condition_is_refused_when_read(self) -> None:
        for when, why in (("avx3", "unknown name 'avx3'"), ("torch >= 2.10", 'in quotes, as "2.10"'),
                          ('onednn_isa > "avx2"', "not a version"), ('cuda == "yes"', "true or false"),
                          ('torch >= "x"', "is not a version"), ("threads == '2'", "whole number"),
                          ("__import__('os')", "not a condition"), ("torch >=", "not an expression"),
                          ('"2.9" < "2.10"', "names one of the platform's parts")):
            with self.subTest(when=when):
                with self.assertRaises(ValueError) as e:
                    known.Condition(when)
                self.assertIn(why, str(e.exception))


class LoadTest(unittest.TestCase):
    def test_the_repository_s_findings_load_and_name_their_reason_and_date(self) -> None:
        from reports.catalog import load_catalog
        claims = {c.id: c for c in load_catalog(ROOT / "catalog" / "claims.toml")}
        findings = known.load(KNOWN, set(claims))
        self.assertGreaterEqual(len(findings), 4)
        for f in findings:
            self.assertRegex(f.first_seen, r"^\d{4}-\d\d-\d\d$")
            self.assertTrue(f.reason)
            self.assertNotIn("backendcheck", f.reason.lower(), "a reason speaks of PyTorch, not of the tool")
        refuted = {f.claim for f in findings if f.verdicts == ("refuted",) and claims[f.claim].kind == "guarantee"}
        self.assertLessEqual({"matmul-precision-cuda-only", "mkldnn-conv-bf16", "mkldnn-rnn-bf16", "cublas-config"},
                             refuted)

    def test_two_entries_that_disagree_on_one_platform_are_refused(self) -> None:
        import tempfile
        from reports.evidence import Evidence
        from reports.catalog import Claim
        from reports.verdicts import Verdict
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "k.toml"
            entry = '[[finding]]\nclaim = "c"\nverdict = "{v}"\nwhen = "{w}"\nreason = "r"\nfirst_seen = 2026-11-26\n'
            path.write_text(entry.format(v="refuted", w="avx2") + entry.format(v="supported", w="not cuda"))
            findings = known.load(path, {"c"})
            ev = Evidence(platform_env={"p": AVX2})
            v = Verdict(Claim("c", "s", "s", "folklore", {}, "fact"), "supported", "why", [])
            with self.assertRaises(SpecError) as e:
                known.judge(findings, [v], ev, partial=False)
            self.assertEqual(e.exception.line, 7)
            self.assertIn(f"both apply to c on p", str(e.exception))


class RecordedRunsTest(unittest.TestCase):
    """The acceptance: the AVX-512 BF16 CPU's two torches merged with the
    H100's kit pass, every finding of theirs shown as known; mutations fail
    with one line each."""

    @classmethod
    def setUpClass(cls) -> None:
        cls.runs = RecordedRuns()
        cls.addClassCleanup(cls.runs.close)

    def report(self, strict: bool = False):
        return build(Inputs(claims=ROOT / "catalog" / "claims.toml", manifest=self.runs.manifest,
                            out=self.runs.root / "out", evidence=self.runs.evidence(), partial=True, known=KNOWN,
                            strict=strict))

    def test_the_recorded_runs_hold_every_finding_known_and_their_two_errors_fail(self) -> None:
        r = self.report()
        self.assertEqual([h.line() for h in r.unexpected], [])
        self.assertEqual(r.conformance["unexplained"], 0, [d["test"] for d in r.conformance["disagreements"]
                                                           if not d["why"]])
        # On 1.13 the invariance grid's child under ONEDNN_MAX_CPU_ISA failed:
        # the two claims it decides are errors there, which fail the report
        # (exit 1), never a finding read past.
        platform = "vm (amd-avx512_bf16-2t-torch1.13.0a0)"
        self.assertEqual(sorted((v.claim.id, where) for v, where in r.errors()),
                         [("batch-invariant", platform), ("det-alg-thread-invariant", platform)])
        self.assertEqual(r.exit_code(), 1)
        # 1.13's model ran Winograd where PyTorch ran a direct kernel: a class named with its cause.
        wino = [d for d in r.conformance["disagreements"] if "convolution_auto" in d["why"]]
        self.assertEqual(sorted({d["test"].rsplit("/", 1)[1] for d in wino}), ["BwdWeights_R50B1L33x3",
                                                                               "BwdWeights_R50B8L33x3"])
        self.assertEqual(r.conformance["not_compared"]["cuDNN engine or algorithm"]["tests"][:1],
                         ["GpuConformance/Conformance.ModelVersusPytorch/BwdData_F16_CudnnDeterministicOff_CudnnBenchmarkOff"])
        seen = {(h.claim, h.platform.split(" ")[0], h.got) for h in r.held if h.status == "known"}
        for claim in ("matmul-precision-cuda-only", "mkldnn-conv-bf16", "mkldnn-rnn-bf16"):
            self.assertIn((claim, "vm", "refuted"), seen)
        self.assertIn(("cublas-config", "h100", "refuted"), seen)
        cublas = next(h for h in r.held if h.claim == "cublas-config" and h.status == "known")
        self.assertEqual((cublas.finding.upstream, cublas.finding.first_seen), ("pytorch/pytorch#161749", "2026-11-26"))
        self.assertRegex(cublas.why, r"^refuted, known since 2026-11-26: PyTorch 2.10 removed")
        self.assertEqual(self.report(strict=True).exit_code(), 3, "--strict: a refuted guarantee fails, known or not")

    def mutated(self, torch: str, test: str, old: str, new: str, count: int = 1) -> str:
        """The one line the report gives for the run with `test`'s records
        altered (undone after the test), and its exit status."""
        ev = self.runs.cpu[torch] / "evidence"
        self.runs.edit(ev, test, old, new, count)
        self.addCleanup(self.runs.edit, ev, test, new, old, count)
        r = self.report()
        self.assertEqual(len(r.unexpected), 1, [h.line() for h in r.unexpected])
        return f"{r.exit_code()} {r.unexpected[0].line()}"

    def test_a_known_refutation_that_now_passes_is_a_finding_no_longer_seen(self) -> None:
        said = self.mutated("2.15.0", "TorchPython.MkldnnConvBf16Precision", '"outcome":"failed"', '"outcome":"passed"', 2)
        self.assertRegex(said, r"^4 UNEXPECTED mkldnn-conv-bf16 on vm \(amd-avx512_bf16-2t-torch2.15.0_cu132\): known "
                               r"finding no longer seen; narrow or remove the entry \(.*known_findings.toml:\d+\): "
                               r"expected refuted, got supported")

    def test_a_new_refutation_with_no_entry_fails(self) -> None:
        said = self.mutated("1.13.0a0", "TorchPython.OpenmpIsAvailable", '"outcome":"passed"', '"outcome":"failed"')
        self.assertRegex(said, r"^3 UNEXPECTED openmp-available on vm \(amd-avx512_bf16-2t-torch1.13.0a0\): a guarantee "
                               r"refuted with no known finding: expected supported, got refuted")

    def test_a_folklore_verdict_that_moves_fails(self) -> None:
        said = self.mutated("2.15.0", "TorchPython.ManualSeedIsNotABackendFlag", '"outcome":"passed"', '"outcome":"failed"')
        self.assertRegex(said, r"^4 UNEXPECTED seed-not-backends on vm \(amd-avx512_bf16-2t-torch2.15.0_cu132\): the "
                               r"folklore verdict moved \(.*\): expected supported, got refuted")

    def test_the_bf16_entries_do_not_apply_on_an_avx2_platform(self) -> None:
        """The same records, as if an AVX2 CPU had written them: the bf16
        refutations are no longer known there, and fail."""
        runs = RecordedRuns()
        self.addCleanup(runs.close)
        ev = runs.cpu["2.15.0"] / "evidence"
        for f in ev.glob("*.jsonl"):
            records = [json.loads(line) for line in f.read_text().splitlines()]
            for r in records:
                if r.get("kind") == "environment":
                    r["cpu_isa_flags"] = [x for x in r["cpu_isa_flags"] if not x.startswith(("avx512", "amx"))]
                    r["platform"]["onednn_isa"] = "avx2"
            f.write_text("".join(json.dumps(r) + "\n" for r in records))
        self.runs, saved = runs, self.runs
        try:
            r = self.report()
        finally:
            self.runs = saved
        self.assertEqual({h.claim for h in r.unexpected},
                         {"matmul-precision-cuda-only", "mkldnn-conv-bf16", "mkldnn-rnn-bf16"})
        for h in r.unexpected:
            self.assertIn("on vm (amd-avx2-2t-torch2.15.0_cu132): a guarantee refuted with no known finding", h.line())


if __name__ == "__main__":
    unittest.main()
