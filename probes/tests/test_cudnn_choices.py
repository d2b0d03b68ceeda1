"""How the cuDNN probes read PyTorch's calls (no torch, no device): the
events bc_cudnn_log prints for logs in cuDNN 9.19's own entries (the
recorded ones of reports/tests/data/cudnn, and searches built from those
entries: an execution's entry with its engine, knob, time and status
rewritten), split by the child's marks; each call's search, times and plan
kept; the cache, the limit and the deterministic checks on constructed
readings; and the Compare record's fields. The reading through the tool
needs BACKENDCHECK_CUDNN_LOG_TOOL (the build's bc_cudnn_log; ctest sets it
for python.probes)."""

from __future__ import annotations

import datetime
import os
import re
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import cudnn_choices as cc  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
RECORDED = ROOT / "reports" / "tests" / "data" / "cudnn"
TOOL = os.environ.get("BACKENDCHECK_CUDNN_LOG_TOOL", "")
START = datetime.datetime(2026, 11, 26, 17, 39, 37)


def entries(text: str) -> list[str]:
    """A cuDNN 9 log's entries, each from its "I!" line to its metadata."""
    return [e.strip("\n") + "\n" for e in re.split(r"\n(?=I! )", text) if e.strip()]


GRAPH = entries((RECORDED / "cudnn-9-graph-fwd-f16.log").read_text())
LEGACY = entries((RECORDED / "cudnn-9-legacy-fwd-f16.log").read_text())
CALL = next(e for e in GRAPH if "cudnnBackendExecute() called" in e and "executionPlan:" in e)
INTERNAL = next(e for e in GRAPH if "cudnnBackendExecuteInternal() called" in e)
RETURN = next(e for e in GRAPH if "cudnnBackendExecute() called" in e and "executionPlan:" not in e)
DESCRIPTOR = next(e for e in LEGACY if "cudnnSetTensorNdDescriptor() called" in e)
CREATE = next(e for e in GRAPH if "cudnnBackendCreateDescriptor() called" in e and "descriptorType" in e)


def at(entry: str, us: int) -> str:
    """The entry, its time `us` microseconds after the recorded log's start."""
    t = (START + datetime.timedelta(microseconds=us)).strftime("%Y-%m-%dT%H:%M:%S.%f")
    return re.sub(r"Time: \S+", f"Time: {t}", entry)


def execution(engine: int, tile: int, us: int, status: str = "CUDNN_STATUS_SUCCESS (0)") -> str:
    """An execution of engine `engine`'s plan with TILE_SIZE `tile` at `us`,
    as cuDNN 9.19 logs it: its entry, cuDNN's Internal entry, its return."""
    call = re.sub(r"engine_id: type=int; val=\d+;", f"engine_id: type=int; val={engine};", CALL)
    call = re.sub(r"CUDNN_KNOB_TYPE_TILE_SIZE: type=int; val=\d+;", f"CUDNN_KNOB_TYPE_TILE_SIZE: type=int; val={tile};",
                  call)
    return (at(call, us) + at(INTERNAL, us + 5) +
            at(RETURN.replace("CUDNN_STATUS_SUCCESS (0)", status), us + 20))


def mark(n: int, us: int) -> str:
    v = cc.MARK_BASE + n
    entry = re.sub(r"nbDims: type=int; val=\d+;", "nbDims: type=int; val=5;", DESCRIPTOR)
    entry = re.sub(r"dimA: type=int; val=\[[^\]]*\];", f"dimA: type=int; val=[1,1,1,1,{v}];", entry)
    entry = re.sub(r"strideA: type=int; val=\[[^\]]*\];", f"strideA: type=int; val=[{v},{v},{v},{v},1];", entry)
    return at(entry, us)


def notes(engine: int, us: int, *set_: str) -> str:
    """The filter's question of an engine's notes, the engine shown with them."""
    lines = [f"i!             CUDNN_NUMERICAL_NOTE_{n}: type=bool; val=true;" for n in set_] or \
        ["i!             CUDNN_NUMERICAL_NOTE_TENSOR_CORE: type=bool; val=false;"]
    return at("\n".join(["I! CuDNN (v91900 56) function cudnnBackendGetAttribute() called:",
                         "i!     descriptor: type=CUDNN_BACKEND_ENGINE_DESCRIPTOR:",
                         f"i!         engine_id: type=int; val={engine};",
                         "i!         numericalNotes: type=cudnnBackendDescriptor_t:", *lines,
                         "i!     attributeName: type=cudnnBackendAttributeName_t; val=CUDNN_ATTR_ENGINE_NUMERICAL_NOTE "
                         "(1303);",
                         "i! Time: x",
                         "i! Process=1198; Thread=1198; GPU=NULL; Handle=NULL; StreamId=NULL."]) + "\n", us)


# A benchmark search as cuDNN's frontend runs it for PyTorch, between marks
# 0 and 1: eng20 (NONDETERMINISTIC) warms up and is timed (0.9 ms to the
# next call), eng7's warm-up fails, eng28 is timed (0.3 ms), eng31 last
# (1.3 ms, PyTorch's clean-up after the search included); then eng28, the
# fastest, runs the call. Between marks 1 and 2 a cached call runs eng28.
SEARCH = (mark(0, 100) + notes(20, 200, "NONDETERMINISTIC") + notes(28, 220) +
          execution(20, 1, 1000) + execution(20, 1, 1100) + execution(7, 2, 2000, "CUDNN_STATUS_NOT_SUPPORTED (3000)") +
          execution(28, 4, 2100) + execution(28, 4, 2200) + execution(31, 4, 2500) + execution(31, 4, 2600) +
          at(CREATE, 3900) + execution(28, 4, 4000) + mark(1, 5000) + execution(28, 4, 5100) + mark(2, 6000))


@unittest.skipUnless(TOOL and os.access(TOOL, os.X_OK), "bc_cudnn_log is not built (BACKENDCHECK_CUDNN_LOG_TOOL)")
class ThroughTheToolTest(unittest.TestCase):
    """The readings on what bc_cudnn_log prints for logs in cuDNN 9.19's entries."""

    def events(self, text: str) -> list[dict]:
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "cudnn.log"
            path.write_text(text)
            return cc.log_events(path)

    def test_the_recorded_cached_calls_are_no_search(self):
        events = cc.read_events((subprocess.run([TOOL, str(RECORDED / "cudnn-9-graph-fwd-f16.log")],
                                                capture_output=True, text=True, check=True)).stdout)
        self.assertEqual(len(events), 10)
        for e in events:  # each execution is one call of its own: the child's marks would part them
            call = cc.read_call([e])
            self.assertEqual((call["executions"], call["tried"], call["timed"]), (1, [], []))
            self.assertEqual(call["kept"], "eng28 TILE_SIZE=4 USE_TEX=0")
            self.assertNotIn("the log", call["notes_from"].values(), "9.19 shows no notes in an execution's own entry")
        self.assertTrue(cc.legacy(cc.read_events(subprocess.run(
            [TOOL, str(RECORDED / "cudnn-9-legacy-fwd-f16.log")], capture_output=True, text=True, check=True).stdout)))
        self.assertFalse(cc.legacy(events))

    def test_a_search_its_times_notes_and_the_plan_kept(self):
        search, cached = [cc.read_call(c) for c in cc.split_calls(self.events(SEARCH), 2)]
        self.assertEqual(search["executions"], 8)
        self.assertEqual(search["tried"], ["eng20 TILE_SIZE=1 USE_TEX=0", "eng7 TILE_SIZE=2 USE_TEX=0",
                                           "eng28 TILE_SIZE=4 USE_TEX=0", "eng31 TILE_SIZE=4 USE_TEX=0"])
        self.assertEqual(search["failed"], ["eng7 TILE_SIZE=2 USE_TEX=0"])
        self.assertEqual(search["timed"], ["eng20 TILE_SIZE=1 USE_TEX=0", "eng28 TILE_SIZE=4 USE_TEX=0",
                                           "eng31 TILE_SIZE=4 USE_TEX=0"])
        self.assertEqual(search["times_us"], {"eng20 TILE_SIZE=1 USE_TEX=0": 900, "eng28 TILE_SIZE=4 USE_TEX=0": 300,
                                              "eng31 TILE_SIZE=4 USE_TEX=0": 1300})
        self.assertEqual(search["last_timed"], "eng31 TILE_SIZE=4 USE_TEX=0")
        self.assertEqual(search["kept"], "eng28 TILE_SIZE=4 USE_TEX=0")
        from_log = {p: n for p, n in search["notes"].items() if search["notes_from"][p] == "the log"}
        self.assertEqual(from_log, {"eng20 TILE_SIZE=1 USE_TEX=0": ["NONDETERMINISTIC"],
                                    "eng28 TILE_SIZE=4 USE_TEX=0": []})
        self.assertIn("eng20 TILE_SIZE=1 USE_TEX=0", cc.nondeterministic(search))
        holds, said = cc.kept_fastest(search)
        self.assertTrue(holds, said)
        self.assertIn("kept eng28 TILE_SIZE=4 USE_TEX=0 (0.300 ms), the fastest", said)
        self.assertEqual((cached["tried"], cached["kept"]), ([], "eng28 TILE_SIZE=4 USE_TEX=0"))
        self.assertNotIn("the log", cached["notes_from"].values(), "a mark ends what the notes shown before it say")

    def test_null_ptr_notes_are_not_in_the_log_and_cuDNN_is_asked_for_them(self):
        """cuDNN 9.19's numericalNotes: val=NULL_PTR gives no notes: the tool
        asks cuDNN for engine 28's on the recorded convolution, and where it
        cannot (no device here) says why, not evaluated, never an error."""
        events = cc.read_events((subprocess.run([TOOL, str(RECORDED / "cudnn-9-graph-fwd-f16.log")],
                                                capture_output=True, text=True, check=True)).stdout)
        self.assertTrue(all("numericalNotes: type=cudnnBackendDescriptor_t; val=NULL_PTR;" in e
                            for e in GRAPH if "executionPlan:" in e))
        for e in events:
            self.assertEqual(e["convolution"]["described"], "CONVOLUTION_FORWARD HALF x[2,8,14,14] w[8,8,3,3] "
                                                            "y[2,8,14,14] padding [1,1] stride [1,1] dilation [1,1]")
            self.assertFalse(e["notes_error"], e["notes_unknown"])
            if e["notes_known"]:
                self.assertTrue(e["notes_from"].startswith("cuDNN 9."), e["notes_from"])
            else:
                self.assertEqual(e["notes_from"], "")
                self.assertIn("cuDNN's log gives no notes for engine 28, and cuDNN could not be asked: ",
                              e["notes_unknown"])
        call = cc.read_call(events)
        self.assertEqual(set(call["notes"]) | set(call["notes_unknown"]), {"eng28 TILE_SIZE=4 USE_TEX=0"})

    def test_a_search_whose_notes_the_log_does_not_give_is_not_mistrusted(self):
        """A search in 9.19's own entries (no entry shows an engine's notes):
        the deterministic check reads cuDNN's answers; where cuDNN cannot be
        asked it is not evaluated, with the reason, and never mistrusted."""
        log = (mark(0, 100) + execution(20, 1, 1000) + execution(20, 1, 1100) + execution(28, 4, 2100) +
               execution(28, 4, 2200) + execution(28, 4, 4000) + mark(1, 5000) + execution(28, 4, 5100) +
               execution(28, 4, 5200) + execution(28, 4, 5300) + mark(2, 6000) + execution(28, 4, 6100) +
               mark(3, 7000))
        control, *calls = [cc.read_call(c) for c in cc.split_calls(self.events(log), 3)]
        holds, said, seen, not_here = cc.deterministic_reading(control, calls)
        self.assertNotIn("mistrusted", seen)
        unknown = {p: u for c in [control] + calls for p, u in c["notes_unknown"].items()}
        if not control["notes"]:  # no device: cuDNN could not be asked
            self.assertEqual(set(unknown), {"eng20 TILE_SIZE=1 USE_TEX=0", "eng28 TILE_SIZE=4 USE_TEX=0"})
            self.assertIsNone(holds)
            self.assertIn("the numerical notes of 2 plan(s) (eng20 TILE_SIZE=1 USE_TEX=0, eng28 TILE_SIZE=4 "
                          "USE_TEX=0) are not known: ", not_here)
            self.assertIn("cuDNN could not be asked: ", not_here)
        elif unknown:  # asked, and cuDNN refused an engine on the recorded forward convolution
            self.assertIsNone(holds)
            self.assertTrue(not_here or "are not known" in said, said)
        else:
            self.assertEqual(not_here, "")
            self.assertIn("notes from cuDNN 9.", said)

    def test_a_log_whose_marks_are_missing_cannot_be_split(self):
        events = self.events(SEARCH)
        with self.assertRaisesRegex(ValueError, r"marks \[0, 1, 2\], not 0 to 3"):
            cc.split_calls(events, 3)
        with self.assertRaisesRegex(ValueError, r"marks \[\]"):
            cc.split_calls(self.events(SEARCH.replace("val=[1,1,1,1,", "val=[2,1,1,1,")), 2)

    def test_a_file_the_tool_cannot_read_is_the_harness_error(self):
        with self.assertRaisesRegex(RuntimeError, "bc_cudnn_log absent.log: exit 1"):
            cc.log_events(Path("/nonexistent") / "absent.log")


class MarkTest(unittest.TestCase):
    def test_the_marks_base_is_the_parsers(self):
        header = (ROOT / "harness" / "cudnn_log.h").read_text()
        self.assertIn(f"inline constexpr int64_t kCudnnMarkBase = {cc.MARK_BASE};", header)


def ex(name: str, t: int = -1, nxt: int = -1, status: str = "CUDNN_STATUS_SUCCESS (0)", engine: int | None = None,
       notes: list[str] | None = None, notes_from: str = "the log", unknown: str = "", error: bool = False) -> dict:
    """An execution event as bc_cudnn_log prints it: notes None are unknown
    (`unknown` says why, `error` whether asking cuDNN failed)."""
    return {"kind": "execution", "name": name, "function": "cudnnBackendExecute", "time_us": t, "next_call_us": nxt,
            "status": status, "engine": engine if engine is not None else int(name[3:].split()[0]),
            "notes_known": notes is not None, "numerical_notes": notes or [], "legacy_algo": "",
            "notes_from": notes_from if notes is not None else "", "notes_unknown": unknown if notes is None else "",
            "notes_error": error}


def search_of(times: dict[str, int], kept: str, failed: tuple[str, ...] = ()) -> dict:
    """A call that warmed up and timed each plan of `times` (µs), in order,
    tried `failed` once without success, then ran `kept`."""
    events, t = [], 0
    for name in failed:
        events.append(ex(name, t, t + 10, "CUDNN_STATUS_NOT_SUPPORTED (3000)"))
        t += 10
    for name, us in times.items():
        events += [ex(name, t, t + 5), ex(name, t + 5, t + 5 + us)]
        t += 5 + us
    return cc.read_call(events + [ex(kept, t, t + 100)])


class ReadingTest(unittest.TestCase):
    def test_events_that_are_not_the_tools_are_an_error_not_a_verdict(self):
        for text in ("not json", '{"kind": "verdict"}', "[1, 2]"):
            with self.assertRaises(ValueError):
                cc.read_events(text)
        self.assertEqual(cc.read_events('\n{"kind": "mark", "mark": 0}\n'), [{"kind": "mark", "mark": 0}])

    def test_a_call_without_a_search(self):
        self.assertEqual(cc.read_call([ex("eng28 K=1")])["timed"], [])
        # cuDNN's heuristics: a plan that fails to run, then the next, once each.
        call = cc.read_call([ex("eng7", status="CUDNN_STATUS_BAD_PARAM (2000)"), ex("eng28")])
        self.assertEqual((call["tried"], call["failed"], call["timed"], call["kept"]),
                         (["eng7"], ["eng7"], [], "eng28"))
        self.assertEqual(cc.read_call([])["executions"], 0)

    def test_a_search_without_its_warm_up_still_times_each_plan(self):
        call = cc.read_call([ex("eng1", 0, 400), ex("eng2", 400, 600), ex("eng2", 600, 700)])
        self.assertEqual(call["timed"], ["eng1", "eng2"], "the last execution is the call's run of the plan kept")
        self.assertEqual((call["times_us"], call["kept"]), ({"eng1": 400, "eng2": 200}, "eng2"))
        call = cc.read_call([ex("eng1", 0, 400), ex("eng2", 400, 600), ex("eng2", 600, 700), ex("eng2", 700, 800)])
        self.assertEqual((call["timed"], call["times_us"]["eng2"]), (["eng1", "eng2"], 100),
                         "the kept plan's timed run merges with the call's run of it")

    def test_the_plan_kept_against_each_plans_time(self):
        holds, said = cc.kept_fastest(search_of({"eng1": 900, "eng2": 300, "eng3": 1300}, "eng2"))
        self.assertTrue(holds, said)
        holds, said = cc.kept_fastest(search_of({"eng1": 300, "eng2": 900, "eng3": 1300}, "eng2"))
        self.assertIs(holds, False)
        self.assertIn("kept eng2 (0.900 ms), although eng1 took 0.300 ms", said)
        # Within TOLERANCE, or SLACK_US, of the plan kept: no plan beats it.
        self.assertTrue(cc.kept_fastest(search_of({"eng1": 900, "eng2": 1000}, "eng2"))[0])
        self.assertTrue(cc.kept_fastest(search_of({"eng1": 200, "eng2": 245}, "eng2"))[0])
        self.assertIs(cc.kept_fastest(search_of({"eng1": 200, "eng2": 290, "eng3": 400}, "eng2"))[0], False)
        # The last plan timed: its time is an upper bound.
        self.assertTrue(cc.kept_fastest(search_of({"eng1": 900, "eng2": 600}, "eng2"))[0])
        holds, said = cc.kept_fastest(search_of({"eng1": 300, "eng2": 900}, "eng2"))
        self.assertIsNone(holds)
        self.assertIn("last one timed", said)
        self.assertIs(cc.kept_fastest(search_of({"eng1": 300, "eng2": 900}, "eng9"))[0], False)
        holds, said = cc.kept_fastest(cc.read_call([ex("eng5")]))
        self.assertIs(holds, False)
        self.assertIn("no plan was timed", said)

    def test_one_search_per_key_under_benchmark_none_without(self):
        s, c = search_of({"eng1": 500, "eng2": 300}, "eng2"), cc.read_call([ex("eng2 X")])
        c["kept"] = "eng2"
        h = cc.read_call([ex("eng9")])
        keys, bench = ["a", "a", "b", "a", "c", "c"], [True, True, True, True, False, False]
        self.assertEqual(cc.searches_per_key([s, c, s, c, h, h], keys, bench), [])
        wrong = cc.searches_per_key([s, s, c, c, s, h], keys, bench)
        self.assertEqual(len(wrong), 4, wrong)
        self.assertIn("call 2 (a, benchmark=True) searched again for a key it had searched before", wrong[0])
        self.assertIn("call 3 (b, benchmark=True) did not search for a new key", wrong[1])
        self.assertIn("call 5 (c, benchmark=False) searched again with benchmark off", wrong[2])
        self.assertIn("call 6 (c, benchmark=False) ran eng9, not eng2", wrong[3])

    def test_every_field_of_the_key_makes_another_key(self):
        base = cc.conv("fwd", "f32", 8, 32, 28, 32)
        variants = [{**base, "n": 16}, {**base, "dtype": "f16"}, {**base, "layout": "nhwc"}, {**base, "pad": 2},
                    {**base, "stride": 2}, {**base, "dilation": 2}, {**base, "groups": 2}]
        keys = {cc.key_of(v, {}) for v in variants} | {cc.key_of(base, {}), cc.key_of(base, {"deterministic": True}),
                                                       cc.key_of(base, {"allow_tf32": False})}
        self.assertEqual(len(keys), 10)
        self.assertEqual(cc.key_of(base, {"deterministic_algorithms": True}), cc.key_of(base, {"deterministic": True}),
                         "PyTorch keys either flag as deterministic")
        self.assertEqual(cc.key_of(base, {"benchmark_limit": 1}), cc.key_of(base, {}), "the limit is no part of it")

    def test_the_limit_bounds_the_plans_timed_and_zero_tries_every_plan_built(self):
        def search(n: int, built: int | None = None, names: list[str] | None = None) -> dict:
            call = search_of({f"eng{i} K=1": 100 + i for i in range(n)}, "eng0 K=1")
            call["built"] = n if built is None else built
            call["built_plans"] = names if names is not None else [f"eng{i} K=1" for i in range(call["built"])]
            return call
        wrong, said, mistrusted = cc.limits_hold({1: search(1), 3: search(3), 10: search(10), 0: search(24)})
        self.assertEqual((wrong, mistrusted), ([], ""), said)
        self.assertIn("limit 0 tried 24 of the 24 plans it built", said)
        wrong, _, _ = cc.limits_hold({1: search(2), 3: search(3), 10: search(10), 0: search(20, 24)})
        self.assertEqual(wrong, ["limit 1 timed 2", "limit 0 tried 20 of the 24 plans built, not eng20 K=1, "
                                                    "eng21 K=1, eng22 K=1, eng23 K=1"])
        # A plan built twice and tried as one: every plan built was tried.
        twice = search(20, 21, [f"eng{i} K=1" for i in range(20)])
        self.assertEqual(cc.limits_hold({1: search(1), 0: twice})[0], [])
        # No plan built in the log: zero times as many as the largest limit.
        wrong, said, _ = cc.limits_hold({10: search(10), 0: search(8, 0)})
        self.assertEqual(wrong, ["limit 0 timed 8, fewer than another limit's 10"])
        self.assertEqual(cc.limits_hold({1: search(1), 0: search(3)})[2],
                         "the search with limit 0 timed 3 plan(s): too few to show a limit")

    def test_only_deterministic_plans_against_the_control(self):
        control = cc.read_call([ex("eng20 K=1", engine=20, notes=["NONDETERMINISTIC"]), ex("eng20 K=1", engine=20),
                                ex("eng28 K=4", engine=28, notes=[]), ex("eng28 K=4", engine=28),
                                ex("eng28 K=4", engine=28)])
        clean = cc.read_call([ex("eng28 K=4", engine=28), ex("eng28 K=4", engine=28), ex("eng0 K=1", engine=0),
                              ex("eng0 K=1", engine=0), ex("eng28 K=4", engine=28)])
        holds, said, mistrusted = cc.deterministic_only(control, [clean])
        self.assertEqual((holds, mistrusted), (True, ""), said)
        self.assertIn("1 NONDETERMINISTIC (eng20 K=1)", said)
        # By its own notes, or by its engine's in the control.
        leak = cc.read_call([ex("eng3 K=2", engine=3, notes=["NONDETERMINISTIC", "TENSOR_CORE"]),
                             ex("eng3 K=2", engine=3), ex("eng28 K=4", engine=28)])
        self.assertIs(cc.deterministic_only(control, [leak])[0], False)
        ran = cc.read_call([ex("eng20 K=9", engine=20)])
        holds, said, _ = cc.deterministic_only(control, [clean, ran])
        self.assertIs(holds, False)
        self.assertIn("NONDETERMINISTIC among them: eng20 K=9", said)
        # A control whose search shows no such plan makes the check tell nothing.
        holds, said, mistrusted = cc.deterministic_only(clean, [clean])
        self.assertTrue(holds)
        self.assertIn("shows nothing", mistrusted)

    def test_notes_the_log_does_not_give_are_cuDNNs_or_unknown_with_the_reason(self):
        asked = "cuDNN 9.19.0"
        no_device = ("cuDNN's log gives no notes for engine 20, and cuDNN could not be asked: cudaGetDeviceCount "
                     "returned 35 (cudaErrorInsufficientDriver)")
        clean = cc.read_call([ex("eng28 K=4", engine=28, notes=[], notes_from=asked), ex("eng28 K=4", engine=28)])
        # cuDNN's answers decide as the log's do, and the reading says whose they are.
        control = cc.read_call([ex("eng20 K=1", engine=20, notes=["NONDETERMINISTIC"], notes_from=asked),
                                ex("eng20 K=1", engine=20), ex("eng28 K=4", engine=28, notes=[], notes_from=asked),
                                ex("eng28 K=4", engine=28)])
        self.assertEqual(control["notes_from"], {"eng20 K=1": asked, "eng28 K=4": asked})
        holds, said, seen, not_here = cc.deterministic_reading(control, [clean])
        self.assertEqual((holds, not_here), (True, ""), said)
        self.assertIn("(notes from cuDNN 9.19.0)", said)
        self.assertNotIn("mistrusted", seen)
        # Unknown, for want of a device: not evaluated, with the reason, not mistrusted.
        blind = cc.read_call([ex("eng20 K=1", engine=20, unknown=no_device), ex("eng20 K=1", engine=20),
                              ex("eng28 K=4", engine=28, notes=[], notes_from=asked), ex("eng28 K=4", engine=28)])
        self.assertEqual(blind["notes_unknown"], {"eng20 K=1": {"why": no_device, "error": False}})
        holds, said, seen, not_here = cc.deterministic_reading(blind, [clean])
        self.assertIsNone(holds)
        self.assertEqual(not_here, "the numerical notes of 1 plan(s) (eng20 K=1) are not known: eng20 K=1: "
                                   + no_device)
        self.assertNotIn("mistrusted", seen)
        # Asking failed with an error: the harness's error, with the reason.
        failed = cc.read_call([ex("eng20 K=1", engine=20, unknown="cuDNN refused engine 20", error=True),
                               ex("eng28 K=4", engine=28, notes=[], notes_from=asked), ex("eng28 K=4", engine=28)])
        holds, said, seen, not_here = cc.deterministic_reading(failed, [clean])
        self.assertEqual((holds, not_here), (None, ""))
        self.assertIn("eng20 K=1: cuDNN refused engine 20", said)
        # A NONDETERMINISTIC plan run with the flags refutes, whatever else is unknown.
        leak = cc.read_call([ex("eng20 K=3", engine=20, notes=["NONDETERMINISTIC"], notes_from=asked),
                             ex("eng9 K=1", engine=9, unknown=no_device), ex("eng28 K=4", engine=28)])
        holds, said, _, not_here = cc.deterministic_reading(blind, [leak])
        self.assertEqual((holds, not_here), (False, ""), said)
        # Every plan's notes known and none NONDETERMINISTIC in the control: mistrusted, as before.
        holds, said, seen, not_here = cc.deterministic_reading(clean, [clean])
        self.assertEqual((holds, not_here), (True, ""))
        self.assertIn("shows nothing", seen["mistrusted"])
        # A legacy execution (no engine) has no engine notes to be unknown.
        self.assertEqual(cc.notes_unknown([cc.read_call([{**ex("eng0"), "engine": None, "notes_known": False}])]),
                         ("", False))

    def test_plans_built_count_when_finalised_and_show_their_engines_notes(self):
        plan = lambda name, engine, status, notes=None: {  # noqa: E731 - a plan event as bc_cudnn_log prints it
            "kind": "plan", "name": name, "engine": engine, "status": status, "notes_known": notes is not None,
            "numerical_notes": notes or []}
        events = [plan("eng20 K=1", 20, "CUDNN_STATUS_SUCCESS (0)", ["NONDETERMINISTIC"]),
                  plan("eng5 K=1", 5, "CUDNN_STATUS_NOT_SUPPORTED (3000)"), plan("eng28 K=4", 28, ""),
                  ex("eng28 K=4", engine=28), ex("eng28 K=4", engine=28), ex("eng28 K=4", engine=28)]
        control = cc.read_call(events)
        self.assertEqual(control["built"], 2, "a plan whose finalisation failed was not built")
        self.assertEqual(control["timed"], ["eng28 K=4"])
        self.assertEqual(cc.nondeterministic(control), {"eng20 K=1"}, "built, though beyond the plans timed")
        holds, said, mistrusted = cc.deterministic_only(control, [cc.read_call([ex("eng20 K=3", engine=20)])])
        self.assertEqual((holds, mistrusted), (False, ""), said)

    def test_samples_and_the_compare_record(self):
        self.assertEqual(cc.sample([3e6, 1e6, 2e6]), {"steady_ns": 2e6, "total_ns": 6000000, "first_ns": 3000000})
        c = cc.compare_record("cudnn_bench_fixed", {"benchmark": False}, {"benchmark": True}, [{"steady_ns": 1}],
                              [{"steady_ns": 2}])
        self.assertEqual(c, {"repro_a": "torch_backends.py cudnn_bench_fixed defaults",
                             "repro_b": "torch_backends.py cudnn_bench_fixed cudnn.benchmark=True",
                             "a": [{"steady_ns": 1}], "b": [{"steady_ns": 2}], "versus_flags": {"benchmark": True}})
        c = cc.compare_record("p", {}, {"benchmark": True},
                              [{"workspace_bytes": 2 ** 20}, {"workspace_bytes": 3 * 2 ** 20}],
                              [{"workspace_bytes": 2 ** 22}, {"workspace_bytes": 2 ** 22}])
        self.assertEqual(cc._medians(c, "workspace_bytes"),
                         "workspace_bytes median 2.0 MiB (defaults) against 4.0 MiB (cudnn.benchmark=True)")
        c = cc.compare_record("p", {"enabled": False}, {"enabled": True}, [], [])
        self.assertEqual((c["repro_a"], c["versus_flags"]), ("torch_backends.py p cudnn.enabled=False",
                                                             {"enabled": True}))

    def test_distribution_and_descriptions(self):
        self.assertEqual(cc.distribution(["a", "b", "a"]), {"a": 2, "b": 1})
        self.assertEqual(cc.describe(cc.conv("bwd_weights", "f16", 2, 16, 14, 16, r=1, stride=2, pad=0,
                                             layout="nhwc")),
                         "bwd_weights f16 2x16x14x14, 16 1x1 filters (stride 2, padding 0, channels_last)")
        self.assertEqual(cc.flags_text({"benchmark": True, "deterministic": False, "benchmark_limit": 0}),
                         "cudnn.benchmark=True cudnn.benchmark_limit=0")


if __name__ == "__main__":
    unittest.main()
