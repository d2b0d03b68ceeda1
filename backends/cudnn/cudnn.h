// The cuDNN engine (what torch.backends.cudnn switches), through cuDNN's
// legacy convolution API as PyTorch's Conv_v7.cpp uses it.
//
// availability(): built when the CUDA toolkit and cuDNN were found at
// configure time; available when cudaGetDeviceCount finds a device and
// cudnnCreate succeeds; otherwise the reason carries the CUDA or cuDNN error.
// No cuDNN call that takes a handle is made without a successful cudnnCreate.
//
// algorithms(): for conv2d forward and backward-filter, the heuristic list of
// cudnnGet*Algorithm_v7, in its order, each with the determinism field cuDNN
// reports for it (backward-data and other operations: none yet). The pinned
// deterministic defaults are PyTorch's: IMPLICIT_PRECOMP_GEMM forward and
// BWD_FILTER_ALGO_1. The math type follows cudnn.allow_tf32 (FMA math when
// it is off), as PyTorch sets it for fp32.
#pragma once

#include "backends/engine.h"

namespace bc {

class CudnnEngine final : public Engine {
 public:
  static const CudnnEngine& Instance();

  std::string_view name() const override { return "cudnn"; }
  Device device() const override { return Device::kCuda; }
  Availability availability() const override;
  std::vector<Algorithm> algorithms(const Problem& p) const override;
  std::optional<std::string> PinnedDeterministic(const Problem& p) const override;
  Result<std::unique_ptr<PreparedOp>> Prepare(const Problem& p, const std::string& algorithm,
                                              Buffers& buffers) const override;
};

}  // namespace bc
