// Running one case the way every fixture does: parse it, and for each step
// of its schedule let the dispatcher choose (timing candidates when the
// selector benchmarks), fill seeded inputs, run the choice `repeats` times
// with a digest of the output after each run, and compare the last output
// with the reference oracle. Per step it records the selection (candidates,
// times, choice, cache hit or miss), the wall time of the step (search
// included), and peak memory: the process's resident set during the step and
// the largest workspace that was allocated.
// RunCase returns UNAVAILABLE or UNIMPLEMENTED for what this machine cannot
// evaluate (the caller skips with that reason), NOT_DETERMINISTIC for
// PyTorch's alert, and other errors for real failures.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "runner/dispatch.h"
#include "harness/case.h"
#include "harness/numerics.h"
#include "runner/case_table.h"

namespace bc {

struct StepRun {
  Problem problem;
  std::string engine;
  std::string engine_version;
  std::string dispatch_reason;
  Algorithm algorithm;
  std::string implementation;
  KernelFacts kernel;  // the kind of kernel that ran; kernel_class always set (the engine's role by default)
  std::optional<Selection> selection;
  std::vector<uint64_t> digests;
  std::vector<int64_t> times_ns;  // each Execute
  int64_t step_ns = 0;            // the whole step: selection, search, preparation, runs
  int64_t rss_peak_bytes = 0;     // resident set high-water mark during the step
  int64_t workspace_bytes = 0;    // largest workspace allocated: the chosen one, or any timed in a search
  int64_t device_peak_bytes = 0;  // device memory in use at the peak of an engine's own search (GPU)
  bool device_timed = false;      // times_ns come from CUDA events
  std::optional<ErrorMetrics> error;
  ComputeType compute_type = ComputeType::kF32;  // the arithmetic error->bound covers
  std::string unbounded;  // why no bound covers what ran (ArithmeticOf): the tolerance check is not evaluated
  bool degenerate = false;

  int DistinctDigests() const;
  // How many runs it took until a digest differed from the first one; 0
  // when every digest is the same.
  int RunsToDistinct() const;
};

struct CaseRun {
  CaseSpec spec;
  std::vector<StepRun> steps;
  const StepRun& first() const { return steps.front(); }
  int searches = 0;  // selector cache misses over the schedule
};

struct RunOptions {
  int repeats = 1;
  bool compare_to_reference = true;
  // A positive control: after `repeats`, keep running until two digests
  // differ, for at most this long (0: no more than `repeats`) and at most
  // kMaxControlRuns runs. A race that needs an unlucky schedule to show is
  // then caught on a loaded machine too; the runs it took are recorded.
  int64_t until_distinct_ns = 0;
};
inline constexpr int kMaxControlRuns = 5000;
// The time a positive control may take to show a second digest.
inline constexpr int64_t kControlBudgetNs = 30'000'000'000;

// The host memory one step's buffers may take: BACKENDCHECK_MEMORY_BUDGET_MIB
// MiB, by default the specs' default (memory_budget_mib). RunCase refuses a
// larger step (INVALID_ARGUMENT) before allocating anything.
inline constexpr int64_t kDefaultMemoryBudgetMib = 4096;
int64_t MemoryBudgetBytes();

Result<CaseRun> RunCase(const CaseSpec& spec, const RunOptions& options);

// Repeat `r` of a prepared op, as every case runs it: poison `out` (the host
// output buffer), Execute (timed: CUDA events when the engine has them, host
// otherwise), Fetch, and digest the output; appends the time and digest to
// `step`. The benchmarks measure the harness's cost per run through this.
Status RunRepeat(PreparedOp& op, int r, std::vector<float>& out, StepRun& step);
// Fills `out` with repeat r's poison value, so that a run that writes nothing
// cannot pass as repeatable.
void PoisonOutput(int r, std::vector<float>& out);

// Where cuDNN's log of PyTorch's call names the engine that ran but not its
// notes (k.cudnn_ran), cuDNN's own notes on it (AskCudnnEngineNotes) become
// the kernel's; where cuDNN cannot be asked, the notes stay unknown and
// k.notes_unknown says why (the tolerance check is then not evaluated).
void AskNotesTheLogDoesNotGive(KernelFacts& k);

// A positive control's try of one candidate: it did not build or run (its
// preparation or a run failed, as PyTorch's try_configs moves past a config
// that fails), it ran with one digest, or it varied.
enum class ControlOutcome { kDidNotRun, kOneDigest, kVaried };
struct ControlTry {
  std::string candidate;
  ControlOutcome outcome = ControlOutcome::kDidNotRun;
  std::string detail;  // why it did not run, or how many runs it took
  // Why it did not run: UNIMPLEMENTED or UNAVAILABLE when the library
  // refused it (no such config here), any other code a fault.
  StatusCode code = StatusCode::kOk;
};
// Tries `candidates` in turn, by `attempt`, until one varies, and returns
// every try in order; an error of `attempt` itself stops the trial.
Result<std::vector<ControlTry>> TryInTurn(const std::vector<Algorithm>& candidates,
                                          const std::function<Result<ControlTry>(const Algorithm&)>& attempt);
// The tries, one phrase each: "algo_1 did not run (...); algo_0 one digest in
// 40 runs; algo_3 varied after 2 runs".
std::string DescribeTries(const std::vector<ControlTry>& tries);

// True for the statuses that mean "not evaluated here".
bool IsNotEvaluated(const Status& s);

// The row's fixture options (an empty object when none).
nlohmann::json RowOptions(const CaseRow& row);
// Whether the suite asked for a check ("bitwise", "tolerance", "selection",
// "perf-bound"): a suite without `checks` runs every check of its fixture.
bool CheckRequested(const CaseRow& row, std::string_view check);

// Parses row.repro and checks it is canonical (the generator and the harness
// agree on the format).
Result<CaseSpec> ParseRow(const CaseRow& row);

}  // namespace bc
