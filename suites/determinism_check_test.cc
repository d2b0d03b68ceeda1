// The determinism check itself, against its controls: it must catch the
// atomic reference with two threads, pass oneDNN forward, fail a declared-
// deterministic algorithm whose digests differ, and mistrust constant output.
#include <gtest/gtest.h>

#include "suites/determinism.h"

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
