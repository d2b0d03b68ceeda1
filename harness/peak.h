// The machine's roofs, measured: the fp32 fused multiply-add peak of this
// CPU and its memory bandwidth, for the roofline that benchmarks place each
// engine's achieved rate against.
//
// The FMA probe runs, on every OpenMP thread, independent chains of vector
// FMAs (16 accumulators, enough to cover the FMA latency of the pipelines)
// in the widest ISA the CPU has: AVX-512, AVX2+FMA, or plain scalar code.
// The bandwidth probe is STREAM's triad, a[i] = b[i] + s * c[i], over arrays
// far larger than the caches, counted as STREAM counts it (3 x 4 bytes per
// element). Each keeps the best of several trials: a peak is what the
// hardware can do, not what a noisy moment allowed.
#pragma once

#include <cstdint>
#include <string>

namespace bc {

struct CpuPeak {
  std::string isa;     // "avx512f", "avx2+fma" or "scalar"
  int threads = 0;     // OpenMP threads that ran the probe
  double gflops = 0;   // fp32, 2 flops per FMA
};

// Runs for about trials x 0.02 s: many short trials, so that the best of them
// catches a moment when a shared host leaves the cores alone.
CpuPeak MeasureCpuFmaPeak(int threads, int trials = 25);

// One parallel run of the probe's FMA chains, `iterations` on each of
// `threads` threads; returns the flops done. The benchmarks time this beside
// the engines (Roof/cpu_fma), so a fraction of peak can be taken from two
// medians of one run.
double RunFmaChains(int threads, int64_t iterations);

struct MemoryBandwidth {
  int threads = 0;
  double bytes_per_second = 0;
  double array_bytes = 0;  // each of the three arrays
};

MemoryBandwidth MeasureTriadBandwidth(int threads, int trials = 5);

}  // namespace bc
