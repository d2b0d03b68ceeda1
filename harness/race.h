// What the oracles' racy variants share (harness/ops/*.cc): the CPU's
// positive controls, built the way cuDNN's atomic algorithms are. Each splits
// its reduction into many tasks, run with dynamic scheduling, each adding its
// partial into the fp32 output with an atomic add; with two or more threads
// the order of those adds, and so the rounding, changes from run to run.
#pragma once

#include <omp.h>

namespace bc {

inline void AtomicAdd(float& out, float v) {
#pragma omp atomic
  out += v;
}

// The racy variants' threads: with two or more, kOversubscribe times as many
// as the case asks for. Two threads race only while both run: on a machine
// whose cores are taken by other work they may run one after the other, each
// taking the next task in order, and every run then adds in the same order.
// With more threads than cores the scheduler preempts them in the middle of
// their tasks and another thread's later task lands first, the way a GPU's
// many warps interleave their atomics.
inline constexpr int kOversubscribe = 4;
inline int RaceThreads() {
  const int threads = omp_get_max_threads();
  return threads < 2 ? 1 : threads * kOversubscribe;
}

}  // namespace bc
