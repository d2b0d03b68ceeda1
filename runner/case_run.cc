#include "runner/case_run.h"

#include <omp.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <set>

#include "backends/cudnn/cudnn.h"
#include "backends/reference/reference.h"
#include "backends/registry.h"
#include "harness/buffers.h"
#include "harness/tensor_data.h"
#include "harness/timer.h"

namespace bc {

int StepRun::DistinctDigests() const {
  return static_cast<int>(std::set<uint64_t>(digests.begin(), digests.end()).size());
}

int64_t MemoryBudgetBytes() {
  const char* v = std::getenv("BACKENDCHECK_MEMORY_BUDGET_MIB");
  char* end = nullptr;
  const long long mib = v == nullptr ? 0 : std::strtoll(v, &end, 10);
  const bool valid = v != nullptr && *v != '\0' && *end == '\0' && mib > 0 && mib <= (1LL << 30);
  return (valid ? mib : kDefaultMemoryBudgetMib) << 20;
}

int StepRun::RunsToDistinct() const {
  for (size_t i = 1; i < digests.size(); ++i) {
    if (digests[i] != digests[0]) return static_cast<int>(i) + 1;
  }
  return 0;
}

bool IsNotEvaluated(const Status& s) {
  return NotEvaluatedHere(s.code());
}

namespace {

// Sets the OpenMP thread count for a scope (oneDNN's OpenMP runtime and the
// reference both follow it).
class ThreadsGuard {
 public:
  explicit ThreadsGuard(int threads) : saved_(omp_get_max_threads()) { omp_set_num_threads(threads); }
  ~ThreadsGuard() { omp_set_num_threads(saved_); }

 private:
  int saved_;
};

// The resident-set high-water mark (VmHWM), reset per step through
// /proc/self/clear_refs where the kernel allows it.
void ResetPeakRss() {
  std::ofstream clear("/proc/self/clear_refs");
  if (clear) clear << "5";
}

int64_t PeakRssBytes() {
  std::ifstream status("/proc/self/status");
  std::string key;
  while (status >> key) {
    if (key == "VmHWM:") {
      int64_t kb = 0;
      status >> kb;
      return kb * 1024;
    }
  }
  return 0;
}

// Times one candidate as a search does: prepare it on the step's buffers
// (their inputs are filled once per step; a candidate writes only the
// output), run it once to warm up (JIT, first touch), then keep the faster of
// two runs.
TimeCandidate CandidateTimer(const Problem& p, const BackendFlags& flags, Buffers& buffers, int64_t* max_workspace) {
  return [&p, &flags, &buffers, max_workspace](const Candidate& c) -> Result<double> {
    const Engine* engine = FindEngine(c.engine);
    if (engine == nullptr) return Status(StatusCode::kInvalidArgument, "unknown engine " + c.engine);
    auto op = engine->Prepare(p, c.algorithm, buffers, flags);
    if (!op.ok()) return op.status();
    *max_workspace = std::max(*max_workspace, c.algorithm.workspace_bytes);
    BC_RETURN_IF_ERROR(op.value()->Execute());
    int64_t best = 0;
    for (int i = 0; i < 2; ++i) {
      Stopwatch w;
      BC_RETURN_IF_ERROR(op.value()->Execute());
      const int64_t t = w.ElapsedNs();
      best = i == 0 ? t : std::min(best, t);
    }
    return static_cast<double>(best);
  };
}

// Prepares `algorithm` and runs it as the case asks (`until_distinct_ns`: a
// positive control's budget for a second digest), into `step`.
Status RunAlgorithm(const Engine& engine, const Problem& p, const Algorithm& algorithm, const BackendFlags& flags,
                    const RunOptions& options, int64_t until_distinct_ns, Buffers& buffers, StepRun& step) {
  auto prepared = engine.Prepare(p, algorithm, buffers, flags);
  if (!prepared.ok()) return prepared.status();
  PreparedOp& op = *prepared.value();
  step.algorithm = op.algorithm();
  step.implementation = op.implementation();
  step.workspace_bytes = std::max(step.workspace_bytes, step.algorithm.workspace_bytes);
  std::vector<float>& out = buffers.Output(p);
  for (int r = 0; r < options.repeats; ++r) BC_RETURN_IF_ERROR(RunRepeat(op, r, out, step));
  if (until_distinct_ns > 0) {
    const Stopwatch budget;
    for (int r = options.repeats;
         step.RunsToDistinct() == 0 && r < kMaxControlRuns && budget.ElapsedNs() < until_distinct_ns; ++r) {
      BC_RETURN_IF_ERROR(RunRepeat(op, r, out, step));
    }
  }
  step.kernel = op.kernel();
  if (const EngineEntry* entry = FindEngineEntry(step.engine); step.kernel.kernel_class.empty() && entry != nullptr) {
    step.kernel.kernel_class = std::string(entry->role);
  }
  AskNotesTheLogDoesNotGive(step.kernel);
  return Status::Ok();
}

// A positive control that names kAnyNondeterministic: the engine's
// nondeterministic candidates in turn, each with an equal share of the
// budget, until one builds, runs and gives a second digest. The step reports
// the one that varied, or else the last that ran (one digest: the control
// is not caught); its dispatch reason lists every try. None that runs is
// not evaluated when the library refused them all, an error when any failed
// otherwise.
Status RunControlInTurn(const Engine& engine, const Problem& p, const BackendFlags& flags, const RunOptions& options,
                        Buffers& buffers, StepRun& step) {
  BC_ASSIGN_OR_RETURN(const std::vector<Algorithm> racy, NondeterministicAlgorithms(engine, p, flags));
  const int64_t share = options.until_distinct_ns / std::max<int64_t>(1, static_cast<int64_t>(racy.size()));
  const StepRun before = step;
  std::optional<StepRun> kept;
  std::vector<float> kept_output;  // its output, which a later try that fails overwrites with poison
  BC_ASSIGN_OR_RETURN(const std::vector<ControlTry> tries,
                      TryInTurn(racy, [&](const Algorithm& a) -> Result<ControlTry> {
                        StepRun attempt = before;
                        if (const Status s = RunAlgorithm(engine, p, a, flags, options, share, buffers, attempt);
                            !s.ok()) {
                          return ControlTry{a.name, ControlOutcome::kDidNotRun, s.message(), s.code()};
                        }
                        const int runs = static_cast<int>(attempt.digests.size()), to = attempt.RunsToDistinct();
                        ControlTry t{a.name, to > 0 ? ControlOutcome::kVaried : ControlOutcome::kOneDigest,
                                     to > 0 ? "after " + std::to_string(to) + " runs" : "in " + std::to_string(runs) + " runs"};
                        kept = std::move(attempt);
                        kept_output = buffers.Output(p);
                        return t;
                      }));
  const std::string described = DescribeTries(tries);
  if (!kept.has_value()) {
    const bool refused =
        std::all_of(tries.begin(), tries.end(), [](const ControlTry& t) { return NotEvaluatedHere(t.code); });
    return Status(refused ? StatusCode::kUnimplemented : StatusCode::kInternal,
                  std::string(engine.name()) + " has no nondeterministic candidate for " + FormatProblem(p) +
                      " that runs here" + (described.empty() ? "" : ": " + described));
  }
  step = std::move(*kept);
  buffers.Output(p) = std::move(kept_output);
  step.dispatch_reason += "; positive control, nondeterministic candidates in turn: " + described;
  return Status::Ok();
}

// Runs the decision's choice; where it fails at execution with a cuDNN
// error or an out-of-memory, the selection's next candidates in turn
// (Selection::then), as PyTorch does. The step reports the one that ran,
// its dispatch reason the ones that failed before it, and the cache keeps it.
Status RunChoice(Dispatcher& dispatcher, const DispatchDecision& decision, const Problem& p, const BackendFlags& flags,
                 const RunOptions& options, Buffers& buffers, StepRun& step) {
  std::vector<Candidate> order = {decision.chosen};
  if (decision.selection.has_value()) order.insert(order.end(), decision.selection->then.begin(), decision.selection->then.end());
  const StepRun before = step;
  std::vector<ExecutionTry> failed;
  Result<size_t> ran = TryAtExecution(order, [&](const Candidate& c) -> Status {
    const Engine* engine = FindEngine(c.engine);
    if (engine == nullptr) return Status(StatusCode::kInvalidArgument, "unknown engine " + c.engine);
    step = before;
    step.engine = c.engine;
    step.engine_version = engine->availability().version;
    return RunAlgorithm(*engine, p, c.algorithm, flags, options, options.until_distinct_ns, buffers, step);
  }, &failed);
  if (!ran.ok()) return order.size() == 1 && !failed.empty() ? failed.front().status : ran.status();
  if (*ran > 0) {
    dispatcher.Ran(decision, order[*ran]);
    step.dispatch_reason += "; " + DescribeFailures(failed) + "; " + order[*ran].Id() +
                            " ran instead, as PyTorch moves past a cuDNN error or an out-of-memory";
  }
  return Status::Ok();
}

}  // namespace

void AskNotesTheLogDoesNotGive(KernelFacts& k) {
  if (!k.cudnn_ran) return;
  const Result<EngineNotes> asked = AskCudnnEngineNotes(*k.cudnn_ran);
  if (asked.ok()) {
    k.numerical_notes = asked->numerical;
    k.notes_unknown.clear();
  } else {
    k.notes_unknown += ", and cuDNN could not be asked: " + asked.status().message();
  }
}

Result<std::vector<ControlTry>> TryInTurn(const std::vector<Algorithm>& candidates,
                                          const std::function<Result<ControlTry>(const Algorithm&)>& attempt) {
  std::vector<ControlTry> tries;
  for (const Algorithm& a : candidates) {
    BC_ASSIGN_OR_RETURN(ControlTry t, attempt(a));
    tries.push_back(std::move(t));
    if (tries.back().outcome == ControlOutcome::kVaried) break;
  }
  return tries;
}

std::string DescribeTries(const std::vector<ControlTry>& tries) {
  std::string out;
  for (const ControlTry& t : tries) {
    out += (out.empty() ? "" : "; ") + t.candidate +
           (t.outcome == ControlOutcome::kDidNotRun ? " did not run (" + t.detail + ")"
            : t.outcome == ControlOutcome::kOneDigest ? " one digest " + t.detail
                                                     : " varied " + t.detail);
  }
  return out;
}

void PoisonOutput(int r, std::vector<float>& out) {
  // On the case's threads: a large output is a memory pass worth sharing.
  // A small one is not: a parallel region costs about a microsecond.
  const float poison = static_cast<float>(r + 1) * 1e30f;
  const int64_t n = static_cast<int64_t>(out.size());
  if (n < (int64_t{1} << 18)) {
    std::fill(out.begin(), out.end(), poison);
    return;
  }
#pragma omp parallel for simd schedule(static)
  for (int64_t i = 0; i < n; ++i) out[i] = poison;
}

Status RunRepeat(PreparedOp& op, int r, std::vector<float>& out, StepRun& step) {
  PoisonOutput(r, out);  Stopwatch watch;
  BC_RETURN_IF_ERROR(op.Execute());
  const int64_t host_ns = watch.ElapsedNs();
  const std::optional<double> device_ns = op.DeviceTimeNs();
  step.device_timed = device_ns.has_value();
  step.times_ns.push_back(device_ns ? static_cast<int64_t>(*device_ns) : host_ns);
  BC_RETURN_IF_ERROR(op.Fetch());
  step.digests.push_back(Digest(out));
  return Status::Ok();
}

Result<CaseRun> RunCase(const CaseSpec& spec, const RunOptions& options) {
  if (const std::string missing = spec.MissingEnv(); !missing.empty()) {
    return Status(StatusCode::kUnavailable, "the case needs a process started with " + missing +
                                                " (ctest starts each case so; or set it and run the case alone)");
  }
  const int64_t budget = MemoryBudgetBytes();
  for (const Problem& p : spec.steps) {
    if (const int64_t need = Buffers::BytesFor(p); need > budget) {
      return Status(StatusCode::kInvalidArgument,
                    FormatProblem(p) + " needs " + std::to_string(need) + " bytes of buffers, over the memory budget of " +
                        std::to_string(budget) + " bytes (BACKENDCHECK_MEMORY_BUDGET_MIB)");
    }
  }
  const BackendFlags& flags = spec.flags;
  ThreadsGuard threads(spec.threads);
  Dispatcher dispatcher;
  CaseRun run;
  run.spec = spec;
  for (const Problem& p : spec.steps) {
    StepRun step;
    step.problem = p;
    ResetPeakRss();
    Stopwatch step_watch;
    Buffers buffers = Buffers::For(p);
    FillInputs(p, buffers);
    Result<DispatchDecision> decision =
        dispatcher.Decide(spec, p, flags, CandidateTimer(p, flags, buffers, &step.workspace_bytes), buffers);
    if (!decision.ok()) return decision.status();
    step.engine = decision->chosen.engine;
    step.engine_version = decision->engine->availability().version;
    step.dispatch_reason = decision->reason;
    step.selection = decision->selection;
    step.device_peak_bytes = decision->search_peak_device_bytes;

    // The engine's status as it said it (a skip's reason reaches the report).
    const Status ran = spec.algorithm == kAnyNondeterministic && options.until_distinct_ns > 0
                           ? RunControlInTurn(*decision->engine, p, flags, options, buffers, step)
                           : RunChoice(dispatcher, *decision, p, flags, options, buffers, step);
    if (!ran.ok()) return ran;
    std::vector<float>& out = buffers.Output(p);
    step.step_ns = step_watch.ElapsedNs();
    step.rss_peak_bytes = PeakRssBytes();
    step.degenerate = IsDegenerate(out);

    if (options.compare_to_reference) {
      const BoundedArithmetic arithmetic =
          ArithmeticOf(ComputeTypeOf(p, step.engine, flags), step.kernel.numerical_notes, step.kernel.notes_unknown);
      step.compute_type = arithmetic.type;
      step.unbounded = arithmetic.unbounded;
      step.error = CheckAgainstReference(p, buffers, out, step.compute_type);
    }
    run.steps.push_back(std::move(step));
  }
  run.searches = dispatcher.selector().searches();
  return run;
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

nlohmann::json RowOptions(const CaseRow& row) {
  nlohmann::json o = nlohmann::json::parse(row.options, nullptr, false);
  return o.is_object() ? o : nlohmann::json::object();
}

bool CheckRequested(const CaseRow& row, std::string_view check) {
  const nlohmann::json o = RowOptions(row);
  if (!o.contains("checks")) return true;
  for (const auto& c : o["checks"]) {
    if (c.is_string() && c.get<std::string>() == check) return true;
  }
  return false;
}

}  // namespace bc
