// The native CUDA engine of a build configured without CUDA: not built.
#include "backends/cuda_native/cuda_native.h"

namespace bc {

const CudaNativeEngine& CudaNativeEngine::Instance() {
  static const CudaNativeEngine kEngine;
  return kEngine;
}

Availability CudaNativeEngine::availability() const {
  return {"cuda_native", false, false, "not built: CUDA toolkit not found at configure time", ""};
}

std::vector<Algorithm> CudaNativeEngine::algorithms(const Problem&) const { return {}; }

Result<std::unique_ptr<PreparedOp>> CudaNativeEngine::Prepare(const Problem&, const std::string&, Buffers&) const {
  return Status(StatusCode::kUnavailable, availability().reason);
}

}  // namespace bc
