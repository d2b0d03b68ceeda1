// The cuBLAS engine: matmul (C = A B, row-major) through cublasGemmEx, fp32
// and fp16. For fp32 the compute type follows cuda.matmul.allow_tf32
// (CUBLAS_COMPUTE_32F_FAST_TF32 when on), as PyTorch sets the math mode.
// cuBLAS is bitwise reproducible on one GPU architecture and toolkit for a
// single stream; under use_deterministic_algorithms PyTorch also demands
// CUBLAS_WORKSPACE_CONFIG=:4096:8 or :16:8 (workspace_config.h): Prepare
// fails with PyTorch's error, or runs with its warning under warn_only.
#pragma once

#include "backends/engine.h"

namespace bc {

class CublasEngine final : public Engine {
 public:
  static const CublasEngine& Instance();

  std::string_view name() const override { return "cublas"; }
  Device device() const override { return Device::kCuda; }
  Availability availability() const override;
  std::vector<Algorithm> algorithms(const Problem& p) const override;
  Result<std::unique_ptr<PreparedOp>> Prepare(const Problem& p, const std::string& algorithm,
                                              Buffers& buffers) const override;
};

}  // namespace bc
