// Unit tests of harness/: flags, descriptors, data, numerics, evidence.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>

#include "backends/reference/reference.h"
#include "harness/buffers.h"
#include "harness/case.h"
#include "harness/cudnn_log.h"
#include "harness/evidence.h"
#include "harness/flags.h"
#include "harness/numerics.h"
#include "harness/onednn_verbose.h"
#include "harness/problem.h"
#include "harness/tensor_data.h"
#include "harness/tf32.h"
#include "runner/compare.h"

namespace bc {
namespace {

// PyTorch's defaults (aten/src/ATen/Context.h, torch/backends/*/__init__.py).
// TF32 on CUDA by each version's rules: one row per way a script can set it
// (Context::float32Precision in PyTorch 2.x; the allow_tf32 flags before).
TEST(Tf32Rules, Fp32PrecisionInheritsAndAllowTf32DecidesAlone) {
  struct Row {
    const char* what;
    BackendFlags flags;
    bool conv, matmul;       // with the fp32_precision settings
    bool conv_legacy, matmul_legacy;  // before them: the allow_tf32 flags alone
  };
  auto with = [](auto set) {
    BackendFlags f;
    set(f);
    return f;
  };
  const Row rows[] = {
      {"defaults", {}, true, false, true, false},
      {"cudnn.allow_tf32=False", with([](BackendFlags& f) { f.cudnn_allow_tf32 = false; }), false, false, false, false},
      {"a global fp32_precision=tf32 outlives cudnn.allow_tf32=False",
       with([](BackendFlags& f) { f.cudnn_allow_tf32 = false; f.fp32_precision = "tf32"; }), true, false, false, false},
      {"cudnn.fp32_precision=tf32 (cuda/all) is inherited by conv and matmul's none only",
       with([](BackendFlags& f) { f.cudnn_allow_tf32 = false; f.cudnn_fp32_precision = "tf32"; }), true, false, false,
       false},
      {"cudnn.conv.fp32_precision=ieee overrides cudnn.allow_tf32=True",
       with([](BackendFlags& f) { f.cudnn_conv_fp32_precision = "ieee"; }), false, false, true, false},
      {"cudnn.conv.fp32_precision=none inherits, whatever allow_tf32 wrote",
       with([](BackendFlags& f) { f.cudnn_conv_fp32_precision = "none"; }), false, false, true, false},
      {"cuda.matmul.allow_tf32=True", with([](BackendFlags& f) { f.cuda_matmul_allow_tf32 = true; }), true, true, true,
       true},
      {"cuda.matmul.fp32_precision=tf32", with([](BackendFlags& f) { f.cuda_matmul_fp32_precision = "tf32"; }), true,
       true, true, false},
      {"cuda.matmul.allow_tf32=False wrote ieee: a global tf32 does not reach matmul",
       with([](BackendFlags& f) { f.fp32_precision = "tf32"; }), true, false, true, false},
      {"bf16 means nothing to CUDA", with([](BackendFlags& f) { f.cudnn_allow_tf32 = false; f.fp32_precision = "bf16"; }),
       false, false, false, false},
  };
  for (const Row& r : rows) {
    SCOPED_TRACE(r.what);
    EXPECT_EQ(DecideCudaTf32(r.flags, CudaOp::kConv, Tf32Rules::kFp32Precision).tf32, r.conv);
    EXPECT_EQ(DecideCudaTf32(r.flags, CudaOp::kMatmul, Tf32Rules::kFp32Precision).tf32, r.matmul);
    EXPECT_EQ(DecideCudaTf32(r.flags, CudaOp::kConv, Tf32Rules::kAllowTf32).tf32, r.conv_legacy);
    EXPECT_EQ(DecideCudaTf32(r.flags, CudaOp::kMatmul, Tf32Rules::kAllowTf32).tf32, r.matmul_legacy);
  }
  // The evidence says how: the chain of settings the answer came through.
  BackendFlags global;
  global.cudnn_allow_tf32 = false;
  global.fp32_precision = "tf32";
  EXPECT_EQ(DecideCudaTf32(global, CudaOp::kConv, Tf32Rules::kFp32Precision).why,
            "cudnn.conv.fp32_precision none (cudnn.allow_tf32=false) -> cudnn.fp32_precision none -> fp32_precision tf32");
  EXPECT_NE(DecideCudaTf32(global, CudaOp::kConv, Tf32Rules::kAllowTf32).why.find("no fp32_precision settings"),
            std::string::npos);
}

TEST(Flags, DefaultsMirrorPyTorch) {
  const BackendFlags f;
  EXPECT_TRUE(f.cudnn_enabled);
  EXPECT_FALSE(f.cudnn_benchmark);
  EXPECT_FALSE(f.cudnn_deterministic);
  EXPECT_TRUE(f.cudnn_allow_tf32);
  EXPECT_EQ(f.cudnn_benchmark_limit, 10);
  EXPECT_TRUE(f.mkldnn_enabled);
  EXPECT_FALSE(f.mkldnn_deterministic);
  EXPECT_FALSE(f.cuda_matmul_allow_tf32);
  EXPECT_FALSE(f.deterministic_algorithms);
  EXPECT_FALSE(f.deterministic_algorithms_warn_only);
  EXPECT_FALSE(f.mkldnn_allow_tf32);
  EXPECT_EQ(f.fp32_precision, "none");
  EXPECT_EQ(f.cuda_matmul_fp32_precision, "none");
  EXPECT_EQ(f.cudnn_fp32_precision, "none");
  EXPECT_EQ(f.cudnn_conv_fp32_precision, "tf32");
  EXPECT_EQ(f.cudnn_rnn_fp32_precision, "tf32");
  EXPECT_EQ(f.mkldnn_fp32_precision, "none");
  EXPECT_EQ(f.mkldnn_matmul_fp32_precision, "none");
  EXPECT_EQ(f.mkldnn_conv_fp32_precision, "none");
  EXPECT_EQ(f.mkldnn_rnn_fp32_precision, "none");
  EXPECT_EQ(f.cudnn_depthwise_kernel, "auto");
  EXPECT_EQ(CurrentFlags(), f) << "the process starts with the defaults";
}

TEST(Flags, GuardRestoresPreviousValues) {
  const BackendFlags before = CurrentFlags();
  {
    BackendFlags a;
    a.cudnn_benchmark = true;
    FlagsGuard outer(a);
    EXPECT_TRUE(CurrentFlags().cudnn_benchmark);
    {
      BackendFlags b = CurrentFlags();
      b.UseDeterministicAlgorithms(true, /*warn_only=*/true);
      FlagsGuard inner(b);
      EXPECT_TRUE(CurrentFlags().deterministic_algorithms);
      EXPECT_TRUE(CurrentFlags().deterministic_algorithms_warn_only);
      EXPECT_TRUE(CurrentFlags().cudnn_benchmark);
    }
    EXPECT_FALSE(CurrentFlags().deterministic_algorithms);
    EXPECT_TRUE(CurrentFlags().cudnn_benchmark);
  }
  EXPECT_EQ(CurrentFlags(), before);
}

// torch.backends.cudnn.flags() defaults enabled=False: a bare scope turns
// cuDNN off. The mirror keeps that trap, and restores on exit.
TEST(Flags, CudnnFlagsScopeDefaultsDisableCudnn) {
  ASSERT_TRUE(CurrentFlags().cudnn_enabled);
  {
    CudnnFlagsScope scope;
    EXPECT_FALSE(CurrentFlags().cudnn_enabled);
    EXPECT_TRUE(CurrentFlags().cudnn_allow_tf32);
    EXPECT_EQ(CurrentFlags().cudnn_fp32_precision, "none");
    EXPECT_EQ(CurrentFlags().cudnn_depthwise_kernel, "auto");
  }
  EXPECT_TRUE(CurrentFlags().cudnn_enabled);
  {
    CudnnFlagsScope scope(true, false, 10, false, true, "ieee", "native");
    EXPECT_EQ(CurrentFlags().cudnn_fp32_precision, "ieee");
    EXPECT_EQ(CurrentFlags().cudnn_depthwise_kernel, "native");
  }
  EXPECT_EQ(CurrentFlags(), BackendFlags());
}

TEST(Flags, DeterministicAlgorithmsImplyCudnnDeterministicFilter) {
  BackendFlags f;
  EXPECT_FALSE(f.CudnnDeterministicEffective());
  f.UseDeterministicAlgorithms(true);
  EXPECT_TRUE(f.CudnnDeterministicEffective());
}

TEST(Flags, SetParsesAndRejects) {
  BackendFlags f;
  EXPECT_TRUE(f.Set("cudnn.benchmark", "true").ok());
  EXPECT_TRUE(f.cudnn_benchmark);
  EXPECT_TRUE(f.Set("cudnn.benchmark_limit", "0").ok());
  EXPECT_EQ(f.cudnn_benchmark_limit, 0);
  const Status unknown = f.Set("cudnn.bencmark", "true");
  EXPECT_EQ(unknown.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(unknown.message().find("cudnn.bencmark"), std::string::npos);
  EXPECT_FALSE(f.Set("cudnn.enabled", "yes").ok());
  EXPECT_FALSE(f.Set("cudnn.benchmark_limit", "-1").ok());
  EXPECT_FALSE(f.Set("cudnn.benchmark_limit", "12x").ok());
  EXPECT_TRUE(f.Set("cudnn.conv.fp32_precision", "ieee").ok());
  EXPECT_EQ(f.cudnn_conv_fp32_precision, "ieee");
  const Status upper = f.Set("mkldnn.fp32_precision", "BF16");
  EXPECT_EQ(upper.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(upper.message().find("mkldnn.fp32_precision"), std::string::npos);
  EXPECT_FALSE(f.Set("fp32_precision", "").ok());
}

TEST(Flags, NonDefaultListsOnlyChangesInDeclarationOrder) {
  BackendFlags f;
  EXPECT_TRUE(f.NonDefault().empty());
  f.mkldnn_enabled = false;
  f.cudnn_benchmark = true;
  f.cudnn_conv_fp32_precision = "ieee";
  EXPECT_EQ(f.NonDefault(), (std::vector<std::string>{"cudnn.benchmark=true", "mkldnn.enabled=false",
                                                      "cudnn.conv.fp32_precision=ieee"}));
  EXPECT_EQ(f.All().size(), FlagNames().size());
}

TEST(Problem, FormatParsesBack) {
  for (const char* repro : {"conv2d:fwd:f32:mb8ic64ih56iw56oc64kh3kw3sh1sw1ph1pw1dh1dw1g1",
                            "conv2d:bwd_weights:f32:mb2ic6ih9iw7oc4kh3kw2sh2sw1ph1pw0dh2dw1g2",
                            "conv2d:fwd:f32:mb1ic3ih224iw224oc64kh7kw7sh2sw2ph3pw3dh1dw1g1"}) {
    Result<Conv2dProblem> p = ParseAs<Conv2dProblem>(repro);
    ASSERT_TRUE(p.ok()) << p.status().ToString();
    EXPECT_EQ(FormatProblem(p.value()), repro);
    EXPECT_EQ(ParseAs<Conv2dProblem>(FormatProblem(p.value())).value(), p.value());
  }
}

TEST(Problem, ParseFillsSquareDefaults) {
  Result<Conv2dProblem> p = ParseAs<Conv2dProblem>("conv2d:fwd:f32:mb8ic64ih56oc64kh3ph1");
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(FormatProblem(p.value()), "conv2d:fwd:f32:mb8ic64ih56iw56oc64kh3kw3sh1sw1ph1pw1dh1dw1g1");
  EXPECT_EQ(p->oh(), 56);
  EXPECT_EQ(p->ow(), 56);
  EXPECT_EQ(p->macs(), int64_t{8} * 64 * 56 * 56 * 64 * 9);
}

TEST(Problem, OutputSizeFollowsStrideDilationPadding) {
  Result<Conv2dProblem> p = ParseAs<Conv2dProblem>("conv2d:fwd:f32:mb1ic1ih10iw11oc1kh3kw3sh2sw3ph1pw0dh2dw1");
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->oh(), (10 + 2 - 2 * 2 - 1) / 2 + 1);
  EXPECT_EQ(p->ow(), (11 - 2 - 1) / 3 + 1);
}

TEST(Problem, ParseRejectsMalformed) {
  for (const char* bad : {"", "conv2d", "conv3d:fwd:f32:mb1ic1ih1oc1kh1", "conv2d:bwd:f32:mb1ic1ih1oc1kh1",
                          "conv2d:fwd:bf16:mb1ic1ih1oc1kh1", "conv2d:fwd:f32:mb1ic1ih1oc1",
                          "conv2d:fwd:f32:mb1ic1ih1oc1kh1zz3", "conv2d:fwd:f32:mb1mb2ic1ih1oc1kh1",
                          "conv2d:fwd:f32:mb0ic1ih1oc1kh1", "conv2d:fwd:f32:mb1ic3ih4oc4kh1g2",
                          "conv2d:fwd:f32:mb1ic1ih2oc1kh5", "conv2d:fwd:f32:mbic1ih1oc1kh1",
                          "conv2d:fwd:f32:mb-1ic1ih1oc1kh1"}) {
    Result<Conv2dProblem> p = ParseAs<Conv2dProblem>(bad);
    EXPECT_FALSE(p.ok()) << "accepted: " << bad;
    if (!p.ok()) {
      EXPECT_EQ(p.status().code(), StatusCode::kInvalidArgument) << bad;
    }
  }
}

TEST(Problem, ValidateRefusesDimensionBombs) {
  Result<Conv2dProblem> p = ParseAs<Conv2dProblem>("conv2d:fwd:f32:mb100000ic100000ih1000oc1kh1");
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("exceed"), std::string::npos) << p.status().message();
  EXPECT_FALSE(ParseAs<Conv2dProblem>("conv2d:fwd:f32:mb99999999999999999999ic1ih1oc1kh1").ok());
}

TEST(CaseSpec, FormatParsesBack) {
  const std::string repro =
      "conv2d:bwd_weights:f32:mb2ic8ih14iw14oc8kh3kw3sh1sw1ph1pw1dh1dw1g1 device=cpu engine=reference "
      "algo=atomic threads=2 cudnn.benchmark=true mkldnn.enabled=false";
  Result<CaseSpec> c = ParseCaseSpec(repro);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->Format(), repro);
  EXPECT_EQ(c->steps.size(), 1u);
  EXPECT_EQ(c->algorithm, "atomic");
  EXPECT_EQ(c->threads, 2);
  EXPECT_TRUE(c->flags.cudnn_benchmark);
  EXPECT_FALSE(c->flags.mkldnn_enabled);
}

TEST(Problem, OtherOperationsParseBack) {
  for (const char* repro : {"conv2d:bwd_data:f32:mb2ic6ih9iw7oc4kh3kw2sh2sw1ph1pw0dh2dw1g2", "matmul:f32:m128n256k64",
                            "scatter_add:f32:n100000d1000", "conv2d:fwd:f16:nhwc:mb2ic6ih9iw7oc4kh3kw2sh2sw1ph1pw0dh2dw1g2",
                            "conv2d:bwd_weights:f16:mb1ic2ih5iw5oc2kh3kw3sh1sw1ph1pw1dh1dw1g1", "matmul:f16:m8n8k8"}) {
    Result<Problem> p = ParseProblem(repro);
    ASSERT_TRUE(p.ok()) << p.status().ToString();
    EXPECT_EQ(FormatProblem(p.value()), repro);
  }
  for (const char* bad : {"matmul:f32:m1n1", "matmul:f32:m0n1k1", "scatter_add:f32:n5", "gemm:f32:m1n1k1",
                          "matmul:bf16:m1n1k1", "scatter_add:f32:n1d1x2", "conv2d:fwd:f32:nhcw:mb1ic1ih1oc1kh1",
                          "conv2d:fwd:f32:nhwc:x:mb1ic1ih1oc1kh1"}) {
    EXPECT_FALSE(ParseProblem(bad).ok()) << bad;
  }
  EXPECT_EQ(AccumulationLength(ParseProblem("matmul:f32:m2n3k7").value()), 7);
  EXPECT_EQ(FormatProblem(ParseProblem("conv2d:fwd:f32:nchw:mb1ic1ih1oc1kh1").value()),
            "conv2d:fwd:f32:mb1ic1ih1iw1oc1kh1kw1sh1sw1ph0pw0dh1dw1g1")
      << "nchw is the default and not written";
  EXPECT_FALSE(IsPlainF32(ParseProblem("conv2d:fwd:f16:mb1ic1ih1oc1kh1").value()));
  EXPECT_TRUE(IsPlainF32(ParseProblem("matmul:f32:m1n1k1").value()));
  EXPECT_EQ(ProblemDirection(ParseProblem("conv2d:bwd_data:f32:mb1ic1ih3oc1kh1").value()), Direction::kBackwardData);
}

// What every declared operation (harness/ops) gets from its declaration alone:
// a repro that parses back, a buffer per role of every direction, seeded
// inputs, an oracle that repeats bitwise, and a racy variant that computes
// the same thing within the error model. A new operation is tested here
// without an edit to this file.
template <typename P>
void CheckDeclaration(Direction direction) {
  std::string shape = std::string(P::kName) + ":";
  for (const Field<P>& f : P::Fields()) {
    if (f.required) shape += f.key + std::to_string(6);
  }
  Result<Problem> parsed = ProblemFromShape(shape, DirectionName(direction));
  ASSERT_TRUE(parsed.ok()) << parsed.status().message();
  const Problem& p = parsed.value();
  SCOPED_TRACE(FormatProblem(p));
  EXPECT_EQ(ParseProblem(FormatProblem(p)).value(), p);
  EXPECT_EQ(OpName(p), P::kName);
  EXPECT_GT(ProblemGflop(p), 0);
  EXPECT_GE(BoundLength(p), AccumulationLength(p));
  Buffers b = Buffers::For(p);
  int64_t bytes = 0, outputs = 0;
  for (const TensorDecl& t : TensorsOf(p)) {
    ASSERT_TRUE(b.has(t.role)) << t.role;
    bytes += t.elems() * 4;
    outputs += t.input ? 0 : 1;
    const size_t size = t.type == ElemType::kIndex ? b.indices(t.role).size() : b[t.role].size();
    EXPECT_EQ(static_cast<int64_t>(size), t.elems()) << t.role;
  }
  EXPECT_EQ(outputs, 1) << "one output per problem";
  EXPECT_EQ(Buffers::BytesFor(p), bytes);
  FillInputs(p, b);
  for (const TensorDecl& t : TensorsOf(p)) {
    if (t.input && t.type == ElemType::kF32) {
      EXPECT_FALSE(IsDegenerate(b[t.role])) << t.role << " is not filled";
    }
  }
  const Buffers inputs = b;
  RunReference(p, b, /*racy=*/false);
  const uint64_t first = Digest(b.Output(p));
  EXPECT_FALSE(IsDegenerate(b.Output(p)));
  RunReference(p, b, /*racy=*/false);
  EXPECT_EQ(Digest(b.Output(p)), first) << "the oracle repeats bitwise";
  Buffers racy = inputs;
  RunReference(p, racy, /*racy=*/true);
  EXPECT_TRUE(WithinTolerance(CheckAgainstReference(p, inputs, racy.Output(p), ComputeType::kF32)))
      << "the racy variant computes the oracle's result";
}

TEST(Problem, EveryDeclaredOperationWorksFromItsDeclarationAlone) {
  [&]<size_t... I>(std::index_sequence<I...>) {
    (
        [&] {
          using P = std::variant_alternative_t<I, Problem>;
          for (Direction d : {Direction::kForward, Direction::kBackwardData, Direction::kBackwardWeights}) {
            if (P::kDirections || d == Direction::kForward) CheckDeclaration<P>(d);
          }
        }(),
        ...);
  }(std::make_index_sequence<std::variant_size_v<Problem>>());
}

TEST(CaseSpec, SchedulesCompressRunsOfEqualSteps) {
  const std::string a = "conv2d:fwd:f32:mb16ic3ih128iw128oc64kh3kw3sh1sw1ph1pw1dh1dw1g1";
  const std::string b = "conv2d:fwd:f32:mb16ic3ih256iw256oc64kh3kw3sh1sw1ph1pw1dh1dw1g1";
  const std::string repro = a + "*3," + b + "," + a + " device=cpu engine=select threads=2 cudnn.benchmark=true";
  Result<CaseSpec> c = ParseCaseSpec(repro);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->steps.size(), 5u);
  EXPECT_EQ(c->Format(), repro);
  EXPECT_EQ(ParseCaseSpec(a + "," + a + " device=cpu engine=auto threads=1")->Format(),
            a + "*2 device=cpu engine=auto threads=1");
  for (const std::string& bad : {a + "*0", a + "*x", a + "*1000001", a + ",", "," + a}) {
    EXPECT_FALSE(ParseCaseSpec(bad + " device=cpu").ok()) << bad;
  }
}

TEST(CaseSpec, EnvironmentTokensParseBackSorted) {
  const std::string p = "conv2d:fwd:f32:mb1ic1ih1iw1oc1kh1kw1sh1sw1ph0pw0dh1dw1g1 device=cpu engine=onednn threads=1";
  Result<CaseSpec> c = ParseCaseSpec(p + " env.ONEDNN_MAX_CPU_ISA=AVX2 env.A_FIRST=1");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->Format(), p + " env.A_FIRST=1 env.ONEDNN_MAX_CPU_ISA=AVX2");
  EXPECT_FALSE(ParseCaseSpec(p + " env.lower=1").ok());
  EXPECT_FALSE(ParseCaseSpec(p + " env.X=").ok());
  ::setenv("BC_TEST_ENV_PRESENT", "yes", 1);
  EXPECT_EQ(ParseCaseSpec(p + " env.BC_TEST_ENV_PRESENT=yes")->MissingEnv(), "");
  EXPECT_EQ(ParseCaseSpec(p + " env.BC_TEST_ENV_PRESENT=no")->MissingEnv(), "BC_TEST_ENV_PRESENT=no");
}

TEST(CaseSpec, RejectsUnknownKeysAndValues) {
  const std::string p = "conv2d:fwd:f32:mb1ic1ih1oc1kh1 ";
  for (const std::string& bad : {p + "device=tpu", p + "threads=0", p + "threads=x", p + "colour=red",
                                 p + "cudnn.enabled=maybe", p + "engine=", p + "loose"}) {
    EXPECT_FALSE(ParseCaseSpec(bad).ok()) << "accepted: " << bad;
  }
}

TEST(TensorData, FillIsSeededAndInRange) {
  std::vector<float> a(1000), b(1000), c(1000);
  FillUniform(42, a);
  FillUniform(42, b);
  FillUniform(43, c);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  for (float v : a) {
    EXPECT_GE(v, -1.0f);
    EXPECT_LT(v, 1.0f);
  }
  // Not constant, and both signs occur: accumulation order matters.
  EXPECT_FALSE(IsDegenerate(a));
  EXPECT_LT(*std::min_element(a.begin(), a.end()), -0.9f);
  EXPECT_GT(*std::max_element(a.begin(), a.end()), 0.9f);
}

TEST(TensorData, DigestSeesOneBitFlip) {
  std::vector<float> a(4096);
  FillUniform(7, a);
  const uint64_t d = Digest(a);
  EXPECT_EQ(Digest(a), d);
  a[1234] = std::nextafter(a[1234], 2.0f);
  EXPECT_NE(Digest(a), d);
  EXPECT_EQ(DigestHex(0x1234).size(), 16u);
  EXPECT_EQ(DigestHex(0x1234), "0000000000001234");
}

// torch.manual_seed, not use_deterministic_algorithms, decides the random
// stream: the harness's inputs under the flag are the inputs without it, and
// a different seed still gives different data with the flag on.
TEST(Flags, DeterministicAlgorithmsDoNotSeed) {
  Result<Problem> p = ParseProblem("conv2d:fwd:f32:mb2ic8ih14oc8kh3ph1");
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  Buffers plain = Buffers::For(p.value());
  FillInputs(p.value(), plain);
  BackendFlags f;
  f.deterministic_algorithms = true;
  f.cudnn_deterministic = true;
  FlagsGuard guard(f);
  Buffers flagged = Buffers::For(p.value());
  FillInputs(p.value(), flagged);
  EXPECT_EQ(Digest(plain["src"]), Digest(flagged["src"]));
  EXPECT_EQ(Digest(plain["wei"]), Digest(flagged["wei"]));
  std::vector<float> a(4096), b(4096);
  FillUniform(1, a);
  FillUniform(2, b);
  EXPECT_NE(Digest(a), Digest(b)) << "the flag must not pin the data of different seeds";
}

TEST(TensorData, TensorSeedsDiffer) {
  EXPECT_NE(TensorSeed(1, "src"), TensorSeed(1, "wei"));
  EXPECT_NE(TensorSeed(1, "src"), TensorSeed(2, "src"));
}

TEST(Numerics, UlpDistance) {
  EXPECT_EQ(UlpDistance(1.0f, 1.0f), 0);
  EXPECT_EQ(UlpDistance(1.0f, std::nextafter(1.0f, 2.0f)), 1);
  EXPECT_EQ(UlpDistance(0.0f, -0.0f), 0);
  EXPECT_EQ(UlpDistance(std::numeric_limits<float>::denorm_min(), -std::numeric_limits<float>::denorm_min()), 2);
  EXPECT_EQ(UlpDistance(std::nanf(""), 1.0f), std::numeric_limits<int64_t>::max());
}

TEST(Numerics, CompareReportsErrorsAndNonFinite) {
  const std::vector<float> ref = {1.0f, -2.0f, 4.0f, 0.5f};
  const std::vector<float> out = {1.0f, -2.5f, 4.0f, std::numeric_limits<float>::infinity()};
  const ErrorMetrics m = Compare(out, ref);
  EXPECT_DOUBLE_EQ(m.max_abs, 0.5);
  EXPECT_DOUBLE_EQ(m.max_rel, 0.25);
  EXPECT_DOUBLE_EQ(m.max_abs_ref, 4.0);
  EXPECT_EQ(m.nonfinite, 1);
  EXPECT_FALSE(WithinTolerance(m));
  const ErrorMetrics exact = Compare(ref, ref);
  EXPECT_TRUE(WithinTolerance(exact));
  EXPECT_EQ(exact.max_ulp, 0);
}

TEST(Numerics, BoundGrowsWithAccumulationLengthAndCoarserArithmetic) {
  ToleranceModel m{.type = ComputeType::kF32, .accumulation_length = 9, .max_term = 1, .outputs = 100};
  const double short_f32 = ElementBound(m, 2, 4);
  m.accumulation_length = 9000;
  EXPECT_LT(short_f32, ElementBound(m, 2, 4));
  m.type = ComputeType::kTf32;
  EXPECT_LT(ElementBound({.type = ComputeType::kF32, .accumulation_length = 9000}, 2, 4), ElementBound(m, 2, 4));
  // TF32 and fp16 lose up to 2^-10 of a value on the way in or out.
  EXPECT_GE(ElementBound({.type = ComputeType::kF16, .accumulation_length = 1}, 1024, 1024), 1.0);
  EXPECT_GE(ElementBound({.type = ComputeType::kTf32, .accumulation_length = 1}, 1024, 1024), 1.0);
  EXPECT_LT(ElementBound({.type = ComputeType::kF32, .accumulation_length = 1}, 1024, 1024), 0.01);
}

TEST(Numerics, EveryElementIsHeldToItsOwnBound) {
  const ToleranceModel m{.type = ComputeType::kF32, .accumulation_length = 4, .max_term = 1, .outputs = 2};
  const std::vector<float> ref = {100.0f, 0.001f}, abs_sum = {100.0f, 0.001f};
  // An error the large element's bound allows is too much for the small one.
  const float allowed = static_cast<float>(ElementBound(m, 100, 100) / 2);
  ErrorMetrics large = Compare(std::vector<float>{100.0f + allowed, 0.001f}, ref, abs_sum, m);
  EXPECT_TRUE(WithinTolerance(large)) << large.worst_ratio;
  ErrorMetrics small = Compare(std::vector<float>{100.0f, 0.001f + allowed}, ref, abs_sum, m);
  EXPECT_FALSE(WithinTolerance(small));
  EXPECT_GT(small.worst_ratio, 1.0);
  EXPECT_DOUBLE_EQ(small.bound, ElementBound(m, 0.001f, 0.001f));
}

// The bound follows the kernel's numerical notes: the allowed arithmetic
// where none breaks its assumptions, no bound (not evaluated, never failed)
// for transformed operands or a reduced-precision accumulator.
TEST(Numerics, ArithmeticFollowsTheKernelsNumericalNotes) {
  EXPECT_EQ(ArithmeticOf(ComputeType::kTf32, {}).type, ComputeType::kTf32);
  EXPECT_TRUE(ArithmeticOf(ComputeType::kTf32, {"TENSOR_CORE"}).unbounded.empty());
  EXPECT_TRUE(ArithmeticOf(ComputeType::kF16, {"TENSOR_CORE", "NONDETERMINISTIC"}).unbounded.empty());
  // What ran is not known (cuDNN's log of PyTorch's call named nothing): no bound, and the reason says so.
  const BoundedArithmetic unknown = ArithmeticOf(ComputeType::kF32, {}, "cuDNN's API log named no engine config");
  EXPECT_NE(unknown.unbounded.find("not known (cuDNN's API log named no engine config)"), std::string::npos)
      << unknown.unbounded;
  for (ComputeType t : {ComputeType::kF32, ComputeType::kTf32, ComputeType::kF16}) {
    for (const char* note : {"WINOGRAD", "FFT", "REDUCED_PRECISION_REDUCTION"}) {
      const BoundedArithmetic b = ArithmeticOf(t, {"TENSOR_CORE", note});
      EXPECT_EQ(b.type, t);
      EXPECT_NE(b.unbounded.find(note), std::string::npos) << ComputeTypeName(t) << " " << note << ": " << b.unbounded;
    }
  }
}

TEST(Numerics, DegenerateDetection) {
  EXPECT_TRUE(IsDegenerate(std::vector<float>{}));
  EXPECT_TRUE(IsDegenerate(std::vector<float>(100, 0.0f)));
  EXPECT_TRUE(IsDegenerate(std::vector<float>{0.0f, -0.0f, 0.0f}));
  EXPECT_TRUE(IsDegenerate(std::vector<float>(5, 3.5f)));
  EXPECT_TRUE(IsDegenerate(std::vector<float>(5, std::nanf(""))));
  EXPECT_FALSE(IsDegenerate(std::vector<float>{0.0f, 0.0f, 1e-30f}));
}

class EvidenceWriterTest : public testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("bc-evidence-test-" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  static std::vector<nlohmann::json> ReadLines(const std::filesystem::path& p) {
    std::ifstream in(p);
    std::vector<nlohmann::json> out;
    std::string line;
    while (std::getline(in, line)) out.push_back(nlohmann::json::parse(line));
    return out;
  }
  std::filesystem::path dir_;
};

TEST_F(EvidenceWriterTest, WritesEnvironmentFirstAndRenamesOnClose) {
  EvidenceWriter w;
  ASSERT_TRUE(w.Open(dir_, "unit", {{"machine", "m1"}}).ok());
  const std::filesystem::path part = w.path();
  EXPECT_EQ(part.extension(), ".part");
  ASSERT_TRUE(w.Write({{"kind", "case"}, {"case_id", "abc"}, {"note", "<script>\"quoted\"</script>"}}).ok());
  ASSERT_TRUE(w.Close().ok());
  EXPECT_FALSE(std::filesystem::exists(part));
  ASSERT_EQ(w.path().extension(), ".jsonl");
  const std::vector<nlohmann::json> lines = ReadLines(w.path());
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0]["kind"], "environment");
  EXPECT_EQ(lines[0]["machine"], "m1");
  EXPECT_EQ(lines[0]["schema"], kEvidenceSchema);
  EXPECT_EQ(lines[1]["case_id"], "abc");
  EXPECT_EQ(lines[1]["note"], "<script>\"quoted\"</script>");
  EXPECT_TRUE(w.Close().ok()) << "Close is idempotent";
}

TEST_F(EvidenceWriterTest, RecordsAreReadableBeforeClose) {
  EvidenceWriter w;
  ASSERT_TRUE(w.Open(dir_, "unit", nlohmann::json::object()).ok());
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(w.Write({{"kind", "case"}, {"i", i}}).ok());
  // What a crash at this point leaves behind: every record, whole.
  const std::vector<nlohmann::json> lines = ReadLines(w.path());
  ASSERT_EQ(lines.size(), 6u);
  EXPECT_EQ(lines.back()["i"], 4);
}

TEST_F(EvidenceWriterTest, InvalidUtf8IsReplacedNotFatal) {
  EvidenceWriter w;
  ASSERT_TRUE(w.Open(dir_, "unit", nlohmann::json::object()).ok());
  EXPECT_TRUE(w.Write({{"kind", "case"}, {"message", std::string("bad \xff byte")}}).ok());
  EXPECT_EQ(ReadLines(w.path()).size(), 2u);
}

TEST_F(EvidenceWriterTest, WriteToClosedWriterIsDropped) {
  EvidenceWriter w;
  EXPECT_FALSE(w.is_open());
  EXPECT_TRUE(w.Write({{"kind", "case"}}).ok());
  EXPECT_FALSE(std::filesystem::exists(dir_));
}

Result<int> Half(int x) {
  if (x % 2 != 0) return Status(StatusCode::kInvalidArgument, std::to_string(x) + " is odd");
  return x / 2;
}

Result<int> Quarter(int x) {
  BC_ASSIGN_OR_RETURN(const int half, Half(x));
  BC_ASSIGN_OR_RETURN(const int quarter, Half(half));
  return quarter;
}

namespace {
// Burns about `seconds` of this thread's CPU time.
void BurnCpu(double seconds) {
  const CpuTimes start = ReadCpuTimes();
  volatile double x = 1;
  while (ReadCpuTimes().self_s - start.self_s < seconds) {
    for (int i = 0; i < 100000; ++i) x = x * 1.0000001 + 1e-9;
  }
}
}  // namespace

// A Compare records the CPU time other processes took while it ran, so the
// ratio rule can withhold a timing taken on a busy machine. Positive control:
// a child that burns CPU while this process sleeps is counted as another
// process, at least by the CPU time the kernel charged it. This process's own
// burning is not: what the machine was busy with beyond it is at most what
// the rest of the machine did, whatever other load runs beside the test.
TEST(CpuTimes, OtherProcessesCountThisOneDoesNot) {
  const CpuTimes a = ReadCpuTimes();
  ASSERT_GT(a.machine_total_s, 0) << "/proc/stat unreadable";
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    BurnCpu(0.3);
    _exit(0);
  }
  int status = 0;
  rusage used{};
  ASSERT_EQ(wait4(child, &status, 0, &used), child);
  const CpuTimes b = ReadCpuTimes();
  const double child_s = CpuSeconds(used);
  const double others_s = OthersCpuShare(a, b) * (b.machine_total_s - a.machine_total_s);
  EXPECT_GE(others_s, child_s - 0.05) << "the child's " << child_s << " s of CPU time, counted " << others_s;

  const CpuTimes c = ReadCpuTimes();
  BurnCpu(0.3);
  const CpuTimes d = ReadCpuTimes();
  const double self_s = d.self_s - c.self_s;
  ASSERT_GE(self_s, 0.3);
  const double busy_s = d.machine_busy_s - c.machine_busy_s;
  // Ticks of 1/CLK_TCK s on each CPU: the busy time may round below self_s.
  EXPECT_GE(busy_s, self_s - 0.05) << "the machine's busy time misses this process's";
  EXPECT_NEAR(OthersCpuShare(c, d) * (d.machine_total_s - c.machine_total_s), std::max(0.0, busy_s - self_s), 1e-9);

  EXPECT_EQ(OthersCpuShare(CpuTimes{}, d), -1) << "an unreadable /proc/stat is unknown, not idle";
}

TEST(Status, AssignOrReturnPassesValuesAndReturnsErrors) {
  ASSERT_TRUE(Quarter(12).ok());
  EXPECT_EQ(Quarter(12).value(), 3);
  EXPECT_EQ(Quarter(6).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(Quarter(6).status().message(), "3 is odd");
}

}  // namespace
}  // namespace bc

namespace bc {
namespace {

// cuDNN's API log in both of its spellings. This excerpt is constructed
// (not a recording) in the form cuDNN 9 writes its entries: the "I!"/"i!"
// marks and four spaces a level, as in its log files, and without the marks
// as its documentation shows them; descriptors whose fields follow one
// level deeper, a knob choice as a knobType and its value, notes by name and
// in an array. A recorded excerpt of PyTorch's own calls is held to the same
// parser by CudnnLog.ReadsEveryRecordedExcerpt.
constexpr const char* kConstructedCudnnLog = R"(I! CuDNN (v92600 17) function cudnnBackendFinalize() called:
i!     descriptor: type=CUDNN_BACKEND_ENGINECFG_DESCRIPTOR:
i!         engine: type=CUDNN_BACKEND_ENGINE_DESCRIPTOR:
i!             globalIndex: type=int64_t; val=7;
i! Time: 2026-11-26T10:00:00.000001 (0d+0h+0m+1s since start)
i! Process=100; Thread=100; GPU=0; Handle=0x1; StreamId=0x0.

I! CuDNN (v92600 17) function cudnnBackendExecute() called:
i!     handle: type=cudnnHandle_t; streamId=0x0;
i!     executionPlan: type=CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR:
i!         engineConfig: type=CUDNN_BACKEND_ENGINECFG_DESCRIPTOR:
i!             engine: type=CUDNN_BACKEND_ENGINE_DESCRIPTOR:
i!                 globalIndex: type=int64_t; val=38;
i!                 numericalNotes: type=cudnnBackendNumericalNote_t; val=[CUDNN_NUMERICAL_NOTE_TENSOR_CORE (0)];
i!                 behaviorNotes: type=cudnnBackendDescriptor_t:
i!                     CUDNN_BEHAVIOR_NOTE_RUNTIME_COMPILATION: type=bool; val=true;
i!                     CUDNN_BEHAVIOR_NOTE_REQUIRES_FILTER_INT8x32_REORDER: type=bool; val=false;
i!             knobChoices: type=CUDNN_BACKEND_KNOB_CHOICE_DESCRIPTOR:
i!                 knobType: type=cudnnBackendKnobType_t; val=CUDNN_KNOB_TYPE_SPLIT_K (3);
i!                 knobValue: type=int64_t; val=1;
i!             CUDNN_KNOB_TYPE_TILE_SIZE: type=int; val=4;
i!     variantPack: type=CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR:
i!         uid: type=int64_t; val=[120,119,118];
i! Time: 2026-11-26T10:00:00.000002 (0d+0h+0m+1s since start)
i! Process=100; Thread=100; GPU=0; Handle=0x1; StreamId=0x0.

cuDNN (v90000) function cudnnConvolutionBackwardFilter() called:
    handle: type=cudnnHandle_t; streamId=0x0;
    algo: type=cudnnConvolutionBwdFilterAlgo_t; val=CUDNN_CONVOLUTION_BWD_FILTER_ALGO_FFT (2);
    workSpaceSizeInBytes: type=size_t; val=1048576;
Time: 2024-01-21T14:14:21.366171 (0d+0h+1m+5s since start)
Process: 21264, Thread: 21264, cudnn_handle: 0x1, cudnn_stream: NULL.
)";

TEST(CudnnLog, ReadsTheEngineConfigAndTheLegacyAlgorithmOfEachExecution) {
  const std::vector<CudnnLogCall> calls = ParseCudnnLog(kConstructedCudnnLog);
  ASSERT_EQ(calls.size(), 3u);
  EXPECT_EQ(calls[0].function, "cudnnBackendFinalize");
  EXPECT_EQ(calls[1].version, "92600");
  EXPECT_EQ(calls[2].version, "90000");
  ASSERT_GE(calls[1].fields.size(), 4u);
  EXPECT_EQ(calls[1].fields[1].name, "executionPlan");
  EXPECT_EQ(calls[1].fields[1].type, "CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR");
  EXPECT_EQ(calls[1].fields[1].depth, 0);
  EXPECT_EQ(calls[1].fields[3].depth, 2);
  EXPECT_EQ(calls[1].fields[4].value, "38");

  // Only the executions count; the finalize's engine is not one.
  const std::vector<CudnnRan> runs = CudnnRunsIn(kConstructedCudnnLog);
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].function, "cudnnBackendExecute");
  EXPECT_EQ(runs[0].engine, 38);
  EXPECT_EQ(runs[0].numerical_notes, std::vector<std::string>{"TENSOR_CORE"});
  EXPECT_EQ(runs[0].behavior_notes, std::vector<std::string>{"RUNTIME_COMPILATION"}) << "a note set false is not one";
  EXPECT_EQ(runs[0].Name(), "eng38 SPLIT_K=1 TILE_SIZE=4 [TENSOR_CORE]");
  EXPECT_EQ(runs[1].function, "cudnnConvolutionBackwardFilter");
  EXPECT_FALSE(runs[1].engine.has_value());
  EXPECT_EQ(runs[1].legacy_algo, "CUDNN_CONVOLUTION_BWD_FILTER_ALGO_FFT");
  EXPECT_EQ(runs[1].legacy_index, 2);
  EXPECT_EQ(runs[1].Name(), "CUDNN_CONVOLUTION_BWD_FILTER_ALGO_FFT");

  EXPECT_TRUE(CudnnRunsIn("").empty());
  EXPECT_TRUE(CudnnRunsIn("onednn_verbose,v1,primitive,exec,cpu,convolution,x\n").empty());
  CudnnRan none;
  none.function = "cudnnBackendExecute";
  EXPECT_EQ(none.Name(), "") << "a call that named neither an engine nor an algorithm names nothing";
}

// Every recorded excerpt of cuDNN's API log (reports/tests/data/cudnn/*.log,
// PyTorch's own calls on a GPU, GPU.md) names what each convolution ran.
TEST(CudnnLog, ReadsEveryRecordedExcerpt) {
  const std::filesystem::path dir = std::filesystem::path(BC_SOURCE_DIR) / "reports" / "tests" / "data" / "cudnn";
  std::vector<std::filesystem::path> logs;
  if (std::filesystem::is_directory(dir)) {
    for (const auto& e : std::filesystem::directory_iterator(dir)) {
      if (e.path().extension() == ".log") logs.push_back(e.path());
    }
  }
  if (logs.empty()) GTEST_SKIP() << "no recorded cuDNN 9 API log in " << dir << " yet: GPU.md says how to record one";
  for (const auto& path : logs) {
    std::ifstream in(path);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const std::vector<CudnnRan> runs = CudnnRunsIn(text);
    EXPECT_FALSE(runs.empty()) << path << ": no convolution execution read";
    for (const CudnnRan& r : runs) EXPECT_NE(r.Name(), "") << path << ": " << r.function << " named nothing";
  }
}

// The two logs recorded on an H100 (cuDNN 9.19.0, reports/tests/data/cudnn/README.md)
// of one PyTorch fp16 forward convolution run ten times: the graph path
// executed engine 28 each time, the legacy path IMPLICIT_PRECOMP_GEMM. Each
// call is logged twice by cuDNN 9 (its arguments, then its status as it
// returns); the return is not another execution.
std::string RecordedCudnnLog(const std::string& name) {
  const std::filesystem::path path = std::filesystem::path(BC_SOURCE_DIR) / "reports" / "tests" / "data" / "cudnn" / name;
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << path;
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

TEST(CudnnLog, NamesEngine28InEachExecutionOfTheRecordedGraphLog) {
  const std::vector<CudnnRan> runs = CudnnRunsIn(RecordedCudnnLog("cudnn-9-graph-fwd-f16.log"));
  ASSERT_EQ(runs.size(), 10u);
  for (const CudnnRan& r : runs) {
    EXPECT_EQ(r.function, "cudnnBackendExecute");
    ASSERT_TRUE(r.engine.has_value());
    EXPECT_EQ(*r.engine, 28);
    EXPECT_EQ(r.Name(), "eng28 TILE_SIZE=4 USE_TEX=0");
  }
}

TEST(CudnnLog, NamesTheLegacyAlgorithmInEachExecutionOfTheRecordedLegacyLog) {
  const std::vector<CudnnRan> runs = CudnnRunsIn(RecordedCudnnLog("cudnn-9-legacy-fwd-f16.log"));
  ASSERT_EQ(runs.size(), 10u);
  for (const CudnnRan& r : runs) {
    EXPECT_EQ(r.function, "cudnnConvolutionForward");
    EXPECT_EQ(r.legacy_algo, "CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM");
    EXPECT_EQ(r.legacy_index, 1);
  }
}

// oneDNN 2.x and 3.x verbose lines (the formats PyTorch 1.13's and 2.x's
// oneDNN print): the executed primitive and its implementation, reorders
// and non-exec lines aside.
TEST(OnednnVerbose, ReadsBothFormats) {
  struct Line {
    const char* text;
    const char* primitive;
    const char* impl;
  };
  const Line lines[] = {
      {"onednn_verbose,exec,cpu,convolution,jit:avx2,backward_weights,src_f32::blocked:aBcd8b:f0,"
       "alg:convolution_direct,mb2_ic8oc8_ih14oh14kh3sh1dh0ph1_iw14ow14kw3sw1dw0pw1,0.05\n",
       "convolution", "jit:avx2"},
      {"onednn_verbose,v1,primitive,exec,cpu,convolution,brg_conv_fwd:avx2,forward_training,src:f32::blocked:acdb::f0,"
       ",alg:convolution_direct,mb2_ic8oc8_ih14oh14kh3sh1dh0ph1_iw14ow14kw3sw1dw0pw1,0.0319824",
       "convolution", "brg_conv_fwd:avx2"},
      {"onednn_verbose,1732432211.5,primitive,exec,cpu,matmul,gemm:jit,x", "matmul", "gemm:jit"},
      {"dnnl_verbose,exec,cpu,convolution,gemm:jit,forward_training,x", "convolution", "gemm:jit"},
  };
  for (const Line& l : lines) {
    const auto e = ParseOnednnVerboseLine(l.text);
    ASSERT_TRUE(e.has_value()) << l.text;
    EXPECT_EQ(e->engine, "cpu") << l.text;
    EXPECT_EQ(e->primitive, l.primitive) << l.text;
    EXPECT_EQ(e->impl, l.impl) << l.text;
  }
  EXPECT_FALSE(ParseOnednnVerboseLine("onednn_verbose,v1,info,oneDNN v3.13.3 (commit b38f97e)").has_value());
  EXPECT_FALSE(ParseOnednnVerboseLine("onednn_verbose,v1,primitive,create:cache_miss,cpu,convolution,x").has_value());
  EXPECT_FALSE(ParseOnednnVerboseLine("something else,exec,cpu,convolution,jit").has_value());
  EXPECT_EQ(OnednnKernelsIn("onednn_verbose,v1,primitive,exec,cpu,reorder,jit:uni,x\n"
                            "onednn_verbose,v1,primitive,exec,cpu,convolution,brg_conv_fwd:avx2,x\n"
                            "onednn_verbose,exec,cpu,convolution,jit:avx2,x\n"
                            "onednn_verbose,v1,primitive,exec,cpu,convolution,brg_conv_fwd:avx2,x\n"),
            "convolution brg_conv_fwd:avx2, convolution jit:avx2");
  EXPECT_EQ(OnednnKernelsIn(""), "");
}

}  // namespace
}  // namespace bc
