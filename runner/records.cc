#include "runner/records.h"

#include <cctype>
#include <set>

#include "backends/cuda/gpu.h"
#include "backends/registry.h"
#include "harness/environment.h"
#include "harness/tensor_data.h"

namespace bc {

namespace {

template <typename Enum>
struct Names;

template <>
struct Names<CheckOutcome> {
  static constexpr std::string_view kAll[] = {
#define BC_ENUM_NAME(member, name) name,
      BC_CHECK_OUTCOMES(BC_ENUM_NAME)
#undef BC_ENUM_NAME
  };
};

template <>
struct Names<ResultOutcome> {
  static constexpr std::string_view kAll[] = {
#define BC_ENUM_NAME(member, name) name,
      BC_RESULT_OUTCOMES(BC_ENUM_NAME)
#undef BC_ENUM_NAME
  };
};

template <typename Enum>
std::vector<std::string_view> AllNames() {
  return {std::begin(Names<Enum>::kAll), std::end(Names<Enum>::kAll)};
}

}  // namespace

std::string_view OutcomeName(CheckOutcome o) { return Names<CheckOutcome>::kAll[static_cast<int>(o)]; }
std::string_view OutcomeName(ResultOutcome o) { return Names<ResultOutcome>::kAll[static_cast<int>(o)]; }
std::vector<std::string_view> CheckOutcomeNames() { return AllNames<CheckOutcome>(); }
std::vector<std::string_view> ResultOutcomeNames() { return AllNames<ResultOutcome>(); }

CheckRecord Check(std::string name, bool passed, std::string detail) {
  return {.name = std::move(name),
          .outcome = passed ? CheckOutcome::kPassed : CheckOutcome::kFailed,
          .detail = std::move(detail)};
}

namespace {

std::string SystemOfRepro(const std::string& repro) {
  Result<CaseSpec> spec = ParseCaseSpec(repro);
  return std::string(SystemOf(spec.ok() ? spec->engine : "auto"));
}

}  // namespace

CaseRecord RunRecord(const CaseRow& row, const CaseRun& run) {
  return {.case_id = row.id,
          .repro = row.repro,
          .system = std::string(SystemOf(run.spec.engine)),
          .spec = run.spec,
          .steps = run.steps,
          .searches = run.searches};
}

CaseRecord SkippedRecord(const CaseRow& row, const std::string& reason) {
  CaseRecord r{.case_id = row.id, .repro = row.repro, .system = SystemOfRepro(row.repro)};
  if (Result<CaseSpec> spec = ParseCaseSpec(row.repro); spec.ok()) r.spec = std::move(spec).value();
  if (!reason.empty()) r.skip_reason = reason;
  return r;
}

CaseRecord FactRecord(const std::string& repro, CheckRecord check, std::string system) {
  CaseRecord r{.repro = repro, .system = system.empty() ? SystemOfRepro(repro) : std::move(system)};
  r.checks.push_back(std::move(check));
  return r;
}

namespace {

Status Malformed(const std::string& what) { return Status(StatusCode::kInvalidArgument, what); }

Result<std::vector<Sample>> SamplesFromJson(const nlohmann::json& j, const std::string& side) {
  if (!j.is_array() || j.empty()) return Malformed("compare." + side + " must be a non-empty array of samples");
  std::vector<Sample> out;
  for (const nlohmann::json& x : j) {
    if (!x.is_object()) return Malformed("compare." + side + ": a sample must be an object");
    Sample s;
    for (const auto& [key, value] : x.items()) {
      if (key == "chosen") {
        if (!value.is_string()) return Malformed("compare." + side + ".chosen must be a string");
        s.chosen = value.get<std::string>();
        continue;
      }
      if (!value.is_number()) return Malformed("compare." + side + "." + key + " must be a number");
      if (key == "steady_ns") {
        s.steady_ns = value.get<double>();
      } else if (int64_t* field = key == "total_ns"          ? &s.total_ns
                                  : key == "first_ns"        ? &s.first_ns
                                  : key == "search_ns"       ? &s.search_ns
                                  : key == "workspace_bytes" ? &s.workspace_bytes
                                  : key == "rss_peak_bytes"  ? &s.rss_peak_bytes
                                                             : nullptr) {
        *field = static_cast<int64_t>(value.get<double>());
      } else {
        return Malformed("compare." + side + ": unknown sample field '" + key + "'");
      }
    }
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace

Result<CompareRecord> CompareFromJson(const nlohmann::json& j) {
  if (!j.is_object()) return Malformed("compare must be an object");
  CompareRecord c;
  for (const char* key : {"repro_a", "repro_b"}) {
    if (!j.contains(key) || !j[key].is_string()) return Malformed(std::string("compare.") + key + " must be a string");
  }
  c.repro_a = j["repro_a"].get<std::string>();
  c.repro_b = j["repro_b"].get<std::string>();
  BC_ASSIGN_OR_RETURN(c.a, SamplesFromJson(j.value("a", nlohmann::json()), "a"));
  BC_ASSIGN_OR_RETURN(c.b, SamplesFromJson(j.value("b", nlohmann::json()), "b"));
  if (c.a.size() != c.b.size()) {
    return Malformed("compare: " + std::to_string(c.a.size()) + " samples of a, " + std::to_string(c.b.size()) +
                     " of b: each rep pairs one of each");
  }
  c.reps = static_cast<int>(c.a.size());
  if (j.contains("versus_flags")) {
    if (!j["versus_flags"].is_object()) return Malformed("compare.versus_flags must be an object");
    c.versus_flags = j["versus_flags"];
  }
  return c;
}

Result<CrossProcessRecord> CrossProcessFromJson(const nlohmann::json& j) {
  if (!j.is_object() || !j.contains("processes") || !j["processes"].is_array() || j["processes"].empty()) {
    return Malformed("cross_process.processes must be a non-empty array");
  }
  CrossProcessRecord x;
  std::map<std::string, std::set<std::string>> digests_by_env;
  for (const nlohmann::json& p : j["processes"]) {
    if (!p.is_object()) return Malformed("cross_process: a process must be an object");
    ProcessRecord r;
    for (const auto& [key, field] : {std::pair<const char*, std::string*>{"env", &r.env},
                                     {"chosen", &r.chosen},
                                     {"digest", &r.digest},
                                     {"implementation", &r.implementation}}) {
      if (p.contains(key) && !p[key].is_string()) {
        return Malformed(std::string("cross_process: ") + key + " must be a string");
      }
      *field = p.value(key, std::string());
    }
    if (p.contains("threads") && !p["threads"].is_number_integer()) {
      return Malformed("cross_process: threads must be an integer");
    }
    r.threads = p.value("threads", 0);
    if (r.env.empty()) r.env = "(inherited)";
    ++x.choice_distribution[r.chosen];
    ++x.digest_distribution[r.digest];
    digests_by_env[r.env].insert(r.digest);
    x.processes.push_back(std::move(r));
  }
  for (const auto& [env, digests] : digests_by_env) x.digests_stable_within_env &= digests.size() == 1;
  return x;
}

nlohmann::json ToJson(const CheckRecord& c) {
  nlohmann::json j{{"name", c.name}, {"outcome", OutcomeName(c.outcome)}, {"detail", c.detail}};
  if (c.expected) j["expected"] = *c.expected;
  if (c.positive_control) j["positive_control"] = *c.positive_control;
  if (c.runs_to_distinct) j["runs_to_distinct"] = *c.runs_to_distinct;
  if (c.observed) j["observed"] = *c.observed;
  return j;
}

nlohmann::json ToJson(const Selection& s) {
  nlohmann::json j;
  j["chosen"] = s.chosen.Id();
  j["chosen_determinism"] = DeterminismName(s.chosen.algorithm.determinism);
  j["candidates"] = nlohmann::json::array();
  for (const Candidate& c : s.candidates) {
    j["candidates"].push_back({{"id", c.Id()},
                               {"determinism", DeterminismName(c.algorithm.determinism)},
                               {"workspace_bytes", c.algorithm.workspace_bytes}});
  }
  j["eligible"] = nlohmann::json::array();
  for (const Candidate& c : s.eligible) j["eligible"].push_back(c.Id());
  j["time_ns"] = s.time_ns;
  j["cache"] = s.cache;
  j["reason"] = s.reason;
  j["search_ns"] = s.search_ns;
  if (!s.warning.empty()) j["warning"] = s.warning;
  return j;
}

nlohmann::json ToJson(const StepRun& s) {
  nlohmann::json j;
  j["problem"] = FormatProblem(s.problem);
  j["engine"] = s.engine;
  j["engine_version"] = s.engine_version;
  j["dispatch_reason"] = s.dispatch_reason;
  j["algorithm"] = s.algorithm.name;
  j["determinism"] = DeterminismName(s.algorithm.determinism);
  j["workspace_bytes"] = s.workspace_bytes;
  j["implementation"] = s.implementation;
  nlohmann::json digests = nlohmann::json::array();
  for (uint64_t d : s.digests) digests.push_back(DigestHex(d));
  j["digests"] = digests;
  j["digest"] = s.digests.empty() ? "" : DigestHex(s.digests.back());
  j["distinct_digests"] = s.DistinctDigests();
  j["runs"] = s.digests.size();
  j["runs_to_distinct"] = s.RunsToDistinct();
  j["times_ns"] = s.times_ns;
  j["step_ns"] = s.step_ns;
  j["rss_peak_bytes"] = s.rss_peak_bytes;
  j["device_peak_bytes"] = s.device_peak_bytes;
  j["timer"] = s.device_timed ? "cuda_events" : "host";
  j["degenerate"] = s.degenerate;
  if (s.selection) j["selection"] = ToJson(*s.selection);
  if (s.error) {
    j["error"] = {{"max_abs", s.error->max_abs}, {"max_rel", s.error->max_rel}, {"max_ulp", s.error->max_ulp},
                  {"max_abs_ref", s.error->max_abs_ref}, {"nonfinite", s.error->nonfinite},
                  {"bound", s.error->bound}, {"worst_ratio", s.error->worst_ratio},
                  {"compute_type", ComputeTypeName(s.compute_type)}};
  }
  return j;
}

nlohmann::json ToJson(const std::string& repro, const std::vector<Sample>& samples) {
  nlohmann::json j{{"repro", repro}};
  for (const char* field :
       {"total_ns", "steady_ns", "first_ns", "search_ns", "workspace_bytes", "rss_peak_bytes", "chosen"}) {
    j[field] = nlohmann::json::array();
  }
  for (const Sample& s : samples) {
    j["total_ns"].push_back(s.total_ns);
    j["steady_ns"].push_back(s.steady_ns);
    j["first_ns"].push_back(s.first_ns);
    j["search_ns"].push_back(s.search_ns);
    j["workspace_bytes"].push_back(s.workspace_bytes);
    j["rss_peak_bytes"].push_back(s.rss_peak_bytes);
    j["chosen"].push_back(s.chosen);
  }
  return j;
}

nlohmann::json ToJson(const CaseRecord& r) {
  nlohmann::json j;
  j["kind"] = "case";
  j["test"] = r.test;
  if (!r.case_id.empty()) j["case_id"] = r.case_id;
  j["repro"] = r.repro;
  if (!r.system.empty()) j["system"] = r.system;
  if (r.spec) {
    const Problem& p = r.spec->problem();
    j["device"] = DeviceName(r.spec->device);
    j["op"] = OpName(p);
    j["direction"] = DirectionName(ProblemDirection(p));
    j["dtype"] = DataTypeName(ProblemDataType(p));
    j["shape"] = FormatShape(p);
    j["gflop"] = ProblemGflop(p);
    j["threads"] = r.spec->threads;
    j["schedule_steps"] = r.spec->steps.size();
    nlohmann::json flags = nlohmann::json::object();
    for (const auto& [name, value] : r.spec->flags.Values()) flags[name] = value;
    j["flags"] = flags;
  }
  if (!r.case_id.empty() || r.spec || !r.steps.empty()) j["step"] = 0;  // a single fact has no step
  if (!r.steps.empty()) {
    const nlohmann::json first = ToJson(r.steps.front());  // items() needs a living object
    for (const auto& [key, value] : first.items()) j[key] = value;
    if (r.steps.size() > 1) {
      j["steps"] = nlohmann::json::array();
      for (const StepRun& s : r.steps) j["steps"].push_back(ToJson(s));
    }
    j["searches"] = r.searches;
  }
  if (r.skip_reason) j["skip_reason"] = *r.skip_reason;
  if (r.baseline_digest) j["baseline_digest"] = *r.baseline_digest;
  if (r.compare) {
    j["compare"] = {{"a", ToJson(r.compare->repro_a, r.compare->a)},
                    {"b", ToJson(r.compare->repro_b, r.compare->b)},
                    {"versus_flags", r.compare->versus_flags},
                    {"reps", r.compare->reps}};
    if (r.compare->others_cpu >= 0) j["compare"]["others_cpu"] = r.compare->others_cpu;
  }
  if (r.cross_process) {
    const CrossProcessRecord& x = *r.cross_process;
    nlohmann::json processes = nlohmann::json::array();
    for (const ProcessRecord& p : x.processes) {
      processes.push_back({{"env", p.env}, {"chosen", p.chosen}, {"digest", p.digest},
                           {"implementation", p.implementation}, {"threads", p.threads}});
    }
    j["processes"] = processes;
    j["choice_distribution"] = x.choice_distribution;
    j["digest_distribution"] = x.digest_distribution;
    j["distinct_choices"] = x.choice_distribution.size();
    j["distinct_digests"] = x.digest_distribution.size();
    // Whether each environment agrees with itself, and all of them with one another.
    j["digests_stable_within_env"] = x.digests_stable_within_env;
    j["digests_equal_across_envs"] = x.digest_distribution.size() == 1;
  }
  if (r.conformance) {
    const auto side = [](const ConformanceSide& x) {
      return nlohmann::json{{"engine", x.engine},
                            {"algorithm", x.algorithm},
                            {"implementation", x.implementation},
                            {"kernel_class", x.kernel_class},
                            {"onednn_kernel", x.onednn_kernel},
                            {"onednn_version", x.onednn_version},
                            {"cudnn_choice", x.cudnn_choice},
                            {"digest", x.digest},
                            {"alert", x.alert},
                            {"error", x.error}};
    };
    const ConformanceRecord& c = *r.conformance;
    j["conformance"] = {{"model", side(c.model)},
                        {"pytorch", side(c.pytorch)},
                        {"same_kernel_class", c.model.kernel_class == c.pytorch.kernel_class},
                        {"same_onednn_kernel", c.model.onednn_kernel == c.pytorch.onednn_kernel},
                        {"same_onednn_version", c.model.onednn_version == c.pytorch.onednn_version},
                        {"same_cudnn_choice", c.model.cudnn_choice == c.pytorch.cudnn_choice},
                        {"same_bits", !c.model.digest.empty() && c.model.digest == c.pytorch.digest},
                        {"same_alert", c.model.alert.empty() == c.pytorch.alert.empty()}};
  }
  j["checks"] = nlohmann::json::array();
  for (const CheckRecord& c : r.checks) j["checks"].push_back(ToJson(c));
  return j;
}

nlohmann::json ToJson(const ResultRecord& r) {
  return {{"kind", "result"},
          {"test", r.test},
          {"outcome", OutcomeName(r.outcome)},
          {"elapsed_ms", r.elapsed_ms},
          {"message", r.message}};
}

EnvironmentRecord ProbeEnvironment(const std::string& gtest_filter) {
  EnvironmentRecord e;
  e.host = ProbeHostEnvironment();
  e.backends = AllAvailability();
  for (const EngineEntry& entry : EngineEntries()) e.platform.merge(entry.engine.platform());
  // Keyed by the library each engine wraps (engines.def), lower case.
  for (const EngineEntry& entry : EngineEntries()) {
    const std::string version = entry.engine.availability().library_version;
    if (entry.library.empty() || version.empty()) continue;
    std::string library(entry.library);
    for (char& c : library) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    e.versions[library] = version;
  }
  e.versions["backendcheck"] = BC_PROJECT_VERSION;
  if (const cuda::CudaVersions cuda = cuda::LoadedCudaVersions(); !cuda.runtime.empty()) {
    e.versions["cuda_runtime"] = cuda.runtime;
    e.versions["cuda_driver"] = cuda.driver;
  }
  if (std::optional<cuda::GpuInfo> gpu = cuda::FirstGpu()) {
    e.gpu = GpuRecord{.name = gpu->name, .arch = gpu->arch, .count = gpu->count, .driver = gpu->driver};
  }
  e.default_flags = BackendFlags().All();
  e.gtest_filter = gtest_filter;
  return e;
}

nlohmann::json ToJson(const EnvironmentRecord& r) {
  nlohmann::json j = r.host;
  j["kind"] = "environment";
  j["platform"] = r.platform;
  nlohmann::json backends = nlohmann::json::object();
  for (const Availability& a : r.backends) {
    backends[a.engine] = {{"built", a.built}, {"available", a.available}, {"reason", a.reason}, {"version", a.version},
                          {"error", a.error}};
  }
  j["backends"] = backends;
  j["versions"] = r.versions;
  if (r.gpu) {
    j["gpu"] = {{"name", r.gpu->name}, {"arch", r.gpu->arch}, {"count", r.gpu->count}, {"driver", r.gpu->driver}};
  }
  j["default_flags"] = r.default_flags;
  j["gtest_filter"] = r.gtest_filter;
  return j;
}

}  // namespace bc
