#include "harness/peak.h"

#include <immintrin.h>
#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

#include "harness/timer.h"

namespace bc {
namespace {

constexpr int kChains = 16;

// Where the probes leave their results, so that no FMA or store is dead code.
volatile float g_sink = 0;

// Each returns a value that depends on every FMA, so none is dead code.
__attribute__((target("avx512f"))) float FmaChainsAvx512(int64_t iterations) {
  __m512 acc[kChains];
  for (int j = 0; j < kChains; ++j) acc[j] = _mm512_set1_ps(static_cast<float>(j) * 1e-3f);
  const __m512 x = _mm512_set1_ps(0.999999f), y = _mm512_set1_ps(1e-7f);
  for (int64_t i = 0; i < iterations; ++i) {
#pragma GCC unroll 16
    for (int j = 0; j < kChains; ++j) acc[j] = _mm512_fmadd_ps(acc[j], x, y);
  }
  __m512 sum = acc[0];
  for (int j = 1; j < kChains; ++j) sum = _mm512_add_ps(sum, acc[j]);
  alignas(64) float lanes[16];
  _mm512_store_ps(lanes, sum);
  float total = 0;
  for (float v : lanes) total += v;
  return total;
}

__attribute__((target("avx2,fma"))) float FmaChainsAvx2(int64_t iterations) {
  __m256 acc[kChains];
  for (int j = 0; j < kChains; ++j) acc[j] = _mm256_set1_ps(static_cast<float>(j) * 1e-3f);
  const __m256 x = _mm256_set1_ps(0.999999f), y = _mm256_set1_ps(1e-7f);
  for (int64_t i = 0; i < iterations; ++i) {
#pragma GCC unroll 16
    for (int j = 0; j < kChains; ++j) acc[j] = _mm256_fmadd_ps(acc[j], x, y);
  }
  __m256 sum = acc[0];
  for (int j = 1; j < kChains; ++j) sum = _mm256_add_ps(sum, acc[j]);
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, sum);
  float total = 0;
  for (float v : lanes) total += v;
  return total;
}

float FmaChainsScalar(int64_t iterations) {
  float acc[kChains];
  for (int j = 0; j < kChains; ++j) acc[j] = static_cast<float>(j) * 1e-3f;
  for (int64_t i = 0; i < iterations; ++i) {
    for (int j = 0; j < kChains; ++j) acc[j] = __builtin_fmaf(acc[j], 0.999999f, 1e-7f);
  }
  float total = 0;
  for (float v : acc) total += v;
  return total;
}

struct Kernel {
  const char* isa;
  int lanes;
  float (*run)(int64_t);
};

Kernel WidestKernel() {
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) return {"avx512f", 16, FmaChainsAvx512};
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return {"avx2+fma", 8, FmaChainsAvx2};
  return {"scalar", 1, FmaChainsScalar};
}

// Seconds of one parallel run of `iterations` on every thread (the slowest
// thread's, since the region ends when it does).
double ParallelSeconds(const Kernel& k, int threads, int64_t iterations) {
  Stopwatch w;
  float total = 0;
#pragma omp parallel num_threads(threads) reduction(+ : total)
  total += k.run(iterations);
  g_sink = total;
  return static_cast<double>(w.ElapsedNs()) * 1e-9;
}

double ChainFlops(const Kernel& k, int threads, int64_t iterations) {
  return 2.0 * kChains * k.lanes * static_cast<double>(iterations) * threads;
}

}  // namespace

CpuPeak MeasureCpuFmaPeak(int threads, int trials) {
  const Kernel k = WidestKernel();
  CpuPeak peak{.isa = k.isa, .threads = threads};
  // Size one trial to about 0.02 s from a short calibration run.
  int64_t iterations = 1 << 16;
  const double calibration = ParallelSeconds(k, threads, iterations);
  iterations = std::max<int64_t>(iterations, static_cast<int64_t>(iterations * 0.02 / std::max(calibration, 1e-6)));
  const double flops = ChainFlops(k, threads, iterations);
  for (int t = 0; t < trials; ++t) {
    peak.gflops = std::max(peak.gflops, flops / ParallelSeconds(k, threads, iterations) * 1e-9);
  }
  return peak;
}

double RunFmaChains(int threads, int64_t iterations) {
  static const Kernel k = WidestKernel();
  (void)ParallelSeconds(k, threads, iterations);
  return ChainFlops(k, threads, iterations);
}

MemoryBandwidth MeasureTriadBandwidth(int threads, int trials) {
  constexpr int64_t kElems = int64_t{1} << 25;  // 128 MiB a array
  std::unique_ptr<float[]> a(new float[kElems]), b(new float[kElems]), c(new float[kElems]);
  // First touch on the threads that use each page.
#pragma omp parallel for num_threads(threads) schedule(static)
  for (int64_t i = 0; i < kElems; ++i) {
    a[i] = 0.0f;
    b[i] = 1.0f;
    c[i] = 2.0f;
  }
  MemoryBandwidth bw{.threads = threads, .array_bytes = static_cast<double>(kElems) * sizeof(float)};
  for (int t = 0; t < trials; ++t) {
    const float s = 0.5f + static_cast<float>(t);
    Stopwatch w;
#pragma omp parallel for num_threads(threads) schedule(static)
    for (int64_t i = 0; i < kElems; ++i) a[i] = b[i] + s * c[i];
    const double seconds = static_cast<double>(w.ElapsedNs()) * 1e-9;
    bw.bytes_per_second = std::max(bw.bytes_per_second, 3.0 * bw.array_bytes / seconds);
  }
  g_sink = a[kElems / 2];
  return bw;
}

}  // namespace bc
