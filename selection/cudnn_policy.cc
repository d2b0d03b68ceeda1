#include "selection/cudnn_policy.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

namespace bc::cudnn {
namespace {

// cudnnConvolution{Fwd,BwdData,BwdFilter}Algo_t, in enum order.
constexpr std::array<const char*, 8> kFwd = {"implicit_gemm", "implicit_precomp_gemm", "gemm", "direct",
                                             "fft", "fft_tiling", "winograd", "winograd_nonfused"};
constexpr std::array<const char*, 6> kBwdData = {"algo_0", "algo_1", "fft", "fft_tiling", "winograd",
                                                 "winograd_nonfused"};
constexpr std::array<const char*, 7> kBwdFilter = {"algo_0", "algo_1", "fft", "algo_3", "winograd",
                                                   "winograd_nonfused", "fft_tiling"};

template <size_t N>
std::string At(const std::array<const char*, N>& names, int i) {
  return i >= 0 && i < static_cast<int>(N) ? names[i] : "";
}

template <size_t N>
int Find(const std::array<const char*, N>& names, const std::string& name) {
  for (size_t i = 0; i < N; ++i) {
    if (name == names[i]) return static_cast<int>(i);
  }
  return -1;
}

}  // namespace

std::string AlgoName(Direction d, int index) {
  switch (d) {
    case Direction::kForward: return At(kFwd, index);
    case Direction::kBackwardData: return At(kBwdData, index);
    case Direction::kBackwardWeights: return At(kBwdFilter, index);
  }
  return "";
}

int AlgoIndex(Direction d, const std::string& name) {
  switch (d) {
    case Direction::kForward: return Find(kFwd, name);
    case Direction::kBackwardData: return Find(kBwdData, name);
    case Direction::kBackwardWeights: return Find(kBwdFilter, name);
  }
  return -1;
}

// Conv_v7.cpp: algorithm_search<...>::DEFAULT_ALGO.
std::string PinnedDefault(Direction d) {
  return d == Direction::kForward ? "implicit_precomp_gemm" : "algo_1";
}

bool DocumentedNondeterministic(Direction d, const std::string& name) {
  if (d == Direction::kBackwardWeights) return name == "algo_0" || name == "algo_3";
  if (d == Direction::kBackwardData) return name == "algo_0";
  return false;
}

std::vector<Candidate> CandidatesFromPerf(const std::vector<PerfRecord>& perf) {
  std::vector<Candidate> out;
  for (const PerfRecord& r : perf) {
    if (!r.ok || r.algo.empty()) continue;
    out.push_back({"cudnn",
                   {r.algo, r.deterministic ? Determinism::kDeterministic : Determinism::kNondeterministic, r.memory}});
  }
  return out;
}

TimeCandidate FindTimer(const std::vector<PerfRecord>& perf) {
  return [perf](const Candidate& c) -> Result<double> {
    for (const PerfRecord& r : perf) {
      if (r.algo == c.algorithm.name && r.ok && r.time_ms >= 0) return r.time_ms * 1e6;
    }
    return Status(StatusCode::kInternal, "cudnnFind reported no time for " + c.Id());
  };
}

std::vector<int> SearchedAlgos(Direction d) {
  std::vector<int> out;
  for (int i = 0; !AlgoName(d, i).empty(); ++i) {
    if (d == Direction::kBackwardWeights && AlgoName(d, i) == "winograd") continue;
    out.push_back(i);
  }
  return out;
}

std::vector<std::string> LegacyNotes(Direction d, int index) {
  const std::string name = AlgoName(d, index);
  if (name.rfind("fft", 0) == 0) return {"FFT"};
  if (name.rfind("winograd", 0) == 0) return {"WINOGRAD"};
  return {};
}

const char* NoteName(NumericalNote n) {
  switch (n) {
    case NumericalNote::kTensorCore: return "TENSOR_CORE";
    case NumericalNote::kDownConvertInputs: return "DOWN_CONVERT_INPUTS";
    case NumericalNote::kReducedPrecisionReduction: return "REDUCED_PRECISION_REDUCTION";
    case NumericalNote::kFft: return "FFT";
    case NumericalNote::kNondeterministic: return "NONDETERMINISTIC";
    case NumericalNote::kWinograd: return "WINOGRAD";
    case NumericalNote::kStrictNanPropagation: return "STRICT_NAN_PROP";
  }
  return "?";
}

std::string DropReason(const std::set<NumericalNote>& notes, bool deterministic, bool allow_tf32, DataType dtype) {
  if (deterministic && notes.count(NumericalNote::kNondeterministic)) return "NONDETERMINISTIC under deterministic";
  if (notes.count(NumericalNote::kDownConvertInputs)) return "DOWN_CONVERT_INPUTS";
  if (dtype == DataType::kF32 && !allow_tf32 && notes.count(NumericalNote::kTensorCore)) {
    return "TENSOR_CORE for fp32 with allow_tf32 off";
  }
  return "";
}

const char* MathTypeName(MathType m) {
  switch (m) {
    case MathType::kDefault: return "CUDNN_DEFAULT_MATH";
    case MathType::kTensorOp: return "CUDNN_TENSOR_OP_MATH";
    case MathType::kTensorOpAllowConversion: return "CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION";
    case MathType::kFma: return "CUDNN_FMA_MATH";
  }
  return "?";
}

// ConvolutionDescriptor::set in aten/src/ATen/cudnn/Descriptors.h.
MathType CudnnMathType(DataType dtype, bool allow_tf32) {
  if (dtype == DataType::kF16) return MathType::kTensorOp;
  return allow_tf32 ? MathType::kDefault : MathType::kFma;
}

namespace {
const char* MathSuffix(MathType m) {
  switch (m) {
    case MathType::kTensorOp: return "tensor_op";
    case MathType::kTensorOpAllowConversion: return "tensor_op_allow_conversion";
    case MathType::kFma: return "fma";
    case MathType::kDefault: break;
  }
  return "default";
}
}  // namespace

std::string PerfName(Direction d, int algo, MathType math, DataType dtype, bool allow_tf32) {
  const std::string name = AlgoName(d, algo);
  if (name.empty() || math == CudnnMathType(dtype, allow_tf32)) return name;
  return name + "@" + MathSuffix(math);
}

std::optional<ParsedPerfName> ParsePerfName(Direction d, const std::string& name, DataType dtype, bool allow_tf32) {
  const size_t at = name.find('@');
  ParsedPerfName out;
  out.algo = AlgoIndex(d, name.substr(0, at));
  if (out.algo < 0) return std::nullopt;
  out.math = CudnnMathType(dtype, allow_tf32);
  if (at == std::string::npos) return out;
  const std::string suffix = name.substr(at + 1);
  for (MathType m : {MathType::kDefault, MathType::kTensorOp, MathType::kTensorOpAllowConversion, MathType::kFma}) {
    if (suffix == MathSuffix(m) && m != out.math) {
      out.math = m;
      return out;
    }
  }
  return std::nullopt;  // unknown, or the descriptor's own math type spelled out (not canonical)
}

// c10/util/env.cpp: check_env.
std::optional<bool> CheckEnv(const char* value) {
  if (value == nullptr) return std::nullopt;
  if (std::strcmp(value, "0") == 0) return false;
  if (std::strcmp(value, "1") == 0) return true;
  return std::nullopt;
}

// aten/src/ATen/native/cudnn/Macros / ConvShared: cudnnv8_enabled_check_debug,
// cudnnv8_use_heur_mode_b.
bool GraphApiEnabled(const char* torch_cudnn_v8_api_disabled) {
  return CheckEnv(torch_cudnn_v8_api_disabled) != std::optional<bool>(true);
}
bool HeuristicModeB(const char* torch_cudnn_use_heuristic_mode_b) {
  return CheckEnv(torch_cudnn_use_heuristic_mode_b) == std::optional<bool>(true);
}

HeurMode GraphHeuristicMode(bool benchmark, bool mode_b) {
  return !benchmark && mode_b ? HeurMode::kB : HeurMode::kInstant;
}

int V8CacheLimit(const char* value) {
  // Conv_v8.cpp's std::stoi: leading spaces and a sign, then the longest run
  // of digits; what follows is ignored ("10abc" is 10). No digits, or a value
  // outside int, throws there, and PyTorch warns and keeps its default.
  if (value == nullptr) return kV8CacheLimitDefault;
  char* end = nullptr;
  errno = 0;
  const long v = std::strtol(value, &end, 10);
  if (end == value || errno == ERANGE || v < INT_MIN || v > INT_MAX) return kV8CacheLimitDefault;
  return static_cast<int>(v);
}

SelectionRules CudnnRules(Api api, bool benchmark, bool deterministic, int lru_limit) {
  if (api == Api::kGraph) {
    return {.cache_without_benchmark = true, .benchmark_limit = true, .cache_limit = lru_limit, .retry_at_execution = true};
  }
  return {.cache_without_benchmark = !(deterministic && !benchmark), .benchmark_limit = false, .retry_at_execution = true,
          .store_without_benchmark = true};
}

std::string ConfigName(const RawConfig& c) {
  return (c.fallback ? "fb" : "cfg") + std::to_string(c.rank) + "_eng" + std::to_string(c.engine);
}

KeptConfigs KeepConfigs(const std::vector<RawConfig>& raw, bool deterministic, bool allow_tf32, DataType dtype,
                        const std::vector<ErrataRule>& errata, uint64_t version) {
  KeptConfigs out;
  for (size_t i = 0; i < raw.size(); ++i) {
    const RawConfig& c = raw[i];
    if (const std::string why = DropReason(c.notes, deterministic, allow_tf32, dtype); !why.empty()) {
      out.dropped.push_back(ConfigName(c) + ": " + why);
      continue;
    }
    if (const ErrataRule* rule = BlockingRule(errata, c.tag, version)) {
      out.dropped.push_back(ConfigName(c) + ": blocked by errata rule " + rule->id + " (" + c.tag + ")");
      continue;
    }
    out.kept.push_back(i);
  }
  return out;
}

std::string PlanTag(Direction d, int64_t engine, const std::vector<std::pair<int64_t, int64_t>>& knobs) {
  static constexpr const char* kOperation[] = {"ConvFwd", "ConvBwdData", "ConvBwdFilter"};
  std::string tag = std::string(kOperation[static_cast<int>(d)]) + "_eng" + std::to_string(engine);
  for (const auto& [type, value] : knobs) tag += "_k" + std::to_string(type) + "=" + std::to_string(value);
  return tag;
}

Result<std::vector<ErrataRule>> ParseErrata(const std::string& text, const std::string& file) {
  const nlohmann::json doc = nlohmann::json::parse(text, nullptr, false);
  const auto bad = [&](const std::string& field, const std::string& why) {
    return Status(StatusCode::kInvalidArgument, file + ": " + field + ": " + why + " (CUDNN_ERRATA_JSON_FILE)");
  };
  if (doc.is_discarded()) return bad("(document)", "not JSON");
  if (!doc.is_object() || !doc.contains("rules") || !doc["rules"].is_array()) return bad("rules", "missing or not an array");
  std::vector<ErrataRule> out;
  for (size_t i = 0; i < doc["rules"].size(); ++i) {
    const nlohmann::json& r = doc["rules"][i];
    const std::string at = "rules[" + std::to_string(i) + "]";
    if (!r.is_object()) return bad(at, "not an object");
    ErrataRule rule;
    rule.id = r.contains("rule_id") && r["rule_id"].is_string() ? r["rule_id"].get<std::string>() : at;
    if (!r.contains("operation") || !r["operation"].is_string()) return bad(at + ".operation", "missing or not a string");
    if (!r.contains("engine") || !r["engine"].is_number_integer()) return bad(at + ".engine", "missing or not an integer");
    rule.operation = r["operation"].get<std::string>();
    rule.engine = r["engine"].get<int64_t>();
    for (auto [key, field] : {std::pair{"cudnn_version_start", &rule.cudnn_version_start},
                              std::pair{"cudnn_version_end", &rule.cudnn_version_end}}) {
      if (!r.contains(key)) continue;
      if (!r[key].is_number_unsigned()) return bad(at + "." + key, "not a non-negative integer");
      *field = r[key].get<uint64_t>();
    }
    if (r.contains("knob")) {
      if (!r["knob"].is_array()) return bad(at + ".knob", "not an array");
      for (const nlohmann::json& k : r["knob"]) {
        if (!k.is_string()) return bad(at + ".knob", "an entry is not a string");
        rule.knobs.push_back(k.get<std::string>());
      }
    }
    out.push_back(std::move(rule));
  }
  return out;
}

Result<std::vector<ErrataRule>> LoadErrata(const char* cudnn_errata_json_file) {
  if (cudnn_errata_json_file == nullptr) return std::vector<ErrataRule>{};
  std::ifstream in(cudnn_errata_json_file);
  if (!in.is_open() || !in.good()) return std::vector<ErrataRule>{};
  std::stringstream text;
  text << in.rdbuf();
  return ParseErrata(text.str(), cudnn_errata_json_file);
}

const ErrataRule* BlockingRule(const std::vector<ErrataRule>& rules, const std::string& tag, uint64_t version) {
  for (const ErrataRule& r : rules) {
    const std::string prefix = r.operation + "_eng" + std::to_string(r.engine) + "_";
    if ((tag + "_").rfind(prefix, 0) != 0) continue;
    if (version < r.cudnn_version_start || version >= r.cudnn_version_end) continue;
    if (std::all_of(r.knobs.begin(), r.knobs.end(), [&](const std::string& k) { return tag.find(k) != std::string::npos; })) {
      return &r;
    }
  }
  return nullptr;
}

Result<WorkspaceFit> FitSearchWorkspace(const std::vector<int64_t>& plan_bytes, int64_t largest_free,
                                        const std::function<bool(int64_t)>& allocate) {
  WorkspaceFit fit;
  for (size_t i = 0; i < plan_bytes.size(); ++i) {
    if (plan_bytes[i] > largest_free) continue;
    fit.kept.push_back(i);
    fit.bytes = std::max(fit.bytes, plan_bytes[i]);
  }
  if (fit.bytes >= (int64_t{1} << 40)) {
    return Status(StatusCode::kInternal, "Not enough memory for workspace!", FailureSource::kOutOfMemory);
  }
  bool halved = false;
  while (fit.bytes > 0 && !allocate(fit.bytes)) {
    fit.bytes /= 2;
    halved = true;
  }
  if (halved) std::erase_if(fit.kept, [&](size_t i) { return plan_bytes[i] > fit.bytes; });
  return fit;
}

bool KeepTimedPlan(std::set<float>& kept, float ms) { return kept.insert(ms).second; }

int64_t TensorByteAlignment(uintptr_t address) {
  int64_t alignment = 1;
  for (; alignment < 32; alignment *= 2) {
    if (address % static_cast<uintptr_t>(alignment * 2) != 0) return alignment;
  }
  return alignment;
}

Result<std::vector<Algorithm>> GraphCandidates(const std::vector<std::pair<std::string, bool>>& configs,
                                               bool benchmark, const std::function<Result<int64_t>(size_t)>& build) {
  const auto as_algorithm = [](const std::pair<std::string, bool>& c, int64_t workspace) {
    return Algorithm{c.first, c.second ? Determinism::kDeterministic : Determinism::kNondeterministic, workspace};
  };
  std::vector<Algorithm> out;
  bool one_built = benchmark;
  Status last_failure(StatusCode::kUnimplemented, "no engine config");
  for (size_t i = 0; i < configs.size(); ++i) {
    if (one_built) {
      out.push_back(as_algorithm(configs[i], 0));
      continue;
    }
    Result<int64_t> workspace = build(i);
    if (!workspace.ok()) {
      last_failure = workspace.status();
      continue;
    }
    one_built = true;
    out.push_back(as_algorithm(configs[i], workspace.value()));
  }
  if (out.empty()) {  // PyTorch: "GET was unable to find an engine to execute this computation"
    return Status(last_failure.code(), "no cuDNN engine config builds a plan; the last: " + last_failure.message());
  }
  return out;
}

}  // namespace bc::cudnn
