// The evidence records: one C++ definition of each kind, serialised here and
// nowhere else. harness/evidence.schema.json states the same contract for
// readers (reports/records.py refuses a record that does not fit it, with its
// file and line), and the `evidence.contract` test runs every serialiser below
// through that schema.
//
//   environment  the first record of every evidence file: the host, the GPU,
//                every library's version, every backend's availability
//   case         one test's case: its spec, each step (engine, algorithm,
//                selection, digests, times, error), its checks
//   result       one test's outcome as GoogleTest saw it
//
// A step is a StepRun (runner/case_run.h) and a selection a Selection
// (selection/selector.h): those structs are the runner's own and are the
// definition; this file only writes them.
#pragma once

#include <nlohmann/json.hpp>

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "backends/engine.h"
#include "runner/case_run.h"
#include "runner/compare.h"

namespace bc {

// A check's outcome. bitwise: passed, failed, caught, missed, varied, stable,
// mistrusted, not_applicable or misconfigured (runner/determinism.h says when
// each applies); every other check: passed, failed or mistrusted. Any check
// may be an error: the harness could not observe the system (an exception in
// a probe, a missing attribute, unreadable output), which decides nothing.
#define BC_CHECK_OUTCOMES(X) \
  X(kPassed, "passed")       \
  X(kFailed, "failed")       \
  X(kCaught, "caught")       \
  X(kMissed, "missed")       \
  X(kVaried, "varied")       \
  X(kStable, "stable")       \
  X(kMistrusted, "mistrusted") \
  X(kNotApplicable, "not_applicable") \
  X(kMisconfigured, "misconfigured") \
  X(kError, "error")
enum class CheckOutcome {
#define BC_ENUM_MEMBER(member, name) member,
  BC_CHECK_OUTCOMES(BC_ENUM_MEMBER)
#undef BC_ENUM_MEMBER
};

// A test's outcome as GoogleTest reports it.
#define BC_RESULT_OUTCOMES(X) \
  X(kPassed, "passed")        \
  X(kFailed, "failed")        \
  X(kSkipped, "skipped")
enum class ResultOutcome {
#define BC_ENUM_MEMBER(member, name) member,
  BC_RESULT_OUTCOMES(BC_ENUM_MEMBER)
#undef BC_ENUM_MEMBER
};

std::string_view OutcomeName(CheckOutcome o);
std::string_view OutcomeName(ResultOutcome o);
// Every outcome's name, in declaration order (the schema's enums).
std::vector<std::string_view> CheckOutcomeNames();
std::vector<std::string_view> ResultOutcomeNames();

struct CheckRecord {
  std::string name;
  CheckOutcome outcome = CheckOutcome::kFailed;
  std::string detail;
  // The bitwise check's context: the algorithm's declared determinism, whether
  // the case is a positive control, and the runs it took to see a second digest.
  std::optional<std::string> expected;
  std::optional<bool> positive_control;
  std::optional<int> runs_to_distinct;
  // What a probe of PyTorch saw, as it reported it (an attribute's presence,
  // a default, an alert's text): what versions are compared on.
  std::optional<nlohmann::json> observed;
};
// passed when `passed`, failed otherwise.
CheckRecord Check(std::string name, bool passed, std::string detail);

// Compare: both configurations' samples over interleaved reps.
struct CompareRecord {
  std::string repro_a, repro_b;
  std::vector<Sample> a, b;
  nlohmann::json versus_flags = nlohmann::json::object();  // the spec's {flag: value} for B
  int reps = 0;
  double others_cpu = -1;  // the share of the machine's CPU time other processes took meanwhile; -1 unknown
};

// CrossProcess: one probe process.
struct ProcessRecord {
  std::string env;  // "K=V ..." or "(inherited)"
  std::string chosen;
  std::string digest;
  std::string implementation;
  int threads = 0;
};
struct CrossProcessRecord {
  std::vector<ProcessRecord> processes;
  std::map<std::string, int> choice_distribution, digest_distribution;
  bool digests_stable_within_env = true;
};

// The same records as a probe of PyTorch's Python reports them, in its JSON
// (probes/torch_backends.py), so that its comparisons and its fresh
// processes are judged as the C++ suites' are:
//   compare: {"repro_a", "repro_b", "a": [SAMPLE, ...], "b": [SAMPLE, ...],
//             "versus_flags": {...}}, one SAMPLE per paired rep with the
//             fields of Sample (total_ns, steady_ns, first_ns, search_ns,
//             workspace_bytes, rss_peak_bytes: numbers; chosen: a string),
//             each absent field 0 or "";
//   cross_process: {"processes": [{"env", "chosen", "digest",
//             "implementation", "threads"}, ...]}, the distributions counted
//             here as the CrossProcess fixture counts them.
// A field of the wrong type, unequal or empty sides, or no process is an
// error that names it.
Result<CompareRecord> CompareFromJson(const nlohmann::json& j);
Result<CrossProcessRecord> CrossProcessFromJson(const nlohmann::json& j);

// Conformance: one case run on the model (engine auto) and on PyTorch.
struct ConformanceSide {
  std::string engine;          // "onednn", "reference", "pytorch"
  std::string algorithm;
  std::string implementation;  // what ran, as the engine names it
  std::string kernel_class;    // the dispatch path, as engines.def's roles name it: mkldnn, native, cudnn, blas
  std::string onednn_kernel;   // oneDNN's implementation name where oneDNN ran ("jit:avx2")
  std::string onednn_version;  // the version of that side's oneDNN (the model's library, or the one in libtorch)
  std::string cudnn_choice;    // what cuDNN ran where it ran ("engine 38", "algo 1"; KernelFacts)
  std::string digest;          // the last run's output digest
  std::string alert;           // PyTorch's (or the model's) not-deterministic alert, when raised
  std::string error;           // any other failure
};
struct ConformanceRecord {
  ConformanceSide model, pytorch;
};

struct CaseRecord {
  std::string test;  // "Suite.Test"; WriteEvidence fills it in when empty
  std::string case_id;
  std::string repro;
  // Whose behaviour this evidence shows (backends/engines.def): pytorch,
  // onednn, cudnn, cublas, reference or model; from the repro's engine field.
  std::string system;
  std::optional<CaseSpec> spec;  // when the repro parses: the case's device, op, flags, ...
  std::vector<StepRun> steps;    // the first step's fields also stand at the top level
  int searches = 0;
  std::optional<std::string> skip_reason;
  std::vector<CheckRecord> checks;
  std::optional<std::string> baseline_digest;  // cpu_noop: the digest under default flags
  std::optional<CompareRecord> compare;
  std::optional<CrossProcessRecord> cross_process;
  std::optional<ConformanceRecord> conformance;
};

// A run's record (steps and searches from `run`).
CaseRecord RunRecord(const CaseRow& row, const CaseRun& run);
// The record of a case that was not run: `reason` empty for a case whose
// evidence is not a run of its own (CrossProcess).
CaseRecord SkippedRecord(const CaseRow& row, const std::string& reason);
// A test that is a single fact: its repro and one check. `system` empty: the
// system the repro's engine field names.
CaseRecord FactRecord(const std::string& repro, CheckRecord check, std::string system = "");

struct ResultRecord {
  std::string test;
  ResultOutcome outcome = ResultOutcome::kPassed;
  std::string message;  // the skip reason or the first failure
  double elapsed_ms = 0;
};

struct GpuRecord {
  std::string name;          // "NVIDIA H100 80GB HBM3"
  std::string arch;          // "sm_90"
  int count = 0;             // devices visible
  std::string driver;        // the driver's CUDA API version, "12.4"
};

struct EnvironmentRecord {
  nlohmann::json host;  // harness/environment.h: machine, CPU, threads, compiler, build
  // Each engine's facts of this machine, by key (Engine::platform): onednn_isa.
  std::map<std::string, std::string> platform;
  std::vector<Availability> backends;
  std::vector<std::string> default_flags;
  std::string gtest_filter;
  std::optional<GpuRecord> gpu;
  // Each library's version number as loaded, absent where it is not here:
  // onednn, cudnn, cublas (by engines.def's library column), cuda_runtime and
  // cuda_driver.
  std::map<std::string, std::string> versions;
};
// This process's environment: the host, the GPU and every backend.
EnvironmentRecord ProbeEnvironment(const std::string& gtest_filter);

nlohmann::json ToJson(const CheckRecord& c);
nlohmann::json ToJson(const StepRun& s);
nlohmann::json ToJson(const Selection& s);
nlohmann::json ToJson(const CaseRecord& r);
nlohmann::json ToJson(const ResultRecord& r);
nlohmann::json ToJson(const EnvironmentRecord& r);
// {"repro", and one array per field of Sample}.
nlohmann::json ToJson(const std::string& repro, const std::vector<Sample>& samples);

}  // namespace bc
