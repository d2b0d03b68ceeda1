// Throughput of each CPU engine on ResNet-50 conv layers, through the same
// Prepare/Execute path the suites use. Reports GFLOP/s as a rate counter.
//   build/default/conv_benchmark --benchmark_repetitions=9 --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>
#include <omp.h>

#include "backends/onednn/onednn.h"
#include "backends/registry.h"
#include "harness/buffers.h"

namespace bc {
namespace {

// ResNet-50 conv2_x 3x3 at batch 8 (the layer the README quotes).
constexpr const char* kLayers[] = {
    "conv2d:fwd:f32:mb8ic64ih56oc64kh3ph1",
    "conv2d:bwd_weights:f32:mb8ic64ih56oc64kh3ph1",
};

void BM_Conv(benchmark::State& state, const std::string& engine_name, const std::string& algorithm,
             const std::string& repro) {
  const Problem p = ParseProblem(repro).value();
  const Engine* engine = FindEngine(engine_name);
  Buffers b = Buffers::For(p);
  FillInputs(p, b);
  auto prepared = engine->Prepare(p, algorithm, b);
  if (!prepared.ok()) {
    state.SkipWithError(prepared.status().ToString().c_str());
    return;
  }
  for (auto _ : state) {
    if (Status s = prepared.value()->Execute(); !s.ok()) {
      state.SkipWithError(s.ToString().c_str());
      return;
    }
  }
  state.counters["GFLOP/s"] = benchmark::Counter(ProblemGflop(p) * 1e9, benchmark::Counter::kIsIterationInvariantRate);
  state.SetLabel(prepared.value()->implementation());
}

void Register() {
  for (const char* layer : kLayers) {
    const std::string repro = layer;
    const std::string dir = repro.find("bwd_weights") != std::string::npos ? "BwdWeights" : "Fwd";
    benchmark::RegisterBenchmark(("Onednn/" + dir + "/Resnet3x3").c_str(), BM_Conv, "onednn", "", repro)
        ->Unit(benchmark::kMillisecond)->UseRealTime();
    benchmark::RegisterBenchmark(("Reference/" + dir + "/Resnet3x3").c_str(), BM_Conv, "reference", "owner", repro)
        ->Unit(benchmark::kMillisecond)->UseRealTime()->MinTime(0.5);
  }
}

}  // namespace
}  // namespace bc

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  benchmark::AddCustomContext("onednn", bc::OnednnEngine::Instance().availability().version);
  benchmark::AddCustomContext("onednn_isa", bc::OnednnEffectiveIsa());
  benchmark::AddCustomContext("omp_threads", std::to_string(omp_get_max_threads()));
  bc::Register();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
