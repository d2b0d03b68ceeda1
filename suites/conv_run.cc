#include "suites/conv_run.h"

#include <gtest/gtest.h>
#include <omp.h>

#include <set>

#include "backends/reference/reference.h"
#include "harness/tensor_data.h"
#include "harness/timer.h"

namespace bc {

int CaseRun::DistinctDigests() const {
  return static_cast<int>(std::set<uint64_t>(digests.begin(), digests.end()).size());
}

uint64_t ProblemSeed(const Conv2dProblem& p) { return TensorSeed(0x62636b /* "bck" */, p.Format()); }

bool IsNotEvaluated(const Status& s) {
  return s.code() == StatusCode::kUnavailable || s.code() == StatusCode::kUnimplemented;
}

namespace {

void FillInputs(const Conv2dProblem& p, ConvBuffers& b) {
  const uint64_t seed = ProblemSeed(p);
  FillUniform(TensorSeed(seed, "src"), b.src);
  if (p.direction == Direction::kForward) {
    FillUniform(TensorSeed(seed, "wei"), b.wei);
  } else {
    FillUniform(TensorSeed(seed, "diff_dst"), b.dst);
  }
}

// Sets the OpenMP thread count for a scope (oneDNN's OpenMP runtime and the
// reference both follow it).
class ThreadsGuard {
 public:
  explicit ThreadsGuard(int threads) : saved_(omp_get_max_threads()) { omp_set_num_threads(threads); }
  ~ThreadsGuard() { omp_set_num_threads(saved_); }

 private:
  int saved_;
};

}  // namespace

Result<CaseRun> RunCase(const CaseSpec& spec, const RunOptions& options) {
  FlagsGuard flags(spec.flags);
  ThreadsGuard threads(spec.threads);
  Result<DispatchDecision> decision = Dispatch(spec, CurrentFlags());
  if (!decision.ok()) return decision.status();

  CaseRun run;
  run.spec = spec;
  run.engine = std::string(decision->engine->name());
  run.engine_version = decision->engine->availability().version;
  run.dispatch_reason = decision->reason;

  const Conv2dProblem& p = spec.problem;
  ConvBuffers buffers = ConvBuffers::For(p);
  FillInputs(p, buffers);
  auto prepared = decision->engine->Prepare(p, decision->algorithm, buffers);
  if (!prepared.ok()) return prepared.status();
  PreparedConv& op = *prepared.value();
  run.algorithm = op.algorithm();
  run.implementation = op.implementation();

  std::vector<float>& out = buffers.output(p.direction);
  for (int r = 0; r < options.repeats; ++r) {
    // Poison the output so a run that writes nothing cannot pass as repeatable.
    std::fill(out.begin(), out.end(), static_cast<float>(r + 1) * 1e30f);
    Stopwatch watch;
    BC_RETURN_IF_ERROR(op.Execute());
    run.times_ns.push_back(watch.ElapsedNs());
    BC_RETURN_IF_ERROR(op.Fetch());
    run.digests.push_back(Digest(out));
  }
  run.degenerate = IsDegenerate(out);

  if (options.compare_to_reference) {
    ConvBuffers ref = ConvBuffers::For(p);
    FillInputs(p, ref);
    ReferenceConvOwner(p, ref);
    run.error = Compare(out, ref.output(p.direction));
    run.tolerance = ToleranceBound(*run.error, p.accumulation_length());
  }
  return run;
}

std::string CurrentTestName() {
  const testing::TestInfo* info = testing::UnitTest::GetInstance()->current_test_info();
  return info == nullptr ? "" : std::string(info->test_suite_name()) + "." + info->name();
}

namespace {

nlohmann::json BaseRecord(const CaseRow& row, const CaseSpec* spec) {
  nlohmann::json r;
  r["kind"] = "case";
  r["test"] = CurrentTestName();
  r["case_id"] = row.id;
  r["repro"] = row.repro;
  if (spec != nullptr) {
    const Conv2dProblem& p = spec->problem;
    r["device"] = DeviceName(spec->device);
    r["op"] = "conv2d";
    r["direction"] = DirectionName(p.direction);
    r["dtype"] = DataTypeName(p.dtype);
    r["shape"] = p.FormatShape();
    r["gflop"] = p.gflop();
    r["threads"] = spec->threads;
    nlohmann::json flags = nlohmann::json::object();
    for (const std::string& f : spec->flags.All()) {
      const size_t eq = f.find('=');
      flags[f.substr(0, eq)] = f.substr(eq + 1);
    }
    r["flags"] = flags;
  }
  r["step"] = 0;
  return r;
}

}  // namespace

nlohmann::json CaseRecord(const CaseRow& row, const CaseRun& run) {
  nlohmann::json r = BaseRecord(row, &run.spec);
  r["engine"] = run.engine;
  r["engine_version"] = run.engine_version;
  r["dispatch_reason"] = run.dispatch_reason;
  r["algorithm"] = run.algorithm.name;
  r["determinism"] = DeterminismName(run.algorithm.determinism);
  r["workspace_bytes"] = run.algorithm.workspace_bytes;
  r["implementation"] = run.implementation;
  nlohmann::json digests = nlohmann::json::array();
  for (uint64_t d : run.digests) digests.push_back(DigestHex(d));
  r["digests"] = digests;
  r["digest"] = run.digests.empty() ? "" : DigestHex(run.digests.back());
  r["distinct_digests"] = run.DistinctDigests();
  r["times_ns"] = run.times_ns;
  r["degenerate"] = run.degenerate;
  if (run.error) {
    r["error"] = {{"max_abs", run.error->max_abs},
                  {"max_rel", run.error->max_rel},
                  {"max_ulp", run.error->max_ulp},
                  {"max_abs_ref", run.error->max_abs_ref},
                  {"nonfinite", run.error->nonfinite},
                  {"bound", run.tolerance}};
  }
  r["checks"] = nlohmann::json::array();
  return r;
}

nlohmann::json SkippedCaseRecord(const CaseRow& row, const std::string& reason) {
  Result<CaseSpec> spec = ParseCaseSpec(row.repro);
  nlohmann::json r = BaseRecord(row, spec.ok() ? &spec.value() : nullptr);
  r["skip_reason"] = reason;
  r["checks"] = nlohmann::json::array();
  return r;
}

Result<CaseSpec> ParseRow(const CaseRow& row) {
  Result<CaseSpec> spec = ParseCaseSpec(row.repro);
  if (!spec.ok()) return spec.status();
  if (spec->Format() != row.repro) {
    return Status(StatusCode::kInvalidArgument,
                  "generated repro is not canonical: '" + std::string(row.repro) + "' vs '" + spec->Format() + "'");
  }
  return spec;
}

}  // namespace bc
