#include "selection/selector.h"

#include <algorithm>

#include "harness/timer.h"

namespace bc {

size_t TimeUntilLimit(size_t n, int limit, const std::function<bool(size_t)>& run) {
  size_t ran = 0, i = 0;
  while (i < n && (limit <= 0 || ran < static_cast<size_t>(limit))) ran += run(i++) ? 1 : 0;
  return i;
}

const char* DeterminismName(Determinism d) {
  return d == Determinism::kDeterministic ? "deterministic" : "nondeterministic";
}

std::string NotDeterministicError(const std::string& caller) {
  return caller +
         " does not have a deterministic implementation, but you set 'torch.use_deterministic_algorithms(True)'. "
         "You can turn off determinism just for this operation, or you can use the 'warn_only=True' option, if "
         "that's acceptable for your application. You can also file an issue at "
         "https://github.com/pytorch/pytorch/issues to help us prioritize adding deterministic support for this "
         "operation.";
}

std::string NotDeterministicWarning(const std::string& caller) {
  return caller +
         " does not have a deterministic implementation, but you set "
         "'torch.use_deterministic_algorithms(True, warn_only=True)'. You can file an issue at "
         "https://github.com/pytorch/pytorch/issues to help us prioritize adding deterministic support for this "
         "operation.";
}

namespace {

std::string CacheKey(const std::string& key, const SelectorOptions& options) {
  return key + "|deterministic=" + (options.deterministic ? "1" : "0");
}

// Benchmark off: the pinned default when deterministic pins one, otherwise
// the first eligible candidate. PyTorch's Conv_v7 runs the pinned default
// without asking Get_v7 (onlyDefaultAlgorithms): where the heuristics do not
// list it, it runs all the same, with the descriptor's math type and the
// workspace cuDNN sizes for it (kWorkspaceUnknown: the engine asks).
Selection ChooseWithoutTiming(Selection s, const SelectorOptions& options) {
  s.cache = options.cache_without_benchmark ? "miss" : "none";
  if (options.deterministic && s.warning.empty() && !options.pinned_deterministic.empty()) {
    auto pinned = std::find_if(s.eligible.begin(), s.eligible.end(),
                               [&](const Candidate& c) { return c.Id() == options.pinned_deterministic; });
    if (pinned != s.eligible.end()) {  // onlyDefaultAlgorithms: nothing runs after it
      s.chosen = *pinned;
      s.reason = "deterministic and benchmark off: the pinned default " + pinned->Id();
      return s;
    }
    const size_t colon = options.pinned_deterministic.find(':');
    s.chosen = {options.pinned_deterministic.substr(0, colon),
                {options.pinned_deterministic.substr(colon + 1), Determinism::kDeterministic, kWorkspaceUnknown}};
    s.reason = "deterministic and benchmark off: the pinned default " + options.pinned_deterministic +
               ", run without asking the heuristics, which do not list it here";
    return s;
  }
  s.chosen = s.eligible.front();
  s.reason = "benchmark off: first " + std::string(options.deterministic ? "deterministic " : "") +
             "candidate in heuristic order";
  if (options.retry_at_execution) s.then.assign(s.eligible.begin() + 1, s.eligible.end());
  return s;
}

}  // namespace

std::optional<Candidate> FastestTimed(const std::vector<Candidate>& order, const std::map<std::string, double>& time_ns) {
  std::optional<Candidate> best;
  double best_ns = 0;
  for (const Candidate& c : order) {
    auto t = time_ns.find(c.Id());
    if (t == time_ns.end()) continue;
    if (!best || t->second < best_ns) {
      best = c;
      best_ns = t->second;
    }
  }
  return best;
}

Result<Selection> AlgorithmSelector::Select(const std::string& key, const std::string& what,
                                            const std::vector<Candidate>& candidates,
                                            const SelectorOptions& options, const TimeCandidate& time) {
  Selection s;
  s.candidates = candidates;
  if (candidates.empty()) return Status(StatusCode::kUnimplemented, "no candidate algorithm for " + what);

  s.eligible = candidates;
  if (options.deterministic) {
    std::erase_if(s.eligible, [](const Candidate& c) { return c.algorithm.determinism != Determinism::kDeterministic; });
    if (s.eligible.empty()) {
      if (options.deterministic_algorithms && options.warn_only) {
        s.warning = NotDeterministicWarning(what);
        s.eligible = candidates;
      } else if (options.deterministic_algorithms) {
        return Status(StatusCode::kNotDeterministic, NotDeterministicError(what));
      } else {
        return Status(StatusCode::kNotDeterministic,
                      "deterministic mode is on, but no deterministic algorithm is available for " + what);
      }
    }
  }

  if (std::optional<Selection> hit = Cached(key, options)) {
    hit->candidates = s.candidates;
    hit->eligible = s.eligible;
    return *hit;
  }
  if (!options.benchmark) {
    s = ChooseWithoutTiming(std::move(s), options);
    if (options.cache_without_benchmark || options.store_without_benchmark) Store(key, options, s);
    return s;
  }
  s.cache = "miss";
  ++searches_;
  Stopwatch search;
  std::string failures;
  const size_t tried = TimeUntilLimit(s.eligible.size(), options.benchmark_limit, [&](size_t i) {
    const Candidate& c = s.eligible[i];
    Result<double> t = time(c);
    if (!t.ok()) {
      failures.append(" ").append(c.Id()).append(" failed (").append(t.status().message()).append(");");
      return false;
    }
    s.time_ns[c.Id()] = t.value();
    return true;
  });
  const std::optional<Candidate> best = FastestTimed(s.eligible, s.time_ns);
  s.search_ns = static_cast<double>(search.ElapsedNs());
  if (!best) return Status(StatusCode::kInternal, "every timed candidate failed for " + what + ":" + failures);
  s.chosen = *best;
  if (options.retry_at_execution) {
    for (const Candidate& c : s.eligible) {
      if (s.time_ns.count(c.Id()) != 0 && c.Id() != best->Id()) s.then.push_back(c);
    }
    std::stable_sort(s.then.begin(), s.then.end(),
                     [&](const Candidate& a, const Candidate& b) { return s.time_ns.at(a.Id()) < s.time_ns.at(b.Id()); });
  }
  s.reason = "benchmark on: fastest of " + std::to_string(s.time_ns.size()) + " timed candidate(s)" +
             (tried < s.eligible.size() ? " (benchmark_limit " + std::to_string(options.benchmark_limit) + ")" : "");
  Store(key, options, s);
  return s;
}

void AlgorithmSelector::Store(const std::string& key, const SelectorOptions& options, const Selection& s) {
  if (options.cache_limit < 0) return;  // no caching
  const std::string k = CacheKey(key, options);
  if (options.cache_limit > 0 && !cache_.count(k) && cache_.size() >= static_cast<size_t>(options.cache_limit)) {
    cache_.erase(std::min_element(cache_.begin(), cache_.end(),
                                  [](const auto& a, const auto& b) { return a.second.used < b.second.used; }));
  }
  cache_[k] = {s.chosen, s.warning, ++clock_};
}

void AlgorithmSelector::Ran(const std::string& key, const SelectorOptions& options, const Candidate& ran) {
  auto it = cache_.find(CacheKey(key, options));
  if (it != cache_.end()) it->second.chosen = ran;
}

Result<size_t> TryAtExecution(const std::vector<Candidate>& order, const RunCandidate& run,
                              std::vector<ExecutionTry>* failed) {
  bool refused = true;
  for (size_t i = 0; i < order.size(); ++i) {
    Status s = run(order[i]);
    if (s.ok()) return i;
    if (s.source() != FailureSource::kCudnn && s.source() != FailureSource::kOutOfMemory) return s;
    refused = refused && NotEvaluatedHere(s.code());
    failed->push_back({order[i].Id(), std::move(s)});
  }
  return Status(refused ? StatusCode::kUnimplemented : StatusCode::kInternal,
                "unable to find a valid cuDNN algorithm to run convolution: " + DescribeFailures(*failed));
}

std::string DescribeFailures(const std::vector<ExecutionTry>& failed) {
  std::string out;
  for (const ExecutionTry& t : failed) {
    out.append(out.empty() ? "" : "; ").append(t.candidate).append(" failed at execution (").append(t.status.message()).append(")");
  }
  return out;
}

std::optional<Selection> AlgorithmSelector::Cached(const std::string& key, const SelectorOptions& options) const {
  if (!options.benchmark && !options.cache_without_benchmark) return std::nullopt;
  auto hit = cache_.find(CacheKey(key, options));
  if (hit == cache_.end()) return std::nullopt;
  hit->second.used = ++clock_;
  Selection s;
  s.chosen = hit->second.chosen;
  s.warning = hit->second.warning;
  s.cache = "hit";
  s.reason = std::string(options.benchmark ? "benchmark on" : "benchmark off") + ": cached choice for this key";
  return s;
}

}  // namespace bc
