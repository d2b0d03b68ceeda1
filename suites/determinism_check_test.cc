// The determinism check itself, against its controls: it must catch the
// atomic reference with two threads, pass oneDNN forward, fail a declared-
// deterministic algorithm whose digests differ, and mistrust constant output.
#include <gtest/gtest.h>

#include <map>

#include "runner/case_run.h"
#include "runner/determinism.h"

namespace bc {
namespace {

CaseSpec Case(const std::string& repro) {
  Result<CaseSpec> c = ParseCaseSpec(repro);
  EXPECT_TRUE(c.ok()) << c.status().ToString();
  return c.value();
}

TEST(DeterminismCheck, CatchesAtomicReferenceWithTwoThreads) {
  for (const char* dir : {"fwd", "bwd_weights"}) {
    const CaseSpec c = Case(std::string("conv2d:") + dir +
                            ":f32:mb4ic16ih14oc16kh3ph1 device=cpu engine=reference algo=atomic threads=2");
    Result<CaseRun> run =
        RunCase(c, {.repeats = 2, .compare_to_reference = true, .until_distinct_ns = kControlBudgetNs});
    ASSERT_TRUE(run.ok()) << run.status().ToString();
    const DeterminismVerdict v = JudgeDeterminism(run->first(), c, /*positive_control=*/true);
    EXPECT_EQ(OutcomeName(v.bitwise), "caught") << dir << ": " << v.message;
    EXPECT_TRUE(v.within_tolerance) << v.tolerance_message;
  }
}

// A control that names any_nondeterministic tries the engine's
// nondeterministic candidates in turn (issue: the first one's plan may not
// build on a device, or it may not vary there): on the CPU the reference's
// one such candidate, the atomic variant, is caught, and the evidence says
// what was tried.
TEST(DeterminismCheck, ControlOfAnyNondeterministicSaysWhatItTried) {
  const CaseSpec c = Case("conv2d:fwd:f32:mb4ic16ih14oc16kh3ph1 device=cpu engine=reference algo=any_nondeterministic "
                          "threads=2");
  Result<CaseRun> run = RunCase(c, {.repeats = 2, .compare_to_reference = true, .until_distinct_ns = kControlBudgetNs});
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  EXPECT_EQ(run->first().algorithm.name, "atomic");
  EXPECT_NE(run->first().dispatch_reason.find("in turn: atomic varied after"), std::string::npos)
      << run->first().dispatch_reason;
  EXPECT_EQ(OutcomeName(JudgeDeterminism(run->first(), c, /*positive_control=*/true).bitwise), "caught");
  // The same engine, where it offers no nondeterministic candidate: not evaluated.
  const Result<CaseRun> none = RunCase(Case("conv2d:fwd:f32:mb4ic16ih14oc16kh3ph1 device=cpu engine=onednn "
                                            "algo=any_nondeterministic threads=2"),
                                       {.repeats = 2, .until_distinct_ns = kControlBudgetNs});
  ASSERT_FALSE(none.ok());
  EXPECT_TRUE(IsNotEvaluated(none.status())) << none.status().ToString();
}

Algorithm Racy(const std::string& name) { return {name, Determinism::kNondeterministic, 0}; }

// The order of tries, on constructed outcomes: one that does not build and
// one that gives one digest are passed over, and the first that varies ends
// the trial; a fault of the trial itself stops it.
TEST(DeterminismCheck, ControlTriesCandidatesInTurnUntilOneVaries) {
  const std::map<std::string, ControlTry> outcomes = {
      {"algo_1", {"algo_1", ControlOutcome::kDidNotRun, "plan did not build", StatusCode::kUnimplemented}},
      {"algo_0", {"algo_0", ControlOutcome::kOneDigest, "in 50 runs"}},
      {"algo_3", {"algo_3", ControlOutcome::kVaried, "after 2 runs"}},
      {"algo_4", {"algo_4", ControlOutcome::kVaried, "after 1 runs"}}};
  std::vector<std::string> asked;
  const auto attempt = [&](const Algorithm& a) -> Result<ControlTry> {
    asked.push_back(a.name);
    if (a.name == "broken") return Status(StatusCode::kInternal, "the harness failed");
    return outcomes.at(a.name);
  };
  Result<std::vector<ControlTry>> tries =
      TryInTurn({Racy("algo_1"), Racy("algo_0"), Racy("algo_3"), Racy("algo_4")}, attempt);
  ASSERT_TRUE(tries.ok());
  EXPECT_EQ(asked, (std::vector<std::string>{"algo_1", "algo_0", "algo_3"}));
  EXPECT_EQ(DescribeTries(*tries),
            "algo_1 did not run (plan did not build); algo_0 one digest in 50 runs; algo_3 varied after 2 runs");
  asked.clear();
  tries = TryInTurn({Racy("algo_0"), Racy("algo_1")}, attempt);
  ASSERT_TRUE(tries.ok());
  EXPECT_EQ(tries->size(), 2u) << "none varied: every candidate was tried";
  EXPECT_FALSE(TryInTurn({Racy("broken"), Racy("algo_3")}, attempt).ok());
  EXPECT_TRUE(TryInTurn({}, attempt)->empty());
}

TEST(DeterminismCheck, PassesOnednnForward) {
  const CaseSpec c = Case("conv2d:fwd:f32:mb4ic16ih14oc16kh3ph1 device=cpu engine=onednn threads=2");
  Result<CaseRun> run = RunCase(c, {.repeats = 10, .compare_to_reference = true});
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  const DeterminismVerdict v = JudgeDeterminism(run->first(), c, /*positive_control=*/false);
  EXPECT_EQ(OutcomeName(v.bitwise), "passed") << v.message;
  EXPECT_TRUE(v.within_tolerance) << v.tolerance_message;
}

CaseSpec TwoThreads() {
  CaseSpec spec;
  spec.threads = 2;
  return spec;
}

StepRun Synthetic(Determinism declared, std::vector<uint64_t> digests, bool degenerate) {
  StepRun run;
  run.algorithm = {"synthetic", declared, 0};
  run.implementation = "synthetic";
  run.digests = std::move(digests);
  run.degenerate = degenerate;
  return run;
}

// A kernel no bound covers (a Winograd config, say) is not evaluated on
// tolerance, whatever its error: never failed for being legitimately less
// precise, never passed either.
TEST(DeterminismCheck, ToleranceWithoutABoundIsNotEvaluated) {
  StepRun run = Synthetic(Determinism::kDeterministic, {1, 1}, false);
  run.error = ErrorMetrics{.max_abs = 5, .bounded = true, .worst_ratio = 40, .bound = 0.125};
  const DeterminismVerdict bounded = JudgeDeterminism(run, TwoThreads(), false);
  ASSERT_EQ(bounded.checks.size(), 2u);
  EXPECT_EQ(OutcomeName(bounded.checks[1].outcome), "failed");
  run.unbounded = ArithmeticOf(ComputeType::kF16, {"WINOGRAD"}).unbounded;
  const DeterminismVerdict v = JudgeDeterminism(run, TwoThreads(), false);
  ASSERT_EQ(v.checks.size(), 2u);
  EXPECT_EQ(OutcomeName(v.checks[1].outcome), "not_applicable");
  EXPECT_NE(v.checks[1].detail.find("WINOGRAD"), std::string::npos) << v.checks[1].detail;
  EXPECT_TRUE(v.within_tolerance);
}

TEST(DeterminismCheck, FailsADeclaredDeterministicAlgorithmThatDiffers) {
  const DeterminismVerdict v = JudgeDeterminism(Synthetic(Determinism::kDeterministic, {1, 1, 2}, false), TwoThreads(), false);
  EXPECT_EQ(OutcomeName(v.bitwise), "failed");
  EXPECT_FALSE(v.bitwise_as_expected);
}

TEST(DeterminismCheck, ReportsAMissedPositiveControl) {
  const DeterminismVerdict v = JudgeDeterminism(Synthetic(Determinism::kNondeterministic, {7, 7, 7}, false), TwoThreads(), true);
  EXPECT_EQ(OutcomeName(v.bitwise), "missed");
  EXPECT_FALSE(v.bitwise_as_expected);
}

TEST(DeterminismCheck, MistrustsConstantOutput) {
  const DeterminismVerdict v = JudgeDeterminism(Synthetic(Determinism::kDeterministic, {3, 3}, true), TwoThreads(), false);
  EXPECT_EQ(OutcomeName(v.bitwise), "mistrusted");
}

TEST(DeterminismCheck, OneThreadControlIsNotApplicable) {
  CaseSpec one = TwoThreads();
  one.threads = 1;
  EXPECT_TRUE(JudgeDeterminism(Synthetic(Determinism::kNondeterministic, {5, 5}, false), one, true).not_applicable);
}

TEST(DeterminismCheck, NondeterministicAlgorithmOutsideControlsMayVary) {
  EXPECT_EQ(OutcomeName(JudgeDeterminism(Synthetic(Determinism::kNondeterministic, {1, 2}, false), TwoThreads(), false).bitwise), "varied");
  EXPECT_EQ(OutcomeName(JudgeDeterminism(Synthetic(Determinism::kNondeterministic, {1, 1}, false), TwoThreads(), false).bitwise), "stable");
}

TEST(DeterminismCheck, ControlDeclaredDeterministicIsMisconfigured) {
  const DeterminismVerdict v = JudgeDeterminism(Synthetic(Determinism::kDeterministic, {1, 2}, false), TwoThreads(), true);
  EXPECT_EQ(OutcomeName(v.bitwise), "misconfigured");
  EXPECT_FALSE(v.bitwise_as_expected);
}

}  // namespace
}  // namespace bc
