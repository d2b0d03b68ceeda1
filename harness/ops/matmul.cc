// matmul's oracle: fp64 dot products, one owner per output; the racy variant
// adds slices of the reduction atomically (harness/race.h).
#include "harness/ops/matmul.h"

#include <algorithm>

#include "harness/buffers.h"
#include "harness/race.h"

namespace bc {
namespace {

// Reduction slice of the atomic matmul: small, so each output gets many adds.
constexpr int64_t kMatmulSlice = 4;

}  // namespace

void MatmulProblem::Reference(Buffers& buffers, bool racy) const {
  const int64_t M = m, N = n, K = k;
  const float* a = buffers["src"].data();
  const float* w = buffers["wei"].data();
  std::vector<float>& out = buffers["dst"];
  float* c = out.data();
  if (!racy) {
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < M; ++i) {
      for (int64_t j = 0; j < N; ++j) {
        double acc = 0;
        for (int64_t kk = 0; kk < K; ++kk) acc += static_cast<double>(a[i * K + kk]) * w[kk * N + j];
        c[i * N + j] = static_cast<float>(acc);
      }
    }
    return;
  }
  std::fill(out.begin(), out.end(), 0.0f);
  const int64_t slices = (K + kMatmulSlice - 1) / kMatmulSlice;
#pragma omp parallel for collapse(2) schedule(dynamic, 1) num_threads(RaceThreads())
  for (int64_t i = 0; i < M; ++i) {
    for (int64_t slice = 0; slice < slices; ++slice) {
      const int64_t k0 = slice * kMatmulSlice, k1 = std::min(K, k0 + kMatmulSlice);
      for (int64_t j = 0; j < N; ++j) {
        double acc = 0;
        for (int64_t kk = k0; kk < k1; ++kk) acc += static_cast<double>(a[i * K + kk]) * w[kk * N + j];
        AtomicAdd(c[i * N + j], static_cast<float>(acc));
      }
    }
  }
}

}  // namespace bc
