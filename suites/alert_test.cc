// use_deterministic_algorithms on the CPU: no alert for scatter_add (PyTorch
// has a deterministic CPU kernel, and so has the model), PyTorch's own alert
// for put_, and which flags reach which CPU operations.
#include <gtest/gtest.h>

#include "runner/case_run.h"
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

// PyTorch's CPU scatter_add is deterministic: under use_deterministic_algorithms
// it raises no alert (torch_backends.py's alert probe shows it on PyTorch
// itself). The model agrees: it chooses the deterministic owner kernel.
TEST(Alert, ScatterAddRunsUnderDeterministicAlgorithmsWithoutAnAlert) {
  const CaseSpec c = AutoCase(kScatter, "deterministic_algorithms=true");
  Result<CaseRun> run = RunCase(c, {.repeats = 3, .compare_to_reference = true});
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  const StepRun& s = run->first();
  const bool deterministic = s.algorithm.determinism == Determinism::kDeterministic && s.DistinctDigests() == 1 &&
                             (!s.selection || s.selection->warning.empty());
  EXPECT_TRUE(deterministic) << s.engine << ":" << s.algorithm.name;
  EXPECT_TRUE(WithinTolerance(*s.error));
  RecordFact(c.Format(), "no_alert", deterministic, "chose " + s.engine + ":" + s.algorithm.name + ", " +
                                                        std::to_string(s.DistinctDigests()) + " digest(s), no alert");
}

// PyTorch's own alert, raised by PyTorch: put_ with accumulate=False has no
// deterministic implementation on the CPU.
TEST(Alert, PytorchRaisesItsAlertForPut) {
  Result<CaseSpec> c =
      ParseCaseSpec(std::string(kScatter) + " device=cpu engine=pytorch algo=put threads=2 deterministic_algorithms=true");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  Result<CaseRun> run = RunCase(c.value(), {.repeats = 1, .compare_to_reference = false});
  if (!run.ok() && IsNotEvaluated(run.status())) GTEST_SKIP() << run.status().message();
  ASSERT_FALSE(run.ok());
  const std::string& msg = run.status().message();
  const bool raised = run.status().code() == StatusCode::kNotDeterministic &&
                      msg.find("put_ does not have a deterministic implementation, but you set "
                               "'torch.use_deterministic_algorithms(True)'") != std::string::npos;
  EXPECT_TRUE(raised) << run.status().ToString();
  RecordFact(c->Format(), "alert_raised", raised, msg);
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
             "scatter_add ran " + run->first().engine + ":" + run->first().algorithm.name + " " +
                 std::string(no_alert ? "without" : "with") +
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
