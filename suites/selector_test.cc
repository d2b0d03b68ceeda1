// Unit tests of the AlgorithmSelector's semantics, on synthetic candidates
// and a fake timer, so each rule is checked exactly.
#include <gtest/gtest.h>

#include <map>

#include "selection/selector.h"

namespace bc {
namespace {

Candidate C(const std::string& name, Determinism d, int64_t ws = 0) { return {"eng", {name, d, ws}}; }

const std::vector<Candidate> kPool = {
    C("fast_atomic", Determinism::kNondeterministic), C("slow_det", Determinism::kDeterministic),
    C("mid_det", Determinism::kDeterministic), C("pinned_det", Determinism::kDeterministic)};

// Fake times by candidate name; counts calls.
struct FakeTimer {
  std::map<std::string, double> times = {
      {"fast_atomic", 10}, {"slow_det", 50}, {"mid_det", 20}, {"pinned_det", 40}};
  int calls = 0;
  TimeCandidate fn() {
    return [this](const Candidate& c) -> Result<double> {
      ++calls;
      if (c.algorithm.name == "broken") return Status(StatusCode::kInternal, "launch failed");
      return times.at(c.algorithm.name);
    };
  }
};

TEST(Selector, BenchmarkOffTakesFirstInHeuristicOrderWithoutTiming) {
  AlgorithmSelector sel;
  FakeTimer t;
  Result<Selection> s = sel.Select("k", "p", kPool, {}, t.fn());
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->chosen.algorithm.name, "fast_atomic");
  EXPECT_EQ(s->cache, "none");
  EXPECT_EQ(t.calls, 0);
  EXPECT_EQ(sel.searches(), 0);
}

TEST(Selector, DeterministicFilterNeverSelectsANondeterministicCandidate) {
  FakeTimer t;
  for (bool benchmark : {false, true}) {
    for (int limit : {0, 1, 10}) {
      AlgorithmSelector sel;
      SelectorOptions o{.benchmark = benchmark, .deterministic = true, .benchmark_limit = limit};
      Result<Selection> s = sel.Select("k", "p", kPool, o, t.fn());
      ASSERT_TRUE(s.ok());
      EXPECT_EQ(s->chosen.algorithm.determinism, Determinism::kDeterministic);
      for (const Candidate& c : s->eligible) EXPECT_EQ(c.algorithm.determinism, Determinism::kDeterministic);
    }
  }
}

TEST(Selector, DeterministicWithBenchmarkOffUsesThePinnedDefault) {
  AlgorithmSelector sel;
  FakeTimer t;
  SelectorOptions o{.deterministic = true, .pinned_deterministic = "eng:pinned_det"};
  Result<Selection> s = sel.Select("k", "p", kPool, o, t.fn());
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->chosen.algorithm.name, "pinned_det");
  EXPECT_EQ(t.calls, 0);
  // PyTorch runs the pinned default without asking the heuristics: one they
  // do not list runs all the same, its workspace sized by the engine.
  o.pinned_deterministic = "eng:absent";
  Result<Selection> absent = sel.Select("k", "p", kPool, o, t.fn());
  ASSERT_TRUE(absent.ok());
  EXPECT_EQ(absent->chosen.Id(), "eng:absent");
  EXPECT_EQ(absent->chosen.algorithm.determinism, Determinism::kDeterministic);
  EXPECT_EQ(absent->chosen.algorithm.workspace_bytes, kWorkspaceUnknown);
  EXPECT_NE(absent->reason.find("without asking the heuristics"), std::string::npos) << absent->reason;
  EXPECT_EQ(t.calls, 0);
}

TEST(Selector, BenchmarkTimesCandidatesAndChoosesTheFastest) {
  AlgorithmSelector sel;
  FakeTimer t;
  Result<Selection> s = sel.Select("k", "p", kPool, {.benchmark = true}, t.fn());
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->chosen.algorithm.name, "fast_atomic");
  EXPECT_EQ(s->cache, "miss");
  EXPECT_EQ(s->time_ns.size(), 4u);
  for (const auto& [id, ns] : s->time_ns) EXPECT_GE(ns, s->time_ns.at(s->chosen.Id())) << id;
  EXPECT_EQ(t.calls, 4);
}

TEST(Selector, CacheHitsForTheSameKeyAndSearchesForANewOne) {
  AlgorithmSelector sel;
  FakeTimer t;
  for (int step = 0; step < 5; ++step) {
    Result<Selection> s = sel.Select("fixed-shape", "p", kPool, {.benchmark = true}, t.fn());
    ASSERT_TRUE(s.ok());
    EXPECT_EQ(s->cache, step == 0 ? "miss" : "hit");
  }
  EXPECT_EQ(sel.searches(), 1);
  for (const char* key : {"128", "256", "512"}) ASSERT_TRUE(sel.Select(key, "p", kPool, {.benchmark = true}, t.fn()).ok());
  EXPECT_EQ(sel.searches(), 4);
  EXPECT_EQ(t.calls, 4 * 4);
}

TEST(Selector, CachedIsTheHitPathWithoutCandidatesAndOnlyInBenchmarkMode) {
  AlgorithmSelector sel;
  FakeTimer t;
  EXPECT_FALSE(sel.Cached("k", {.benchmark = true})) << "nothing cached before the first search";
  ASSERT_TRUE(sel.Select("k", "p", kPool, {.benchmark = true}, t.fn()).ok());
  std::optional<Selection> hit = sel.Cached("k", {.benchmark = true});
  ASSERT_TRUE(hit);
  EXPECT_EQ(hit->cache, "hit");
  EXPECT_EQ(hit->chosen.algorithm.name, "fast_atomic");
  EXPECT_TRUE(hit->candidates.empty()) << "a hit enumerates nothing";
  EXPECT_FALSE(sel.Cached("k", {.benchmark = false})) << "benchmark off never reads the cache";
  EXPECT_FALSE(sel.Cached("k", {.benchmark = true, .deterministic = true})) << "another key";
  EXPECT_EQ(t.calls, 4);
}

// Conv_v7's pinned default (deterministic on, benchmark off) reads no cache
// but try_all inserts it; the key has no benchmark field, so a later call
// with benchmark on reuses it and searches nothing.
TEST(Selector, ThePinnedDefaultIsStoredAndABenchmarkCallReusesIt) {
  AlgorithmSelector sel;
  FakeTimer t;
  const SelectorOptions pinned{.deterministic = true, .pinned_deterministic = kPool[1].Id(),
                               .store_without_benchmark = true};
  Result<Selection> first = sel.Select("k", "p", kPool, pinned, t.fn());
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(first->cache, "none") << "not read";
  EXPECT_EQ(first->chosen.Id(), kPool[1].Id());
  Result<Selection> again = sel.Select("k", "p", kPool, pinned, t.fn());
  EXPECT_EQ(again->cache, "none") << "the pinned default never reads the cache";
  Result<Selection> benchmark = sel.Select("k", "p", kPool, {.benchmark = true, .deterministic = true}, t.fn());
  ASSERT_TRUE(benchmark.ok());
  EXPECT_EQ(benchmark->cache, "hit");
  EXPECT_EQ(benchmark->chosen.Id(), kPool[1].Id());
  EXPECT_EQ(t.calls, 0) << "nothing was timed";
  // Without the rule the benchmark call searches.
  AlgorithmSelector plain;
  ASSERT_TRUE(plain.Select("k", "p", kPool, {.deterministic = true, .pinned_deterministic = kPool[1].Id()}, t.fn()).ok());
  EXPECT_EQ(plain.Select("k", "p", kPool, {.benchmark = true, .deterministic = true}, t.fn())->cache, "miss");
}

// cuDNN's own paths (Conv_v7.cpp, Conv_v8.cpp) cache whatever ran, with or
// without benchmark: the first choice for a key is reused by every later
// call, even one with benchmark on, which then searches nothing.
TEST(Selector, CacheWithoutBenchmarkStoresAndReusesTheHeuristicChoice) {
  AlgorithmSelector sel;
  FakeTimer t;
  const SelectorOptions off{.cache_without_benchmark = true};
  Result<Selection> first = sel.Select("k", "p", kPool, off, t.fn());
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(first->cache, "miss");
  EXPECT_EQ(first->chosen.algorithm.name, "fast_atomic");
  Result<Selection> again = sel.Select("k", "p", kPool, off, t.fn());
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->cache, "hit");
  ASSERT_TRUE(sel.Cached("k", {.benchmark = true, .cache_without_benchmark = true}));
  Result<Selection> benchmark = sel.Select("k", "p", kPool, {.benchmark = true, .cache_without_benchmark = true}, t.fn());
  ASSERT_TRUE(benchmark.ok());
  EXPECT_EQ(benchmark->cache, "hit");
  EXPECT_EQ(t.calls, 0) << "nothing was timed: the key had a choice";
  EXPECT_EQ(sel.searches(), 0);
  // Without the rule, benchmark off neither reads nor fills the cache.
  AlgorithmSelector plain;
  EXPECT_EQ(plain.Select("k", "p", kPool, {}, t.fn())->cache, "none");
  EXPECT_EQ(plain.cache_size(), 0u);
}

// Ties go to the earlier candidate in heuristic order, in the selector and
// in FastestTimed (which the selection suite's chosen_fastest check uses),
// whatever the names' alphabetical order.
TEST(Selector, TiesGoToTheEarlierCandidateEverywhere) {
  const std::vector<Candidate> pool = {C("zeta", Determinism::kDeterministic), C("alpha", Determinism::kDeterministic),
                                       C("mid", Determinism::kDeterministic)};
  FakeTimer t;
  t.times = {{"zeta", 7}, {"alpha", 7}, {"mid", 9}};
  AlgorithmSelector sel;
  Result<Selection> s = sel.Select("k", "p", pool, {.benchmark = true}, t.fn());
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->chosen.algorithm.name, "zeta");
  const std::optional<Candidate> fastest = FastestTimed(s->eligible, s->time_ns);
  ASSERT_TRUE(fastest);
  EXPECT_EQ(fastest->Id(), s->chosen.Id());
  std::vector<Candidate> reversed(pool.rbegin(), pool.rend());
  EXPECT_EQ(FastestTimed(reversed, s->time_ns)->algorithm.name, "alpha");
  EXPECT_FALSE(FastestTimed(pool, {}));
}

TEST(Selector, WarnOnlyWarnsOnEveryCacheHitToo) {
  AlgorithmSelector sel;
  FakeTimer t;
  const std::vector<Candidate> pool = {C("fast_atomic", Determinism::kNondeterministic)};
  const SelectorOptions o{.benchmark = true, .deterministic = true, .deterministic_algorithms = true,
                          .warn_only = true};
  for (int step = 0; step < 3; ++step) {
    Result<Selection> s = sel.Select("k", "scatter_add", pool, o, t.fn());
    ASSERT_TRUE(s.ok());
    EXPECT_EQ(s->cache, step == 0 ? "miss" : "hit");
    EXPECT_NE(s->warning.find("warn_only=True"), std::string::npos) << "step " << step;
  }
  std::optional<Selection> hit = sel.Cached("k", o);
  ASSERT_TRUE(hit);
  EXPECT_NE(hit->warning.find("warn_only=True"), std::string::npos);
}

TEST(Selector, CacheKeyIncludesTheDeterministicFlag) {
  AlgorithmSelector sel;
  FakeTimer t;
  ASSERT_TRUE(sel.Select("k", "p", kPool, {.benchmark = true}, t.fn()).ok());
  Result<Selection> det = sel.Select("k", "p", kPool, {.benchmark = true, .deterministic = true}, t.fn());
  ASSERT_TRUE(det.ok());
  EXPECT_EQ(det->cache, "miss");
  EXPECT_EQ(sel.searches(), 2);
}

TEST(Selector, BothOnStillSearchesButOnlyOverDeterministicCandidates) {
  AlgorithmSelector sel;
  FakeTimer t;
  Result<Selection> s = sel.Select("k", "p", kPool, {.benchmark = true, .deterministic = true}, t.fn());
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->cache, "miss") << "the search runs: benchmark is not wasted";
  EXPECT_EQ(s->time_ns.size(), 3u);
  EXPECT_EQ(s->time_ns.count("eng:fast_atomic"), 0u) << "the nondeterministic candidate is never timed";
  EXPECT_EQ(s->chosen.algorithm.name, "mid_det");
}

TEST(Selector, BenchmarkLimitBoundsTheCandidatesTimed) {
  FakeTimer t;
  AlgorithmSelector a;
  Result<Selection> two = a.Select("k", "p", kPool, {.benchmark = true, .benchmark_limit = 2}, t.fn());
  ASSERT_TRUE(two.ok());
  EXPECT_EQ(two->time_ns.size(), 2u);
  AlgorithmSelector b;
  Result<Selection> all = b.Select("k", "p", kPool, {.benchmark = true, .benchmark_limit = 0}, t.fn());
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->time_ns.size(), kPool.size()) << "0 means all";
}

// cudnn-frontend's time_sorted_plan counts the plans that ran: with a limit
// of 1 and an unbuildable first candidate, the next one is timed and chosen
// (counting the failure, nothing would be timed and the case would fail
// where PyTorch succeeds).
TEST(Selector, BenchmarkLimitCountsOnlyCandidatesThatRan) {
  AlgorithmSelector sel;
  FakeTimer t;
  std::vector<Candidate> pool = {C("broken", Determinism::kDeterministic), C("broken", Determinism::kDeterministic),
                                 C("mid_det", Determinism::kDeterministic), C("slow_det", Determinism::kDeterministic)};
  Result<Selection> s = sel.Select("k", "p", pool, {.benchmark = true, .benchmark_limit = 1}, t.fn());
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->chosen.algorithm.name, "mid_det");
  EXPECT_EQ(t.calls, 3) << "two failures passed over, then one that ran: the limit is reached";
  EXPECT_EQ(s->time_ns.size(), 1u);
  std::vector<size_t> order;
  EXPECT_EQ(TimeUntilLimit(5, 2, [&](size_t i) { order.push_back(i); return i % 2 == 1; }), 4u);
  EXPECT_EQ(order, (std::vector<size_t>{0, 1, 2, 3}));
  EXPECT_EQ(TimeUntilLimit(3, 0, [](size_t) { return true; }), 3u) << "0: all";
  EXPECT_EQ(TimeUntilLimit(3, 5, [](size_t) { return false; }), 3u) << "none ran: every one tried";
}

// Conv_v8's plan cache is an LRU (TORCH_CUDNN_V8_API_LRU_CACHE_LIMIT): at
// its limit the least recently used choice goes, a hit counts as a use, and
// a negative limit caches nothing.
TEST(Selector, TheCacheLimitEvictsTheLeastRecentlyUsedChoice) {
  AlgorithmSelector sel;
  FakeTimer t;
  const SelectorOptions o{.benchmark = true, .cache_limit = 2};
  for (const char* key : {"a", "b"}) ASSERT_TRUE(sel.Select(key, key, kPool, o, t.fn()).ok());
  EXPECT_TRUE(sel.Cached("a", o).has_value());  // "a" is now the more recently used
  ASSERT_TRUE(sel.Select("c", "c", kPool, o, t.fn()).ok());
  EXPECT_EQ(sel.cache_size(), 2u);
  EXPECT_TRUE(sel.Cached("a", o).has_value());
  EXPECT_FALSE(sel.Cached("b", o).has_value()) << "the least recently used is evicted";
  EXPECT_TRUE(sel.Cached("c", o).has_value());
  AlgorithmSelector none;
  const SelectorOptions off{.benchmark = true, .cache_limit = -1};
  ASSERT_TRUE(none.Select("a", "a", kPool, off, t.fn()).ok());
  EXPECT_FALSE(none.Cached("a", off).has_value());
  EXPECT_EQ(none.searches(), 1);
  ASSERT_TRUE(none.Select("a", "a", kPool, off, t.fn()).ok());
  EXPECT_EQ(none.searches(), 2) << "with no cache every call searches";
}

TEST(Selector, AFailingCandidateIsDroppedFromTheSearch) {
  AlgorithmSelector sel;
  FakeTimer t;
  std::vector<Candidate> pool = {C("broken", Determinism::kDeterministic), C("mid_det", Determinism::kDeterministic)};
  Result<Selection> s = sel.Select("k", "p", pool, {.benchmark = true}, t.fn());
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->chosen.algorithm.name, "mid_det");
}

TEST(Selector, NoDeterministicCandidateUnderCudnnDeterministicIsAnErrorNamingTheProblem) {
  AlgorithmSelector sel;
  FakeTimer t;
  std::vector<Candidate> pool = {C("fast_atomic", Determinism::kNondeterministic)};
  Result<Selection> s = sel.Select("k", "conv2d:fwd:f32:mb1ic1ih1iw1oc1kh1kw1sh1sw1ph0pw0dh1dw1g1", pool,
                                   {.deterministic = true}, t.fn());
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), StatusCode::kNotDeterministic);
  EXPECT_NE(s.status().message().find("conv2d:fwd:f32:mb1"), std::string::npos);
}

TEST(Selector, UseDeterministicAlgorithmsRaisesPyTorchsAlert) {
  AlgorithmSelector sel;
  FakeTimer t;
  std::vector<Candidate> pool = {C("fast_atomic", Determinism::kNondeterministic)};
  SelectorOptions o{.deterministic = true, .deterministic_algorithms = true};
  Result<Selection> s = sel.Select("k", "scatter_add", pool, o, t.fn());
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().message().rfind("scatter_add does not have a deterministic implementation, but you set "
                                       "'torch.use_deterministic_algorithms(True)'.",
                                       0),
            0u)
      << s.status().message();
  o.warn_only = true;
  Result<Selection> warned = sel.Select("k", "scatter_add", pool, o, t.fn());
  ASSERT_TRUE(warned.ok());
  EXPECT_EQ(warned->chosen.algorithm.name, "fast_atomic");
  EXPECT_NE(warned->warning.find("'torch.use_deterministic_algorithms(True, warn_only=True)'"), std::string::npos);
}

// What runs next when the choice fails at execution: benchmark off, the
// eligible candidates after it in heuristic order (try_configs, try_all over
// Get_v7's list); benchmark on, the other timed ones fastest first
// (try_plans over time_sorted_plan); the pinned default and a cache hit
// alone; engines without PyTorch's retry, nothing.
TEST(Selector, WhatRunsNextWhenTheChoiceFailsAtExecution) {
  FakeTimer t;
  const auto ids = [](const std::vector<Candidate>& cs) {
    std::vector<std::string> out;
    for (const Candidate& c : cs) out.push_back(c.algorithm.name);
    return out;
  };
  {
    AlgorithmSelector sel;
    Result<Selection> s = sel.Select("k", "p", kPool, {.retry_at_execution = true}, t.fn());
    ASSERT_TRUE(s.ok());
    EXPECT_EQ(ids(s->then), (std::vector<std::string>{"slow_det", "mid_det", "pinned_det"}));
    Result<Selection> det = sel.Select("k", "p", kPool, {.deterministic = true, .retry_at_execution = true}, t.fn());
    ASSERT_TRUE(det.ok());
    EXPECT_EQ(ids(det->then), (std::vector<std::string>{"mid_det", "pinned_det"}));
  }
  {
    AlgorithmSelector sel;
    Result<Selection> s = sel.Select("k", "p", kPool, {.benchmark = true, .retry_at_execution = true}, t.fn());
    ASSERT_TRUE(s.ok());
    EXPECT_EQ(s->chosen.algorithm.name, "fast_atomic");
    EXPECT_EQ(ids(s->then), (std::vector<std::string>{"mid_det", "pinned_det", "slow_det"}));
    Result<Selection> hit = sel.Select("k", "p", kPool, {.benchmark = true, .retry_at_execution = true}, t.fn());
    ASSERT_TRUE(hit.ok());
    EXPECT_EQ(hit->cache, "hit");
    EXPECT_TRUE(hit->then.empty()) << "a cached plan runs alone";
  }
  {
    AlgorithmSelector sel;
    Result<Selection> limited =
        sel.Select("k", "p", kPool, {.benchmark = true, .benchmark_limit = 2, .retry_at_execution = true}, t.fn());
    ASSERT_TRUE(limited.ok());
    EXPECT_EQ(ids(limited->then), (std::vector<std::string>{"slow_det"})) << "only what the search timed";
  }
  {
    AlgorithmSelector sel;
    SelectorOptions o{.deterministic = true, .pinned_deterministic = "eng:pinned_det", .retry_at_execution = true};
    Result<Selection> s = sel.Select("k", "p", kPool, o, t.fn());
    ASSERT_TRUE(s.ok());
    EXPECT_EQ(s->chosen.algorithm.name, "pinned_det");
    EXPECT_TRUE(s->then.empty()) << "onlyDefaultAlgorithms: nothing after the pinned default";
  }
  AlgorithmSelector sel;
  Result<Selection> plain = sel.Select("k", "p", kPool, {}, t.fn());
  ASSERT_TRUE(plain.ok());
  EXPECT_TRUE(plain->then.empty()) << "without retry_at_execution (PyTorch's CPU paths) nothing runs next";
}

TEST(Selector, ExecutionMovesPastCudnnErrorsAndOutOfMemoryOnly) {
  const std::vector<Candidate> order = {C("a", Determinism::kDeterministic), C("b", Determinism::kDeterministic),
                                        C("c", Determinism::kDeterministic)};
  const auto run_with = [&](std::map<std::string, Status> fails) {
    return [fails](const Candidate& c) {
      auto it = fails.find(c.algorithm.name);
      return it == fails.end() ? Status::Ok() : it->second;
    };
  };
  const Status cudnn(StatusCode::kInternal, "cudnnBackendExecute returned 5000", FailureSource::kCudnn);
  const Status oom(StatusCode::kInternal, "cudaMalloc returned 2", FailureSource::kOutOfMemory);
  const Status refused(StatusCode::kUnimplemented, "returned 3000", FailureSource::kCudnn);
  const Status fault(StatusCode::kInternal, "cudaMemcpy returned 700 (illegal address)");

  std::vector<ExecutionTry> failed;
  Result<size_t> ran = TryAtExecution(order, run_with({{"a", cudnn}, {"b", oom}}), &failed);
  ASSERT_TRUE(ran.ok()) << ran.status().ToString();
  EXPECT_EQ(*ran, 2u);
  ASSERT_EQ(failed.size(), 2u);
  EXPECT_EQ(DescribeFailures(failed),
            "eng:a failed at execution (cudnnBackendExecute returned 5000); eng:b failed at execution (cudaMalloc returned 2)");

  failed.clear();
  ran = TryAtExecution(order, run_with({{"a", fault}}), &failed);
  ASSERT_FALSE(ran.ok());
  EXPECT_EQ(ran.status().message(), fault.message()) << "a CUDA fault is PyTorch's exception too: nothing runs after it";
  EXPECT_TRUE(failed.empty());

  failed.clear();
  ran = TryAtExecution(order, run_with({{"a", refused}, {"b", refused}, {"c", refused}}), &failed);
  EXPECT_EQ(ran.status().code(), StatusCode::kUnimplemented) << "every one refused: nothing here implements it";
  EXPECT_NE(ran.status().message().find("unable to find a valid cuDNN algorithm"), std::string::npos);

  failed.clear();
  ran = TryAtExecution(order, run_with({{"a", refused}, {"b", oom}, {"c", cudnn}}), &failed);
  EXPECT_EQ(ran.status().code(), StatusCode::kInternal) << "one failed for real: an error, not a skip";
  EXPECT_EQ(failed.size(), 3u);
}

Status FailsInCudnn() { return Status(StatusCode::kInternal, "returned 5000", FailureSource::kCudnn); }
Status PassesItUp() {
  BC_RETURN_IF_ERROR(FailsInCudnn());
  return Status::Ok();
}

TEST(Selector, AFailureKeepsItsSourceOnTheWayUp) {
  const Status s = PassesItUp();
  EXPECT_EQ(s.source(), FailureSource::kCudnn);
  EXPECT_EQ(s.code(), StatusCode::kInternal);
  // Where it passed is the trail's, for a developer; the message says what
  // failed and holds no call site.
  EXPECT_NE(s.trail().find("FailsInCudnn()"), std::string::npos) << s.trail();
  EXPECT_EQ(s.message().find(" at "), std::string::npos) << s.message();
  EXPECT_EQ(s.message().find(".cc:"), std::string::npos) << s.message();
  EXPECT_EQ(s.Prefixed("config cfg0: ").source(), FailureSource::kCudnn);
  EXPECT_EQ(s.Prefixed("config cfg0: ").trail(), s.trail());
}

TEST(Selector, TheCacheKeepsWhatRanAfterTheChoiceGaveWay) {
  AlgorithmSelector sel;
  FakeTimer t;
  const SelectorOptions o{.benchmark = true, .retry_at_execution = true};
  Result<Selection> s = sel.Select("k", "p", kPool, o, t.fn());
  ASSERT_TRUE(s.ok());
  ASSERT_FALSE(s->then.empty());
  sel.Ran("k", o, s->then.front());
  std::optional<Selection> hit = sel.Cached("k", o);
  ASSERT_TRUE(hit.has_value());
  EXPECT_EQ(hit->chosen.algorithm.name, s->then.front().algorithm.name);
  sel.Ran("other", o, s->then.front());
  EXPECT_FALSE(sel.Cached("other", o).has_value()) << "a key without a cached choice stays without one";
}

TEST(Selector, NoCandidateIsUnimplemented) {
  AlgorithmSelector sel;
  FakeTimer t;
  EXPECT_EQ(sel.Select("k", "p", {}, {}, t.fn()).status().code(), StatusCode::kUnimplemented);
}

}  // namespace
}  // namespace bc
