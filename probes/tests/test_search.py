"""The search for counter-examples (search.py), with plain Python: planted
operations whose outcome is known (one that differs from a size on, one that
differs only in a starting state, one of the same cost that always holds)
must be found, shrunk to the threshold and to the state, and not flagged;
the corpus is replayed and a case out of the code's reach turns into "no
longer seen"; every operation's program is a snippet of at most ten lines
that Python compiles."""

from __future__ import annotations

import json
import sys
import tempfile
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import search  # noqa: E402
import search_ops  # noqa: E402
from search import BACKWARD, CHANNELS_LAST, FORWARD, STEP, Case, Level, Op, Outcome  # noqa: E402

THRESHOLD = 5003
STATE = ("flag = off",)
THREADS = Level("threads", (1, 2), "torch.set_num_threads(side)", "False here")
PLANTED = {"threshold": Op("x = 0", "x", dtypes=("float32", "float64"), passes=(FORWARD, BACKWARD)),
           "state": Op("x = 0", "x"),
           "holding": Op("x = 0", "x", dtypes=("float32", "bfloat16"))}


def planted(case: Case) -> Outcome:
    """The planted operations' outcomes, as a machine would give them."""
    if case.op == "threshold":
        return Outcome(differs=case.n >= THRESHOLD, fraction=1.0)
    if case.op == "state":
        return Outcome(differs=case.state == STATE, fraction=0.5)
    return Outcome()


def schedule(ops: dict[str, Op]) -> dict[str, list[int]]:
    return {name: search.sizes(op, {"grain": 32768}, (1, 2)) for name, op in ops.items()}


class Clock:
    """A clock that moves one second a reading: a budget counts cases."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        self.now += 1.0
        return self.now


def run(ops=PLANTED, evaluate=planted, budget: float = 400, seed: int = 3, skip=()) -> search.Searched:
    return search.search(ops, schedule(ops), [(), STATE], evaluate, budget, seed,
                         lambda c: search.program(ops[c.op], c, THREADS), clock=Clock(), skip=skip)


class SearchTest(unittest.TestCase):
    def test_the_threshold_is_found_and_shrunk_to_it(self) -> None:
        found = {f.op: f for f in run().found}
        self.assertIn("threshold", found)
        shrunk = found["threshold"].shrunk
        self.assertEqual(shrunk.n, THRESHOLD)
        self.assertEqual((shrunk.dtype, shrunk.passes, shrunk.state), ("float32", FORWARD, ()), "simplest state")
        self.assertLessEqual(found["threshold"].shrink_tries, search.SHRINK_TRIES)

    def test_the_state_is_found_and_kept(self) -> None:
        found = {f.op: f for f in run().found}
        self.assertEqual(found["state"].shrunk.state, STATE)
        self.assertEqual(found["state"].shrunk.n, 1, "the size shrinks to the smallest")

    def test_an_operation_that_holds_is_not_flagged(self) -> None:
        searched = run()
        self.assertNotIn("holding", {f.op for f in searched.found})
        self.assertIn("holding", searched.coverage()["ops"])

    def test_the_seed_decides_the_cases(self) -> None:
        a, b = run(seed=5), run(seed=5)
        self.assertEqual([f.to_json() for f in a.found], [f.to_json() for f in b.found])
        self.assertEqual(a.coverage(), b.coverage())

    def test_a_space_searched_whole_says_so_and_a_budget_bounds_it(self) -> None:
        whole = run(budget=10_000)
        self.assertTrue(whole.exhausted)
        self.assertTrue(whole.coverage()["exhausted"])
        short = run(budget=5)
        self.assertFalse(short.exhausted)
        self.assertLess(short.cases, 10)

    def test_pytorchs_refusal_of_every_case_is_said(self) -> None:
        refused = run(ops={"refused": Op("x = 0", "x")}, evaluate=lambda c: Outcome(refused="RuntimeError: no"))
        self.assertEqual(refused.refused, {"refused": "RuntimeError: no"})
        self.assertEqual(refused.found, [])

    def test_a_harness_failure_is_an_exception_never_a_finding(self) -> None:
        def broken(case: Case) -> Outcome:
            raise KeyError("the harness broke")
        with self.assertRaises(KeyError):
            run(evaluate=broken)

    def test_the_coverage_names_what_was_searched(self) -> None:
        cov = run().coverage()
        self.assertEqual(cov["seed"], 3)
        self.assertEqual(cov["dtypes"], ["bfloat16", "float32", "float64"])
        self.assertIn("flag = off", cov["states"])
        self.assertLessEqual(cov["n_min"], 1)
        self.assertGreater(cov["n_max"], 4 * 32768, "sizes cross the grain and its multiples")


class ScheduleTest(unittest.TestCase):
    def test_sizes_sit_on_both_sides_of_each_threshold_and_its_thread_multiples(self) -> None:
        op = Op("x = 0", "x", unit=4)
        ns = search.sizes(op, {"grain": 32768}, (1, 2))
        elements = {n * 4 for n in ns}
        for t in (32768, 65536):
            self.assertTrue(any(e < t for e in elements) and any(e > t for e in elements))
            self.assertTrue(any(t - 4 <= e < t for e in elements), f"just below {t}")
            self.assertTrue(any(t < e <= t + 8 for e in elements), f"just above {t}")
        self.assertIn(1, ns)

    def test_max_n_bounds_the_schedule(self) -> None:
        self.assertLessEqual(max(search.sizes(Op("x = 0", "x", max_n=1000), {"grain": 32768}, (1, 2))), 1000)


class CorpusTest(unittest.TestCase):
    def test_the_corpus_is_replayed_and_a_case_out_of_reach_is_no_longer_seen(self) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "a-claim.json"
            cases = [Case("threshold", THRESHOLD), Case("threshold", THRESHOLD - 1), Case("gone", 9)]
            self.assertEqual(search.add_to_corpus(path, "a-claim", "threads", "deterministic", cases), 3)
            self.assertEqual(search.add_to_corpus(path, "a-claim", "threads", "deterministic", cases[:1]), 0)
            [(claim, read)] = search.read_corpus(Path(tmp), "threads", "deterministic")
            self.assertEqual(claim, "a-claim")
            self.assertEqual(search.read_corpus(Path(tmp), "run", "deterministic"), [])
            replayed = {r["case"]["n"]: r["state"] for r in search.replay(read, planted, PLANTED)}
            self.assertEqual(replayed, {THRESHOLD: "seen", THRESHOLD - 1: "no longer seen", 9: "not run"})
            # A case from a state this torch does not have (another version's
            # setting) is not run: setting it would only add an attribute.
            other = Case("threshold", THRESHOLD, state=("torch.backends.mkldnn.fp32_precision = 'bf16'",))
            [entry] = search.replay([other], planted, PLANTED, [(), ("torch.backends.mkldnn.enabled = False",)])
            self.assertEqual(entry["state"], "not run")
            self.assertIn("is not one this torch has", entry["why"])
            [entry] = search.replay([other], planted, PLANTED, [(), other.state])
            self.assertEqual(entry["state"], "seen")

    def test_a_seen_corpus_operation_is_not_searched_again(self) -> None:
        self.assertNotIn("threshold", {f.op for f in run(skip=("threshold",)).found})

    def test_a_malformed_corpus_names_its_file(self) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            (Path(tmp) / "bad.json").write_text('{"claim": "x", "level": "threads", "variant": "deterministic", '
                                                '"cases": [{"n": 3}]}')
            with self.assertRaisesRegex(ValueError, r"bad\.json: cases\[0\]"):
                search.read_corpus(Path(tmp), "threads", "deterministic")
            (Path(tmp) / "bad.json").write_text("{")
            with self.assertRaisesRegex(ValueError, r"bad\.json:1: not JSON"):
                search.read_corpus(Path(tmp), "threads", "deterministic")

    def test_a_runs_finds_join_the_corpus_of_their_claim_once(self) -> None:
        root = Path(__file__).resolve().parents[2]
        recorded = sorted((root / "reports" / "tests" / "data" / "search").glob("torch-*"))
        with tempfile.TemporaryDirectory() as tmp:
            said = search.corpus_from_evidence(Path(tmp), root / "catalog" / "claims.toml", recorded)
            self.assertEqual(len(said), 1, said)
            self.assertIn("batch-invariant.json", said[0])
            [(claim, cases)] = search.read_corpus(Path(tmp), "batch", "defaults")
            self.assertEqual(claim, "batch-invariant")
            self.assertTrue(cases)
            self.assertEqual(len(cases), len(set(cases)), "a case found on both installs is kept once")
            again = search.corpus_from_evidence(Path(tmp), root / "catalog" / "claims.toml", recorded)
            self.assertIn(": 0 new of", again[0])
            bad = Path(tmp) / "bad"
            bad.mkdir()
            (bad / "x.jsonl").write_text('{"kind": "case"}\n{"test": "TorchPython.CounterExampleSearch", \n')
            with self.assertRaisesRegex(ValueError, r"x\.jsonl:2: not JSON"):
                search.corpus_from_evidence(Path(tmp), root / "catalog" / "claims.toml", [bad])

    def test_the_repository_corpus_reads(self) -> None:
        corpus = Path(__file__).resolve().parents[2] / "catalog" / "corpus"
        for path in corpus.glob("*.json"):
            data = json.loads(path.read_text())
            for claim, cases in search.read_corpus(corpus, data["level"], data["variant"]):
                for case in cases:
                    self.assertIn(case.op, search_ops.OPS, f"{path}: {case.words()}")


class ProgramTest(unittest.TestCase):
    def test_every_operations_program_is_a_short_snippet_python_compiles(self) -> None:
        for name, op in {**search_ops.OPS, **search_ops.controls("torch.get_num_threads()")}.items():
            for passes in op.passes:
                for layout in op.layouts:
                    case = Case(name, 3, op.dtypes[-1], layout, passes, ("torch.backends.mkldnn.enabled = False",))
                    text = search.program(op, case, THREADS, ("torch.use_deterministic_algorithms(True)",))
                    with self.subTest(case=case.words()):
                        self.assertLessEqual(len(text.splitlines()), search.SNIPPET_LINES, text)
                        compile(text, case.words(), "exec")
                        self.assertTrue(text.startswith("import torch"))
                        if passes == BACKWARD:
                            self.assertIn("torch.autograd.grad", text)
                        if layout == CHANNELS_LAST:
                            self.assertIn("channels_last", text)
                        if passes == STEP:
                            self.assertIn(".step()", text)

    def test_a_slicing_level_runs_each_side_on_the_first_rows_and_compares_the_first_row(self) -> None:
        """The batch level (on the CPU and on a CUDA device): the batched
        inputs sliced to each side's rows, the first row of each result
        compared; on CUDA the default device and the generator are the
        GPU's. An operation without a batched input cannot be sliced."""
        batched = {name: op for name, op in {**search_ops.OPS, **search_ops.controls("len(x)")}.items() if op.batched}
        self.assertTrue({"linear", "mm", "bmm", "conv2d", "layer_norm", "sdpa", "planted holding"} <= set(batched))
        for device in ("cpu", "cuda"):
            level = Level("batch", (None, 1), "@BATCHED, = (t[:side] for t in whole)", "False here", "len(x)",
                          slices=True, device=device)
            for name, op in batched.items():
                for layout in op.layouts:
                    case = Case(name, 5, op.dtypes[-1], layout, FORWARD, ("torch.backends.cudnn.benchmark = True",))
                    text = search.program(op, case, level, ("torch.use_deterministic_algorithms(True)",))
                    with self.subTest(device=device, case=case.words()):
                        self.assertLessEqual(len(text.splitlines()), search.SNIPPET_LINES, text)
                        compile(text, case.words(), "exec")
                        self.assertIn(f"whole = ({op.batched},)", text)
                        self.assertIn(f"    {op.batched}, = (t[:side] for t in whole)", text)
                        self.assertIn(".clone()[:1] for t in", text)
                        self.assertEqual("torch.set_default_device('cuda')" in text, device == "cuda")
                        self.assertEqual("torch.Generator('cuda')" in text, device == "cuda")
        with self.assertRaisesRegex(ValueError, "cnn step has no batched input"):
            search.program(search_ops.OPS["cnn step"], Case("cnn step", 5, passes=STEP), level)

    def test_the_training_steps_and_backward_passes_are_searched(self) -> None:
        passes = {p for op in search_ops.OPS.values() for p in op.passes}
        self.assertEqual(passes, {FORWARD, BACKWARD, STEP})
        self.assertTrue({"cnn step", "mlp step"} <= set(search_ops.OPS))


if __name__ == "__main__":
    unittest.main()
