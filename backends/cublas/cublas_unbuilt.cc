// The cuBLAS engine of a build configured without CUDA: not built.
#include "backends/cublas/cublas.h"

namespace bc {

const CublasEngine& CublasEngine::Instance() {
  static const CublasEngine kEngine;
  return kEngine;
}

Availability CublasEngine::availability() const {
  return {"cublas", false, false, "not built: CUDA toolkit not found at configure time", ""};
}

std::vector<Algorithm> CublasEngine::algorithms(const Problem&) const { return {}; }

Result<std::unique_ptr<PreparedOp>> CublasEngine::Prepare(const Problem&, const std::string&, Buffers&) const {
  return Status(StatusCode::kUnavailable, availability().reason);
}

}  // namespace bc
