// cuDNN's API log read for the probes of PyTorch that log their own
// children's calls (probes/cudnn_choices.py): each entry's time, the
// events in order (executions, plans built, marks) with their status and
// the next call, the notes an execution takes from its engine's earlier
// entry, and bc_cudnn_log, the tool that prints them; and how such a probe's
// comparison and fresh processes become the C++ suites' records.
#include <gtest/gtest.h>

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "backends/cudnn/cudnn.h"
#include "backends/registry.h"
#include "harness/cudnn_log.h"
#include "runner/case_run.h"
#include "runner/compare.h"
#include "runner/records.h"

#ifndef BC_SOURCE_DIR
#error "BC_SOURCE_DIR must name the source tree"
#endif
#ifndef BC_CUDNN_LOG_TOOL
#error "BC_CUDNN_LOG_TOOL must name bc_cudnn_log"
#endif

namespace bc {
namespace {

std::string Recorded(const std::string& name) {
  const std::filesystem::path path =
      std::filesystem::path(BC_SOURCE_DIR) / "reports" / "tests" / "data" / "cudnn" / name;
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << path;
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// One entry as cuDNN 9 writes it: the "I!"/"i!" marks, four spaces a level
// (a field given with leading spaces sits deeper), then its time, at `us`
// microseconds past 2026-11-26T10:00:00.
std::string Entry(const std::string& function, int us, const std::vector<std::string>& fields) {
  std::string s = "I! CuDNN (v91900 56) function " + function + "() called:\n";
  for (const std::string& f : fields) s += "i!     " + f + "\n";
  char time[96];
  std::snprintf(time, sizeof(time), "i! Time: 2026-11-26T10:00:00.%06d (0d+0h+0m+0s since start)\n", us);
  return s + time + "i! Process=1; Thread=1; GPU=0; Handle=0x1; StreamId=(nil) (defaultStream).\n\n";
}

std::string Returns(const std::string& function, int us, const std::string& status = "CUDNN_STATUS_SUCCESS (0)") {
  return Entry(function, us, {"status: type=cudnnStatus_t; val=" + status + ";"});
}

std::string Mark(int n, int us) {
  const std::string v = std::to_string(kCudnnMarkBase + n);
  return Entry("cudnnSetTensorNdDescriptor", us,
               {"dataType: type=cudnnDataType_t; val=CUDNN_DATA_FLOAT (0);", "nbDims: type=int; val=5;",
                "dimA: type=int; val=[1,1,1,1," + v + "];", "strideA: type=int; val=[" + v + "," + v + "," + v +
                "," + v + ",1];"});
}

// An execution of engine `engine`'s plan, as 9.19 logs it: the engine's
// notes not shown (NULL_PTR), then cuDNN's own Internal entry, then the
// status as the call returns.
std::string Execute(int engine, int knob, int us, int returns_us,
                    const std::string& status = "CUDNN_STATUS_SUCCESS (0)") {
  return Entry("cudnnBackendExecute", us,
               {"executionPlan: type=CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR:",
                "    engcfg: type=CUDNN_BACKEND_ENGINECFG_DESCRIPTOR:",
                "        engine: type=CUDNN_BACKEND_ENGINE_DESCRIPTOR:",
                "            engine_id: type=int; val=" + std::to_string(engine) + ";",
                "            knobDesc: type=cudnnBackendDescriptor_t:",
                "                CUDNN_KNOB_TYPE_TILE_SIZE: type=int; val=" + std::to_string(knob) + ";",
                "            numericalNotes: type=cudnnBackendDescriptor_t; val=NULL_PTR;"}) +
         Entry("cudnnBackendExecuteInternal", us + 5, {"engine_id: type=int; val=" + std::to_string(engine) + ";"}) +
         Returns("cudnnBackendExecute", returns_us, status);
}

// A benchmark search as cuDNN's frontend runs it for PyTorch, between marks
// 0 and 1: the filter asks engine 20's notes (NONDETERMINISTIC) and engine
// 28's (none), two plans are built; eng20 warms up and is timed, eng28
// warms up, is timed, and runs the call as the plan kept; eng7's warm-up
// fails. Mark 1, then a cached call of eng28. A descriptor of a real tensor
// and one below the marks' base are not marks.
std::string ConstructedSearch() {
  return Mark(0, 100) +
         Entry("cudnnSetTensorNdDescriptor", 150, {"nbDims: type=int; val=4;", "dimA: type=int; val=[2,8,14,14];"}) +
         Entry("cudnnSetTensorNdDescriptor", 160, {"nbDims: type=int; val=5;", "dimA: type=int; val=[1,1,1,1,5];"}) +
         Entry("cudnnBackendGetAttribute", 200,
               {"descriptor: type=CUDNN_BACKEND_ENGINE_DESCRIPTOR:", "    engine_id: type=int; val=20;",
                "    numericalNotes: type=cudnnBackendDescriptor_t:",
                "        CUDNN_NUMERICAL_NOTE_NONDETERMINISTIC: type=bool; val=true;",
                "        CUDNN_NUMERICAL_NOTE_TENSOR_CORE: type=bool; val=false;",
                "attributeName: type=cudnnBackendAttributeName_t; val=CUDNN_ATTR_ENGINE_NUMERICAL_NOTE (1303);"}) +
         Returns("cudnnBackendGetAttribute", 210) +
         Entry("cudnnBackendGetAttribute", 220,
               {"descriptor: type=CUDNN_BACKEND_ENGINE_DESCRIPTOR:", "    engine_id: type=int; val=28;",
                "    numericalNotes: type=cudnnBackendDescriptor_t:",
                "        CUDNN_NUMERICAL_NOTE_TENSOR_CORE: type=bool; val=false;"}) +
         Returns("cudnnBackendGetAttribute", 230) +
         Entry("cudnnBackendFinalize", 300,
               {"descriptor: type=CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR:",
                "    engcfg: type=CUDNN_BACKEND_ENGINECFG_DESCRIPTOR:", "        engine_id: type=int; val=20;"}) +
         Returns("cudnnBackendFinalize", 310) +
         Entry("cudnnBackendFinalize", 320, {"descriptor: type=CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR:"}) +
         Returns("cudnnBackendFinalize", 330, "CUDNN_STATUS_BAD_PARAM (2000)") +
         Execute(7, 1, 900, 910, "CUDNN_STATUS_NOT_SUPPORTED (3000)") +
         Execute(20, 2, 1000, 1020) + Execute(20, 2, 1100, 1120) +  // warm-up, timed: 1.4 ms to the next call
         Execute(28, 4, 2500, 2520) + Execute(28, 4, 2600, 2620) +  // 0.9 ms, to the call after the search
         Entry("cudnnBackendCreateDescriptor", 3500, {"descriptorType: type=int; val=16;"}) +
         Execute(28, 4, 3600, 3620) + Mark(1, 5000) + Execute(28, 4, 5100, 5120) + Mark(2, 6000);
}

using Kind = CudnnEvent::Kind;

TEST(CudnnLog, ReadsEachEntrysTimeInMicroseconds) {
  const std::vector<CudnnLogCall> calls = ParseCudnnLog(
      "cuDNN (v90000) function cudnnCreate() called:\n    handle: type=cudnnHandle_t*; val=0x1;\n"
      "Time: 1970-01-02T00:00:01.5 (0d+0h+0m+1s since start)\n\n" +
      Entry("cudnnDestroy", 42, {"handle: type=cudnnHandle_t; val=0x1;"}) +
      "I! CuDNN (v91900 56) function cudnnGetStream() called:\ni!     handle: type=cudnnHandle_t; val=0x1;\n");
  ASSERT_EQ(calls.size(), 3u);
  EXPECT_EQ(calls[0].time_us, 86401500000) << "a fraction of one digit is tenths";
  EXPECT_EQ(calls[0].fields.size(), 1u) << "the time ends the fields";
  EXPECT_EQ(calls[1].time_us - 1795687200000000, 42) << "2026-11-26T10:00:00 is 1795687200 s past 1970";
  EXPECT_EQ(calls[2].time_us, -1) << "an entry without its time has none";

  const std::vector<CudnnLogCall> recorded = ParseCudnnLog(Recorded("cudnn-9-graph-fwd-f16.log"));
  ASSERT_FALSE(recorded.empty());
  for (size_t i = 1; i < recorded.size(); ++i) {
    ASSERT_GE(recorded[i].time_us, recorded[i - 1].time_us) << recorded[i].function << " #" << i;
  }
  EXPECT_GT(recorded.back().time_us, recorded.front().time_us);
}

TEST(CudnnLog, EventsAreExecutionsPlansAndMarksWithTheirStatusAndTheNextCall) {
  const std::vector<CudnnEvent> events = CudnnEventsIn(ConstructedSearch());
  std::vector<std::string> kinds;
  for (const CudnnEvent& e : events) {
    kinds.push_back(e.kind == Kind::kMark ? "mark" + std::to_string(e.mark)
                    : e.kind == Kind::kPlanBuilt ? "plan:" + e.ran.Name()
                                                 : e.ran.Name().substr(0, e.ran.Name().find(' ')));
  }
  EXPECT_EQ(kinds, (std::vector<std::string>{"mark0", "plan:eng20 [NONDETERMINISTIC]", "eng7", "eng20", "eng20",
                                             "eng28", "eng28", "eng28", "mark1", "eng28", "mark2"}));
  ASSERT_EQ(events.size(), 11u);
  EXPECT_EQ(events[1].status, "CUDNN_STATUS_SUCCESS (0)") << "the plan's own return, not the variant pack's";
  EXPECT_EQ(events[2].status, "CUDNN_STATUS_NOT_SUPPORTED (3000)");
  EXPECT_EQ(events[4].status, "CUDNN_STATUS_SUCCESS (0)");
  // The timed runs: to the next call, cuDNN's Internal entries and the
  // returns aside.
  EXPECT_EQ(events[4].time_us % 1000000, 1100);
  EXPECT_EQ(events[4].next_call_us - events[4].time_us, 1400);
  EXPECT_EQ(events[6].next_call_us - events[6].time_us, 900) << "the next call is the variant pack's, not a run";
  EXPECT_EQ(events[0].next_call_us - events[0].time_us, 50) << "a descriptor of a real tensor is a call, no mark";
  EXPECT_EQ(events.back().next_call_us, -1) << "nothing follows the last mark";
  // Notes: the engine's own entry since the mark, where the execution's shows none.
  EXPECT_EQ(events[3].ran.engine, 20);
  EXPECT_EQ(events[3].ran.knobs, (std::vector<std::pair<std::string, int64_t>>{{"TILE_SIZE", 2}}));
  EXPECT_TRUE(events[3].ran.notes_known);
  EXPECT_EQ(events[3].ran.numerical_notes, std::vector<std::string>{"NONDETERMINISTIC"});
  EXPECT_TRUE(events[5].ran.notes_known) << "eng28's notes were shown: none is set";
  EXPECT_TRUE(events[5].ran.numerical_notes.empty());
  EXPECT_FALSE(events[2].ran.notes_known) << "eng7's notes were never shown";
  EXPECT_FALSE(events[9].ran.notes_known) << "a mark ends what the notes shown before it say";

  // CudnnRunsIn is the executions of the same reading.
  const std::vector<CudnnRan> runs = CudnnRunsIn(ConstructedSearch());
  ASSERT_EQ(runs.size(), 7u);
  EXPECT_EQ(runs[1].Name(), "eng20 TILE_SIZE=2 [NONDETERMINISTIC]");
}

// The recorded log of ten cached executions of one plan (cuDNN 9.19,
// reports/tests/data/cudnn): each succeeded, each in time order, the
// engine's notes not shown in 9.19's execution entries.
TEST(CudnnLog, RecordedExecutionsHaveTheirStatusTimeAndNextCall) {
  const std::vector<CudnnEvent> events = CudnnEventsIn(Recorded("cudnn-9-graph-fwd-f16.log"));
  ASSERT_EQ(events.size(), 10u);
  for (size_t i = 0; i < events.size(); ++i) {
    const CudnnEvent& e = events[i];
    EXPECT_EQ(e.kind, Kind::kExecution);
    EXPECT_EQ(e.ran.Name(), "eng28 TILE_SIZE=4 USE_TEX=0");
    EXPECT_EQ(e.status, "CUDNN_STATUS_SUCCESS (0)");
    EXPECT_FALSE(e.ran.notes_known) << "numericalNotes: val=NULL_PTR shows none";
    EXPECT_GT(e.time_us, 0);
    if (i + 1 < events.size()) {
      EXPECT_GT(e.next_call_us, e.time_us);
      EXPECT_LT(e.next_call_us, events[i + 1].time_us) << "a cached call's next call is its clean-up, no run";
    }
  }
  const std::vector<CudnnEvent> legacy = CudnnEventsIn(Recorded("cudnn-9-legacy-fwd-f16.log"));
  ASSERT_EQ(legacy.size(), 10u);
  for (const CudnnEvent& e : legacy) {
    EXPECT_EQ(e.ran.legacy_algo, "CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM");
    EXPECT_EQ(e.status, "") << "the legacy calls' returns are not logged";
  }
}

// The recorded log's first execution entry: the plan PyTorch ran, its
// engine shown with the convolution it was made for.
std::string RecordedExecution() {
  const std::string text = Recorded("cudnn-9-graph-fwd-f16.log");
  const size_t at = text.find("I! CuDNN (v91900 56) function cudnnBackendExecute() called:\ni!     handle:");
  EXPECT_NE(at, std::string::npos);
  return text.substr(at, text.find("\n\n", at) - at) + "\n\n";
}

TEST(CudnnLog, RecordedExecutionsDescribeTheConvolutionTheirEngineWasMadeFor) {
  for (const CudnnEvent& e : CudnnEventsIn(Recorded("cudnn-9-graph-fwd-f16.log"))) {
    EXPECT_EQ(e.ran.version, "91900");
    ASSERT_TRUE(e.ran.convolution.has_value());
    const CudnnLogConvolution& c = *e.ran.convolution;
    EXPECT_EQ(c.operation, "CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR");
    EXPECT_EQ(c.x.data_type, "CUDNN_DATA_HALF");
    EXPECT_EQ(c.x.dims, (std::vector<int64_t>{2, 8, 14, 14}));
    EXPECT_EQ(c.x.strides, (std::vector<int64_t>{1568, 196, 14, 1}));
    EXPECT_EQ((std::vector<int64_t>{c.x.uid, c.w.uid, c.y.uid}), (std::vector<int64_t>{120, 119, 121}));
    EXPECT_EQ((std::vector<int64_t>{c.x.alignment, c.w.alignment, c.y.alignment}), (std::vector<int64_t>{32, 32, 32}));
    EXPECT_EQ(c.w.dims, (std::vector<int64_t>{8, 8, 3, 3}));
    EXPECT_EQ(c.w.strides, (std::vector<int64_t>{72, 9, 3, 1}));
    EXPECT_EQ(c.y.dims, (std::vector<int64_t>{2, 8, 14, 14}));
    EXPECT_EQ(c.compute_type, "CUDNN_DATA_FLOAT");
    EXPECT_EQ(c.mode, "CUDNN_CROSS_CORRELATION");
    EXPECT_EQ(c.pre_paddings, (std::vector<int64_t>{1, 1})) << "lowerPadA";
    EXPECT_EQ(c.post_paddings, (std::vector<int64_t>{1, 1})) << "upperPadA";
    EXPECT_EQ(c.strides, (std::vector<int64_t>{1, 1}));
    EXPECT_EQ(c.dilations, (std::vector<int64_t>{1, 1}));
    EXPECT_EQ((std::pair<double, double>{c.alpha, c.beta}), (std::pair<double, double>{1, 0}));
    EXPECT_EQ(c.Describe(),
              "CONVOLUTION_FORWARD HALF x[2,8,14,14] w[8,8,3,3] y[2,8,14,14] padding [1,1] stride [1,1] dilation [1,1]");
    EXPECT_FALSE(e.ran.notes_known) << "the engine's notes are NULL_PTR: the log does not give them";
  }
  // An entry that does not show a tensor of the operation describes no convolution.
  std::string partial = RecordedExecution();
  partial.replace(partial.find("wDesc:"), 6, "qDesc:");
  const std::vector<CudnnEvent> events = CudnnEventsIn(partial);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_FALSE(events[0].ran.convolution.has_value());
}

// Between two marks the child ran one convolution: an execution whose entry
// does not describe it (a constructed one) takes the one the nearest entry
// between the same marks describes, earlier or later; past the next mark it
// does not.
TEST(CudnnLog, AnEventTakesTheConvolutionDescribedBetweenTheSameMarks) {
  const std::vector<CudnnEvent> events =
      CudnnEventsIn(Mark(0, 100) + Execute(7, 1, 200, 210) + RecordedExecution() + Execute(9, 1, 300, 310) +
                    Mark(1, 400) + Execute(11, 1, 500, 510) + Mark(2, 600));
  ASSERT_EQ(events.size(), 7u);
  for (size_t i : {1, 2, 3}) {
    ASSERT_TRUE(events[i].ran.convolution.has_value()) << events[i].ran.Name();
    EXPECT_EQ(events[i].ran.convolution->x.dims, (std::vector<int64_t>{2, 8, 14, 14}));
  }
  EXPECT_EQ(*events[2].ran.engine, 28);
  EXPECT_FALSE(events[5].ran.convolution.has_value()) << "a mark ends what the entries before it describe";
}

// Where the log gives no notes, cuDNN is asked for the engine's, on the
// recorded convolution with the recorded knobs: where a device and the log's
// cuDNN (9.19) are here, cuDNN answers, and an engine index it has no engine
// for, or an entry that does not describe the convolution, is an error, not
// passed over; a log of another cuDNN is not evaluated. Without a device
// nothing is asked: not evaluated with the device's reason, never an error.
TEST(CudnnEngineNotes, TheRecordedPlansNotesComeFromCudnnWhereADeviceExists) {
  const std::vector<CudnnEvent> events = CudnnEventsIn(Recorded("cudnn-9-graph-fwd-f16.log"));
  ASSERT_FALSE(events.empty());
  const CudnnRan& r = events.front().ran;
  ASSERT_TRUE(r.convolution.has_value());
  const Availability a = CudnnEngineInstance().availability();
  CudnnRan absent = r, older = r, bare = r;
  absent.engine = 100000;
  absent.knobs.clear();
  older.version = "90000";
  bare.convolution.reset();
  const Result<EngineNotes> notes = AskCudnnEngineNotes(r);
  const Result<EngineNotes> none = AskCudnnEngineNotes(absent);
  const Result<EngineNotes> other = AskCudnnEngineNotes(older);
  const Result<EngineNotes> undescribed = AskCudnnEngineNotes(bare);
  if (!a.available) {
    for (const Result<EngineNotes>* asked : {&notes, &none, &other, &undescribed}) {
      ASSERT_FALSE(asked->ok());
      EXPECT_EQ(asked->status().code(), a.error ? StatusCode::kInternal : StatusCode::kUnavailable);
      EXPECT_NE(asked->status().message().find(a.reason), std::string::npos) << asked->status().message();
    }
    return;
  }
  ASSERT_FALSE(other.ok());
  EXPECT_EQ(other.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(other.status().message().find("the log was written by cuDNN 9.0.0"), std::string::npos);
  if (a.library_version != "9.19.0") {
    ASSERT_FALSE(notes.ok());
    EXPECT_EQ(notes.status().code(), StatusCode::kUnavailable) << notes.status().message();
    return;
  }
  ASSERT_TRUE(notes.ok()) << notes.status().message();
  EXPECT_EQ(notes->cudnn_version, "9.19.0");
  for (const Result<EngineNotes>* refused : {&none, &undescribed}) {
    ASSERT_FALSE(refused->ok());
    EXPECT_EQ(refused->status().code(), StatusCode::kInternal) << refused->status().message();
  }
  EXPECT_NE(none.status().message().find("engine 100000"), std::string::npos) << none.status().message();
  EXPECT_NE(undescribed.status().message().find("does not describe the convolution"), std::string::npos);
}

// PyTorch's engine reads the same log in-process (GpuPytorch cases): the
// engine it names without notes is asked of cuDNN before the tolerance
// check chooses its bound, and without a device the notes stay unknown,
// saying why.
TEST(CudnnEngineNotes, APyTorchCaseAsksCudnnForTheNotesItsLogDoesNotGive) {
  const std::vector<CudnnEvent> events = CudnnEventsIn(Recorded("cudnn-9-graph-fwd-f16.log"));
  ASSERT_FALSE(events.empty());
  KernelFacts k{.kernel_class = "cudnn", .cudnn_choice = "engine 28",
                .notes_unknown = "cuDNN's log of PyTorch's call gives no notes for engine 28",
                .cudnn_ran = events.front().ran};
  AskNotesTheLogDoesNotGive(k);
  const Availability a = CudnnEngineInstance().availability();
  if (a.available && a.library_version == "9.19.0") {
    EXPECT_EQ(k.notes_unknown, "");
  } else {
    EXPECT_TRUE(k.numerical_notes.empty());
    EXPECT_NE(k.notes_unknown.find("gives no notes for engine 28, and cuDNN could not be asked: "), std::string::npos)
        << k.notes_unknown;
    EXPECT_FALSE(ArithmeticOf(ComputeType::kF16, k.numerical_notes, k.notes_unknown).unbounded.empty())
        << "notes not known choose no bound";
  }
  KernelFacts known{.numerical_notes = {"TENSOR_CORE"}};
  AskNotesTheLogDoesNotGive(known);
  EXPECT_EQ(known.numerical_notes, std::vector<std::string>{"TENSOR_CORE"}) << "notes the log gave are kept";
}

struct ToolRun {
  int exit_code = -1;
  std::vector<nlohmann::json> lines;
};

ToolRun RunTool(const std::string& file) {
  ToolRun out;
  std::string command = "'";
  command += BC_CUDNN_LOG_TOOL;
  command += "' '";
  command += file;
  command += "' 2>/dev/null";
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return out;
  std::string text;
  char chunk[4096];
  size_t n = 0;
  while ((n = std::fread(chunk, 1, sizeof(chunk), pipe)) > 0) text.append(chunk, n);
  const int status = pclose(pipe);
  out.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  size_t at = 0;
  while (at < text.size()) {
    const size_t nl = text.find('\n', at);
    out.lines.push_back(nlohmann::json::parse(text.substr(at, nl - at)));
    at = nl == std::string::npos ? text.size() : nl + 1;
  }
  return out;
}

TEST(CudnnLogTool, PrintsEachEventOfARecordedLogAsJson) {
  const std::string path =
      (std::filesystem::path(BC_SOURCE_DIR) / "reports" / "tests" / "data" / "cudnn" / "cudnn-9-graph-fwd-f16.log")
          .string();
  const ToolRun run = RunTool(path);
  ASSERT_EQ(run.exit_code, 0);
  ASSERT_EQ(run.lines.size(), 10u);
  const std::vector<CudnnEvent> events = CudnnEventsIn(Recorded("cudnn-9-graph-fwd-f16.log"));
  // The notes the log does not give are cuDNN's where it can be asked here.
  const Availability a = CudnnEngineInstance().availability();
  const bool asked = a.available && a.library_version == "9.19.0";
  for (size_t i = 0; i < run.lines.size(); ++i) {
    const nlohmann::json& j = run.lines[i];
    EXPECT_EQ(j["kind"], "execution");
    EXPECT_EQ(j["function"], "cudnnBackendExecute");
    EXPECT_EQ(j["engine"], 28);
    EXPECT_EQ(j["knobs"], (nlohmann::json{{"TILE_SIZE", 4}, {"USE_TEX", 0}}));
    EXPECT_EQ(j["convolution"]["x"]["dims"], (nlohmann::json{2, 8, 14, 14}));
    EXPECT_EQ(j["convolution"]["described"], events[i].ran.convolution->Describe());
    EXPECT_EQ(j["notes_known"], asked);
    EXPECT_EQ(j["notes_error"], false) << j["notes_unknown"];
    if (asked) {
      EXPECT_EQ(j["notes_from"], "cuDNN 9.19.0");
      EXPECT_EQ(j["notes_unknown"], "");
    } else {
      EXPECT_EQ(j["notes_from"], "");
      EXPECT_EQ(j["numerical_notes"], nlohmann::json::array());
      EXPECT_EQ(j["name"], "eng28 TILE_SIZE=4 USE_TEX=0");
      const std::string why = j["notes_unknown"];
      EXPECT_NE(why.find("cuDNN's log gives no notes for engine 28, and cuDNN could not be asked: "),
                std::string::npos) << why;
      EXPECT_NE(why.find(a.reason), std::string::npos) << why;
    }
    EXPECT_EQ(j["status"], "CUDNN_STATUS_SUCCESS (0)");
    EXPECT_EQ(j["time_us"], events[i].time_us);
    EXPECT_EQ(j["next_call_us"], events[i].next_call_us);
    EXPECT_EQ(j["legacy_index"], -1);
  }
}

TEST(CudnnLogTool, PrintsMarksAndPlansAndRefusesAFileItCannotRead) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("bc-cudnn-log-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "search.log") << ConstructedSearch();
  const ToolRun run = RunTool((dir / "search.log").string());
  std::filesystem::remove_all(dir);
  ASSERT_EQ(run.exit_code, 0);
  ASSERT_EQ(run.lines.size(), 11u);
  EXPECT_EQ(run.lines[0], (nlohmann::json{{"kind", "mark"}, {"mark", 0}, {"time_us", run.lines[0]["time_us"]},
                                          {"next_call_us", run.lines[0]["next_call_us"]}, {"status", ""}}));
  EXPECT_EQ(run.lines[1]["kind"], "plan");
  EXPECT_EQ(run.lines[1]["engine"], 20);
  EXPECT_EQ(run.lines[3]["numerical_notes"], nlohmann::json::array({"NONDETERMINISTIC"}));
  EXPECT_EQ(run.lines[3]["notes_known"], true);
  EXPECT_EQ(run.lines[3]["notes_from"], "the log");
  // eng7's notes are not in the log, and its entry does not describe the
  // convolution: cuDNN cannot be asked, for want of a device if none is
  // here, otherwise an error (the log is not read as cuDNN wrote it).
  const Availability a = CudnnEngineInstance().availability();
  EXPECT_EQ(run.lines[2]["notes_known"], false);
  EXPECT_EQ(run.lines[2]["convolution"], nullptr);
  EXPECT_EQ(run.lines[2]["notes_error"], a.available);
  EXPECT_NE(run.lines[2]["notes_unknown"].get<std::string>().find("engine 7"), std::string::npos);
  EXPECT_EQ(run.lines[10]["mark"], 2);
  EXPECT_EQ(RunTool((dir / "absent.log").string()).exit_code, 1);
}

// A probe's comparison in its JSON is the Compare record the C++ suites
// write: the same samples, fields and serialisation.
TEST(ProbeRecords, ACompareFromAProbeIsTheCompareRecord) {
  const nlohmann::json j = {{"repro_a", "torch_backends.py p cudnn.benchmark=False"},
                            {"repro_b", "torch_backends.py p cudnn.benchmark=True"},
                            {"a", {{{"steady_ns", 1.5e6}, {"total_ns", 3e7}}, {{"steady_ns", 1.6e6}, {"chosen", "x"}}}},
                            {"b", {{{"steady_ns", 1.0e6}, {"workspace_bytes", 4096}}, {{"steady_ns", 1.1e6}}}},
                            {"versus_flags", {{"benchmark", true}}}};
  Result<CompareRecord> c = CompareFromJson(j);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->reps, 2);
  EXPECT_EQ(c->a[0].steady_ns, 1.5e6);
  EXPECT_EQ(c->a[0].total_ns, 30000000);
  EXPECT_EQ(c->a[1].chosen, "x");
  EXPECT_EQ(c->b[0].workspace_bytes, 4096);
  EXPECT_EQ(c->b[1].first_ns, 0) << "an absent field is 0";
  CaseRecord record = FactRecord("torch_backends.py p", Check("p", true, "measured"), "pytorch");
  record.compare = *c;
  const nlohmann::json written = ToJson(record);
  EXPECT_EQ(written["compare"]["a"]["steady_ns"], (nlohmann::json{1.5e6, 1.6e6}));
  EXPECT_EQ(written["compare"]["b"]["workspace_bytes"], (nlohmann::json{4096, 0}));
  EXPECT_EQ(written["compare"]["a"]["repro"], "torch_backends.py p cudnn.benchmark=False");
  EXPECT_EQ(written["compare"]["versus_flags"], (nlohmann::json{{"benchmark", true}}));
  EXPECT_EQ(written["compare"]["reps"], 2);
  EXPECT_FALSE(written["compare"].contains("others_cpu")) << "unknown unless the test measured it";

  for (const auto& [bad, why] : std::vector<std::pair<nlohmann::json, std::string>>{
           {nlohmann::json::array(), "compare must be an object"},
           {{{"repro_a", "a"}, {"a", j["a"]}, {"b", j["b"]}}, "compare.repro_b must be a string"},
           {{{"repro_a", "a"}, {"repro_b", "b"}, {"a", j["a"]}, {"b", nlohmann::json::array({j["b"][0]})}}, "1 of b"},
           {{{"repro_a", "a"}, {"repro_b", "b"}, {"a", nlohmann::json::array()}, {"b", j["b"]}}, "non-empty array"},
           {{{"repro_a", "a"}, {"repro_b", "b"}, {"a", {{{"steady_ns", "fast"}}}}, {"b", {{{"steady_ns", 1}}}}},
            "compare.a.steady_ns must be a number"},
           {{{"repro_a", "a"}, {"repro_b", "b"}, {"a", {{{"speed", 1}}}}, {"b", {{{"steady_ns", 1}}}}},
            "unknown sample field 'speed'"}}) {
    Result<CompareRecord> r = CompareFromJson(bad);
    ASSERT_FALSE(r.ok()) << bad.dump();
    EXPECT_NE(r.status().message().find(why), std::string::npos) << r.status().message();
  }
}

TEST(ProbeRecords, FreshProcessesFromAProbeAreCountedAsCrossProcessCountsThem) {
  const nlohmann::json j = {{"processes",
                             {{{"env", "E"}, {"chosen", "eng28"}, {"digest", "d1"}, {"threads", 4}},
                              {{"env", "E"}, {"chosen", "eng28"}, {"digest", "d1"}, {"implementation", "cuDNN 91900"}},
                              {{"env", "E"}, {"chosen", "eng7"}, {"digest", "d2"}}}}};
  Result<CrossProcessRecord> x = CrossProcessFromJson(j);
  ASSERT_TRUE(x.ok()) << x.status().ToString();
  EXPECT_EQ(x->processes.size(), 3u);
  EXPECT_EQ(x->choice_distribution, (std::map<std::string, int>{{"eng28", 2}, {"eng7", 1}}));
  EXPECT_EQ(x->digest_distribution, (std::map<std::string, int>{{"d1", 2}, {"d2", 1}}));
  EXPECT_FALSE(x->digests_stable_within_env);
  EXPECT_EQ(x->processes[0].threads, 4);
  CaseRecord record = FactRecord("torch_backends.py p", Check("p", true, "ran"), "pytorch");
  record.cross_process = *x;
  const nlohmann::json written = ToJson(record);
  EXPECT_EQ(written["distinct_choices"], 2);
  EXPECT_EQ(written["distinct_digests"], 2);
  EXPECT_EQ(written["processes"][1]["implementation"], "cuDNN 91900");

  EXPECT_TRUE(CrossProcessFromJson({{"processes", {{{"chosen", "a"}, {"digest", "d"}}}}})->digests_stable_within_env);
  EXPECT_EQ(CrossProcessFromJson({{"processes", {{{"chosen", "a"}}}}})->processes[0].env, "(inherited)");
  EXPECT_FALSE(CrossProcessFromJson({{"processes", nlohmann::json::array()}}).ok());
  EXPECT_FALSE(CrossProcessFromJson({{"processes", {{{"chosen", 3}}}}}).ok());
  EXPECT_FALSE(CrossProcessFromJson({{"processes", {{{"threads", "four"}}}}}).ok());
}

// A probe's interpreter and its workers time the comparison: the CPU time
// of the children this process waited for is not another process's load.
TEST(CpuTimes, OwnChildrenAreNotOthersWhenSetAside) {
  const CpuTimes a = ReadCpuTimes();
  ASSERT_GT(a.machine_total_s, 0) << "/proc/stat unreadable";
  const double children_a = ChildrenCpuSeconds();
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    const CpuTimes start = ReadCpuTimes();
    volatile double x = 1;
    while (ReadCpuTimes().self_s - start.self_s < 0.3) {
      for (int i = 0; i < 100000; ++i) x = x * 1.0000001 + 1e-9;
    }
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  const CpuTimes b = ReadCpuTimes();
  const double own = ChildrenCpuSeconds() - children_a;
  EXPECT_GE(own, 0.25) << "the child's CPU time is this process's children's";
  const double total = b.machine_total_s - a.machine_total_s;
  EXPECT_NEAR(OthersCpuShare(a, b, own) * total, std::max(0.0, OthersCpuShare(a, b) * total - own), 1e-6);
  EXPECT_LT(OthersCpuShare(a, b, own), OthersCpuShare(a, b) + 1e-12);
  EXPECT_EQ(OthersCpuShare(CpuTimes{}, b, own), -1);
}

}  // namespace
}  // namespace bc
