// scatter_add's oracle: every value added into its destination in index
// order, in fp64: one pass, one owner, the same bits for any thread count
// (PyTorch's CPU scatter_add is deterministic too: it has no alert under
// use_deterministic_algorithms). The racy variant adds atomically from many
// threads (harness/race.h).
#include "harness/ops/scatter_add.h"

#include <algorithm>

#include "harness/buffers.h"
#include "harness/race.h"

namespace bc {

void ScatterAddProblem::Reference(Buffers& b, bool racy) const {
  const std::vector<float>& values = b["src"];
  const std::vector<int32_t>& index = b.indices("index");
  std::vector<float>& out = b["dst"];
  if (racy) {
    std::fill(out.begin(), out.end(), 0.0f);
#pragma omp parallel for schedule(dynamic, 256) num_threads(RaceThreads())
    for (int64_t i = 0; i < n; ++i) AtomicAdd(out[static_cast<size_t>(index[i])], values[i]);
    return;
  }
  std::vector<double> acc(out.size(), 0.0);
  for (int64_t i = 0; i < n; ++i) acc[static_cast<size_t>(index[i])] += values[i];
  for (size_t j = 0; j < acc.size(); ++j) out[j] = static_cast<float>(acc[j]);
}

}  // namespace bc
