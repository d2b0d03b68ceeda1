// use_deterministic_algorithms on the CPU: PyTorch's alert for an operation
// without a deterministic implementation (scatter_add), its warn_only form,
// and which flags reach which CPU operations.
#include <gtest/gtest.h>

#include "suites/case_run.h"
#include "suites/test_evidence.h"

namespace bc {
namespace {

// A one-step CPU case with engine auto, as PyTorch would dispatch it.
CaseSpec AutoCase(const std::string& problem, const std::string& flags) {
  Result<CaseSpec> c = ParseCaseSpec(problem + " device=cpu engine=auto threads=2 " + flags);
  EXPECT_TRUE(c.ok()) << c.status().ToString();
  return c.value();
}

constexpr const char* kScatter = "scatter_add:f32:n200000d1000";

// scatter_add has only an atomic implementation on the CPU here.
TEST(Alert, UseDeterministicAlgorithmsRaisesForAnOpWithoutADeterministicImplementation) {
  const CaseSpec c = AutoCase(kScatter, "deterministic_algorithms=true");
  Result<CaseRun> run = RunCase(c, {.repeats = 1, .compare_to_reference = false});
  ASSERT_FALSE(run.ok());
  EXPECT_EQ(run.status().code(), StatusCode::kNotDeterministic);
  const std::string& msg = run.status().message();
  const std::string expected = std::string(kScatter) +
                               " does not have a deterministic implementation, but you set "
                               "'torch.use_deterministic_algorithms(True)'. You can turn off determinism just for "
                               "this operation, or you can use the 'warn_only=True' option";
  EXPECT_EQ(msg.rfind(expected, 0), 0u) << msg;
  RecordFact(c.Format(), "alert_raised", msg.rfind(expected, 0) == 0, msg);
}

TEST(Alert, WarnOnlyRecordsTheWarningAndRuns) {
  const CaseSpec c = AutoCase(kScatter, "deterministic_algorithms=true deterministic_algorithms.warn_only=true");
  Result<CaseRun> run = RunCase(c, {.repeats = 2, .compare_to_reference = true});
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  const StepRun& s = run->first();
  ASSERT_TRUE(s.selection.has_value());
  const std::string& warning = s.selection->warning;
  EXPECT_NE(warning.find("does not have a deterministic implementation, but you set "
                         "'torch.use_deterministic_algorithms(True, warn_only=True)'"),
            std::string::npos)
      << warning;
  EXPECT_EQ(s.algorithm.name, "atomic");
  EXPECT_TRUE(WithinTolerance(*s.error, AccumulationLength(s.problem)));
  RecordFact(c.Format(), "warning_recorded", !warning.empty(), warning);
}

// cudnn.deterministic is cuDNN's flag: CPU operations do not see it.
TEST(Alert, CudnnDeterministicDoesNotReachCpuOperations) {
  const CaseSpec scatter = AutoCase(kScatter, "cudnn.deterministic=true");
  Result<CaseRun> run = RunCase(scatter, {.repeats = 1, .compare_to_reference = false});
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  const CaseSpec conv = AutoCase("conv2d:bwd_weights:f32:mb2ic8ih14oc8kh3ph1", "cudnn.deterministic=true");
  const CaseSpec plain = AutoCase("conv2d:bwd_weights:f32:mb2ic8ih14oc8kh3ph1", "");
  Result<CaseRun> a = RunCase(conv, {.repeats = 1, .compare_to_reference = false});
  Result<CaseRun> b = RunCase(plain, {.repeats = 1, .compare_to_reference = false});
  ASSERT_TRUE(a.ok() && b.ok());
  const bool no_alert = run->first().selection->warning.empty();
  const bool same = a->first().implementation == b->first().implementation && a->first().digests == b->first().digests;
  EXPECT_TRUE(no_alert) << run->first().selection->warning;
  EXPECT_TRUE(same) << a->first().implementation << " vs " << b->first().implementation;
  RecordFact(scatter.Format(), "cudnn_flag_ignored", no_alert && same,
             "scatter_add ran its atomic kernel " + std::string(no_alert ? "without" : "with") +
                 " an alert; conv bwd_weights chose " + a->first().implementation + " under cudnn.deterministic, " +
                 b->first().implementation + " without, digests " + (same ? "equal" : "different"));
}

// use_deterministic_algorithms reaches the CPU engines: the same conv under it
// keeps a deterministic choice, and matmul too.
TEST(Alert, DeterministicAlgorithmsFilterEveryCpuOperation) {
  for (const char* problem : {"conv2d:fwd:f32:mb2ic8ih14oc8kh3ph1", "matmul:f32:m32n32k64"}) {
    const CaseSpec c = AutoCase(problem, "deterministic_algorithms=true mkldnn.enabled=false");
    Result<CaseRun> run = RunCase(c, {.repeats = 3, .compare_to_reference = true});
    ASSERT_TRUE(run.ok()) << run.status().ToString();
    EXPECT_EQ(run->first().algorithm.determinism, bc::Determinism::kDeterministic);
    EXPECT_EQ(run->first().DistinctDigests(), 1);
    RecordFact(c.Format(), "deterministic_choice", run->first().DistinctDigests() == 1,
           "chose " + run->first().engine + ":" + run->first().algorithm.name);
  }
}

}  // namespace
}  // namespace bc
