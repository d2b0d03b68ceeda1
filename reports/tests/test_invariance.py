"""The invariance grid and the OpInfo census, judged and shown from recorded
evidence: reports/tests/data/invariance holds the records of
TorchPython.InvarianceGrid (grid.jsonl, probes/invariance.py) and
TorchPython.OpInfoCensus (census.jsonl, probes/census.py, 4 samples per
operation) and TorchPython.TorchCompileOnTheCpu (compile.jsonl,
probes/compiled.py) and Libraries/Blame.* (blame.jsonl,
suites/blame_test.cc) as ctest wrote them on a 2-core AVX2 machine, for
torch 1.13.0a0 (Debian) and 2.15.0+cu132 (PyPI), each with its environment
record. refused-isa/grid.jsonl is TorchPython.InvarianceGrid of Debian's
1.13.0a0 on an AVX-512 BF16 machine (cpu-evidence/zen5-avx512bf16-20261126,
its rows cut to mm, matmul bf16, conv1d, conv2d, rms_norm and sum), whose
child under ONEDNN_MAX_CPU_ISA=SSE41 died of PyTorch's oneDNN error;
refused-isa/probe-matmul-bf16.json is what the probe now prints for the same
torch (`/usr/bin/python3 probes/torch_backends.py invariance`, on a
2-core Xeon with AVX-512 and AMX, the same rows): under the cap PyTorch
refuses the bf16 matmul only."""

from __future__ import annotations

import dataclasses
import json
import tempfile
import unittest
from pathlib import Path

from reports import census, invariance
from reports.catalog import load_catalog
from reports.evidence import read_evidence
from reports.pipeline import Report
from reports.page.render import write_report
from reports.tests.test_reports import environment, write_run
from reports.verdicts import judge_all
from reports.page.folds import unfolded

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "reports" / "tests" / "data" / "invariance"
STATES = {"invariant", "differs", "not evaluated", "untrusted", "error", "refused"}
REFUSED_ISA = DATA / "refused-isa"
ONEDNN = "RuntimeError: could not create a primitive descriptor iterator"
SSE41 = "ONEDNN_MAX_CPU_ISA=SSE41"


def refused_isa():
    """The recorded grid of refused-isa as the probe would record it had
    PyTorch refused every operation under the ISA cap, and the ISA reading
    (a convolution): each isa cell, the child's error PyTorch's oneDNN
    raised, becomes that operation's refusal; no child process failed, so
    the test passed."""
    ev = read_evidence([REFUSED_ISA])
    for records in ev.cases.values():
        for r in records:
            for c in r.get("checks", []):
                grid = c.get("observed") or {}
                if "rows" not in grid:
                    continue
                refused = {}
                for key, row in grid["rows"].items():
                    name = key.split(" | ")[0]
                    if row.get("isa", {}).get("error") == ONEDNN:
                        row["isa"] = {"refused": ONEDNN, "setting": SSE41}
                        refused[name] = ONEDNN
                grid["errors"] = {}
                grid["refused"] = {"isa": {"setting": SSE41, "ops": refused, "reading": ONEDNN, "whole": True}}
                grid["controls"]["isa"]["refused"] = f"PyTorch refused {SSE41}: {ONEDNN}"
                c["outcome"], c["detail"] = "passed", c["detail"].split("; child processes failed")[0]
    for result in ev.results.values():
        result["outcome"] = "passed"
    return ev


def refused_matmul_bf16(tmp: Path):
    """The probe's own output on Debian's 1.13.0a0 under the ISA cap, as the
    evidence of one run."""
    seen = json.loads((REFUSED_ISA / "probe-matmul-bf16.json").read_text())
    case = {"repro": "torch_backends.py invariance", "system": "pytorch",
            "checks": [{"name": "invariance", "outcome": "passed", "detail": seen["detail"],
                        "observed": seen["observed"]}]}
    env = dict(environment("xeon", isa="avx512_core_amx"),
               torch={"version": seen["torch"], "python": "/usr/bin/python3"})
    return read_evidence([write_run(tmp / "run", env, {invariance.TEST: [case]})])


class RecordedGridTest(unittest.TestCase):
    def setUp(self) -> None:
        self.ev = read_evidence([DATA / "torch-1.13.0a0", DATA / "torch-2.15.0"])
        self.grids = invariance.judge(self.ev)
        self.by_torch = {g["torch"].split("+")[0]: g for g in self.grids.values()}

    def test_one_grid_per_torch_with_every_operation(self) -> None:
        self.assertEqual(sorted(self.by_torch), ["1.13.0a0", "2.15.0"])
        for g in self.by_torch.values():
            ops = {k.split(" | ")[0] for k in g["rows"]}
            for op in ("mm", "bmm", "addmm", "linear", "matmul", "matmul bf16", "conv1d", "conv2d", "softmax",
                       "log_softmax", "layer_norm", "rms_norm", "group_norm", "sdpa math", "sdpa flash", "sum",
                       "mean", "cumsum", "embedding_bag", "index_add", "scatter_add"):
                self.assertIn(op, ops)
            for cells in g["rows"].values():
                self.assertTrue({c["state"] for c in cells.values()} <= STATES, cells)

    def test_every_level_has_a_control_that_varied(self) -> None:
        for g in self.by_torch.values():
            self.assertEqual(sorted(g["controls"]), sorted(invariance.RECORDED + ("release",)))
            self.assertTrue(all(c["varied"] for c in g["controls"].values()), g["controls"])

    def test_batch_dependence_of_mm_is_a_cell_with_its_k_and_kernel(self) -> None:
        for g in self.by_torch.values():
            cell = g["rows"]["mm | defaults"]["batch"]
            self.assertEqual(cell["state"], "differs")
            self.assertIn("1", cell["at"])
            self.assertGreater(cell["fraction"], 0)
            self.assertIn("k = 1", cell["why"])
        self.assertIn("SGEMM", self.by_torch["2.15.0"]["kernels"]["mm"]["k=1"]["path"])

    def test_an_operation_a_version_lacks_is_not_evaluated_naming_it(self) -> None:
        cell = self.by_torch["1.13.0a0"]["rows"]["rms_norm | defaults"]["batch"]
        self.assertEqual(cell["state"], "not evaluated")
        self.assertIn("1.13.0a0 has no torch.nn.functional.rms_norm", cell["why"])

    def test_release_level_compares_the_two_installs(self) -> None:
        g = self.by_torch["2.15.0"]
        self.assertEqual(g["inputs_digest"], self.by_torch["1.13.0a0"]["inputs_digest"])
        states = {k: r["release"]["state"] for k, r in g["rows"].items() if k.endswith("| defaults")}
        self.assertIn("differs", states.values())
        self.assertEqual(states["rms_norm | defaults"], "not evaluated")

    def test_blame_names_the_library_below_pytorch(self) -> None:
        old = self.by_torch["1.13.0a0"]["rows"]["mm | defaults"]["batch"]["blame"]
        self.assertEqual(old["blamed"], "the library", "Debian's torch calls the system BLAS, which varies alone")
        self.assertIn("OpenBLAS", old["why"])
        new = self.by_torch["2.15.0"]["rows"]["mm | defaults"]["batch"]["blame"]
        self.assertEqual(new["state"], "not evaluated")
        self.assertIn("oneMKL", new["why"])

    def test_compile_against_eager_is_shown_per_torch(self) -> None:
        lines = {c["check"]: c for c in self.by_torch["2.15.0"]["compile"]}
        self.assertEqual(lines["compiled against eager"]["state"], "differs")
        self.assertIn("of elements differ", lines["compiled against eager"]["why"])
        self.assertEqual(lines["compiled, run to run"]["state"], "invariant")
        alert = lines["use_deterministic_algorithms(True) alert of put_(accumulate=False)"]
        self.assertEqual((alert["state"], alert["why"]), ("differs", "eager raised; compiled ran without the alert"))
        self.assertEqual(lines["fill_uninitialized_memory with torch.empty"]["why"], "eager filled; compiled not filled")
        [old] = self.by_torch["1.13.0a0"]["compile"]
        self.assertEqual(old["state"], "not evaluated")
        self.assertIn("1.13.0a0 has no torch.compile", old["why"])

    def test_a_missed_control_untrusts_invariant_cells_only(self) -> None:
        raw = invariance._observed(next(iter(self.ev.platforms.values())))
        cell = invariance._cell("threads", {"per": {"1": {"same": True}}}, False, raw)
        self.assertEqual(cell["state"], "untrusted")
        cell = invariance._cell("threads", {"per": {"1": {"same": False, "fraction": .5, "max_rel": 1e-7}}}, False, raw)
        self.assertEqual(cell["state"], "differs")

    def test_the_report_shows_the_section_the_card_lines_and_the_changes(self) -> None:
        verdicts = judge_all(load_catalog(ROOT / "catalog" / "claims.toml"), [], self.ev, partial=True)
        report = Report.of(verdicts, [], self.ev)
        lines = {(p, l["says"], l["level"]): l["ops"] for p, c in report.cards.items() for l in c["invariance"]}
        self.assertTrue(any(says == "Not invariant here" and level == "batch size" and "mm" in ops.split(", ")
                            for (_, says, level), ops in lines.items()), lines)
        kinds = [c for c in report.between if c["kind"] == "invariance"]
        self.assertTrue(kinds, "cells whose state differs between the releases are changes")
        self.assertFalse([c for c in report.between if c.get("test") == invariance.TEST],
                         "the grid's raw record is not diffed beside its cells")
        with tempfile.TemporaryDirectory() as tmp:
            page = unfolded(write_report(Path(tmp), report).read_text())
            data = json.loads((Path(tmp) / "report.json").read_text())
        self.assertIn('id="invariance"', page)
        self.assertEqual(page.count('class="invariance-grid"'), 2)
        self.assertIn("Not invariant here", page)
        self.assertEqual(sorted(data["invariance"]["levels"]), sorted(invariance.LEVELS))
        self.assertIn('id="census"', page)
        self.assertEqual(page.count('class="invariance-compile"'), 2)
        self.assertEqual(sorted(c["torch"].split("+")[0] for c in data["census"].values()), ["1.13.0a0", "2.15.0"])
        findings = [c for c in report.between if c["kind"] == "census"]
        self.assertTrue(findings, "findings one torch has and the other has not are changes between versions")


class InvarianceClaimTest(unittest.TestCase):
    """Catalog claims of rule "invariance" take the grid as evidence."""

    def setUp(self) -> None:
        ev = read_evidence([DATA / "torch-1.13.0a0", DATA / "torch-2.15.0"])
        claims = [c for c in load_catalog(ROOT / "catalog" / "claims.toml") if c.rule == "invariance"]
        self.verdicts = {v.claim.id: v for v in judge_all(claims, [], ev, partial=True)}

    def test_batch_folklore_is_refuted_naming_the_operations(self) -> None:
        v = self.verdicts["batch-invariant"]
        for platform, pv in v.platforms.items():
            self.assertEqual(pv.verdict, "refuted", platform)
            self.assertIn("mm", pv.reason)
            self.assertIn("k = 1", pv.reason)
            self.assertEqual(pv.decided_by, "pytorch")

    def test_thread_folklore_that_held_in_the_grid_alone_is_not_supported(self) -> None:
        """These recordings predate the search for counter-examples: the
        grid's one shape per operation held, which decides nothing of a
        claim that holds everywhere (test_search.py judges it with one)."""
        for platform, pv in self.verdicts["det-alg-thread-invariant"].platforms.items():
            self.assertEqual(pv.verdict, "not evaluated", platform)
            self.assertIn("no search for a counter-example ran", pv.reason)
            self.assertIn("2 threads against 1", pv.reason)
            self.assertIn("control", pv.reason)

    def test_a_missed_control_makes_all_invariant_inconclusive(self) -> None:
        ev = read_evidence([DATA / "torch-2.15.0"])
        for records in ev.cases.values():
            for r in records:
                for c in r.get("checks", []):
                    if "controls" in (c.get("observed") or {}):
                        c["observed"]["controls"]["threads"]["varied"] = False
        claim = [c for c in load_catalog(ROOT / "catalog" / "claims.toml") if c.id == "det-alg-thread-invariant"]
        [v] = judge_all(claim, [], ev, partial=True)
        self.assertEqual(v.verdict, "inconclusive")


class RefusedLevelTest(unittest.TestCase):
    """A level PyTorch refused (oneDNN under an ISA cap) is an observation:
    its cells are "refused" with PyTorch's message, never invariant and
    never a difference; a level refused whole is not evaluated, its control
    not counted as varied."""

    def test_the_recorded_child_error_stays_an_error(self) -> None:
        """As recorded, the child under the cap died: the old probe could not
        tell PyTorch's refusal from its own failure, so the report does not
        guess."""
        [g] = invariance.judge(read_evidence([REFUSED_ISA])).values()
        self.assertEqual(g["rows"]["mm | defaults"]["isa"]["state"], "error")

    def test_a_level_refused_whole_is_not_evaluated_with_pytorchs_message(self) -> None:
        [g] = invariance.judge(refused_isa()).values()
        for op in ("mm", "conv1d", "conv2d", "sum"):
            cell = g["rows"][f"{op} | defaults"]["isa"]
            self.assertEqual(cell["state"], "refused", op)
            self.assertEqual(cell["why"], f"not evaluated here: PyTorch refused the setting {SSE41}: {ONEDNN}")
        self.assertEqual(g["rows"]["rms_norm | defaults"]["isa"]["state"], "not evaluated")
        self.assertEqual(g["rows"]["mm | defaults"]["capability"]["state"], "invariant", "the other levels are kept")
        control = g["controls"]["isa"]
        self.assertFalse(control["varied"])
        self.assertIn(f"not run here: PyTorch refused {SSE41}: {ONEDNN}", control["what"])
        self.assertEqual(g["refused"]["isa"]["setting"], SSE41)

    def test_claims_on_a_refused_level_are_not_evaluated(self) -> None:
        claims = [c for c in load_catalog(ROOT / "catalog" / "claims.toml") if c.id == "batch-invariant"]
        on_isa = dataclasses.replace(claims[0], id="isa-invariant", level="isa")
        verdicts = {v.claim.id: v for v in judge_all(claims + [on_isa], [], refused_isa(), partial=True)}
        self.assertEqual(verdicts["batch-invariant"].verdict, "refuted", "a level PyTorch ran is still judged")
        v = verdicts["isa-invariant"]
        self.assertEqual(v.verdict, "not evaluated")
        self.assertIn(f"PyTorch refused the setting {SSE41}: {ONEDNN}", v.reason)
        self.assertNotIn("do not hold their bits", v.reason)

    def test_a_refused_cell_beside_cells_that_ran_is_neither_invariant_nor_a_difference(self) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            ev = refused_matmul_bf16(Path(tmp))
        [g] = invariance.judge(ev).values()
        cell = g["rows"]["matmul bf16 | defaults"]["isa"]
        self.assertEqual((cell["state"], cell["why"]), ("refused", f"refused by PyTorch under {SSE41}: {ONEDNN}"))
        self.assertEqual(g["rows"]["matmul bf16 | defaults"]["capability"]["state"], "invariant")
        self.assertEqual(g["rows"]["conv1d | defaults"]["isa"]["state"], "differs")
        self.assertEqual(g["rows"]["mm | defaults"]["isa"]["state"], "invariant")
        self.assertTrue(g["controls"]["isa"]["varied"], "the other operations ran under the cap")
        claims = [dataclasses.replace(c, id="isa-invariant", level="isa")
                  for c in load_catalog(ROOT / "catalog" / "claims.toml") if c.id == "batch-invariant"]
        [v] = judge_all(claims, [], ev, partial=True)
        self.assertEqual(v.verdict, "refuted", v.reason)
        self.assertIn("2 of 4 operations of the grid do not hold their bits (conv1d, conv2d)", v.reason)
        self.assertIn(f"not evaluated: matmul bf16, rms_norm (refused by PyTorch under {SSE41}: {ONEDNN})", v.reason)

    def test_the_page_shows_a_refused_cell_with_pytorchs_message(self) -> None:
        ev = refused_isa()
        verdicts = judge_all(load_catalog(ROOT / "catalog" / "claims.toml"), [], ev, partial=True)
        report = Report.of(verdicts, [], ev)
        with tempfile.TemporaryDirectory() as tmp:
            page = unfolded(write_report(Path(tmp), report).read_text())
            data = json.loads((Path(tmp) / "report.json").read_text())
        self.assertIn('class="cell-refused"', page)
        self.assertIn("could not create a primitive descriptor iterator", page)
        [grid] = data["invariance"]["platforms"].values()
        self.assertEqual(grid["rows"]["conv2d | defaults"]["isa"]["state"], "refused")
        lines = [l for c in report.cards.values() for l in c.get("invariance", [])]
        self.assertTrue(lines, "the card's lines for batch and threads stay")

    def test_a_row_pytorch_refused_under_its_flags_is_refused_at_every_level(self) -> None:
        ev = read_evidence([REFUSED_ISA])
        grid = invariance._observed(next(iter(ev.platforms.values())))
        row = {"refused": "RuntimeError: index_add_cpu_ does not have a deterministic implementation",
               "setting": "torch.use_deterministic_algorithms(True)"}
        for level in invariance.RECORDED:
            cell = invariance._row_cell(row, level, grid)
            self.assertEqual(cell["state"], "refused")
            self.assertEqual(cell["why"], "refused by PyTorch under torch.use_deterministic_algorithms(True): "
                                          "RuntimeError: index_add_cpu_ does not have a deterministic implementation")

    def test_a_compile_check_pytorch_refused_is_shown_refused(self) -> None:
        lines = invariance._compiled({"bits": {"refused": "RuntimeError: could not create a primitive descriptor"},
                                      "inductor_settings": {}})
        self.assertEqual(lines, [{"check": "bits", "state": "refused",
                                  "why": "refused by PyTorch: RuntimeError: could not create a primitive descriptor"}])

    def test_a_compiled_function_that_did_not_run_is_no_result(self) -> None:
        """Not evaluated for want of what the machine lacks, an error where
        nothing is missing; never "ran without the alert"."""
        lines = invariance._compiled({
            "bits": {"did_not_run": "RuntimeError: backend='inductor' raised: InvalidCxxCompiler: No working C++ "
                                    "compiler found", "need": "a working C++ compiler, which Inductor needs on the CPU"},
            "alert": {"raised": {"eager": "RuntimeError: put_ does not have a deterministic implementation"},
                      "alert": {"eager": True}, "did_not_run": "compiled: BackendCompilerFailed: backend='inductor' "
                                                               "raised: AssertionError: no lowering", "need": ""},
            "inductor_settings": {}})
        self.assertEqual([(line["check"], line["state"]) for line in lines],
                         [("bits", "not evaluated"), ("alert", "error")])
        self.assertEqual(lines[0]["why"], "the compiled function did not run, for want of a working C++ compiler, "
                                          "which Inductor needs on the CPU: RuntimeError: backend='inductor' raised: "
                                          "InvalidCxxCompiler: No working C++ compiler found")
        self.assertNotIn("ran without the alert", lines[1]["why"])


class RecordedCensusTest(unittest.TestCase):
    def setUp(self) -> None:
        self.by_torch = {c["torch"].split("+")[0]: c for c in census.judge(read_evidence(
            [DATA / "torch-1.13.0a0", DATA / "torch-2.15.0"])).values()}

    def test_every_opinfo_ran_on_both_torches(self) -> None:
        for torch, opinfos in (("1.13.0a0", 621), ("2.15.0", 703)):
            c = self.by_torch[torch]
            self.assertEqual(c["opinfos"], opinfos)
            self.assertEqual(c["errors"], {})
            self.assertGreater(c["operations_run"], 0.8 * opinfos)

    def test_the_documented_throwing_operations_raise_and_warn(self) -> None:
        for c in self.by_torch.values():
            for op in ("nn.functional.max_unpool1d", "nn.functional.max_unpool2d", "nn.functional.max_unpool3d", "put"):
                self.assertIn(op, c["raised"])
                self.assertIn(op, c["warned"])
            self.assertEqual(c["findings"]["raises_not_listed"], [], "every operation that raised is listed")

    def test_findings_are_named_with_a_repro(self) -> None:
        varies = {f["op"]: f for f in self.by_torch["2.15.0"]["findings"]["varies_not_listed"]}
        self.assertIn("fft.irfft", varies)
        self.assertIn("between 1 and 2 threads", varies["fft.irfft"]["detail"])
        self.assertTrue(varies["fft.irfft"]["repro"].endswith("probes/census.py op fft.irfft"))
        self.assertRegex(self.by_torch["2.15.0"]["evidence"],
                         r"^TorchPython.OpInfoCensus \(./backendcheck test --torch \S+python3? "
                         r"-R '\^TorchPython\\.OpInfoCensus\$'\)$", "the test through ctest, on that torch")
        self.assertFalse([op for op in varies if op.startswith("empty")],
                         "uninitialized memory is not a finding of variation")
        self.assertTrue(all(self.by_torch["2.15.0"]["uninitialized"].values()),
                        "fill_uninitialized_memory fills what the empty family returns")
        self.assertEqual(self.by_torch["1.13.0a0"]["uninitialized"], {}, "1.13 has no fill_uninitialized_memory")

    def test_a_finding_of_run_to_run_variation_alone_is_set_aside_between_versions(self) -> None:
        """Seen on one side only, variation run to run may just not have shown
        on the other: noise. A difference between threads of a repeatable
        sample, or an alert, is a change."""
        old, new = self.by_torch["1.13.0a0"], self.by_torch["2.15.0"]
        listed = {item: noise for item, _, _, noise in census.changes(old, new)}
        self.assertEqual(listed["fft.irfft (varies but is not listed)"], "", "threads: a change")
        ran = {"ran": 4, "samples": 4, "raised": 0, "warned": 0, "threads_differ": 0, "backward_differs": 0}
        runs = {"ops": {"sgn": {**ran, "run_differs": 1}, "mm": {**ran, "run_differs": 0}}, "listed": []}
        repeats = {"ops": {"sgn": {**ran, "run_differs": 0}, "mm": {**ran, "run_differs": 0, "threads_differ": 1}},
                   "listed": []}
        with tempfile.TemporaryDirectory() as tmp:
            judged = [census.judge(read_evidence([write_run(Path(tmp) / str(i), environment("m1"), {census.TEST: [
                {"repro": "census", "checks": [{"name": "census", "outcome": "passed", "observed": observed}]}]})]))
                for i, observed in enumerate((runs, repeats))]
        a, b = (next(iter(j.values())) for j in judged)
        listed = {item: noise for item, _, _, noise in census.changes(a, b)}
        self.assertEqual(listed["sgn (varies but is not listed)"], census.BY_CHANCE)
        self.assertEqual(listed["mm (varies but is not listed)"], "")

    def test_past_the_grain_a_difference_between_threads_is_a_finding_with_its_shape(self) -> None:
        """Where OpInfo's samples hold but their tiled inputs differ between
        1 and 2 threads under the mode, the operation varies (not by chance),
        and the platform's line says what was tried past the grain."""
        ran = {"ran": 4, "samples": 4, "raised": 0, "warned": 0, "run_differs": 0, "threads_differ": 0,
               "backward_differs": 0}
        large = {"checked": 1, "run_differs": 0, "elements": 65544, "from": "reference_inputs", "seconds": 0.02}
        observed = {"ops": {"sum": {**ran, "large": {**large, "threads_differ": 1, "shape": [65544]}},
                            "abs": {**ran, "large": {**large, "threads_differ": 0}},
                            "outer": {**ran, "large": {**large, "checked": 0, "threads_differ": 0,
                                                        "passed": "outputs grow faster than the input"}}},
                    "listed": [], "large": {"elements": 65543, "grain": {"value": 32768, "source": "TensorIterator.h:5"},
                                            "samples_per_op": 1, "control": {"trusted": True}}}

        def judged(observed: dict) -> dict:
            with tempfile.TemporaryDirectory() as tmp:
                c, = census.judge(read_evidence([write_run(Path(tmp) / "run", environment("m1"), {census.TEST: [
                    {"repro": "census", "checks": [{"name": "census", "outcome": "passed", "observed": observed}]}]})
                    ])).values()
            return c
        c = judged(observed)
        varies = {f["op"]: f for f in c["findings"]["varies_not_listed"]}
        self.assertEqual(sorted(varies), ["sum"])
        self.assertEqual(varies["sum"]["detail"], "past the grain, under the mode, 1 of 1 of its reference_inputs "
                                                  "tiled to 65,544 elements differ between 1 and 2 threads (first at "
                                                  "shape (65544,))")
        self.assertFalse(varies["sum"]["by_chance"])
        self.assertEqual({k: c["past_grain"][k] for k in ("checked", "of", "threads_differ", "not_tiled", "elements")},
                         {"checked": 2, "of": 3, "threads_differ": ["sum"], "not_tiled": 1, "elements": 65543})
        # The planted operation not found: nothing past the grain is a finding.
        observed["large"]["control"] = {"trusted": False}
        missed = judged(observed)
        self.assertTrue(missed["past_grain"]["missed"])
        self.assertEqual(missed["findings"]["varies_not_listed"], [])

    def test_a_census_not_evaluated_on_one_install_is_said_on_the_page(self) -> None:
        """One install's census skipped (its OpInfo table cannot be imported)
        beside one that ran: the page names the reason for the first and the
        census for the second."""
        why = "PyTorch 1.13.0a0's OpInfo table cannot be imported: No module named 'expecttest': not evaluated"
        with tempfile.TemporaryDirectory() as tmp:
            ev = read_evidence([write_run(Path(tmp) / "skipped", environment("m1"),
                                          {census.TEST: [{"repro": "census", "skip_reason": why, "checks": []}]}),
                                DATA / "torch-2.15.0"])
            page = unfolded(write_report(Path(tmp) / "out", Report.of([], [], ev)).read_text())
        section = page.split('id="census"', 1)[1]
        self.assertIn("No module named &#39;expecttest&#39;", section)
        self.assertIn('class="census-past-grain', section)

    def test_base_names_match_entries_and_opinfos(self) -> None:
        self.assertEqual(census.base_name("torch.nn.MaxUnpool2d"), "max_unpool2d")
        self.assertEqual(census.base_name("nn.functional.max_unpool2d"), "max_unpool2d")
        self.assertEqual(census.base_name("torch.Tensor.put_"), "put")
        self.assertEqual(census.base_name("torch.nn.NLLLoss"), "nll_loss")
        self.assertEqual(census.base_name("torch.Tensor.__getitem__"), "__getitem__")


if __name__ == "__main__":
    unittest.main()
