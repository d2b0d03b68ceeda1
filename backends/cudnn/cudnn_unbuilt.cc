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

std::vector<Algorithm> CudnnEngine::algorithms(const Conv2dProblem&) const { return {}; }

Result<std::unique_ptr<PreparedConv>> CudnnEngine::Prepare(const Conv2dProblem&, const std::string&,
                                                           ConvBuffers&) const {
  return Status(StatusCode::kUnavailable, availability().reason);
}

}  // namespace bc
