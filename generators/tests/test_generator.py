"""Tests of the spec loader, the expansion and the CLI's error lines."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import textwrap
import unittest
from pathlib import Path

from generators.emit import BATCH_CASES, batches, emit
from inputs.errors import SpecError
from generators.expand import expand
from inputs.flags import load_flags
from inputs.locate import LineIndex
from generators.problem import describe, problem
from generators.spec import load_spec

ROOT = Path(__file__).resolve().parents[2]

GOOD = """\
[shapes]
small = "mb2ic8ih14oc8kh3ph1"

[[suite]]
name = "demo"
fixture = "Determinism"
prefix = "Demo"
repeats = 3
[suite.axes]
direction = ["fwd", "bwd_weights"]
engine = ["onednn", "reference:atomic"]
threads = [1, 2]
shape = ["small"]
"cudnn.benchmark" = [false, true]
[[suite.exclude]]
engine = "reference:atomic"
threads = 1
"""


class SpecTestCase(unittest.TestCase):
    def setUp(self) -> None:
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)
        self.flags = load_flags()

    def write(self, text: str | bytes, name: str = "spec.toml") -> Path:
        path = Path(self.tmp.name) / name
        if isinstance(text, bytes):
            path.write_bytes(text)
        else:
            path.write_text(text, encoding="utf-8")
        return path

    def error(self, text: str | bytes) -> SpecError:
        path = self.write(text)
        with self.assertRaises(SpecError) as ctx:
            expand([load_spec(path, self.flags)], self.flags)
        self.assertTrue(str(ctx.exception).startswith(f"{path}:{ctx.exception.line}: "))
        return ctx.exception


class ExpandTest(SpecTestCase):
    def test_expands_product_minus_excluded(self) -> None:
        cases = expand([load_spec(self.write(GOOD), self.flags)], self.flags)
        self.assertEqual(len(cases), 2 * 2 * 2 * 2 - 2 * 2)  # atomic at one thread removed
        names = [c.name for c in cases]
        self.assertEqual(len(names), len(set(names)))
        for c in cases:
            self.assertRegex(c.name, r"^[A-Za-z0-9_]+$")
            self.assertRegex(c.id, r"^[0-9a-f]{16}$")
            self.assertTrue(c.test.startswith("Demo/Determinism.Bitwise/"))

    def test_repro_is_canonical(self) -> None:
        cases = expand([load_spec(self.write(GOOD), self.flags)], self.flags)
        atomic_bench = [c for c in cases if c.axes["engine"] == "reference:atomic" and c.axes["cudnn.benchmark"]
                        and c.axes["direction"] == "fwd"]
        self.assertEqual(atomic_bench[0].repro,
                         "conv2d:fwd:f32:mb2ic8ih14iw14oc8kh3kw3sh1sw1ph1pw1dh1dw1g1 device=cpu engine=reference "
                         "algo=atomic threads=2 cudnn.benchmark=true")
        default_flag = [c for c in cases if not c.axes["cudnn.benchmark"]]
        self.assertNotIn("cudnn.benchmark", default_flag[0].repro)

    def test_ids_are_stable(self) -> None:
        a = expand([load_spec(self.write(GOOD), self.flags)], self.flags)
        b = expand([load_spec(self.write(GOOD, "again.toml"), self.flags)], self.flags)
        self.assertEqual([c.id for c in a], [c.id for c in b])

    def test_shape_defaults_and_format(self) -> None:
        """The generator asks the C++ problem code (bc_problem) and writes no problem string itself."""
        self.assertEqual(problem("mb8ic64ih56oc64kh3ph1")["repro"],
                         "conv2d:fwd:f32:mb8ic64ih56iw56oc64kh3kw3sh1sw1ph1pw1dh1dw1g1")
        self.assertEqual(problem("mb2ic4ih8oc4kh3", "bwd_data", "f16", "nhwc")["repro"],
                         "conv2d:bwd_data:f16:nhwc:mb2ic4ih8iw8oc4kh3kw3sh1sw1ph0pw0dh1dw1g1")
        self.assertEqual(problem("matmul:m2n3k4")["repro"], "matmul:f32:m2n3k4")
        self.assertEqual(problem("scatter_add:n10d4")["bytes"], 4 * (10 + 10 + 4))
        with self.assertRaisesRegex(ValueError, "groups g3 must divide ic8 and oc8"):
            problem("mb1ic8ih4oc8kh1g3")
        with self.assertRaisesRegex(ValueError, "matmul has no direction bwd_data"):
            problem("matmul:m2n3k4", "bwd_data")
        self.assertLessEqual({"conv2d", "matmul", "scatter_add"}, {op["name"] for op in describe()["ops"]})

    def test_emit_writes_tables_and_manifest(self) -> None:
        cases = expand([load_spec(self.write(GOOD), self.flags)], self.flags)
        out = Path(self.tmp.name) / "gen"
        emit(cases, out, ["spec.toml"])
        table = (out / "determinism_tests_cases.cc").read_text()
        self.assertIn("INSTANTIATE_TEST_SUITE_P(Demo, Determinism", table)
        self.assertIn('"conv2d:fwd:f32:mb2ic8ih14iw14oc8kh3kw3sh1sw1ph1pw1dh1dw1g1 device=cpu engine=onednn threads=1"',
                      table)
        manifest = json.loads((out / "cases.json").read_text())
        self.assertEqual(len(manifest["cases"]), len(cases))
        labels = (out / "determinism_tests_labels.cmake").read_text()
        self.assertIn('set_tests_properties([==[Demo/Determinism.Bitwise/', labels)
        # a ci suite's cases: its tier and every larger one; the binary's
        # other tests (not generated, not tiered): every tier
        self.assertIn('PROPERTIES LABELS "determinism;cpu;ci;nightly")', labels)
        self.assertIn("set(bc_untiered ${bc_tests_determinism_tests})", labels)
        self.assertIn('set_tests_properties(${bc_untiered} PROPERTIES LABELS "smoke;ci;nightly")', labels)
        # One batch test ahead of the cases, with their labels and "batch",
        # its command and properties from the binary's directory.
        self.assertIn("if(DEFINED bc_batch_determinism_tests)", labels)
        self.assertIn("add_test([==[batch.determinism_tests.1]==] ${bc_batch_determinism_tests} "
                      "--name batch.determinism_tests.1 [==[Demo/Determinism.Bitwise/", labels)
        self.assertIn('set_tests_properties([==[batch.determinism_tests.1]==] PROPERTIES LABELS '
                      '"batch;ci;cpu;determinism;nightly" ${bc_batch_determinism_tests_properties})', labels)
        self.assertIn("PROPERTIES DEPENDS [==[batch.determinism_tests.1]==])", labels)
        before = (out / "cases.json").stat().st_mtime_ns
        emit(cases, out, ["spec.toml"])
        self.assertEqual((out / "cases.json").stat().st_mtime_ns, before, "unchanged output is not rewritten")

    def test_batches_deal_cases_round_robin(self) -> None:
        """Cases of one kind spread over the batches; none holds more than
        BATCH_CASES; every case is in exactly one."""
        cases = list(range(2 * BATCH_CASES + 1))
        dealt = batches(cases)  # type: ignore[arg-type]
        self.assertEqual(len(dealt), 3)
        self.assertLessEqual(max(map(len, dealt)), BATCH_CASES)
        self.assertEqual(sorted(c for b in dealt for c in b), cases)
        self.assertEqual(dealt[0][:3], [0, 3, 6])
        self.assertEqual(batches([]), [])

    def test_default_specs_are_valid(self) -> None:
        specs = [load_spec(ROOT / "catalog/matrices" / n, self.flags) for n in ("cpu.toml", "gpu.toml")]
        cases = expand(specs, self.flags)
        self.assertGreater(len(cases), 40)
        self.assertTrue(any(c.positive_control and c.axes["device"] == "cpu" for c in cases))
        self.assertTrue(any(c.axes["device"] == "cuda" for c in cases))


SCHEDULES = """\
[shapes]
a = "mb2ic3ih16oc8kh3ph1"
b = "mb2ic3ih32oc8kh3ph1"
mm = "matmul:m8n8k16"
[schedules]
fixed = { shape = "a", steps = 3 }
varying = { shapes = ["a", "b", "a"] }

[[suite]]
name = "sched"
fixture = "Schedule"
[suite.axes]
engine = ["select:onednn"]
schedule = ["fixed", "varying"]

[[suite]]
name = "cmp"
fixture = "Compare"
versus = { "cudnn.benchmark" = true }
[suite.axes]
engine = ["select"]
shape = ["mm"]

[[suite]]
name = "xp"
fixture = "CrossProcess"
processes = 3
env = [{ OMP_NUM_THREADS = "1" }, { OMP_NUM_THREADS = "2" }]
expect = "same_digest"
[suite.axes]
engine = ["onednn"]
shape = ["a"]
"""


class ScheduleAndOptionsTest(SpecTestCase):
    def test_schedules_are_compressed_runs(self) -> None:
        cases = expand([load_spec(self.write(SCHEDULES), self.flags)], self.flags)
        sched = {c.name: c.repro for c in cases if c.suite == "sched"}
        a = "conv2d:fwd:f32:mb2ic3ih16iw16oc8kh3kw3sh1sw1ph1pw1dh1dw1g1"
        b = "conv2d:fwd:f32:mb2ic3ih32iw32oc8kh3kw3sh1sw1ph1pw1dh1dw1g1"
        self.assertEqual(sched["Fixed"], f"{a}*3 device=cpu engine=select:onednn threads=1")
        self.assertEqual(sched["Varying"], f"{a},{b},{a} device=cpu engine=select:onednn threads=1")

    def test_suite_labels_and_tier_become_ctest_labels(self) -> None:
        text = SCHEDULES.replace('name = "sched"', 'name = "sched"\ntier = "smoke"\nlabels = ["resnet", "my-team"]')
        cases = [c for c in expand([load_spec(self.write(text), self.flags)], self.flags) if c.suite == "sched"]
        self.assertEqual(cases[0].labels, ("selection", "cpu", "smoke", "ci", "nightly", "resnet", "my-team"))
        self.assertIn("lower-case words", self.error(text.replace('"my-team"', '"My Team"')).message)

    def test_fixture_options_travel_with_the_case(self) -> None:
        cases = {c.suite: c for c in expand([load_spec(self.write(SCHEDULES), self.flags)], self.flags)}
        cmp = cases["cmp"]
        self.assertEqual(cmp.repro, "matmul:f32:m8n8k16 device=cpu engine=select threads=1")
        self.assertEqual(cmp.options["versus"], "matmul:f32:m8n8k16 device=cpu engine=select threads=1 "
                                                "cudnn.benchmark=true")
        self.assertEqual(cmp.options["reps"], 9)
        self.assertEqual(cases["xp"].options, {"processes": 3, "expect": "same_digest",
                                               "env": [{"OMP_NUM_THREADS": "1"}, {"OMP_NUM_THREADS": "2"}]})

    def test_replicates_are_tests_of_their_own_with_one_repro(self) -> None:
        """A replicate runs the same case again in a process of its own: the
        name and the identity change, the repro does not; an exclude can keep
        one replicate of the cases that need no more."""
        text = SCHEDULES.replace('schedule = ["fixed", "varying"]\n',
                                 'schedule = ["fixed", "varying"]\nreplicate = [1, 2, 3]\n'
                                 '[[suite.exclude]]\nschedule = "varying"\nreplicate = [2, 3]\n', 1)
        cases = [c for c in expand([load_spec(self.write(text), self.flags)], self.flags) if c.suite == "sched"]
        self.assertEqual([c.name for c in cases], ["Fixed_Replicate1", "Fixed_Replicate2", "Fixed_Replicate3",
                                                   "Varying_Replicate1"])
        fixed = cases[:3]
        self.assertEqual(len({c.repro for c in fixed}), 1)
        self.assertEqual(len({c.id for c in cases}), 4)
        self.assertEqual([c.axes["replicate"] for c in fixed], [1, 2, 3])
        for bad in ("0", "21", "true", '"1"'):
            self.assertIn("replicate must be integers in 1..20",
                          self.error(text.replace("replicate = [1, 2, 3]", f"replicate = [1, {bad}]")).message)

    def test_option_errors(self) -> None:
        for old, new, expected in (
                ('versus = { "cudnn.benchmark" = true }', 'versus = { "cudnn.benchmark" = false }', "changes nothing"),
                ('versus = { "cudnn.benchmark" = true }', 'versus = { "nope" = true }', "unknown flag"),
                ('processes = 3', 'processes = 0', "processes must be"),
                ('expect = "same_digest"', 'expect = "maybe"', "expect must be"),
                ('fixture = "Schedule"', 'fixture = "Schedule"\nreps = 3', "not an option of fixture Schedule"),
                ('fixed = { shape = "a", steps = 3 }', 'fixed = { shape = "zz", steps = 3 }', "unknown shape"),
                ('schedule = ["fixed", "varying"]', 'schedule = ["fixed"]\nshape = ["a"]', "exactly one of"),
                ('engine = ["onednn"]', 'engine = ["onednn"]\ndirection = ["bwd_data"]\n', "")):
            with self.subTest(new=new):
                text = SCHEDULES.replace(old, new)
                if expected:
                    self.assertIn(expected, self.error(text).message)
                else:
                    expand([load_spec(self.write(text), self.flags)], self.flags)

    def test_checks_pick_what_a_fixture_runs(self) -> None:
        text = GOOD.replace('repeats = 3', 'repeats = 3\nchecks = ["tolerance"]').replace(
            'engine = ["onednn", "reference:atomic"]', 'engine = ["onednn"]').replace(
            '[[suite.exclude]]\nengine = "reference:atomic"\nthreads = 1\n', '')
        cases = expand([load_spec(self.write(text), self.flags)], self.flags)
        self.assertTrue(all(c.options == {"checks": ["tolerance"]} for c in cases))
        # Asking for every check of the fixture is the default: case ids do not change.
        every = GOOD.replace('repeats = 3', 'repeats = 3\nchecks = ["tolerance", "bitwise"]')
        self.assertEqual([c.id for c in expand([load_spec(self.write(every), self.flags)], self.flags)],
                         [c.id for c in expand([load_spec(self.write(GOOD), self.flags)], self.flags)])

    def test_check_errors(self) -> None:
        for checks, extra, expected in (
                ('["speed"]', "", "unknown check 'speed' (known: bitwise, tolerance, selection, perf-bound, conformance)"),
                ('["selection"]', "", "fixture Determinism has no 'selection' check (it has: bitwise, tolerance)"),
                ('[]', "", "checks must be a non-empty list of bitwise, tolerance, selection, perf-bound, conformance"),
                ('["bitwise", "bitwise"]', "", "checks lists a check twice"),
                ('["tolerance"]', "positive_control = true\n",
                 "a positive control is caught by the bitwise check: keep 'bitwise'")):
            with self.subTest(checks=checks):
                text = GOOD.replace('repeats = 3', f'repeats = 3\n{extra}checks = {checks}')
                err = self.error(text)
                self.assertEqual(err.message, expected)
                self.assertEqual(err.line, text.splitlines().index(f"checks = {checks}") + 1)

    def test_matmul_has_no_backward_direction(self) -> None:
        text = SCHEDULES.replace('shape = ["mm"]', 'shape = ["mm"]\ndirection = ["bwd_data"]')
        self.assertIn("matmul has no direction bwd_data", self.error(text).message)


TABLES_SPEC = """\
[shapes]
r50 = { table = "resnet50", mb = 2 }
bert = { table = "bert_base", tokens = 256 }
[schedules]
rand = { random = { seed = 7, steps = 5, mb = [1, 4], ic = [3, 16], ih = [7, 32], oc = [4, 16], kh = [1, 3], ph = [0, 1] } }

[[suite]]
name = "tables"
fixture = "Determinism"
[suite.axes]
engine = ["onednn"]
shape = ["r50", "bert"]

[[suite]]
name = "random"
fixture = "Schedule"
[suite.axes]
engine = ["select:onednn"]
schedule = ["rand"]

[[suite]]
name = "conditional"
fixture = "Determinism"
[suite.axes]
engine = ["onednn", "reference:atomic"]
threads = [1, 2]
shape = ["r50_l1_3x3"]
[[suite.only_if]]
if = { engine = "reference:atomic" }
then = { threads = 2 }
"""


class TablesRandomOnlyIfTest(SpecTestCase):
    def cases(self, text: str = TABLES_SPEC) -> dict[str, list]:
        out: dict[str, list] = {}
        for c in expand([load_spec(self.write(text), self.flags)], self.flags):
            out.setdefault(c.suite, []).append(c)
        return out

    def test_model_tables_expand_into_layers(self) -> None:
        tables = self.cases()["tables"]
        self.assertEqual(len(tables), 20 + 6)
        repros = {c.repro.split()[0] for c in tables}
        self.assertIn("conv2d:fwd:f32:mb2ic3ih224iw224oc64kh7kw7sh2sw2ph3pw3dh1dw1g1", repros)  # conv1
        self.assertIn("matmul:f32:m256n3072k768", repros)  # ffn_up

    def test_random_schedules_are_seeded(self) -> None:
        a = self.cases()["random"][0].repro
        b = self.cases()["random"][0].repro
        self.assertEqual(a, b)
        self.assertEqual(len(a.split()[0].split(",")), 5)
        other = self.cases(TABLES_SPEC.replace("seed = 7", "seed = 8"))["random"][0].repro
        self.assertNotEqual(a, other)

    def test_only_if_keeps_what_the_condition_allows(self) -> None:
        names = sorted(c.name for c in self.cases()["conditional"])
        self.assertEqual(names, ["Onednn_T1", "Onednn_T2", "ReferenceAtomic_T2"])

    def test_errors(self) -> None:
        for old, new, expected in (
                ('table = "resnet50"', 'table = "vgg"', "table must be one of"),
                ('mb = 2', 'batch = 2', "takes only 'mb'"),
                ('seed = 7, steps = 5', 'steps = 5', "needs seed"),
                ('kh = [1, 3]', 'kh = [3]', "[lo, hi]"),
                ('then = { threads = 2 }', 'then = { colour = 2 }', "not an axis"),
                ('if = { engine = "reference:atomic" }', 'when = { engine = "reference:atomic" }', "an only_if rule")):
            with self.subTest(new=new):
                self.assertIn(expected, self.error(TABLES_SPEC.replace(old, new)).message)


class ErrorTest(SpecTestCase):
    def test_unknown_flag_names_its_line(self) -> None:
        e = self.error(GOOD.replace('"cudnn.benchmark" = [false, true]', '"cudnn.bencmark" = [false, true]'))
        self.assertEqual(e.line, 14)
        self.assertIn("unknown axis or flag 'cudnn.bencmark'", e.message)

    def test_empty_file(self) -> None:
        e = self.error("")
        self.assertEqual(e.line, 1)
        self.assertIn("empty spec", e.message)

    def test_not_toml(self) -> None:
        e = self.error("[shapes]\nsmall = \"mb1ic1ih1oc1kh1\"\nthis is not toml\n")
        self.assertEqual(e.line, 3)
        self.assertIn("not valid TOML", e.message)

    def test_binary_file(self) -> None:
        e = self.error(b"\x7fELF\x02\x01\x01\x00\n\xff\xfe\x00")
        self.assertIn("not UTF-8", e.message)
        self.assertEqual(e.line, 2)

    def test_json_is_not_toml(self) -> None:
        self.assertIn("not valid TOML", self.error('{"suite": []}').message)

    def test_bad_values(self) -> None:
        cases = {
            'threads = [1, 2]': ('threads = [0]', "threads must be"),
            'engine = ["onednn", "reference:atomic"]': ('engine = ["tpu"]', "unknown engine"),
            'direction = ["fwd", "bwd_weights"]': ('direction = []', "is empty"),
            'shape = ["small"]': ('shape = ["huge"]', "unknown shape"),
            '"cudnn.benchmark" = [false, true]': ('"cudnn.benchmark" = ["yes"]', "takes true or false"),
            'repeats = 3': ('repeats = 0', "repeats must be"),
            'fixture = "Determinism"': ('fixture = "Nope"', "unknown fixture"),
            'prefix = "Demo"': ('prefix = "Demo"\ncolour = "red"', "unknown suite key 'colour'"),
        }
        for old, (new, expected) in cases.items():
            with self.subTest(new=new):
                self.assertIn(expected, self.error(GOOD.replace(old, new)).message)

    def test_exclude_removing_everything(self) -> None:
        text = GOOD + '[[suite.exclude]]\nshape = "small"\n'
        self.assertIn("remove every case", self.error(text).message)

    def test_exclude_unknown_axis(self) -> None:
        self.assertIn("not an axis", self.error(GOOD + '[[suite.exclude]]\ndevice = "cpu"\n').message)

    def test_duplicate_suite_names(self) -> None:
        text = GOOD + GOOD.split("[[suite]]", 1)[1].join(["[[suite]]", ""])
        self.assertIn("already used", self.error(text).message)

    def test_dimension_bomb_is_refused(self) -> None:
        e = self.error(GOOD.replace('"mb2ic8ih14oc8kh3ph1"', '"mb100000ic100000ih1000oc1kh1"'))
        self.assertEqual(e.line, 2)
        self.assertIn("exceed", e.message)

    def test_memory_budget_names_the_shape_and_the_bytes(self) -> None:
        big = GOOD.replace('"mb2ic8ih14oc8kh3ph1"', '"mb64ic256ih224oc256kh3ph1"')
        e = self.error(big)
        self.assertEqual(e.line, 2)
        self.assertRegex(e.message, r"shape 'small' needs \d+ bytes of buffers, over the memory budget of 4294967296 bytes")
        ok = expand([load_spec(self.write("memory_budget_mib = 8192\n" + big, "budget.toml"), self.flags)], self.flags)
        self.assertTrue(ok)
        self.assertIn("positive integer", self.error("memory_budget_mib = 0\n" + GOOD).message)

    def test_bad_shape_fields(self) -> None:
        for shape, expected in (("mb0ic1ih1oc1kh1", "positive"), ("mb1ic3ih4oc4kh1g2", "groups"),
                                ("mb1ic1ih2oc1kh5", "does not fit"), ("mb1ic1oc1kh1", "missing field 'ih'"),
                                ("mb1xx1ic1ih1oc1kh1", "unknown field")):
            with self.subTest(shape=shape):
                self.assertIn(expected, self.error(GOOD.replace("mb2ic8ih14oc8kh3ph1", shape)).message)

    def test_engine_device_mismatch(self) -> None:
        text = GOOD.replace('threads = [1, 2]', 'threads = [1, 2]\ndevice = ["cuda"]')
        self.assertIn("does not run on cuda", self.error(text).message)


class LocateTest(unittest.TestCase):
    def test_paths_of_array_tables(self) -> None:
        index = LineIndex(GOOD + GOOD.split("[[suite]]", 1)[1].join(["[[suite]]", ""]))
        self.assertEqual(index.line(("suite", 0, "axes", "cudnn.benchmark")), 14)
        self.assertEqual(index.line(("suite", 0, "exclude", 0, "threads")), 17)
        self.assertEqual(index.line(("suite", 1)), 18)
        self.assertEqual(index.line(("suite", 1, "axes", "nonexistent")), 23)
        self.assertEqual(index.line(("nothing",)), 1)


class CommandLineTest(SpecTestCase):
    def run_cli(self, *args: str) -> subprocess.CompletedProcess[str]:
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        return subprocess.run([sys.executable, "-m", "generators", *args], cwd=ROOT, env=env,
                               capture_output=True, text=True, timeout=60)

    def test_validate_errors_are_one_line_without_traceback(self) -> None:
        for text in (GOOD.replace("cudnn.benchmark", "cudnn.bencmark"), "", b"\x00\xff binary", "not = toml = x"):
            with self.subTest(text=text[:20]):
                path = self.write(text)
                r = self.run_cli("validate", str(path))
                self.assertEqual(r.returncode, 1)
                self.assertEqual(r.stdout, "")
                lines = r.stderr.strip().splitlines()
                self.assertEqual(len(lines), 1, r.stderr)
                self.assertRegex(lines[0], rf"^{path}:\d+: ")
                self.assertNotIn("Traceback", r.stderr)

    def test_missing_file(self) -> None:
        r = self.run_cli("validate", str(Path(self.tmp.name) / "absent.toml"))
        self.assertEqual(r.returncode, 1)
        self.assertIn("absent.toml:1: cannot read spec", r.stderr)

    def test_validate_ok(self) -> None:
        r = self.run_cli("validate", str(self.write(GOOD)))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("ok, 1 suite(s), 12 case(s)", r.stdout)


class FlagsTest(unittest.TestCase):
    def test_flags_def_is_read(self) -> None:
        flags = load_flags()
        self.assertEqual(list(flags)[:3], ["cudnn.enabled", "cudnn.benchmark", "cudnn.deterministic"])
        self.assertEqual(flags["cudnn.benchmark_limit"].default, 10)
        self.assertIs(flags["cudnn.allow_tf32"].default, True)
        self.assertEqual(flags["cudnn.conv.fp32_precision"].default, "tf32")
        self.assertEqual(flags["cudnn.conv.fp32_precision"].type, "str")

    def test_str_flags_take_a_lower_case_word(self) -> None:
        flag = load_flags()["mkldnn.fp32_precision"]
        self.assertTrue(flag.accepts("bf16"))
        for bad in ("BF16", "", "tf 32", True, 3):
            self.assertFalse(flag.accepts(bad), bad)


class BuildTreesTest(unittest.TestCase):
    def test_the_problem_tool_is_found_in_trees_by_hand_and_per_torch(self) -> None:
        from generators.problem import build_trees
        with tempfile.TemporaryDirectory() as tmp:
            build = Path(tmp)
            for tree in ("dev", "default/torch/usr/bin/python3", "default/versions/report"):
                (build / tree).mkdir(parents=True)
            for tree in ("dev", "default/torch/usr/bin/python3"):
                (build / tree / "CMakeCache.txt").write_text("")
            (build / "dev" / "nested").mkdir()
            (build / "dev" / "nested" / "CMakeCache.txt").write_text("")  # a tree's own folders: not searched
            self.assertEqual(sorted(build_trees(build)), [build / "default/torch/usr/bin/python3", build / "dev"])


if __name__ == "__main__":
    unittest.main()
