// The cuDNN engine of a build configured without CUDA: it reports, truthfully,
// that it was not built, and refuses every problem with that reason.
#include "backends/cudnn/cudnn.h"

namespace bc {

const CudnnEngine& CudnnEngine::Instance() {
  static const CudnnEngine kEngine;
  return kEngine;
}

Availability CudnnEngine::availability() const {
  return {"cudnn", false, false, "not built: CUDA toolkit or cuDNN not found at configure time", ""};
}

std::vector<Algorithm> CudnnEngine::algorithms(const Problem&) const { return {}; }
Result<std::vector<Algorithm>> CudnnEngine::Candidates(const Problem&) const { return std::vector<Algorithm>{}; }

std::optional<std::string> CudnnEngine::PinnedDeterministic(const Problem&) const { return std::nullopt; }

Result<EngineSearch> CudnnEngine::Search(const Problem&) const {
  return Status(StatusCode::kUnavailable, availability().reason);
}

Result<std::unique_ptr<PreparedOp>> CudnnEngine::Prepare(const Problem&, const std::string&, Buffers&) const {
  return Status(StatusCode::kUnavailable, availability().reason);
}

int64_t CudnnCallCount() { return 0; }

}  // namespace bc
