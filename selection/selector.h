// AlgorithmSelector: PyTorch's way of choosing among candidate algorithms,
// for any engine that lists them (aten/src/ATen/native/cudnn/Conv_v7.cpp).
//
// - deterministic: candidates whose property is not deterministic are
//   dropped first. None left is an error that names the problem; when the
//   filter comes from use_deterministic_algorithms with warn_only, it is
//   PyTorch's warning instead and the unfiltered candidates are used.
// - benchmark off: no timing. With deterministic on, the pinned default of
//   the direction when it is a candidate (PyTorch pins one algorithm per
//   direction); otherwise the first candidate in heuristic order.
// - benchmark on: the cache is consulted with the problem's key (the fields
//   of PyTorch's ConvolutionParams, including deterministic and allow_tf32).
//   On a miss, up to benchmark_limit candidates (0: all) are timed in
//   heuristic order, the fastest is chosen and cached (FastestTimed: ties
//   go to the earlier candidate).
// - cache_without_benchmark (cuDNN's own paths, selection/cudnn_policy.h):
//   the cache is consulted, and a benchmark-off choice stored, whatever
//   benchmark says, as Conv_v7.cpp and Conv_v8.cpp do; the key carries no
//   benchmark field. store_without_benchmark stores the choice without
//   consulting the cache (Conv_v7's pinned default).
// Every decision is returned as a Selection: the candidates, the times, the
// choice, whether the cache hit, and why. The selector calls no engine; the
// caller passes a function that times one candidate (TimeCandidate).
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "harness/algorithm.h"
#include "harness/status.h"

namespace bc {

struct SelectorOptions {
  bool benchmark = false;
  bool deterministic = false;
  // The filter comes from use_deterministic_algorithms (not cudnn.deterministic):
  // an empty filtered list is PyTorch's alert, which warn_only softens.
  bool deterministic_algorithms = false;
  bool warn_only = false;
  int benchmark_limit = 10;  // 0: every candidate
  bool cache_without_benchmark = false;
  std::string pinned_deterministic;  // Candidate::Id() pinned for deterministic, benchmark off
  int cache_limit = 0;               // SelectionRules::cache_limit
  bool retry_at_execution = false;   // SelectionRules::retry_at_execution
  bool store_without_benchmark = false;  // SelectionRules::store_without_benchmark
};

// How PyTorch's choice cache and cudnn.benchmark_limit apply to an engine's
// candidates (Engine::SelectionRules).
struct SelectionRules {
  bool cache_without_benchmark = false;
  bool benchmark_limit = true;
  // Choices the cache keeps, least recently used evicted first: 0 unbounded,
  // negative none (Conv_v8's TORCH_CUDNN_V8_API_LRU_CACHE_LIMIT).
  int cache_limit = 0;
  // A choice that fails at execution with a cuDNN error or an out-of-memory
  // gives way to the next candidate (Selection::then), as Conv_v7's try_all
  // and Conv_v8's try_configs and try_plans do.
  bool retry_at_execution = false;
  // A benchmark-off choice is stored even where the cache is not read:
  // Conv_v7's try_all runs the pinned default without a lookup, then inserts
  // it, and a later call with benchmark on and the same key reuses it.
  bool store_without_benchmark = false;
};

struct Selection {
  Candidate chosen;
  std::vector<Candidate> candidates;      // as offered, heuristic order
  std::vector<Candidate> eligible;        // after the deterministic filter
  std::map<std::string, double> time_ns;  // by Candidate::Id(), for those timed
  std::string cache;                      // "hit", "miss" or "none" (benchmark off)
  std::string reason;
  std::string warning;  // the warn_only text, when it applied
  double search_ns = 0;  // wall time spent timing candidates
  // With retry_at_execution, what runs next, in order, when the chosen one
  // fails at execution: benchmark off, the eligible candidates after it in
  // heuristic order; benchmark on, the other timed ones, fastest first. The
  // pinned default (onlyDefaultAlgorithms) and a cache hit have none.
  std::vector<Candidate> then;
};

// The selection floor calls no engine: what it needs of one, its caller
// (the runner, or an engine's own search) provides through these two.
// Times one candidate; returns nanoseconds (an error drops the candidate,
// as a failing cudnnFind result does).
using TimeCandidate = std::function<Result<double>(const Candidate&)>;
// Runs one candidate at execution.
using RunCandidate = std::function<Status(const Candidate&)>;

// One candidate that failed at execution, and how.
struct ExecutionTry {
  std::string candidate;  // Candidate::Id()
  Status status;
};
// Runs `order` by `run` until one succeeds, as PyTorch runs a convolution's
// candidates, and returns the index of the one that ran. A failure PyTorch
// catches (FailureSource kCudnn or kOutOfMemory) moves on to the next and is
// appended to `failed`; any other failure is returned as it is. When every
// candidate failed so: UNIMPLEMENTED when each was a refusal (UNIMPLEMENTED
// or UNAVAILABLE: nothing here implements the problem), INTERNAL otherwise,
// with PyTorch's "unable to find" and every failure.
Result<size_t> TryAtExecution(const std::vector<Candidate>& order, const RunCandidate& run,
                              std::vector<ExecutionTry>* failed);
// "algo_1 failed at execution (...); algo_0 failed at execution (...)".
std::string DescribeFailures(const std::vector<ExecutionTry>& failed);

// The fastest of `order`'s candidates that have a time in `time_ns` (by
// Candidate::Id()); a tie goes to the one earlier in `order`, as a stable
// sort by time leaves it. nullopt when none was timed.
std::optional<Candidate> FastestTimed(const std::vector<Candidate>& order, const std::map<std::string, double>& time_ns);

// cudnn.benchmark_limit as cudnn-frontend's time_sorted_plan counts it:
// `run(i)` times the i-th of `n` in order, returning whether it ran, until
// `limit` of them ran (0: all); one that fails is passed over and not
// counted. Returns how many were tried. The selector's search and the graph
// engine's own (backends/cudnn/v8.cc) both count so.
size_t TimeUntilLimit(size_t n, int limit, const std::function<bool(size_t)>& run);

class AlgorithmSelector {
 public:
  // `key` identifies the problem for the cache (see ConvolutionParams);
  // `what` names it in errors (the problem's repro string).
  Result<Selection> Select(const std::string& key, const std::string& what, const std::vector<Candidate>& candidates,
                           const SelectorOptions& options, const TimeCandidate& time);

  // The cache lookup, done as PyTorch does it: before any candidate is
  // enumerated (a hit costs a map lookup, not a heuristic query). nullopt
  // when the options do not consult the cache or the key has no choice yet.
  // A hit's Selection lists no candidates: none were asked for.
  std::optional<Selection> Cached(const std::string& key, const SelectorOptions& options) const;

  // PyTorch caches what ran: when the choice for `key` gave way at
  // execution to `ran`, the cache keeps `ran` instead (a key with no cached
  // choice stays without one).
  void Ran(const std::string& key, const SelectorOptions& options, const Candidate& ran);

  int searches() const { return searches_; }
  size_t cache_size() const { return cache_.size(); }
  void ClearCache() { cache_.clear(); }

 private:
  struct Cached_ {
    Candidate chosen;
    std::string warning;  // warn_only's text, repeated on every hit as PyTorch warns on every call
    mutable uint64_t used = 0;  // when it was last stored or hit, for the LRU limit
  };
  void Store(const std::string& key, const SelectorOptions& options, const Selection& s);
  std::map<std::string, Cached_> cache_;
  mutable uint64_t clock_ = 0;
  int searches_ = 0;
};

// PyTorch's alert texts (aten/src/ATen/Context.cpp, alertNotDeterministic).
std::string NotDeterministicError(const std::string& caller);
std::string NotDeterministicWarning(const std::string& caller);

}  // namespace bc
