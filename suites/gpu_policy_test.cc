// The GPU engines' pure logic, tested without a GPU: cuDNN perf results and
// flags to a choice (through the shared AlgorithmSelector, fed with recorded
// perf-result data), the graph API's numerical-note filter, the pinned
// defaults, the math type, and cuBLAS's workspace-config check.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <set>

#include "backends/cublas/workspace_config.h"
#include "backends/cuda/status_map.h"
#include "selection/cudnn_policy.h"

#ifndef BC_SOURCE_DIR
#error "BC_SOURCE_DIR must name the source tree"
#endif

namespace bc::cudnn {
namespace {

std::vector<PerfRecord> Recorded(const std::string& name) {
  std::ifstream in(std::string(BC_SOURCE_DIR) + "/suites/data/" + name);
  const nlohmann::json j = nlohmann::json::parse(in);
  std::vector<PerfRecord> out;
  for (const auto& r : j.at("perf")) {
    out.push_back({r.at("algo"), r.at("ok"), r.at("time_ms"), r.at("memory"), r.at("deterministic")});
  }
  return out;
}

Result<Selection> Choose(const std::vector<PerfRecord>& perf, bool benchmark, bool deterministic, int limit = 10) {
  AlgorithmSelector selector;
  SelectorOptions o{.benchmark = benchmark, .deterministic = deterministic, .benchmark_limit = limit,
                    .pinned_deterministic = "cudnn:" + PinnedDefault(Direction::kBackwardWeights)};
  return selector.Select("key", "problem", CandidatesFromPerf(perf), o, FindTimer(perf));
}

TEST(CudnnPolicy, FailedResultsAreNotCandidates) {
  const std::vector<Candidate> c = CandidatesFromPerf(Recorded("cudnn_find_bwd_filter.json"));
  ASSERT_EQ(c.size(), 5u);
  EXPECT_EQ(c.front().algorithm.name, "algo_0");
  EXPECT_EQ(c.front().algorithm.determinism, Determinism::kNondeterministic);
  EXPECT_EQ(c[1].algorithm.workspace_bytes, 12845056);
  for (const Candidate& x : c) EXPECT_NE(x.algorithm.name, "fft");
}

TEST(CudnnPolicy, BenchmarkChoosesTheFastestFoundAlgorithm) {
  Result<Selection> s = Choose(Recorded("cudnn_find_bwd_filter.json"), /*benchmark=*/true, /*deterministic=*/false);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->chosen.algorithm.name, "algo_0") << "the fastest, although nondeterministic";
  EXPECT_DOUBLE_EQ(s->time_ns.at("cudnn:algo_0"), 0.41e6);
}

TEST(CudnnPolicy, BenchmarkWithDeterministicChoosesTheFastestDeterministic) {
  Result<Selection> s = Choose(Recorded("cudnn_find_bwd_filter.json"), true, true);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->chosen.algorithm.name, "winograd_nonfused");
  EXPECT_EQ(s->time_ns.count("cudnn:algo_0"), 0u);
  EXPECT_EQ(s->time_ns.count("cudnn:algo_3"), 0u);
}

TEST(CudnnPolicy, DeterministicWithoutBenchmarkPinsAlgo1) {
  Result<Selection> s = Choose(Recorded("cudnn_find_bwd_filter.json"), false, true);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->chosen.algorithm.name, "algo_1");
  EXPECT_TRUE(s->time_ns.empty());
}

TEST(CudnnPolicy, HeuristicTakesTheFirstValidResult) {
  Result<Selection> s = Choose(Recorded("cudnn_find_bwd_filter.json"), false, false);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->chosen.algorithm.name, "algo_0");
}

TEST(CudnnPolicy, BenchmarkLimitBoundsTheRecordsConsidered) {
  Result<Selection> s = Choose(Recorded("cudnn_find_bwd_filter.json"), true, true, /*limit=*/1);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->time_ns.size(), 1u);
}

TEST(CudnnPolicy, PinnedDefaultsAreThoseOfConvV7) {
  EXPECT_EQ(PinnedDefault(Direction::kForward), "implicit_precomp_gemm");
  EXPECT_EQ(PinnedDefault(Direction::kBackwardData), "algo_1");
  EXPECT_EQ(PinnedDefault(Direction::kBackwardWeights), "algo_1");
  EXPECT_EQ(AlgoIndex(Direction::kForward, "implicit_precomp_gemm"), 1);
  EXPECT_EQ(AlgoName(Direction::kBackwardWeights, 3), "algo_3");
  EXPECT_EQ(AlgoName(Direction::kBackwardData, 0), "algo_0");
  EXPECT_EQ(AlgoName(Direction::kForward, 99), "");
  EXPECT_TRUE(DocumentedNondeterministic(Direction::kBackwardWeights, "algo_0"));
  EXPECT_TRUE(DocumentedNondeterministic(Direction::kBackwardWeights, "algo_3"));
  EXPECT_TRUE(DocumentedNondeterministic(Direction::kBackwardData, "algo_0"));
  EXPECT_FALSE(DocumentedNondeterministic(Direction::kBackwardData, "algo_1"));
  EXPECT_FALSE(DocumentedNondeterministic(Direction::kForward, "implicit_gemm"));
}

TEST(CudnnPolicy, NumericalNoteFilter) {
  using N = NumericalNote;
  EXPECT_EQ(DropReason({N::kNondeterministic}, true, true, DataType::kF32), "NONDETERMINISTIC under deterministic");
  EXPECT_EQ(DropReason({N::kNondeterministic}, false, true, DataType::kF32), "");
  EXPECT_EQ(DropReason({N::kDownConvertInputs}, false, true, DataType::kF16), "DOWN_CONVERT_INPUTS");
  EXPECT_EQ(DropReason({N::kTensorCore}, false, false, DataType::kF32), "TENSOR_CORE for fp32 with allow_tf32 off");
  EXPECT_EQ(DropReason({N::kTensorCore}, false, true, DataType::kF32), "");
  EXPECT_EQ(DropReason({N::kTensorCore}, false, false, DataType::kF16), "") << "fp16 always may use tensor cores";
  EXPECT_EQ(DropReason({N::kWinograd, N::kFft}, true, false, DataType::kF32), "");
}

// Conv_v7.cpp sets each result's own math type on the descriptor: the same
// algorithm under two math types is two candidates, and each name parses
// back to its algorithm and math type.
TEST(CudnnPolicy, LegacyResultsAreNamedByAlgorithmAndMathType) {
  const Direction fwd = Direction::kForward;
  EXPECT_EQ(PerfName(fwd, 1, MathType::kDefault, DataType::kF32, true), "implicit_precomp_gemm");
  EXPECT_EQ(PerfName(fwd, 1, MathType::kTensorOp, DataType::kF32, true), "implicit_precomp_gemm@tensor_op");
  EXPECT_EQ(PerfName(fwd, 1, MathType::kFma, DataType::kF32, false), "implicit_precomp_gemm");
  EXPECT_EQ(PerfName(fwd, 1, MathType::kDefault, DataType::kF32, false), "implicit_precomp_gemm@default");
  EXPECT_EQ(PerfName(fwd, 1, MathType::kTensorOp, DataType::kF16, false), "implicit_precomp_gemm");
  for (MathType m : {MathType::kDefault, MathType::kTensorOp, MathType::kTensorOpAllowConversion, MathType::kFma}) {
    for (bool tf32 : {false, true}) {
      const std::string name = PerfName(Direction::kBackwardWeights, 3, m, DataType::kF32, tf32);
      const std::optional<ParsedPerfName> back = ParsePerfName(Direction::kBackwardWeights, name, DataType::kF32, tf32);
      ASSERT_TRUE(back) << name;
      EXPECT_EQ(back->algo, 3) << name;
      EXPECT_EQ(back->math, m) << name;
    }
  }
  EXPECT_FALSE(ParsePerfName(fwd, "implicit_precomp_gemm@default", DataType::kF32, true)) << "not canonical";
  EXPECT_FALSE(ParsePerfName(fwd, "implicit_precomp_gemm@bogus", DataType::kF32, true));
  EXPECT_FALSE(ParsePerfName(fwd, "cfg0_eng12", DataType::kF32, true));
  std::vector<PerfRecord> perf = {
      {PerfName(fwd, 1, MathType::kDefault, DataType::kF32, true), true, -1, 100, true},
      {PerfName(fwd, 1, MathType::kTensorOp, DataType::kF32, true), true, -1, 4096, true}};
  const std::vector<Candidate> c = CandidatesFromPerf(perf);
  ASSERT_EQ(c.size(), 2u);
  EXPECT_NE(c[0].algorithm.name, c[1].algorithm.name);
  EXPECT_EQ(c[1].algorithm.workspace_bytes, 4096) << "each result keeps its own memory";
}

// c10::utils::check_env: only "1" and "0" are values; anything else is
// ignored, so TORCH_CUDNN_V8_API_DISABLED=true leaves the graph API on.
TEST(CudnnPolicy, EnvironmentSwitchesAreReadAsPyTorchReadsThem) {
  EXPECT_EQ(CheckEnv("1"), std::optional<bool>(true));
  EXPECT_EQ(CheckEnv("0"), std::optional<bool>(false));
  for (const char* other : {"", "true", "TRUE", "yes", "2", " 1", "1 "}) EXPECT_FALSE(CheckEnv(other)) << other;
  EXPECT_FALSE(CheckEnv(nullptr));
  EXPECT_TRUE(GraphApiEnabled(nullptr));
  EXPECT_FALSE(GraphApiEnabled("1"));
  EXPECT_TRUE(GraphApiEnabled("0"));
  EXPECT_TRUE(GraphApiEnabled("true"));
  EXPECT_TRUE(GraphApiEnabled("yes"));
  EXPECT_FALSE(HeuristicModeB(nullptr));
  EXPECT_TRUE(HeuristicModeB("1"));
  EXPECT_FALSE(HeuristicModeB("0")) << "set but 0 is off";
  EXPECT_FALSE(HeuristicModeB("true"));
}

TEST(CudnnPolicy, BenchmarkModeAsksInstantHeuristics) {
  EXPECT_EQ(GraphHeuristicMode(false, false), HeurMode::kInstant);
  EXPECT_EQ(GraphHeuristicMode(false, true), HeurMode::kB);
  EXPECT_EQ(GraphHeuristicMode(true, true), HeurMode::kInstant) << "get_plans_from_find asks INSTANT";
  EXPECT_EQ(GraphHeuristicMode(true, false), HeurMode::kInstant);
}

TEST(CudnnPolicy, CacheAndBenchmarkLimitPerPath) {
  for (bool benchmark : {false, true}) {
    for (bool deterministic : {false, true}) {
      const SelectionRules graph = CudnnRules(Api::kGraph, benchmark, deterministic);
      EXPECT_TRUE(graph.cache_without_benchmark);
      EXPECT_TRUE(graph.benchmark_limit);
      const SelectionRules legacy = CudnnRules(Api::kLegacy, benchmark, deterministic);
      EXPECT_FALSE(legacy.benchmark_limit) << "cudnnFind*AlgorithmEx times every algorithm";
      EXPECT_EQ(legacy.cache_without_benchmark, !(deterministic && !benchmark))
          << "the pinned default skips the cache; everything else reads it";
      EXPECT_TRUE(legacy.store_without_benchmark) << "try_all inserts what ran, the pinned default too";
      EXPECT_TRUE(graph.retry_at_execution) << "try_configs, try_plans";
      EXPECT_TRUE(legacy.retry_at_execution) << "try_all";
    }
  }
  // Legacy benchmark mode under a benchmark_limit of 1 still chooses among
  // every result cudnnFind timed (the dispatcher passes limit 0).
  const std::vector<PerfRecord> perf = Recorded("cudnn_find_bwd_filter.json");
  AlgorithmSelector selector;
  Result<Selection> s = selector.Select("key", "problem", CandidatesFromPerf(perf),
                                        {.benchmark = true, .benchmark_limit = 0}, FindTimer(perf));
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->time_ns.size(), CandidatesFromPerf(perf).size());
}

TEST(CudnnPolicy, GraphConfigsAreHeuristicsThenTheFallbackListFiltered) {
  using N = NumericalNote;
  const std::vector<RawConfig> raw = {
      {false, 0, 12, {N::kTensorCore}}, {false, 1, 7, {N::kNondeterministic}}, {false, 2, 3, {}},
      {true, 0, 3, {}}, {true, 1, 40, {N::kDownConvertInputs}}, {true, 2, 41, {}}};
  const KeptConfigs fp32 = KeepConfigs(raw, /*deterministic=*/true, /*allow_tf32=*/false, DataType::kF32);
  EXPECT_EQ(fp32.kept, (std::vector<size_t>{2, 3, 5}))
      << "eng3 again from the fallback list stays: generate_engine_config concatenates the sources";
  EXPECT_EQ(fp32.dropped, (std::vector<std::string>{"cfg0_eng12: TENSOR_CORE for fp32 with allow_tf32 off",
                                                    "cfg1_eng7: NONDETERMINISTIC under deterministic",
                                                    "fb1_eng40: DOWN_CONVERT_INPUTS"}));
  const KeptConfigs tf32 = KeepConfigs(raw, false, true, DataType::kF32);
  EXPECT_EQ(tf32.kept, (std::vector<size_t>{0, 1, 2, 3, 5}));
  EXPECT_EQ(ConfigName(raw[5]), "fb2_eng41");
}

// The plan tags the errata rules match: cudnn-frontend's buildTag after the
// one-operation graph's tag.
TEST(CudnnPolicy, PlanTagsAreCudnnFrontends) {
  EXPECT_EQ(PlanTag(Direction::kForward, 28, {}), "ConvFwd_eng28");
  EXPECT_EQ(PlanTag(Direction::kBackwardData, 12, {{2, 3}, {3, 0}}), "ConvBwdData_eng12_k2=3_k3=0");
  EXPECT_EQ(PlanTag(Direction::kBackwardWeights, 0, {{19, -1}}), "ConvBwdFilter_eng0_k19=-1");
}

// CUDNN_ERRATA_JSON_FILE (a recorded file in cudnn-frontend's format):
// check_rule matches the operation and engine as a tag prefix, the knobs as
// substrings, and the compiled cuDNN version in [start, end); PyTorch passes
// no operation graph, so a shape rule blocks its engine at every shape.
TEST(CudnnPolicy, ErrataRulesBlockAsPytorchChecksThem) {
  const Result<std::vector<ErrataRule>> rules =
      LoadErrata((std::string(BC_SOURCE_DIR) + "/suites/data/cudnn_errata.json").c_str());
  ASSERT_TRUE(rules.ok()) << rules.status().ToString();
  ASSERT_EQ(rules->size(), 3u);
  EXPECT_EQ((*rules)[2].id, "rules[2]");
  const auto blocked = [&](const std::string& tag, uint64_t version) -> std::string {
    const ErrataRule* r = BlockingRule(*rules, tag, version);
    return r == nullptr ? "" : r->id;
  };
  EXPECT_EQ(blocked("ConvBwdData_eng12_k2=3_k3=0", 90500), "dgrad_eng12_splitk");
  EXPECT_EQ(blocked("ConvBwdData_eng12_k2=3_k3=0", 91000), "") << "the end version is excluded";
  EXPECT_EQ(blocked("ConvBwdData_eng12_k2=3_k3=0", 89999), "");
  EXPECT_EQ(blocked("ConvBwdData_eng12_k2=4_k3=0", 90500), "") << "another knob choice";
  EXPECT_EQ(blocked("ConvBwdData_eng120_k2=3", 90500), "") << "engine 120 is not engine 12";
  EXPECT_EQ(blocked("ConvFwd_eng28_k5=1", 91900), "fwd_eng28_shape") << "shapes are not consulted";
  EXPECT_EQ(blocked("ConvFwd_eng1", 91900), "rules[2]") << "a tag without knobs matches its prefix";
  EXPECT_EQ(blocked("ConvBwdFilter_eng1", 91900), "");

  using N = NumericalNote;
  std::vector<RawConfig> raw = {{false, 0, 28, {}, "ConvFwd_eng28_k5=1"}, {false, 1, 0, {}, "ConvFwd_eng0_k2=1"},
                                {true, 0, 1, {N::kNondeterministic}, "ConvFwd_eng1"}};
  const KeptConfigs kept = KeepConfigs(raw, true, false, DataType::kF32, *rules, 91900);
  EXPECT_EQ(kept.kept, (std::vector<size_t>{1}));
  EXPECT_EQ(kept.dropped, (std::vector<std::string>{"cfg0_eng28: blocked by errata rule fwd_eng28_shape (ConvFwd_eng28_k5=1)",
                                                    "fb0_eng1: NONDETERMINISTIC under deterministic"}))
      << "the notes filter comes first, as filterEngineConfigs runs before the plan is built";
}

TEST(CudnnPolicy, AnErrataFileIsReadOrRefusedWithItsField) {
  const auto invalid = [](const std::string& text) { return ParseErrata(text, "errata.json").status(); };
  EXPECT_EQ(invalid("{").message(), "errata.json: (document): not JSON (CUDNN_ERRATA_JSON_FILE)");
  EXPECT_EQ(invalid(R"({"rules": {}})").message(), "errata.json: rules: missing or not an array (CUDNN_ERRATA_JSON_FILE)");
  EXPECT_EQ(invalid(R"({"rules": [{"engine": 3}]})").message(),
            "errata.json: rules[0].operation: missing or not a string (CUDNN_ERRATA_JSON_FILE)");
  EXPECT_EQ(invalid(R"({"rules": [{"operation": "ConvFwd", "engine": 3, "knob": [2]}]})").code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(invalid(R"({"rules": [{"operation": "ConvFwd", "engine": "3"}]})").message(),
            "errata.json: rules[0].engine: missing or not an integer (CUDNN_ERRATA_JSON_FILE)");
  // Unset, or a file that does not open, is no rules (load_from_config).
  ASSERT_TRUE(LoadErrata(nullptr).ok());
  EXPECT_TRUE(LoadErrata(nullptr)->empty());
  ASSERT_TRUE(LoadErrata("/nonexistent/errata.json").ok());
  EXPECT_TRUE(LoadErrata("/nonexistent/errata.json")->empty());
}

// generate_and_filter_plans: a plan over the largest free block is left out
// before the workspace is sized; the workspace halves on out-of-memory and
// then leaves out the plans over it.
// time_sorted_plan's std::set: the second plan of a time is dropped, the
// first of each time kept; the search counts both against the limit
// (TimeUntilLimit's run returns true once a warm-up ran).
TEST(CudnnPolicy, APlanTimedEqualToAKeptOneIsDroppedAsTimeSortedPlanDropsIt) {
  std::set<float> kept;
  EXPECT_TRUE(KeepTimedPlan(kept, 0.25f));
  EXPECT_TRUE(KeepTimedPlan(kept, 0.5f));
  EXPECT_FALSE(KeepTimedPlan(kept, 0.25f)) << "equal to the first plan's time";
  EXPECT_TRUE(KeepTimedPlan(kept, 0.2500001f)) << "a float apart is another time";
  EXPECT_EQ(kept.size(), 3u);
  // In the search: warm-ups that run count against benchmark_limit whatever
  // their time; a failed warm-up neither counts nor stops the search.
  const std::vector<float> times = {0.25f, 0.25f, -1.0f, 0.5f, 0.1f};
  std::set<float> seen;
  std::vector<size_t> timed;
  const size_t tried = TimeUntilLimit(times.size(), 3, [&](size_t i) {
    if (times[i] < 0) return false;
    if (KeepTimedPlan(seen, times[i])) timed.push_back(i);
    return true;
  });
  EXPECT_EQ(tried, 4u) << "plans 0, 1 and 3 ran; 2 failed its warm-up";
  EXPECT_EQ(timed, (std::vector<size_t>{0, 3})) << "plan 1 tied plan 0 and is gone";
}

// Conv_v8's getAlignment: the largest power of two up to 32 dividing the
// address; an allocation's start (256 bytes at least) gives 32.
TEST(CudnnPolicy, TensorAlignmentIsConvV8sUpTo32Bytes) {
  EXPECT_EQ(TensorByteAlignment(kDeviceAllocationAlignment), 32);
  EXPECT_EQ(TensorByteAlignment(0x7f0000000200), 32);
  EXPECT_EQ(TensorByteAlignment(0x7f0000000210), 16);
  EXPECT_EQ(TensorByteAlignment(0x7f0000000208), 8);
  EXPECT_EQ(TensorByteAlignment(0x7f0000000202), 2);
  EXPECT_EQ(TensorByteAlignment(0x7f0000000201), 1);
}

TEST(CudnnPolicy, TheSearchWorkspaceFitsAsPytorchFitsIt) {
  const std::vector<int64_t> needs = {0, 4096, 1 << 20, 64 << 20, 8 << 20};
  std::vector<int64_t> asked;
  const auto allocate_up_to = [&](int64_t limit) {
    return [&asked, limit](int64_t bytes) {
      asked.push_back(bytes);
      return bytes <= limit;
    };
  };
  Result<WorkspaceFit> fit = FitSearchWorkspace(needs, /*largest_free=*/int64_t{1} << 30, allocate_up_to(int64_t{1} << 30));
  ASSERT_TRUE(fit.ok());
  EXPECT_EQ(fit->bytes, 64 << 20);
  EXPECT_EQ(fit->kept, (std::vector<size_t>{0, 1, 2, 3, 4}));

  asked.clear();
  fit = FitSearchWorkspace(needs, /*largest_free=*/32 << 20, allocate_up_to(int64_t{1} << 30));
  ASSERT_TRUE(fit.ok());
  EXPECT_EQ(fit->bytes, 8 << 20) << "the 64 MiB plan is over the free block, and the workspace is sized without it";
  EXPECT_EQ(fit->kept, (std::vector<size_t>{0, 1, 2, 4}));
  EXPECT_EQ(asked, (std::vector<int64_t>{8 << 20}));

  asked.clear();
  fit = FitSearchWorkspace(needs, int64_t{1} << 30, allocate_up_to(3 << 20));
  ASSERT_TRUE(fit.ok());
  EXPECT_EQ(asked, (std::vector<int64_t>{64 << 20, 32 << 20, 16 << 20, 8 << 20, 4 << 20, 2 << 20}));
  EXPECT_EQ(fit->bytes, 2 << 20);
  EXPECT_EQ(fit->kept, (std::vector<size_t>{0, 1, 2})) << "halved: the plans over 2 MiB are left out";

  fit = FitSearchWorkspace(needs, int64_t{1} << 30, [](int64_t) { return false; });
  ASSERT_TRUE(fit.ok());
  EXPECT_EQ(fit->bytes, 0);
  EXPECT_EQ(fit->kept, (std::vector<size_t>{0})) << "nothing allocates: only a plan without workspace is left";

  const Result<WorkspaceFit> huge = FitSearchWorkspace({int64_t{1} << 41}, int64_t{1} << 42, [](int64_t) { return true; });
  ASSERT_FALSE(huge.ok());
  EXPECT_EQ(huge.status().source(), FailureSource::kOutOfMemory) << "PyTorch's OutOfMemoryError";
}

// try_configs: plans are built in order until one builds; benchmark mode
// builds nothing while listing.
TEST(CudnnPolicy, GraphCandidatesBuildOnlyUntilOnePlanBuilds) {
  const std::vector<std::pair<std::string, bool>> configs = {
      {"cfg0_eng1", true}, {"cfg1_eng2", false}, {"cfg2_eng3", true}, {"fb0_eng4", true}};
  std::vector<size_t> built;
  const auto build = [&](size_t i) -> Result<int64_t> {
    built.push_back(i);
    if (i == 0) return Status(StatusCode::kUnimplemented, "cudnnBackendFinalize returned 3000");
    return static_cast<int64_t>(1000 * i);
  };
  Result<std::vector<Algorithm>> off = GraphCandidates(configs, /*benchmark=*/false, build);
  ASSERT_TRUE(off.ok()) << off.status().ToString();
  EXPECT_EQ(built, (std::vector<size_t>{0, 1})) << "nothing after the first plan that builds";
  ASSERT_EQ(off->size(), 3u);
  EXPECT_EQ(off->front().name, "cfg1_eng2");
  EXPECT_EQ(off->front().workspace_bytes, 1000);
  EXPECT_EQ(off->front().determinism, Determinism::kNondeterministic);
  EXPECT_EQ((*off)[1].workspace_bytes, 0) << "unbuilt";
  built.clear();
  Result<std::vector<Algorithm>> on = GraphCandidates(configs, /*benchmark=*/true, build);
  ASSERT_TRUE(on.ok());
  EXPECT_EQ(on->size(), 4u);
  EXPECT_TRUE(built.empty());
  Result<std::vector<Algorithm>> none =
      GraphCandidates(configs, false, [](size_t) -> Result<int64_t> { return Status(StatusCode::kInternal, "bad"); });
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.status().code(), StatusCode::kInternal) << "a failure that is not NOT_SUPPORTED stays an error";
}

TEST(CudnnPolicy, MathTypeFollowsDtypeAndTf32) {
  EXPECT_EQ(CudnnMathType(DataType::kF32, true), MathType::kDefault);
  EXPECT_EQ(CudnnMathType(DataType::kF32, false), MathType::kFma);
  EXPECT_EQ(CudnnMathType(DataType::kF16, false), MathType::kTensorOp);
}

// Conv_v7's search asks Get_v7 and Find for every algorithm of the
// direction but backward-filter's WINOGRAD (COUNT - 1), and sizes its
// workspace over the same list.
TEST(CudnnPolicy, TheLegacySearchAsksForPytorchsAlgorithmCounts) {
  EXPECT_EQ(SearchedAlgos(Direction::kForward).size(), 8u);       // CUDNN_CONVOLUTION_FWD_ALGO_COUNT
  EXPECT_EQ(SearchedAlgos(Direction::kBackwardData).size(), 6u);  // CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT
  const std::vector<int> filter = SearchedAlgos(Direction::kBackwardWeights);
  EXPECT_EQ(filter.size(), 6u) << "CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT - 1";
  for (int algo : filter) EXPECT_NE(AlgoName(Direction::kBackwardWeights, algo), "winograd");
  EXPECT_EQ(filter.back(), AlgoIndex(Direction::kBackwardWeights, "fft_tiling"));
}

TEST(CudnnPolicy, TheGraphPlanCacheLimitIsReadAsPytorchReadsIt) {
  EXPECT_EQ(V8CacheLimit(nullptr), 10000);
  EXPECT_EQ(V8CacheLimit(""), 10000);
  EXPECT_EQ(V8CacheLimit("256"), 256);
  EXPECT_EQ(V8CacheLimit("0"), 0) << "unbounded";
  EXPECT_EQ(V8CacheLimit("-1"), -1) << "no caching";
  EXPECT_EQ(V8CacheLimit("lots"), 10000);
  // std::stoi, as Conv_v8.cpp reads it: the leading number, spaces and sign
  // allowed, the rest ignored; out of int's range, the default.
  EXPECT_EQ(V8CacheLimit("10abc"), 10);
  EXPECT_EQ(V8CacheLimit(" 12"), 12);
  EXPECT_EQ(V8CacheLimit("+7"), 7);
  EXPECT_EQ(V8CacheLimit("-2x"), -2);
  EXPECT_EQ(V8CacheLimit("0x10"), 0) << "base 10: the 0, then x ignored";
  EXPECT_EQ(V8CacheLimit("99999999999"), 10000);
  EXPECT_EQ(V8CacheLimit("-"), 10000);
  EXPECT_EQ(CudnnRules(Api::kGraph, true, false, 256).cache_limit, 256);
  EXPECT_EQ(CudnnRules(Api::kLegacy, true, false, 256).cache_limit, 0) << "the legacy cache is unbounded";
}

// The legacy API reports no numerical notes; its algorithm families imply
// the ones the error bound must know (every direction's FFT and Winograd).
TEST(CudnnPolicy, LegacyAlgorithmsImplyTheirNumericalNotes) {
  for (Direction d : {Direction::kForward, Direction::kBackwardData, Direction::kBackwardWeights}) {
    EXPECT_TRUE(LegacyNotes(d, AlgoIndex(d, "algo_1")).empty());
    EXPECT_EQ(LegacyNotes(d, AlgoIndex(d, "fft")), std::vector<std::string>{"FFT"});
    EXPECT_EQ(LegacyNotes(d, AlgoIndex(d, "fft_tiling")), std::vector<std::string>{"FFT"});
    EXPECT_EQ(LegacyNotes(d, AlgoIndex(d, "winograd")), std::vector<std::string>{"WINOGRAD"});
    EXPECT_EQ(LegacyNotes(d, AlgoIndex(d, "winograd_nonfused")), std::vector<std::string>{"WINOGRAD"});
  }
}

}  // namespace
}  // namespace bc::cudnn

namespace bc::cublas {
namespace {

TEST(CublasConfig, EveryGemmSetsTheMathModeOfItsFlag) {
  EXPECT_EQ(GemmMathMode(true), GemmMath::kTf32TensorOp);
  EXPECT_EQ(GemmMathMode(false), GemmMath::kDefault);
}

TEST(CublasConfig, DeterministicAlgorithmsNeedAWorkspaceConfig) {
  BackendFlags f;
  EXPECT_FALSE(CheckWorkspaceConfig(f, std::nullopt, 13000).error) << "off: no check";
  f.UseDeterministicAlgorithms(true);
  const ConfigCheck unset = CheckWorkspaceConfig(f, std::nullopt, 13000);
  EXPECT_TRUE(unset.error);
  EXPECT_NE(unset.message.find("CUBLAS_WORKSPACE_CONFIG=:4096:8 or CUBLAS_WORKSPACE_CONFIG=:16:8"), std::string::npos);
  EXPECT_TRUE(CheckWorkspaceConfig(f, ":2:2", 13000).error);
  EXPECT_FALSE(CheckWorkspaceConfig(f, ":4096:8", 13000).error);
  EXPECT_TRUE(CheckWorkspaceConfig(f, ":4096:8", 13000).message.empty());
  EXPECT_FALSE(CheckWorkspaceConfig(f, ":16:8", 13000).error);
  EXPECT_FALSE(CheckWorkspaceConfig(f, std::nullopt, 10010).error) << "before CUDA 10.2 there is no such rule";
  f.UseDeterministicAlgorithms(true, /*warn_only=*/true);
  const ConfigCheck warned = CheckWorkspaceConfig(f, std::nullopt, 13000);
  EXPECT_FALSE(warned.error);
  EXPECT_FALSE(warned.message.empty());
}

}  // namespace
}  // namespace bc::cublas

namespace bc::cuda {
namespace {

// Only "no such device or library here" is UNAVAILABLE (a skip); a problem
// cuDNN or cuBLAS does not implement is UNIMPLEMENTED (also a skip); every
// other failure is INTERNAL, and fails its case with the library's message.
TEST(StatusMap, CudaRuntimeErrors) {
  for (int e : {3, 34, 35, 36, 100, 802, 803, 804}) EXPECT_EQ(CudaErrorCode(e), StatusCode::kUnavailable) << e;
  // invalid value, out of memory, invalid device function, no kernel image,
  // illegal address, launch failure, devices unavailable (busy), unknown
  for (int e : {1, 2, 46, 98, 209, 700, 719, 999}) EXPECT_EQ(CudaErrorCode(e), StatusCode::kInternal) << e;
  // Only a failed allocation is an out-of-memory, which PyTorch's
  // convolutions move past; an illegal address or a launch failure is not.
  EXPECT_EQ(CudaErrorSource(2), FailureSource::kOutOfMemory);
  for (int e : {1, 46, 700, 719, 999}) EXPECT_EQ(CudaErrorSource(e), FailureSource::kOther) << e;
}

TEST(StatusMap, CudnnStatuses) {
  for (int s : {1001, 1002, 1008, 3005, 3006, 3007, 3008, 3009}) EXPECT_EQ(CudnnStatusCode(s), StatusCode::kUnavailable) << s;
  for (int s : {3000, 3001, 3002, 3003, 3004, 3010, 3011}) EXPECT_EQ(CudnnStatusCode(s), StatusCode::kUnimplemented) << s;
  // bad parameters, the runtime's own failures, internal errors, failed executions
  for (int s : {1003, 1004, 1007, 2000, 2002, 2008, 4000, 4004, 5000, 5003}) {
    EXPECT_EQ(CudnnStatusCode(s), StatusCode::kInternal) << s;
  }
}

TEST(StatusMap, CublasStatuses) {
  EXPECT_EQ(CublasStatusCode(1), StatusCode::kUnavailable);   // NOT_INITIALIZED
  EXPECT_EQ(CublasStatusCode(8), StatusCode::kUnavailable);   // ARCH_MISMATCH
  EXPECT_EQ(CublasStatusCode(15), StatusCode::kUnimplemented);  // NOT_SUPPORTED
  for (int s : {3, 7, 11, 13, 14, 16}) EXPECT_EQ(CublasStatusCode(s), StatusCode::kInternal) << s;
}

}  // namespace
}  // namespace bc::cuda
