// The native CUDA engine: what PyTorch falls back to when cudnn.enabled is
// false. conv2d fp32 NCHW in three directions as im2col + cuBLAS GEMM
// ("im2col_gemm", deterministic: a gather col2im, and backward-weights
// accumulated over the batch by sequential GEMMs), plus "atomic" for
// backward-weights: one thread per output pixel adding into the weight
// gradient with atomicAdd, the GPU's own nondeterministic path and positive
// control. GEMMs follow cuda.matmul.allow_tf32. It makes no cuDNN call.
#pragma once

#include "backends/engine.h"

namespace bc {

class CudaNativeEngine final : public Engine {
 public:
  static const CudaNativeEngine& Instance();

  std::string_view name() const override { return "cuda_native"; }
  Device device() const override { return Device::kCuda; }
  Availability availability() const override;
  std::vector<Algorithm> algorithms(const Problem& p) const override;
  Result<std::unique_ptr<PreparedOp>> Prepare(const Problem& p, const std::string& algorithm,
                                              Buffers& buffers) const override;
};

}  // namespace bc
