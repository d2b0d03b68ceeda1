// GPU facts that a matrix cannot express: they compare two runs or read a
// counter. Each skips, with the CUDA or cuDNN error, where no GPU is usable.
#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>

#include "backends/cudnn/cudnn.h"
#include "backends/registry.h"
#include "runner/case_run.h"
#include "suites/test_evidence.h"

namespace bc {
namespace {

// Skips the calling test where the engine's device or library is not here,
// and fails it where probing them failed with an error (status_map.h):
// GTEST_SKIP and FAIL return from the function they are in.
#define BC_REQUIRE_AVAILABLE(engine)                                                  \
  do {                                                                                \
    const Availability bc_a_ = FindEngine(engine)->availability();                    \
    if (bc_a_.error) FAIL() << engine << " failed to initialise: " << bc_a_.reason;   \
    if (!bc_a_.available) GTEST_SKIP() << engine << " unavailable: " << bc_a_.reason; \
  } while (0)

CaseSpec Cuda(const std::string& problem, const std::string& flags, const std::string& engine = "auto") {
  Result<CaseSpec> c = ParseCaseSpec(problem + " device=cuda engine=" + engine + " threads=1 " + flags);
  EXPECT_TRUE(c.ok()) << c.status().ToString();
  return c.value();
}

// Sets (or, with nullptr, unsets) a variable for a scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    const char* old = std::getenv(name);
    if (old != nullptr) saved_ = old;
    if (value != nullptr) {
      ::setenv(name, value, 1);
    } else {
      ::unsetenv(name);
    }
  }
  ~ScopedEnv() {
    if (saved_) {
      ::setenv(name_.c_str(), saved_->c_str(), 1);
    } else {
      ::unsetenv(name_.c_str());
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  std::string name_;
  std::optional<std::string> saved_;
};

constexpr const char* kConv = "conv2d:%s:f32:mb4ic32ih28oc32kh3ph1";

std::string Conv(const char* direction) {
  char buf[96];
  std::snprintf(buf, sizeof(buf), kConv, direction);
  return buf;
}

// cudnn.enabled=false: every direction runs, and cuDNN is never called.
TEST(CudnnDisabled, MakesNoCudnnCall) {
  BC_REQUIRE_AVAILABLE("cuda_native");
  for (const char* d : {"fwd", "bwd_data", "bwd_weights"}) {
    const CaseSpec c = Cuda(Conv(d), "cudnn.enabled=false");
    const int64_t before = CudnnCallCount();
    Result<CaseRun> run = RunCase(c, {.repeats = 2, .compare_to_reference = true});
    ASSERT_TRUE(run.ok()) << run.status().ToString();
    const int64_t calls = CudnnCallCount() - before;
    EXPECT_EQ(run->first().engine, "cuda_native");
    EXPECT_EQ(calls, 0);
    EXPECT_TRUE(WithinTolerance(*run->first().error));
    RecordFact(c.Format(), "no_cudnn_call", calls == 0,
           std::to_string(calls) + " cuDNN call(s) while running " + run->first().implementation);
  }
}

// cudnn.deterministic does not filter the native kernels: the atomic
// backward-weights kernel stays a candidate; use_deterministic_algorithms does.
TEST(CudnnDisabled, CudnnDeterministicDoesNotReachNativeKernels) {
  BC_REQUIRE_AVAILABLE("cuda_native");
  const CaseSpec c = Cuda(Conv("bwd_weights"), "cudnn.enabled=false cudnn.deterministic=true");
  Result<CaseRun> run = RunCase(c, {.repeats = 1, .compare_to_reference = false});
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  const Selection& s = *run->first().selection;
  bool atomic_eligible = false;
  for (const Candidate& e : s.eligible) atomic_eligible = atomic_eligible || e.algorithm.name == "atomic";
  EXPECT_TRUE(atomic_eligible);
  // Under use_deterministic_algorithms the native GEMMs need the cuBLAS
  // workspace configuration (CudaNative.WorkspaceConfig...).
  const ScopedEnv config("CUBLAS_WORKSPACE_CONFIG", ":4096:8");
  const CaseSpec strict = Cuda(Conv("bwd_weights"), "cudnn.enabled=false deterministic_algorithms=true");
  Result<CaseRun> filtered = RunCase(strict, {.repeats = 1, .compare_to_reference = false});
  ASSERT_TRUE(filtered.ok()) << filtered.status().ToString();
  for (const Candidate& e : filtered->first().selection->eligible) EXPECT_NE(e.algorithm.name, "atomic");
  RecordFact(c.Format(), "native_not_filtered", atomic_eligible,
         "under cudnn.deterministic the nondeterministic native kernel stays eligible");
}

// TF32 rounds fp32 inputs to 10 mantissa bits: the error against the fp64
// reference grows beyond what fp32 arithmetic gives.
TEST(Tf32, ReducesThePrecisionOfFp32Convolution) {
  BC_REQUIRE_AVAILABLE("cudnn");
  // cuDNN's own arithmetic, so the fact is cuDNN evidence (its repro names the engine).
  const std::string p = "conv2d:fwd:f32:mb8ic64ih56oc64kh3ph1";
  const CaseSpec with_tf32 = Cuda(p, "", "cudnn");
  Result<CaseRun> fp32 = RunCase(Cuda(p, "cudnn.allow_tf32=false", "cudnn"), {.repeats = 1, .compare_to_reference = true});
  Result<CaseRun> tf32 = RunCase(with_tf32, {.repeats = 1, .compare_to_reference = true});
  ASSERT_TRUE(fp32.ok() && tf32.ok()) << fp32.status().ToString() << tf32.status().ToString();
  const double e32 = fp32->first().error->max_abs, etf = tf32->first().error->max_abs;
  const bool tensor_cores = etf > 4 * e32;
  // What cuDNN did is a finding (held to catalog/known_findings.toml by the
  // report), not a failure of this test.
  RecordFact(with_tf32.Format(), "tf32_reduces_precision", tensor_cores,
         "max abs error, TF32 allowed: " + std::to_string(etf) + " (" + tf32->first().implementation +
             "); fp32 only: " + std::to_string(e32) + " (" + fp32->first().implementation + ")");
}

// Every cuBLAS GEMM of PyTorch, matmul's and the native convolution's, is
// refused under use_deterministic_algorithms without CUBLAS_WORKSPACE_CONFIG,
// warns under warn_only, and runs reproducibly with ":4096:8".
void ExpectWorkspaceConfigRequired(const std::string& problem, const std::string& flags) {
  std::optional<ScopedEnv> unset(std::in_place, "CUBLAS_WORKSPACE_CONFIG", nullptr);
  const CaseSpec strict = Cuda(problem, flags + " deterministic_algorithms=true");
  Result<CaseRun> refused = RunCase(strict, {.repeats = 1, .compare_to_reference = false});
  const bool raised = !refused.ok() && refused.status().message().find("CUBLAS_WORKSPACE_CONFIG=:4096:8") != std::string::npos;
  const CaseSpec warn = Cuda(problem, flags + " deterministic_algorithms=true deterministic_algorithms.warn_only=true");
  Result<CaseRun> warned = RunCase(warn, {.repeats = 1, .compare_to_reference = false});
  unset.reset();
  const ScopedEnv config("CUBLAS_WORKSPACE_CONFIG", ":4096:8");
  Result<CaseRun> configured = RunCase(strict, {.repeats = 2, .compare_to_reference = true});
  EXPECT_TRUE(raised) << refused.status().ToString();
  ASSERT_TRUE(warned.ok()) << warned.status().ToString();
  EXPECT_NE(warned->first().implementation.find("warning"), std::string::npos);
  ASSERT_TRUE(configured.ok()) << configured.status().ToString();
  EXPECT_EQ(configured->first().DistinctDigests(), 1);
  RecordFact(strict.Format(), "workspace_config", raised && configured.ok(),
             raised ? "refused without CUBLAS_WORKSPACE_CONFIG, ran with :4096:8" : refused.status().ToString());
}

TEST(Cublas, WorkspaceConfigIsRequiredUnderDeterministicAlgorithms) {
  BC_REQUIRE_AVAILABLE("cublas");
  ExpectWorkspaceConfigRequired("matmul:f32:m256n256k256", "");
}

TEST(CudaNative, WorkspaceConfigIsRequiredUnderDeterministicAlgorithms) {
  BC_REQUIRE_AVAILABLE("cuda_native");
  ExpectWorkspaceConfigRequired(Conv("fwd"), "cudnn.enabled=false");
}

}  // namespace
}  // namespace bc
