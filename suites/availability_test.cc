// Availability semantics of torch.backends.*, the dispatcher's routing, and
// the fact that cuDNN flags leave CPU results bitwise unchanged (CpuNoop,
// generated from catalog/matrices/cpu.toml).
#include <gtest/gtest.h>

#include <set>

#include "runner/dispatch.h"
#include "backends/registry.h"
#include "harness/tensor_data.h"
#include "runner/case_table.h"
#include "runner/case_run.h"
#include "suites/fixtures.h"
#include "runner/records.h"
#include "suites/test_evidence.h"

namespace bc {
namespace {

Availability Find(const std::string& engine) {
  for (const Availability& a : AllAvailability()) {
    if (a.engine == engine) return a;
  }
  ADD_FAILURE() << "no availability entry for " << engine;
  return {};
}

// Each line of backends/engines.def and the engine it names agree on the
// name and the device; every backend has exactly one availability entry.
TEST(Registry, EntriesMatchEngines) {
  ASSERT_FALSE(EngineEntries().empty());
  for (const EngineEntry& e : EngineEntries()) {
    EXPECT_EQ(e.engine.name(), e.name);
    EXPECT_EQ(e.engine.device(), e.device) << e.name;
    EXPECT_EQ(FindEngine(e.name), &e.engine);
    EXPECT_FALSE(e.ops.empty()) << e.name;
  }
  std::set<std::string> names;
  for (const Availability& a : AllAvailability()) EXPECT_TRUE(names.insert(a.engine).second) << a.engine;
  EXPECT_EQ(names.size(), EngineEntries().size() + 2) << "the engines, openmp and mps";
  EXPECT_TRUE(FindEngineEntry("onednn")->Serves("conv2d"));
  EXPECT_FALSE(FindEngineEntry("onednn")->Serves("conv"));
  EXPECT_FALSE(FindEngineEntry("cublas")->Serves("conv2d"));
  EXPECT_TRUE(UsesCudnnSelection("select:onednn", "onednn"));
  EXPECT_TRUE(UsesCudnnSelection("cudnn", "cudnn"));
  EXPECT_FALSE(UsesCudnnSelection("onednn", "onednn"));
  EXPECT_FALSE(UsesCudnnSelection("auto", "reference"));
}

// A positive control names "any_nondeterministic" where an engine's
// algorithm names are not fixed (cuDNN's graph configs): the first candidate
// the engine declares nondeterministic, or UNIMPLEMENTED (not evaluated).
TEST(Registry, AnyNondeterministicPicksTheFirstNondeterministicCandidate) {
  const Problem p = ParseProblem("conv2d:bwd_weights:f32:mb2ic8ih14oc8kh3ph1").value();
  Result<Algorithm> atomic = FindAlgorithm(*FindEngine("reference"), p, kAnyNondeterministic, BackendFlags{});
  ASSERT_TRUE(atomic.ok()) << atomic.status().ToString();
  EXPECT_EQ(atomic->name, "atomic");
  EXPECT_EQ(atomic->determinism, Determinism::kNondeterministic);
  Result<Algorithm> none = FindAlgorithm(*FindEngine("onednn"), p, kAnyNondeterministic, BackendFlags{});
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.status().code(), StatusCode::kUnimplemented) << none.status().ToString();
}

// The model routes engine=auto by the roles engines.def lines claim: each
// path of PyTorch's dispatch has an engine on its device, and only one line
// per device and role is the one routed to (the first).
TEST(Registry, EveryRoleTheModelRoutesToIsClaimed) {
  for (const auto& [device, role] : {std::pair{Device::kCpu, "mkldnn"}, {Device::kCpu, "native"},
                                     {Device::kCuda, "cudnn"}, {Device::kCuda, "native"}, {Device::kCuda, "blas"}}) {
    const Engine* e = EngineForRole(device, role);
    ASSERT_NE(e, nullptr) << role << " on " << DeviceName(device);
    EXPECT_EQ(e->device(), device);
  }
  EXPECT_EQ(EngineForRole(Device::kCpu, ""), nullptr) << "an empty role is no path";
  EXPECT_EQ(EngineForRole(Device::kCpu, "blas"), nullptr) << "CPU matmul is the native path here";
}

// The arithmetic each engine computes in, as PyTorch's flags allow it; the
// tolerance (harness/numerics.h) follows it.
TEST(Registry, ComputeTypeFollowsTheFlagThatGovernsEachEngine) {
  const Problem conv = ParseProblem("conv2d:fwd:f32:mb2ic8ih14oc8kh3ph1").value();
  const Problem half = ParseProblem("conv2d:fwd:f16:mb2ic8ih14oc8kh3ph1").value();
  const Problem mm = ParseProblem("matmul:f32:m8n8k8").value();
  BackendFlags defaults, no_conv_tf32, matmul_tf32, cudnn_off;
  no_conv_tf32.cudnn_allow_tf32 = false;
  matmul_tf32.cuda_matmul_allow_tf32 = true;
  cudnn_off.cudnn_enabled = false;
  // The rules, in every build; each engine's own compute_type where it is built.
  EXPECT_EQ(CudnnComputeType(conv, defaults), ComputeType::kTf32) << "cudnn.allow_tf32 defaults to true";
  EXPECT_EQ(CudnnComputeType(conv, no_conv_tf32), ComputeType::kF32);
  EXPECT_EQ(CudnnComputeType(half, no_conv_tf32), ComputeType::kF16);
  EXPECT_EQ(CublasComputeType(mm, defaults), ComputeType::kF32) << "cuda.matmul.allow_tf32 defaults to false";
  EXPECT_EQ(CublasComputeType(mm, matmul_tf32), ComputeType::kTf32);
  const auto built = [](const char* name) { return FindEngine(name)->availability().built; };
  if (built("cudnn")) {
    EXPECT_EQ(ComputeTypeOf(conv, "cudnn", defaults), ComputeType::kTf32);
    EXPECT_EQ(ComputeTypeOf(conv, "cudnn", no_conv_tf32), ComputeType::kF32);
    EXPECT_EQ(ComputeTypeOf(half, "cudnn", no_conv_tf32), ComputeType::kF16);
  }
  if (built("cublas")) {
    EXPECT_EQ(ComputeTypeOf(mm, "cublas", defaults), ComputeType::kF32);
    EXPECT_EQ(ComputeTypeOf(mm, "cublas", matmul_tf32), ComputeType::kTf32);
  }
  if (built("cuda_native")) {
    EXPECT_EQ(ComputeTypeOf(conv, "cuda_native", defaults), ComputeType::kF32) << "its GEMMs follow the matmul flag";
    EXPECT_EQ(ComputeTypeOf(conv, "cuda_native", matmul_tf32), ComputeType::kTf32);
  }
  EXPECT_EQ(ComputeTypeOf(conv, "pytorch_cuda", defaults), ComputeType::kTf32);
  EXPECT_EQ(ComputeTypeOf(conv, "pytorch_cuda", cudnn_off), ComputeType::kF32);
  EXPECT_EQ(ComputeTypeOf(mm, "pytorch_cuda", matmul_tf32), ComputeType::kTf32);
  for (const char* cpu : {"onednn", "reference", "pytorch"}) {
    EXPECT_EQ(ComputeTypeOf(conv, cpu, matmul_tf32), ComputeType::kF32) << cpu;
  }
}

// The selection cache key holds the fields of PyTorch's ConvolutionParams
// that matter here: the problem, device, pool, allow_tf32 and deterministic,
// and not benchmark.
TEST(Dispatch, CacheKeySeparatesAllowTf32AndDeterministic) {
  const Problem p = ParseProblem("conv2d:fwd:f32:mb2ic8ih14oc8kh3ph1").value();
  CaseSpec c = ParseCaseSpec("conv2d:fwd:f32:mb2ic8ih14oc8kh3ph1 device=cpu engine=select:reference threads=1").value();
  Buffers b = Buffers::For(p);
  FillInputs(p, b);
  Dispatcher d;
  const TimeCandidate timer = [](const Candidate& x) -> Result<double> { return x.algorithm.name == "owner" ? 1 : 2; };
  BackendFlags f;
  f.cudnn_benchmark = true;
  const auto cache = [&](const BackendFlags& flags) { return d.Decide(c, p, flags, timer, b)->selection->cache; };
  EXPECT_EQ(cache(f), "miss");
  EXPECT_EQ(cache(f), "hit");
  BackendFlags no_tf32 = f;
  no_tf32.cudnn_allow_tf32 = false;
  EXPECT_EQ(cache(no_tf32), "miss");
  BackendFlags det = f;
  det.cudnn_deterministic = true;
  EXPECT_EQ(cache(det), "miss");
  BackendFlags limit = f;
  limit.cudnn_benchmark_limit = 1;
  EXPECT_EQ(cache(limit), "hit") << "benchmark_limit is not part of the key";
}

TEST(Availability, OnednnIsBuiltAndAvailable) {
  const Availability a = Find("onednn");
  EXPECT_TRUE(a.built);
  EXPECT_TRUE(a.available) << a.reason;
  EXPECT_FALSE(a.version.empty());
}

// torch.backends.mkldnn.is_available() is torch._C._has_mkldnn, fixed when
// the library is built; its mirror is the `built` field, which no probe of
// the CPU can turn off. `available` is the separate, run-time answer (a CPU
// engine could be created), and this build needs both.
TEST(Availability, MkldnnIsAvailableReportsTheBuild) {
  const Availability a = Find("onednn");
  EXPECT_TRUE(a.built) << "backendcheck requires oneDNN at build time";
  EXPECT_NE(a.reason.find("built with oneDNN"), std::string::npos) << a.reason;
}

TEST(Availability, OpenmpIsBuiltAndAvailable) {
  const Availability a = Find("openmp");
  EXPECT_TRUE(a.built);
  EXPECT_TRUE(a.available) << a.reason;
}

TEST(Availability, MpsIsNeitherBuiltNorAvailableOffApple) {
#if defined(__APPLE__)
  GTEST_SKIP() << "this check is for non-Apple builds";
#endif
  const Availability a = Find("mps");
  EXPECT_FALSE(a.built);
  EXPECT_FALSE(a.available);
  EXPECT_NE(a.reason.find("not built"), std::string::npos) << a.reason;
}

TEST(Availability, CudnnSaysWhetherBuiltAndWhyNotAvailable) {
  const Availability a = Find("cudnn");
  EXPECT_EQ(a.built, BC_WITH_CUDA == 1);
  EXPECT_FALSE(a.reason.empty());
  if (a.built && !a.available) {
    // The reason is the CUDA or cuDNN call that failed, with its code.
    EXPECT_TRUE(a.reason.find("cudaGetDeviceCount") != std::string::npos ||
                a.reason.find("cudnnCreate") != std::string::npos)
        << a.reason;
  }
  std::printf("cudnn: built=%d available=%d reason: %s\n", a.built, a.available, a.reason.c_str());
}

TEST(Availability, CublasAndNativeCudaSayWhetherBuiltAndWhyNotAvailable) {
  for (const char* engine : {"cublas", "cuda_native"}) {
    const Availability a = Find(engine);
    EXPECT_EQ(a.built, BC_WITH_CUDA == 1) << engine;
    EXPECT_FALSE(a.reason.empty()) << engine;
    if (a.built && !a.available) {
      EXPECT_NE(a.reason.find("cudaGetDeviceCount"), std::string::npos) << a.reason;
    }
  }
}

// One dispatch decision with a fresh selector (benchmark is off: no timing).
Result<DispatchDecision> DispatchOnce(const CaseSpec& c, const BackendFlags& flags) {
  Dispatcher dispatcher;
  Buffers inputs = Buffers::For(c.problem());
  FillInputs(c.problem(), inputs);
  return dispatcher.Decide(
      c, c.problem(), flags,
      [](const Candidate&) -> Result<double> { return Status(StatusCode::kInternal, "no timing expected"); }, inputs);
}

CaseSpec CpuCase(Direction d) {
  CaseSpec c;
  c.steps = {ParseAs<Conv2dProblem>(std::string("conv2d:") + DirectionName(d) + ":f32:mb2ic4ih8oc4kh3ph1").value()};
  return c;
}

TEST(Dispatch, CpuWithMkldnnEnabledGoesToOnednn) {
  BackendFlags flags;
  Result<DispatchDecision> d = DispatchOnce(CpuCase(Direction::kForward), flags);
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_EQ(d->engine->name(), "onednn");
  EXPECT_NE(d->reason.find("mkldnn.enabled=true"), std::string::npos) << d->reason;
}

TEST(Dispatch, CpuWithMkldnnDisabledGoesToReference) {
  BackendFlags flags;
  flags.mkldnn_enabled = false;
  Result<DispatchDecision> d = DispatchOnce(CpuCase(Direction::kBackwardWeights), flags);
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_EQ(d->engine->name(), "reference");
  EXPECT_NE(d->reason.find("mkldnn.enabled=false"), std::string::npos) << d->reason;
}

// PyTorch's mkldnn convolution asks oneDNN for convolution_direct in every
// direction (ideep's default; backends/onednn/onednn.cc cites the sources),
// never convolution_auto, under which oneDNN before 3.2 takes Winograd where
// its own rule says it is faster: ResNet-50's 256-channel 3x3 backward-weights
// ran jit_wino_4x3 in the model and a direct kernel in PyTorch 1.13 on an AMD
// CPU at batch 1 and 8; the second shape, at batch 16, takes Winograd under
// auto on any AVX-512 CPU with oneDNN 2.x. The model, as engine=auto, makes
// PyTorch's request.
TEST(Dispatch, CpuConvolutionAsksOnednnForTheDirectAlgorithmAsPytorchDoes) {
  for (const char* shape : {"mb2ic4ih8oc4kh3ph1", "mb16ic256ih14oc256kh3ph1"}) {
    for (Direction d : {Direction::kForward, Direction::kBackwardData, Direction::kBackwardWeights}) {
      CaseSpec c;
      c.steps = {ParseAs<Conv2dProblem>(std::string("conv2d:") + DirectionName(d) + ":f32:" + shape).value()};
      c.threads = 2;
      Result<DispatchDecision> decided = DispatchOnce(c, BackendFlags{});
      ASSERT_TRUE(decided.ok()) << decided.status().ToString();
      ASSERT_EQ(decided->engine->name(), "onednn") << shape << " " << DirectionName(d);
      EXPECT_EQ(decided->chosen.algorithm.name, "direct") << shape << " " << DirectionName(d);
    }
  }
}

// An engine states its own facts: the platform facts the environment record
// carries, and the kind of kernel a run took, which a conformance case
// compares; nothing reads them back out of names or implementation strings.
TEST(Registry, EnginesStateTheirPlatformFactsAndKernels) {
  std::map<std::string, std::string> facts;
  for (const EngineEntry& entry : EngineEntries()) facts.merge(entry.engine.platform());
  ASSERT_TRUE(facts.count("onednn_isa")) << "the oneDNN engine names the ISA it dispatches to";
  EXPECT_FALSE(facts["onednn_isa"].empty());
  const nlohmann::json env = ToJson(ProbeEnvironment("*"));
  EXPECT_EQ(env["platform"]["onednn_isa"], facts["onednn_isa"]);

  for (const EngineEntry& entry : EngineEntries()) {
    if (entry.device != Device::kCpu || !entry.Serves("conv2d") || entry.role.empty()) continue;
    CaseSpec c = CpuCase(Direction::kForward);
    c.engine = std::string(entry.name);
    const Result<CaseRun> run = RunCase(c, {.repeats = 1, .compare_to_reference = false});
    ASSERT_TRUE(run.ok()) << entry.name << ": " << run.status().ToString();
    const KernelFacts& k = run->first().kernel;
    EXPECT_EQ(k.kernel_class, entry.role) << entry.name << " ran as the path its engines.def line claims";
    if (entry.role == "mkldnn") {
      EXPECT_EQ(k.onednn_kernel, run->first().implementation);
      EXPECT_EQ(k.onednn_version, entry.engine.availability().library_version);
    } else {
      EXPECT_TRUE(k.onednn_kernel.empty() && k.onednn_version.empty()) << entry.name << " runs no oneDNN";
    }
  }
}

// torch.backends does not choose the device: no cuDNN flag routes CPU work.
TEST(Dispatch, CudnnFlagsNeverRouteCpuWork) {
  for (int bits = 0; bits < 32; ++bits) {
    BackendFlags flags;
    flags.cudnn_enabled = bits & 1;
    flags.cudnn_benchmark = bits & 2;
    flags.cudnn_deterministic = bits & 4;
    flags.cudnn_allow_tf32 = bits & 8;
    flags.mkldnn_enabled = bits & 16;
    Result<DispatchDecision> d = DispatchOnce(CpuCase(Direction::kForward), flags);
    ASSERT_TRUE(d.ok()) << d.status().ToString();
    EXPECT_EQ(d->engine->device(), Device::kCpu);
    EXPECT_EQ(d->engine->name(), flags.mkldnn_enabled ? "onednn" : "reference");
  }
}

TEST(Dispatch, CudaWorkGoesToCudnnOrSaysWhyNot) {
  CaseSpec c = CpuCase(Direction::kForward);
  c.device = Device::kCuda;
  BackendFlags flags;
  Result<DispatchDecision> d = DispatchOnce(c, flags);
  if (Find("cudnn").available) {
    ASSERT_TRUE(d.ok()) << d.status().ToString();
    EXPECT_EQ(d->engine->name(), "cudnn");
  } else {
    ASSERT_FALSE(d.ok());
    EXPECT_EQ(d.status().code(), StatusCode::kUnavailable);
    EXPECT_NE(d.status().message().find("cudnn unavailable"), std::string::npos) << d.status().message();
  }
  flags.cudnn_enabled = false;
  Result<DispatchDecision> native = DispatchOnce(c, flags);
  if (Find("cuda_native").available) {
    ASSERT_TRUE(native.ok()) << native.status().ToString();
    EXPECT_EQ(native->engine->name(), "cuda_native");
    EXPECT_NE(native->reason.find("no cuDNN call"), std::string::npos) << native->reason;
  } else {
    ASSERT_FALSE(native.ok());
    EXPECT_NE(native.status().message().find("cuda_native unavailable"), std::string::npos)
        << native.status().message();
  }
}

TEST(Dispatch, ForcedEngineMustRunOnTheCaseDevice) {
  CaseSpec c = CpuCase(Direction::kForward);
  c.engine = "cudnn";
  Result<DispatchDecision> d = DispatchOnce(c, BackendFlags());
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.status().code(), StatusCode::kInvalidArgument);
  c.engine = "nonesuch";
  EXPECT_EQ(DispatchOnce(c, BackendFlags()).status().code(), StatusCode::kInvalidArgument);
}

}  // namespace

namespace suite {

TEST_P(CpuNoop, CudnnFlagsLeaveResultUnchanged) {
  const CaseRow& row = GetParam();
  Result<CaseSpec> spec = ParseRow(row);
  ASSERT_TRUE(spec.ok()) << spec.status().ToString();
  // The baseline: every cuDNN flag (flags.def's cudnn.*) at its default.
  CaseSpec baseline = spec.value();
  for (const auto& [name, value] : BackendFlags().Values()) {
    if (name.starts_with("cudnn.")) {
      ASSERT_TRUE(baseline.flags.Set(name, value).ok()) << name;
    }
  }

  // A setting this PyTorch does not have (cudnn.conv.fp32_precision before
  // recent 2.x) leaves the case not evaluated, naming the version.
  Result<CaseRun> run = RunCase(spec.value(), {.repeats = 1, .compare_to_reference = false});
  if (!run.ok() && IsNotEvaluated(run.status())) {
    WriteEvidence(SkippedRecord(row, run.status().message()));
    GTEST_SKIP() << run.status().message();
  }
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  Result<CaseRun> base = RunCase(baseline, {.repeats = 1, .compare_to_reference = false});
  ASSERT_TRUE(base.ok()) << base.status().ToString();

  const StepRun& got = run->first();
  const StepRun& want = base->first();
  const bool same_bits = got.digests == want.digests;
  const bool same_engine = got.engine == want.engine && got.implementation == want.implementation;
  CaseRecord record = RunRecord(row, run.value());
  record.baseline_digest = DigestHex(want.digests.back());
  record.checks.push_back(
      {.name = "cpu_noop",
       .outcome = same_bits && same_engine && !got.degenerate ? CheckOutcome::kPassed
                  : got.degenerate                           ? CheckOutcome::kMistrusted
                                                             : CheckOutcome::kFailed,
       .detail = "digest " + DigestHex(got.digests.back()) + " via " + got.implementation + " vs default cuDNN flags " +
                 DigestHex(want.digests.back()) + " via " + want.implementation});
  WriteEvidence(std::move(record));

  EXPECT_NE(got.engine, "cudnn");
  EXPECT_TRUE(same_engine) << got.implementation << " vs " << want.implementation;
  EXPECT_TRUE(same_bits) << "repro: " << row.repro;
}

}  // namespace suite
}  // namespace bc

