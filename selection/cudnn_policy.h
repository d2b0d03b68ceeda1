// cuDNN selection policy that needs no GPU: PyTorch's rules for turning what
// cuDNN reports into candidates and choices, kept apart from the CUDA code so
// CI tests them with recorded data.
//
// - PerfRecord is one cudnnConvolution*AlgoPerf_t in backendcheck's terms.
//   CandidatesFromPerf keeps the successful results in cuDNN's order, each
//   with the determinism cuDNN reports (getValidAlgorithms in Conv_v7.cpp
//   leaves the deterministic filter to the selector). FindTimer answers the
//   selector's timing requests with cudnnFind*AlgorithmEx's own measurements,
//   so the search is cuDNN's and the choice is the shared AlgorithmSelector's.
// - PinnedDefault: the algorithm PyTorch uses per direction when
//   deterministic is on and benchmark off.
// - KeepEngineConfig: the cuDNN graph API path's filter on an engine
//   config's numerical notes (Conv_v8.cpp): drop NONDETERMINISTIC when
//   deterministic, DOWN_CONVERT_INPUTS always, TENSOR_CORE for fp32 without
//   TF32.
// - CudnnMathType: PyTorch's math type per data type and allow_tf32.
//   PerfName/ParsePerfName: a legacy result's name carries its math type
//   when it is not the descriptor's (cuDNN may list one algorithm twice, with
//   two math types; Conv_v7.cpp sets the result's mathType on the descriptor).
// - CheckEnv and the switches PyTorch reads with it (c10::utils::check_env:
//   only "1" and "0" count; any other value is ignored with a warning).
// - Rules: how the cache and cudnn.benchmark_limit apply on each path, and
//   which heuristics mode the graph path asks for.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "harness/problem.h"
#include "selection/selector.h"

namespace bc::cudnn {

enum class MathType { kDefault, kTensorOp, kTensorOpAllowConversion, kFma };  // cudnnMathType_t
const char* MathTypeName(MathType m);
MathType CudnnMathType(DataType dtype, bool allow_tf32);

struct PerfRecord {
  std::string algo;  // "implicit_precomp_gemm", "algo_0@tensor_op", ... (PerfName)
  bool ok = true;    // status == CUDNN_STATUS_SUCCESS
  double time_ms = -1;  // cudnnFind*AlgorithmEx only
  int64_t memory = 0;
  bool deterministic = true;
};

// The name of cuDNN algorithm `index` of a direction, or "" when out of range.
std::string AlgoName(Direction d, int index);
// The index of a name, or -1.
int AlgoIndex(Direction d, const std::string& name);
std::string PinnedDefault(Direction d);
// The algorithms Conv_v7's search asks about, in enum order: every one of the
// direction, less backward-filter's WINOGRAD ("not implemented"; PyTorch
// asks for CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT - 1 results). Their count
// is what Get_v7 and Find are asked for; the search workspace is the largest
// that one of them needs (getMaxWorkspaceSize).
std::vector<int> SearchedAlgos(Direction d);
// The numerical notes the legacy API's algorithm names imply (it reports
// none itself), in the graph API's terms: FFT and WINOGRAD for those
// families, nothing for the GEMM and direct ones.
std::vector<std::string> LegacyNotes(Direction d, int index);
// cuDNN's documented nondeterministic algorithms (developer guide,
// "Reproducibility"): BWD_FILTER_ALGO_0, BWD_FILTER_ALGO_3, BWD_DATA_ALGO_0.
bool DocumentedNondeterministic(Direction d, const std::string& name);

std::vector<Candidate> CandidatesFromPerf(const std::vector<PerfRecord>& perf);
// Times in nanoseconds from FindEx records; a candidate without one is an error.
TimeCandidate FindTimer(const std::vector<PerfRecord>& perf);

enum class NumericalNote { kTensorCore, kDownConvertInputs, kReducedPrecisionReduction, kFft, kNondeterministic,
                           kWinograd, kStrictNanPropagation };
const char* NoteName(NumericalNote n);
// Empty when kept; otherwise why the config is dropped.
std::string DropReason(const std::set<NumericalNote>& notes, bool deterministic, bool allow_tf32, DataType dtype);

// A legacy perf result's candidate name: AlgoName, plus "@tensor_op",
// "@fma" or "@default" when `math` is not CudnnMathType(dtype, allow_tf32).
std::string PerfName(Direction d, int algo, MathType math, DataType dtype, bool allow_tf32);
struct ParsedPerfName {
  int algo = -1;
  MathType math = MathType::kDefault;
};
// The algorithm and math type a PerfName names; nullopt for an unknown name.
std::optional<ParsedPerfName> ParsePerfName(Direction d, const std::string& name, DataType dtype, bool allow_tf32);

// c10::utils::check_env on a variable's value (nullptr: unset).
std::optional<bool> CheckEnv(const char* value);
// Conv_v8.cpp's switches, from the variables' values.
bool GraphApiEnabled(const char* torch_cudnn_v8_api_disabled);
bool HeuristicModeB(const char* torch_cudnn_use_heuristic_mode_b);

enum class Api { kLegacy, kGraph };
enum class HeurMode { kInstant, kB };
// The graph path's heuristics: mode B only without benchmark and when asked
// for (get_configs_from_heuristics); benchmark mode always asks INSTANT
// (get_plans_from_find) and times the fallback list's configs too.
HeurMode GraphHeuristicMode(bool benchmark, bool mode_b);

// Conv_v8.cpp looks its cache up, and stores what ran, whatever benchmark
// says; benchmark_limit bounds its timed plans (0: all). Conv_v7.cpp does the
// same except with deterministic on and benchmark off (the pinned default:
// no lookup, but try_all inserts what ran, which a later benchmark call with
// the same key reuses), and never applies benchmark_limit (cudnnFind*AlgorithmEx
// times every algorithm; PyTorch documents the limit for the v8 API only).
// TORCH_CUDNN_V8_API_LRU_CACHE_LIMIT as PyTorch reads it (std::stoi): unset,
// without leading digits or outside int, 10000; digits then anything, the
// digits ("10abc" is 10); 0 unbounded; negative no caching.
inline constexpr int kV8CacheLimitDefault = 10000;
int V8CacheLimit(const char* torch_cudnn_v8_api_lru_cache_limit);
// Conv_v8's plan cache is an LRU of `lru_limit` entries (V8CacheLimit); the
// legacy cache is unbounded. Both paths move past a choice that fails at
// execution (retry_at_execution).
SelectionRules CudnnRules(Api api, bool benchmark, bool deterministic, int lru_limit = kV8CacheLimitDefault);

// An execution plan's tag as cudnn-frontend builds it for PyTorch's
// one-operation graphs: the operation graph's tag ("ConvFwd_",
// "ConvBwdData_", "ConvBwdFilter_"), "eng" and the engine's global index,
// then "_kTYPE=VALUE" per knob choice in the config's order
// (ExecutionPlan_v8::buildTag). The errata rules match against it.
std::string PlanTag(Direction d, int64_t engine, const std::vector<std::pair<int64_t, int64_t>>& knobs);

// One rule of a CUDNN_ERRATA_JSON_FILE ({"rules": [...]}).
struct ErrataRule {
  std::string id;         // rule_id, or "rules[i]" when it has none
  std::string operation;  // "ConvFwd", "ConvBwdData", "ConvBwdFilter"
  int64_t engine = -1;
  uint64_t cudnn_version_start = 0;
  uint64_t cudnn_version_end = UINT64_MAX;  // exclusive
  std::vector<std::string> knobs;           // each must occur in the tag
};
// The rules of an errata file's text; a malformed file or rule is an
// INVALID_ARGUMENT naming `file` and the field (PyTorch's parse throws).
Result<std::vector<ErrataRule>> ParseErrata(const std::string& text, const std::string& file);
// CUDNN_ERRATA_JSON_FILE as Conv_v8's plan_errata_exception loads it, once
// per process (cudnn_frontend::load_from_config): unset, or a file that does
// not open, is no rules.
Result<std::vector<ErrataRule>> LoadErrata(const char* cudnn_errata_json_file);
// The rule that blocks a plan's `tag` under cuDNN `version` (CUDNN_VERSION
// as compiled), or nullptr: cudnn-frontend's check_rule without an operation
// graph, as PyTorch calls it, so a rule's input_shape and filter_shape are
// not consulted and such a rule blocks its engine at every shape.
const ErrataRule* BlockingRule(const std::vector<ErrataRule>& rules, const std::string& tag, uint64_t version);

// Conv_v8's generate_and_filter_plans, on the plans' workspace sizes: plans
// needing more than `largest_free` (the caching allocator's largest block,
// at least the device's free memory) are left out; the search workspace is
// the largest need left, halved while `allocate` fails (the plans needing
// more than what allocated are then left out too). A workspace of 1 TiB or
// more is PyTorch's out-of-memory ("Not enough memory for workspace!").
struct WorkspaceFit {
  int64_t bytes = 0;
  std::vector<size_t> kept;  // indices of the plans left, in order
};
Result<WorkspaceFit> FitSearchWorkspace(const std::vector<int64_t>& plan_bytes, int64_t largest_free,
                                        const std::function<bool(int64_t)>& allocate);

// cudnn-frontend's time_sorted_plan keeps the plans it timed in a std::set
// ordered by their time (float milliseconds, as cudaEventElapsedTime gives
// them): a plan timed equal to one already kept is dropped, so it is
// neither chosen nor tried after the choice fails. Records `ms` in `kept`
// and returns whether no kept plan had that time.
bool KeepTimedPlan(std::set<float>& kept, float ms);

// Conv_v8's getAlignment: the largest power of two, up to 32, dividing a
// tensor's address in bytes. The tensor descriptors declare it, and the plan
// cache's key holds it.
int64_t TensorByteAlignment(uintptr_t address);
// cudaMalloc's allocations start on 256-byte boundaries (PyTorch's caching
// allocator's on 512): a tensor at the start of one is 32-byte aligned.
inline constexpr uintptr_t kDeviceAllocationAlignment = 256;

// One engine config as heuristics or the fallback list returned it.
struct RawConfig {
  bool fallback = false;  // from CUDNN_HEUR_MODE_FALLBACK
  int64_t rank = 0;       // its position in that list
  int64_t engine = -1;    // CUDNN_ATTR_ENGINE_GLOBAL_INDEX
  std::set<NumericalNote> notes;
  std::string tag;  // PlanTag, for the errata rules
};
// "cfgK_engG" (heuristics) or "fbK_engG" (fallback list).
std::string ConfigName(const RawConfig& c);
struct KeptConfigs {
  std::vector<size_t> kept;          // indices into the raw list, in order
  std::vector<std::string> dropped;  // "NAME: why"
};
// PyTorch's two generator sources, heuristics then the fallback list (`raw`
// in that order), each filtered on its notes (DropReason, PyTorch's
// filterEngineConfigs) and concatenated as cudnn-frontend's
// EngineConfigGenerator::generate_engine_config does: a fallback config
// whose engine heuristics already named stays (nothing deduplicates them).
// A config an errata rule blocks is dropped too (`errata` under cuDNN
// `version`): PyTorch never runs its plan.
KeptConfigs KeepConfigs(const std::vector<RawConfig>& raw, bool deterministic, bool allow_tf32, DataType dtype,
                        const std::vector<ErrataRule>& errata = {}, uint64_t version = 0);

// The graph path's candidates from its kept configs (name, deterministic),
// in order. Benchmark off (try_configs): plans are built in order until one
// builds (`build` returns its workspace size or why it failed); the configs
// before it are not candidates, the ones after it are listed unbuilt
// (workspace 0); none building is the last failure. Benchmark on: every
// config, unbuilt (the search builds and times them).
Result<std::vector<Algorithm>> GraphCandidates(const std::vector<std::pair<std::string, bool>>& configs,
                                               bool benchmark, const std::function<Result<int64_t>(size_t)>& build);

}  // namespace bc::cudnn
