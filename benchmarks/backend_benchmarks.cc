// The performance suite, on Google Benchmark.
//
//   Engine/<engine>/<op>/<direction>/<layer>  every engine of this build on
//       every ResNet-50 convolution (three directions) and BERT-base matmul,
//       through the Prepare/Execute path the suites use, at the engine's
//       default algorithm. GPU engines report CUDA-event time (UseManualTime).
//       Counters: GFLOP/s, the fraction of the device's peak, and the flop
//       and byte counts that place the layer on the roofline.
//   Overhead/{direct,harness}/<problem>  one case's work straight on the
//       engine against the same work through the harness: dispatch with a
//       selection-cache hit, the poisoned output, Fetch (the result in the
//       host's plain layout), the digest, and the
//       evidence record written as a case writes it.
//       Overhead/<part>/<problem> times each part alone.
//   Roof/cpu_fma  the FMA peak probe, timed like the engines, so that a
//       fraction of peak can be a ratio of two medians of one run.
//   Digest/xxh3/<bytes>  the output digest's throughput on one core.
//
// The context (AddCustomContext) carries the engine versions, oneDNN's ISA,
// the thread count and the roofs: this CPU's fp32 FMA peak and triad
// bandwidth (harness/peak.h), measured at start, and on a GPU its spec peak.
// `./backendcheck bench` runs it and hands the JSON to the report; the ctest
// test `benchmarks.smoke` runs every benchmark once (--smoke).
//
// Own flags, after Google Benchmark's: --mb=N (ResNet batch, default 8),
// --tokens=N (BERT rows, default 1024), --reference_mb=N (the reference
// engine's batch, default 1; its BERT rows are at most 128), --smoke (mb 1, tokens 16, images
// a quarter of their size, one iteration each), --scratch=DIR (where evidence records are written;
// default: a directory under the working directory).
#include <benchmark/benchmark.h>
#include <omp.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "runner/dispatch.h"
#include "backends/registry.h"
#include "bench_layers.h"
#include "harness/buffers.h"
#include "harness/evidence.h"
#include "harness/peak.h"
#include "harness/tensor_data.h"
#include "runner/case_run.h"
#include "runner/records.h"

#if BC_WITH_CUDA
#include "backends/cuda/device.h"
#endif

namespace bc {
namespace {

struct Options {
  int64_t mb = 8;
  int64_t tokens = 1024;
  int64_t reference_mb = 1;  // the reference engine's batch (and at most 128 BERT rows)
  bool smoke = false;
  std::filesystem::path scratch;
  // Peak fp32 flop/s of each device, measured (CPU) or from the spec (GPU)
  // at start; 0 when unknown.
  double cpu_peak_flops = 0, gpu_peak_flops = 0;
};

Options& Opts() {
  static Options o;
  return o;
}

// The flop, byte and rate counters every compute benchmark reports; bytes are
// those of the problem's tensors (`b`), which place it on the roofline.
void SetComputeCounters(benchmark::State& state, const Problem& p, const Buffers& b, double peak_flops) {
  const double flop = ProblemGflop(p) * 1e9;
  state.counters["GFLOP/s"] = benchmark::Counter(flop * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
  if (peak_flops > 0) {
    state.counters["peak_fraction"] =
        benchmark::Counter(flop / peak_flops, benchmark::Counter::kIsIterationInvariantRate);
  }
  state.counters["flop"] = flop;
  state.counters["bytes"] = static_cast<double>((b["src"].size() + b["wei"].size() + b["dst"].size()) * sizeof(float));
}

void BM_Engine(benchmark::State& state, const Engine* engine, const std::string& repro) {
  const Problem p = ParseProblem(repro).value();
  const Availability a = engine->availability();
  if (!a.available) {
    state.SkipWithError(("not evaluated: " + a.reason).c_str());
    return;
  }
  Buffers b = Buffers::For(p);
  FillInputs(p, b);
  const BackendFlags defaults;
  Result<Algorithm> first = FindAlgorithm(*engine, p, "", defaults);
  if (!first.ok()) {
    state.SkipWithError(("not evaluated: " + first.status().ToString()).c_str());
    return;
  }
  auto prepared = engine->Prepare(p, first.value(), b, defaults);
  if (!prepared.ok()) {
    state.SkipWithError(("not evaluated: " + prepared.status().ToString()).c_str());
    return;
  }
  PreparedOp& op = *prepared.value();
  const bool gpu = engine->device() == Device::kCuda;
  for (auto _ : state) {
    if (Status s = op.Execute(); !s.ok()) {
      state.SkipWithError(s.ToString().c_str());
      return;
    }
    if (gpu) state.SetIterationTime(op.DeviceTimeNs().value_or(0) * 1e-9);
  }
  SetComputeCounters(state, p, b, gpu ? Opts().gpu_peak_flops : Opts().cpu_peak_flops);
  if (const auto* conv = std::get_if<Conv2dProblem>(&p)) state.counters["batch"] = static_cast<double>(conv->mb);
  if (const auto* mm = std::get_if<MatmulProblem>(&p)) state.counters["batch"] = static_cast<double>(mm->m);
  state.SetLabel(op.implementation());
}

// --- harness overhead ---------------------------------------------------------

// One CPU case of the cpu-benchmark-cost kind: oneDNN's candidates under
// cudnn.benchmark=true, so that after the first Decide every one is a hit of
// the selection cache, as on every step of a fixed schedule after the first.
struct HarnessCase {
  CaseSpec spec;
  CaseRow row;
  Dispatcher dispatcher;
  Buffers buffers;
  std::unique_ptr<PreparedOp> op;
  StepRun step;
  EvidenceWriter writer;
  std::string repro_storage;

  Status Init(const std::string& problem) {
    repro_storage = problem + " device=cpu engine=select:onednn threads=" + std::to_string(omp_get_max_threads()) +
                    " cudnn.benchmark=true";
    Result<CaseSpec> parsed = ParseCaseSpec(repro_storage);
    if (!parsed.ok()) return parsed.status();
    spec = parsed.value();
    repro_storage = spec.Format();
    row = CaseRow{"Overhead", "overhead", repro_storage.c_str(), 1, false, "{}"};
    const Problem& p = spec.problem();
    buffers = Buffers::For(p);
    FillInputs(p, buffers);
    Result<DispatchDecision> d = Decide();
    if (!d.ok()) return d.status();
    auto prepared = d->engine->Prepare(p, d->chosen.algorithm, buffers, spec.flags);
    if (!prepared.ok()) return prepared.status();
    op = std::move(prepared.value());
    step.problem = p;
    step.engine = d->chosen.engine;
    step.algorithm = op->algorithm();
    step.implementation = op->implementation();
    step.selection = d->selection;
    const std::filesystem::path dir = Opts().scratch / ("overhead-" + std::to_string(getpid()));
    return writer.Open(dir, "overhead", nlohmann::json{{"kind", "environment"}});
  }

  Result<DispatchDecision> Decide() {
    return dispatcher.Decide(
        spec, spec.problem(), spec.flags,
        [](const Candidate&) -> Result<double> {
          return 1.0;  // the first Decide's search; every later one is a cache hit
        },
        buffers);
  }

  // The record a case writes, from this step.
  nlohmann::json Record() const {
    CaseRun run;
    run.spec = spec;
    run.steps.push_back(step);
    return ToJson(RunRecord(row, run));
  }

  ~HarnessCase() {
    (void)writer.Close();
    std::error_code ec;
    if (!writer.path().empty()) std::filesystem::remove_all(writer.path().parent_path(), ec);
  }
};

enum class Part { kDirect, kHarness, kDecide, kPoison, kFetch, kDigest, kRecord, kEvidence };

void BM_Overhead(benchmark::State& state, Part part, const std::string& problem) {
  HarnessCase c;
  if (Status s = c.Init(problem); !s.ok()) {
    state.SkipWithError(("not evaluated: " + s.ToString()).c_str());
    return;
  }
  const Problem& p = c.spec.problem();
  std::vector<float>& out = c.buffers.Output(p);
  if (Status s = RunRepeat(*c.op, 0, out, c.step); !s.ok()) {  // warm, and a digest to record
    state.SkipWithError(s.ToString().c_str());
    return;
  }
  Status failed = Status::Ok();
  for (auto _ : state) {
    switch (part) {
      case Part::kDirect:
        failed = c.op->Execute();
        break;
      case Part::kHarness: {
        Result<DispatchDecision> d = c.Decide();
        if (!d.ok()) failed = d.status();
        c.step.times_ns.clear();
        c.step.digests.clear();
        if (failed.ok()) failed = RunRepeat(*c.op, 0, out, c.step);
        if (failed.ok()) failed = c.writer.Write(c.Record());
        break;
      }
      case Part::kDecide: {
        Result<DispatchDecision> d = c.Decide();
        if (!d.ok()) failed = d.status();
        break;
      }
      case Part::kPoison:
        PoisonOutput(0, out);
        benchmark::ClobberMemory();
        break;
      case Part::kFetch:  // the result into the host's plain layout (oneDNN: a reorder from its blocked one)
        failed = c.op->Fetch();
        break;
      case Part::kDigest:
        benchmark::DoNotOptimize(Digest(out));
        break;
      case Part::kRecord:  // the record built and serialised, not written
        benchmark::DoNotOptimize(c.Record().dump());
        break;
      case Part::kEvidence:
        failed = c.writer.Write(c.Record());
        break;
    }
    if (!failed.ok()) {
      state.SkipWithError(failed.ToString().c_str());
      return;
    }
  }
  if (c.dispatcher.selector().searches() != 1) {
    state.SkipWithError(("expected one search and cache hits after it, saw " +
                         std::to_string(c.dispatcher.selector().searches()) + " searches").c_str());
    return;
  }
  state.counters["record_bytes"] = static_cast<double>(c.Record().dump().size());
  state.SetLabel(c.step.implementation);
}

// --- digest throughput ----------------------------------------------------------

void BM_Digest(benchmark::State& state) {
  std::vector<float> data(static_cast<size_t>(state.range(0)) / sizeof(float));
  FillUniform(1, data);
  for (auto _ : state) benchmark::DoNotOptimize(Digest(data));
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * state.range(0));
}

// --- the roof, beside the engines -------------------------------------------------

void BM_CpuFmaPeak(benchmark::State& state) {
  const int threads = omp_get_max_threads();
  double flops = 0;
  for (auto _ : state) flops = RunFmaChains(threads, int64_t{1} << 20);
  state.counters["GFLOP/s"] = benchmark::Counter(flops * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

// --- registration ---------------------------------------------------------------

// A table's layer (bench_layers.h) at `size`, read by the C++ problem code
// (`{}` in its shape is the size); `spatial_div` shrinks a convolution's image
// (never below the kernel) for --smoke.
std::string LayerRepro(const TableLayer& l, int64_t size, const char* direction = "fwd", int64_t spatial_div = 1) {
  std::string shape = l.shape;
  if (const size_t at = shape.find("{}"); at != std::string::npos) shape.replace(at, 2, std::to_string(size));
  Problem p = ProblemFromShape(shape, direction).value();
  if (auto* c = std::get_if<Conv2dProblem>(&p); c != nullptr && spatial_div > 1) {
    c->ih = std::max(c->ih / spatial_div, c->kh);
    c->iw = std::max(c->iw / spatial_div, c->kw);
  }
  return FormatProblem(p);
}

benchmark::internal::Benchmark* Configure(benchmark::internal::Benchmark* b, bool gpu, bool slow) {
  b->Unit(benchmark::kMillisecond);
  if (gpu) {
    b->UseManualTime();
  } else {
    b->UseRealTime();
  }
  if (Opts().smoke) {
    b->Iterations(1);
  } else if (slow) {
    // The reference is the oracle, not a contender: one run of one
    // repetition, at batch 1 (--reference_mb), is enough to place it.
    b->Iterations(1)->Repetitions(1);
  }
  return b;
}

void RegisterAll() {
  const Options& o = Opts();
  for (const EngineEntry& entry : EngineEntries()) {
    const Engine* e = &entry.engine;
    const bool gpu = entry.device == Device::kCuda;
    const bool slow = entry.IsOracle();  // placed, not raced
    const bool conv = entry.Serves("conv2d"), matmul = entry.Serves("matmul");
    for (const char* dir : {"fwd", "bwd_data", "bwd_weights"}) {
      for (const TableLayer& l : kResnet50) {
        if (!conv) break;
        const std::string repro = LayerRepro(l, slow ? o.reference_mb : o.mb, dir, o.smoke ? 4 : 1);
        Configure(benchmark::RegisterBenchmark(
                      ("Engine/" + std::string(e->name()) + "/conv2d/" + dir + "/" + l.name).c_str(), BM_Engine, e,
                      repro),
                  gpu, slow);
      }
    }
    for (const TableLayer& m : kBertBase) {
      if (!matmul) break;
      const std::string repro = LayerRepro(m, slow ? std::min<int64_t>(o.tokens, 128) : o.tokens);
      Configure(benchmark::RegisterBenchmark(
                    ("Engine/" + std::string(e->name()) + "/matmul/fwd/" + m.name).c_str(), BM_Engine, e, repro),
                gpu, slow);
    }
  }
  // The 56x56x64 layer the targets name, at the suite's batch, and a tiny case.
  const std::string big = LayerRepro(kResnet50[2], o.mb);
  const std::string tiny = "conv2d:fwd:f32:mb1ic4ih8oc4kh3ph1";
  const std::pair<const char*, Part> parts[] = {{"direct", Part::kDirect}, {"harness", Part::kHarness},
                                                {"decide_cache_hit", Part::kDecide}, {"poison", Part::kPoison}, {"fetch", Part::kFetch},
                                                {"digest", Part::kDigest}, {"evidence_record", Part::kRecord},
                                                {"evidence_write", Part::kEvidence}};
  for (const auto& [label, problem] : {std::pair<const char*, std::string>{"l1_3x3", big}, {"tiny", tiny}}) {
    for (const auto& [name, part] : parts) {
      Configure(benchmark::RegisterBenchmark((std::string("Overhead/") + name + "/" + label).c_str(), BM_Overhead,
                                             part, problem),
                false, false)
          ->Unit(benchmark::kMicrosecond);
    }
  }
  Configure(benchmark::RegisterBenchmark("Roof/cpu_fma", BM_CpuFmaPeak), false, false);
  auto* digest = benchmark::RegisterBenchmark("Digest/xxh3", BM_Digest)->Unit(benchmark::kMicrosecond);
  for (int64_t bytes : {int64_t{64} << 10, int64_t{1} << 20, int64_t{16} << 20, int64_t{256} << 20}) {
    if (!o.smoke || bytes <= (1 << 20)) digest->Arg(bytes);
  }
  if (o.smoke) digest->Iterations(1);
}

// Consumes this binary's own flags; Google Benchmark has removed its own.
bool ParseOwnFlags(int argc, char** argv) {
  Options& o = Opts();
  o.scratch = std::filesystem::current_path() / "bench-scratch";
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&](const char* name) -> const char* {
      const std::string prefix = std::string(name) + "=";
      return a.rfind(prefix, 0) == 0 ? argv[i] + prefix.size() : nullptr;
    };
    if (a == "--smoke") {
      o.smoke = true;
      o.mb = 1;
      o.reference_mb = 1;
      o.tokens = 16;
    } else if (const char* v = value("--mb")) {
      o.mb = std::atoll(v);
    } else if (const char* v2 = value("--tokens")) {
      o.tokens = std::atoll(v2);
    } else if (const char* v4 = value("--reference_mb")) {
      o.reference_mb = std::atoll(v4);
    } else if (const char* v3 = value("--scratch")) {
      o.scratch = v3;
    } else {
      std::fprintf(stderr, "backend_benchmarks: unknown argument '%s'\n", argv[i]);
      return false;
    }
  }
  if (o.mb < 1 || o.tokens < 1 || o.reference_mb < 1) {
    std::fprintf(stderr, "backend_benchmarks: --mb, --tokens and --reference_mb must be at least 1\n");
    return false;
  }
  return true;
}

void AddContext() {
  const int threads = omp_get_max_threads();
  benchmark::AddCustomContext("omp_threads", std::to_string(threads));
  for (const EngineEntry& entry : EngineEntries()) {
    for (const auto& [key, value] : entry.engine.platform()) benchmark::AddCustomContext(key, value);
  }
  for (const Availability& a : AllAvailability()) {
    benchmark::AddCustomContext("engine." + a.engine,
                                (a.available ? "available" : "unavailable") +
                                    (a.version.empty() ? std::string() : "; " + a.version) + "; " + a.reason);
  }
  benchmark::AddCustomContext("resnet_mb", std::to_string(Opts().mb));
  benchmark::AddCustomContext("bert_tokens", std::to_string(Opts().tokens));
  benchmark::AddCustomContext("reference_mb", std::to_string(Opts().reference_mb));
  benchmark::AddCustomContext("mode", Opts().smoke ? "smoke" : "full");
  const CpuPeak peak = MeasureCpuFmaPeak(threads, Opts().smoke ? 2 : 5);
  Opts().cpu_peak_flops = peak.gflops * 1e9;
  benchmark::AddCustomContext("cpu_peak_gflops", std::to_string(peak.gflops));
  benchmark::AddCustomContext("cpu_peak_isa", peak.isa);
  const MemoryBandwidth bw = MeasureTriadBandwidth(threads, Opts().smoke ? 1 : 5);
  benchmark::AddCustomContext("cpu_triad_gbs", std::to_string(bw.bytes_per_second * 1e-9));
#if BC_WITH_CUDA
  if (Result<cuda::SpecPeak> gpu = cuda::DeviceSpecPeak(); gpu.ok()) {
    Opts().gpu_peak_flops = gpu->gflops * 1e9;
    benchmark::AddCustomContext("gpu_name", gpu->device);
    benchmark::AddCustomContext("gpu_peak_gflops", std::to_string(gpu->gflops));
    benchmark::AddCustomContext("gpu_memory_gbs", std::to_string(gpu->memory_bytes_per_second * 1e-9));
  }
#endif
}

}  // namespace
}  // namespace bc

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (!bc::ParseOwnFlags(argc, argv)) return 2;
  bc::AddContext();
  bc::RegisterAll();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
