// index_add's oracle: every source row added into its destination row in
// index order, in fp64, each destination column by one thread. The racy
// variant adds rows atomically from many threads (harness/race.h), the way
// CUDA's index_add_ does.
#include "harness/ops/index_add.h"

#include <algorithm>

#include "harness/buffers.h"
#include "harness/race.h"

namespace bc {

void IndexAddProblem::Reference(Buffers& b, bool racy) const {
  const float* src = b["src"].data();
  const int32_t* index = b.indices("index").data();
  std::vector<float>& out = b["dst"];
  if (racy) {
    std::fill(out.begin(), out.end(), 0.0f);
#pragma omp parallel for schedule(dynamic, 16) num_threads(RaceThreads())
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j < c; ++j) AtomicAdd(out[static_cast<size_t>(index[i] * c + j)], src[i * c + j]);
    }
    return;
  }
#pragma omp parallel for schedule(static)
  for (int64_t j = 0; j < c; ++j) {
    std::vector<double> acc(static_cast<size_t>(d), 0.0);
    for (int64_t i = 0; i < n; ++i) acc[static_cast<size_t>(index[i])] += src[i * c + j];
    for (int64_t r = 0; r < d; ++r) out[static_cast<size_t>(r * c + j)] = static_cast<float>(acc[static_cast<size_t>(r)]);
  }
}

}  // namespace bc
