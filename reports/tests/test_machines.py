"""A machine is the machine: the two torch installs of one CPU are paired and
compared whatever each install's oneDNN says of the CPU; a platform's name
holds no bare ISA number; and a known finding is keyed by its cause, which
a rewritten record shows: the cause gone with the machine's other features
kept makes the verdict unexpected, the machine's other features gone with
the cause kept leaves it known.

On copies of the recorded two-torch runs of an Intel Xeon with AVX-512 FP16
(reports/tests/data/xeon-avx512fp16/, oneMKL under torch 2.15 refutes
det-alg-thread-invariant) and of an AMD EPYC with AVX-512 BF16
(reports/tests/data/zen5-avx512bf16/, where it holds)."""

from __future__ import annotations

import json
import re
import shutil
import tempfile
import unittest
from pathlib import Path

from reports import invariance, wording
from reports.changes import SECTIONS, grouped, pairs
from reports.evidence import GENERATED_HOST, read_evidence
from reports.known import platform_values
from reports.page.render import to_json
from reports.catalog import load_catalog
from reports.pipeline import Inputs, build

from .recorded import XEON, ZEN5, ZEN5_ERRORS, ZEN5_STATUS, unpack_zen5

ROOT = Path(__file__).resolve().parents[2]
# The repository's findings, then the GEMM cause of the thread claim as the
# grid alone shows it on these recordings (they predate the search), as a
# team's own file whose entries stand over the repository's.
KNOWN = [ROOT / "catalog" / "known_findings.toml", ROOT / "reports" / "tests" / "data" / "gemm-cause-findings.toml"]
CLAIM = "det-alg-thread-invariant"
BARE_ISA = re.compile(r"isa_(0x)?[0-9a-f]+\b")


def rewrite(directory: Path, edit) -> None:
    """Every record of a run's evidence through edit(record) (in place)."""
    for f in directory.glob("*.jsonl"):
        records = [json.loads(line) for line in f.read_text().splitlines() if line.strip()]
        for r in records:
            edit(r)
        f.write_text("".join(json.dumps(r) + "\n" for r in records))


def build_config(r: dict) -> dict | None:
    """The build-configuration probe's observation in a record, or None."""
    if r.get("kind") == "case" and r.get("test") == "TorchPython.BuildConfiguration":
        return r["checks"][0]["observed"]
    return None


class Machines(unittest.TestCase):
    """The recorded runs, unpacked and reported once per machine; a test that
    rewrites records works on a copy of one install's run, reported alone."""

    @classmethod
    def setUpClass(cls) -> None:
        cls.tmp = tempfile.TemporaryDirectory(prefix="backendcheck-machines-")
        cls.addClassCleanup(cls.tmp.cleanup)
        cls.root = Path(cls.tmp.name)
        cls.xeon = unpack_zen5(cls.root / "xeon", XEON)
        cls.zen5 = unpack_zen5(cls.root / "zen5", ZEN5)
        cls.manifest = cls.zen5["2.15.0"] / "cases.json"
        cls.reports = {"xeon": cls.report(cls.xeon.values()), "zen5": cls.report(cls.zen5.values())}

    @classmethod
    def report(cls, runs):
        return build(Inputs(claims=ROOT / "catalog" / "claims.toml", manifest=cls.manifest, out=cls.root / "out",
                            evidence=[run / "evidence" for run in runs], partial=True, known=KNOWN))

    def rewritten(self, run: Path, edit):
        """The report of a copy of one install's run, its records through edit."""
        copy = Path(tempfile.mkdtemp(dir=self.root)) / run.name
        shutil.copytree(run, copy)
        rewrite(copy / "evidence", edit)
        return self.report([copy])

    def held(self, r, claim: str = CLAIM) -> dict[str, str]:
        """platform -> "status got" of a claim."""
        return {h.platform: f"{h.status} {h.got}" for h in r.held if h.claim == claim}

    def test_each_machine_passes_paired_and_named_without_numbers(self) -> None:
        for name, vendor in (("xeon", "intel-avx512_fp16"), ("zen5", "amd-avx512_bf16")):
            with self.subTest(machine=name):
                r = self.reports[name]
                self.assertEqual([h.line() for h in r.unexpected], [])
                errors = sorted((v.claim.id, where) for v, where in r.errors())
                self.assertEqual((errors, r.exit_code()), (list(ZEN5_ERRORS), ZEN5_STATUS) if name == "zen5" else
                                 ([], 0), "the AMD machine's 1.13 grid failed: its two claims are errors")
                self.assertEqual(sorted(r.evidence.platform_env),
                                 [f"vm ({vendor}-2t-torch1.13.0a0)", f"vm ({vendor}-2t-torch2.15.0_cu132)"])
                # Paired: "Changed between versions" lists the changes (269 and
                # 265 here, the model's and the errors' left out).
                real = [c for c in r.between if not c.get("noise")]
                self.assertGreater(len(real), 200, f"{name}: {len(real)} changes between versions")
                self.assertIsNone(BARE_ISA.search(" ".join(r.evidence.platform_env)), "a platform name")
                self.assertIsNone(BARE_ISA.search(json.dumps(r.evidence.platform_env)),
                                  "the environment records as the report shows them")

    def test_a_generated_host_name_gives_way_to_the_cpu(self) -> None:
        """Two torch installs run in two Kubernetes pods of one kind: their
        generated host names would make two machines; named by the CPU they
        are one machine, paired. A name the run set stays, generated or not."""
        copies = []
        for run, pod in zip(self.zen5.values(), ("gpu-runner-7d9f8b6c5d-x2k4p", "gpu-runner-7d9f8b6c5d-q9wzt")):
            copy = Path(tempfile.mkdtemp(dir=self.root)) / run.name
            shutil.copytree(run, copy)
            rewrite(copy / "evidence", lambda r, pod=pod: r.update(machine=pod, machine_source="host name")
                    if r.get("kind") == "environment" else None)
            copies.append(copy / "evidence")
        ev = read_evidence(copies)
        machines = {env["machine"] for env in ev.platform_env.values()}
        self.assertEqual(len(machines), 1, machines)
        self.assertRegex(machines.pop(), r"^cpu-amd_epyc\w*$", "the CPU model the records name")
        self.assertEqual({env["host_name"] for env in ev.platform_env.values()},
                         {"gpu-runner-7d9f8b6c5d-x2k4p", "gpu-runner-7d9f8b6c5d-q9wzt"})
        self.assertEqual(len(pairs(ev)), 1, "one machine, two torch installs: paired")
        for copy in copies:
            rewrite(copy, lambda r: r.update(machine_source="BACKENDCHECK_MACHINE")
                    if r.get("kind") == "environment" else None)
        named = read_evidence(copies)
        self.assertEqual(sorted(env["machine"] for env in named.platform_env.values()),
                         ["gpu-runner-7d9f8b6c5d-q9wzt", "gpu-runner-7d9f8b6c5d-x2k4p"])
        self.assertEqual(pairs(named), [], "the control: two machines, as the run named them")

    def test_which_host_names_look_generated(self) -> None:
        for name in ("runner-7d9f8b6c5d-x2k4p", "arc-gpu-set-4xz2q", "nightly-h100-bkz7n", "3f2a1b4c5d6e"):
            with self.subTest(name=name):
                self.assertRegex(name, GENERATED_HOST)
        for name in ("vm", "h100", "gpu-node-01", "dgx-h100-07", "ci-runner-small", "build-server", "lambda-quad",
                     "3f2a1b4c5d6", "node-abcde", "x2k4p", "Runner-7d9f8b6c5d-X2K4P"):
            with self.subTest(name=name):
                self.assertNotRegex(name, GENERATED_HOST)

    def test_the_install_names_the_isa_its_onednn_reports(self) -> None:
        isas = {env["torch"]["version"]: platform_values(env)["onednn_isa"]
                for env in self.reports["xeon"].evidence.platform_env.values()}
        # The model's oneDNN 3.2 beside 2.15 said isa_495 (0x1ef); 2.6 beside 1.13, avx512_core_bf16.
        self.assertEqual(isas, {"2.15.0+cu132": "avx512_core_fp16", "1.13.0a0": "avx512_core_bf16"})

    def test_what_changed_answers_the_upgrade_verdicts_first_naming_the_blas_without_the_model(self) -> None:
        for name in ("xeon", "zen5"):
            with self.subTest(machine=name):
                g = grouped(self.reports[name].between)
                sections = [grp["section"] for grp in g["groups"]]
                self.assertEqual(sections, sorted(sections, key=SECTIONS.index), "in the upgrade's order")
                self.assertEqual(sections[0], "verdicts that changed")
                causes = [grp["cause"] for grp in g["groups"]]
                self.assertTrue(any("OpenBLAS \u2192 oneMKL 2024.2" in c for c in causes), causes)
                self.assertFalse(any("model" in c for c in causes), causes)
                [upgrade] = g["upgrades"]
                self.assertRegex(upgrade, r"^Upgrading torch 1\.13\.0a0 \u2192 2\.15\.0\+cu132 on this machine changes "
                                          r"1 claim verdict, \d+ defaults or documented entries and the bits of \d+ "
                                          r"operations \(.*OpenBLAS \u2192 oneMKL 2024\.2.*\)\.$")
                errors = [c for c in self.reports[name].between if c["kind"] == "invariance"
                          and any(s["observed"].startswith("error") for s in c["sides"])]
                self.assertEqual(errors, [], "a level that failed is an error, not a change")

    def test_no_line_a_user_reads_holds_an_internal_word_and_a_planted_one_is_caught(self) -> None:
        for name in ("xeon", "zen5"):
            with self.subTest(machine=name):
                data = to_json(self.reports[name])
                self.assertEqual(wording.forbidden(data), [])
                planted = json.loads(json.dumps(data))
                planted["claims"][0]["grid_line"] = "steady_ns 0.97–1.02× the other side's; B: mkldnn.enabled=True"
                self.assertEqual(len(wording.forbidden(planted)), 1)

    def test_the_card_puts_every_setting_under_one_heading_with_its_figure_or_harm(self) -> None:
        """Each card places every setting a claim decides: set, do not set
        (with the refuting line), no effect, undecided, or not measured (with
        why). On the AMD run's 2.15: 'medium' changes CPU matmul bits (do not
        set), the bf16 conv and LSTM settings leave the bits of fp32 (no
        effect), mkldnn is faster on 12 of 15 shapes (set, with the gain)."""
        carded = {c.id for c in load_catalog(ROOT / "catalog" / "claims.toml") if c.card}
        for machine, report in self.reports.items():
            for platform, card in report.cards.items():
                placed = [c["id"] for s in card["sections"] for x in s["lines"] for c in x["claims"]] + [
                    c["id"] for w in card["not_evaluated"] for c in w["claims"]]
                self.assertEqual(sorted(placed), sorted(carded), f"{machine} {platform}: each carded claim once")
                for s in card["sections"]:
                    for x in s["lines"]:
                        self.assertEqual(x["heading"], s["heading"])
                        self.assertEqual(bool(x["harm"]), x["heading"] == "do not set", x)
                for w in card["not_evaluated"]:
                    self.assertTrue(w["why"] and w["settings"], w)
        (amd,) = [c for p, c in self.reports["zen5"].cards.items() if "2.15" in p]
        line = {c["id"]: x for s in amd["sections"] for x in s["lines"] for c in x["claims"]}
        cuda_only = line["matmul-precision-cuda-only"]
        self.assertEqual((cuda_only["heading"], cuda_only["says"]), ("do not set", "it has an effect here"))
        self.assertTrue(cuda_only["harm"][0]["text"].startswith("'medium' changed the bits of a CPU fp32 matmul"),
                        cuda_only["harm"])
        for claim in ("mkldnn-conv-bf16", "mkldnn-rnn-bf16"):
            self.assertEqual(line[claim]["heading"], "no effect", line[claim])
            self.assertEqual(line[claim]["verdict"], "refuted", "the claim is refuted; the setting does nothing")
        self.assertEqual(line["mkldnn-matmul-bf16"]["heading"], "set")
        self.assertRegex(line["mkldnn-matmul-bf16"]["error"][0]["text"], r"error against fp64 [\d.e-]+ \(fp32 ")
        accel = line["mkldnn-accel"]
        self.assertEqual((accel["heading"], accel["claims"][0]["verdict"]), ("set", "inconclusive"),
                         "faster on most shapes is set, whatever the claim's rule of many")
        self.assertRegex(accel["figures"][0]["text"], r"^2\.3× faster \(median\) on 12 of 15 shapes, slower on 2")

    def test_a_platform_is_headed_by_its_cpu_threads_and_torch(self) -> None:
        for name, cpu in (("xeon", "Intel AVX-512 FP16"), ("zen5", "AMD AVX-512 BF16")):
            with self.subTest(machine=name):
                platforms = to_json(self.reports[name])["platforms"]
                self.assertEqual(sorted(p["heading"] for p in platforms.values()),
                                 [f"{cpu}, 2 threads \u00b7 torch 1.13.0a0", f"{cpu}, 2 threads \u00b7 torch 2.15.0+cu132"])

    def test_two_machines_of_one_kind_are_told_apart_by_their_names(self) -> None:
        """The control: the AMD runs' 2.15 as if from a second machine of the
        same kind: the headings of the two 2.15 columns name their machines."""
        copy = Path(tempfile.mkdtemp(dir=self.root)) / "other"
        shutil.copytree(self.zen5["2.15.0"], copy)
        rewrite(copy / "evidence", lambda r: r.update(machine="second-box", machine_source="BACKENDCHECK_MACHINE")
                if r.get("kind") == "environment" else None)
        platforms = to_json(self.report([*self.zen5.values(), copy]))["platforms"]
        torch215 = sorted(p["heading"] for p in platforms.values() if p["torch"].startswith("2.15"))
        self.assertEqual(len(torch215), 2)
        self.assertNotEqual(torch215[0], torch215[1])
        self.assertTrue(any(h.endswith("(second-box)") for h in torch215), torch215)

    def test_the_first_screen_names_every_error_unexpected_and_refuted_claim_first_the_errors(self) -> None:
        data = to_json(self.reports["zen5"])
        attention = data["attention"]
        grave = sorted(c["id"] for c in data["claims"] if c["verdict"] in ("refuted", "error"))
        self.assertEqual(sorted(a["claim"] for a in attention), grave)
        self.assertEqual([a["claim"] for a in attention if a["kind"] == "error"],
                         sorted({claim for claim, _ in ZEN5_ERRORS}))
        kinds = [a["kind"] for a in attention]
        self.assertEqual(kinds, sorted(kinds, key=["error", "unexpected", "refuted"].index), "errors first")
        for a in attention:
            self.assertLessEqual(len(a["claim"]) + 2 + len(a["line"]), 200, a)
            self.assertTrue(a["line"].startswith(a["verdict"]), a)

    def test_the_install_names_its_blas(self) -> None:
        facts = {env["torch"]["version"]: {k: platform_values(env)[k] for k in ("blas", "blas_version", "cpu_vendor")}
                 for env in self.reports["xeon"].evidence.platform_env.values()}
        self.assertEqual(facts, {"2.15.0+cu132": {"blas": "mkl", "blas_version": "2024.2", "cpu_vendor": "intel"},
                                 "1.13.0a0": {"blas": "openblas", "blas_version": "", "cpu_vendor": "intel"}})

    def test_the_refutation_is_known_by_its_cause(self) -> None:
        # Where the grid held, these recordings (older than the search) leave
        # the claim not evaluated: held to nothing in a partial report.
        self.assertEqual(self.held(self.reports["xeon"]),
                         {"vm (intel-avx512_fp16-2t-torch2.15.0_cu132)": "known refuted"})
        # 1.13's grid on the AMD machine was an error (a child refused by
        # oneDNN): an error, never a known finding not seen.
        self.assertEqual(self.held(self.reports["zen5"]), {})
        [h] = [h for h in self.reports["xeon"].held if h.claim == CLAIM]
        self.assertIn("gemm-cause-findings.toml", h.finding.where, "the GEMM cause's entry decided")

    def test_without_the_cause_the_refutation_is_unexpected(self) -> None:
        """The Xeon's 2.15 as if its torch called OpenBLAS: the CPU, its
        features and its oneDNN ISA stay, the refutation is unexpected."""
        def openblas(r: dict) -> None:
            observed = build_config(r)
            if observed is not None:
                observed["config"] = observed["config"].replace("BLAS_INFO=mkl", "BLAS_INFO=open")
        r = self.rewritten(self.xeon["2.15.0"], openblas)
        self.assertEqual([h.claim for h in r.unexpected], [CLAIM])
        self.assertIn("the folklore verdict moved", r.unexpected[0].why)
        self.assertEqual(r.exit_code(), 4)

    def test_the_features_that_came_with_the_machines_seen_do_not_decide(self) -> None:
        """The Xeon's 2.15 without the features only the refuting machines
        had (avx512_fp16, avx512_bf16, vnni; oneDNN's ISA then avx512_core):
        the cause stays, and so does the known refutation."""
        def plain_avx512(r: dict) -> None:
            if r.get("kind") == "environment":
                r["cpu_isa_flags"] = [f for f in r["cpu_isa_flags"] if f not in ("avx512_fp16", "avx512_bf16",
                                                                                  "avx512_vnni", "avx_vnni")]
                r["platform"]["onednn_isa"] = "avx512_core"
        r = self.rewritten(self.xeon["2.15.0"], plain_avx512)
        self.assertEqual(self.held(r)["vm (intel-avx512f-2t-torch2.15.0_cu132)"], "known refuted")

    def test_the_cause_on_a_machine_that_held_decides_nothing_without_a_search(self) -> None:
        """The AMD machine's 2.15 as if an Intel CPU had run it, its
        features unchanged: the refutation the GEMM cause predicts does not
        come, and the grid that held is no "supported" without a search."""
        def intel(r: dict) -> None:
            if r.get("kind") == "environment":
                r["cpu_vendor"], r["cpu_model"] = "GenuineIntel", "Intel(R) Xeon(R) Processor"
        r = self.rewritten(self.zen5["2.15.0"], intel)
        # The grid held, and these recordings hold no search: the claim is not
        # evaluated, which cannot show a refutation gone (the full report says
        # the entry was not seen; a partial one holds it to nothing).
        self.assertEqual([h.claim for h in r.unexpected], [])
        self.assertNotIn("vm (intel-avx512_bf16-2t-torch2.15.0_cu132)", self.held(r))

    def test_strict_cnr_takes_the_refutation_out_of_the_entry(self) -> None:
        """oneMKL reporting its strict CNR mode: the entry that expects the
        refutation no longer applies (the claim is then held to nothing)."""
        def strict(r: dict) -> None:
            observed = build_config(r)
            if observed is not None:
                observed["blas"] = {"name": "mkl", "version": "2024.2", "branch": "avx512", "cnr": "auto,strict"}
        r = self.rewritten(self.xeon["2.15.0"], strict)
        [h] = [h for h in r.held if h.claim == CLAIM]
        self.assertEqual((h.status, h.got), ("known", "refuted"))
        self.assertIn("catalog/known_findings.toml", h.finding.where,
                      "the GEMM entry no longer applies; the repository's (ATen's reductions, on every CPU) does")
        self.assertEqual(r.exit_code(), 0)


class ThreadLeverOnTheCardTest(unittest.TestCase):
    """The Xeon's 2.15 grid with a thread lever, as the probe records one
    (invariance.thread_levers; readings.thread_lever words it): named on the
    card with its cost where it holds what moved, "no setting tried" where
    it holds nothing, and nothing said where it was not evaluated."""

    @classmethod
    def setUpClass(cls) -> None:
        cls.tmp = tempfile.TemporaryDirectory(prefix="backendcheck-lever-")
        cls.addClassCleanup(cls.tmp.cleanup)
        cls.recorded = unpack_zen5(Path(cls.tmp.name), XEON)["2.15.0"]

    def card(self, effects: list[dict]) -> list[dict]:
        def lever(r: dict) -> None:
            if r.get("kind") == "case" and r.get("test") == invariance.TEST:
                r["checks"][0]["observed"]["lever_effects"] = effects
        copy = Path(tempfile.mkdtemp(dir=self.tmp.name)) / "run"
        shutil.copytree(self.recorded, copy)
        rewrite(copy / "evidence", lever)
        grids = invariance.judge(read_evidence([copy / "evidence"]))
        return [line for g in grids.values() for line in invariance.card_lines(g) if line["level"] == "thread count"]

    def test_a_lever_that_holds_the_gemms_is_named_and_its_unpaired_cost_is_not_one(self) -> None:
        lines = self.card([{"lever": "MKL_CBWR=AUTO,STRICT", "setting": "MKL_CBWR=AUTO,STRICT", "level": "threads",
                            "fixes": ["addmm", "linear", "mm"], "still_differ": [],
                            "cost": {"ratio": {"cpu": 1.31}, "reps": 15, "paired": False}}])
        said = {line["says"]: line for line in lines}
        self.assertEqual(said["Not invariant here"]["ops"], "addmm, linear, mm")
        self.assertEqual(said["Invariant with"]["setting"], "MKL_CBWR=AUTO,STRICT")
        self.assertIn("not measured", said["Invariant with"]["cost"], "timed in another process: not a cost")
        self.assertNotIn("No setting tried holds", said)

    def test_a_cost_alternated_with_its_control_is_shown(self) -> None:
        lines = self.card([{"lever": "MKL_CBWR=AUTO,STRICT", "setting": "MKL_CBWR=AUTO,STRICT", "level": "threads",
                            "fixes": ["addmm", "linear", "mm"], "still_differ": [],
                            "cost": {"ratio": {"cpu": 1.31}, "reps": 15, "paired": True}}])
        said = {line["says"]: line for line in lines}
        self.assertIn("1.31x", said["Invariant with"]["cost"])
        self.assertIn("alternated", said["Invariant with"]["cost"])

    def test_a_lever_that_holds_nothing_says_so(self) -> None:
        lines = self.card([{"lever": "MKL_CBWR=AUTO,STRICT", "setting": "MKL_CBWR=AUTO,STRICT", "level": "threads",
                            "fixes": [], "still_differ": ["addmm", "linear", "mm"], "cost": {}}])
        said = {line["says"]: line for line in lines}
        self.assertEqual(said["No setting tried holds"]["ops"], "addmm, linear, mm")
        self.assertEqual(said["No setting tried holds"]["tried"], "MKL_CBWR=AUTO,STRICT")
        self.assertNotIn("Invariant with", said)

    def test_a_lever_not_evaluated_here_says_nothing_on_the_card(self) -> None:
        lines = self.card([{"lever": "MKL_CBWR=AUTO,STRICT", "setting": "MKL_CBWR=AUTO,STRICT", "level": "threads",
                            "not_evaluated": "oneMKL is not the BLAS of this torch"}])
        self.assertEqual({line["says"] for line in lines}, {"Not invariant here", "Invariant here"})


if __name__ == "__main__":
    unittest.main()
