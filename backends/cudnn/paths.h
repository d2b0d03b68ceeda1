// Internal to the cuDNN engine: what its two paths share (the handle, the
// problem's device tensors) and each path's candidates, search and
// preparation. v7.cc is the legacy API as Conv_v7.cpp uses it; v8.cc the
// graph API as Conv_v8.cpp uses it; cudnn.cc chooses between them as PyTorch
// does (TORCH_CUDNN_V8_API_DISABLED).
#pragma once

#include <cudnn.h>

#include <memory>
#include <vector>

#include "backends/cuda/device.h"
#include "backends/cudnn/calls.h"
#include "backends/engine.h"

namespace bc::cudnn {

// The three tensors of a conv problem, in its layout and dtype.
struct Shapes {
  cuda::TensorShape x, w, y;
  explicit Shapes(const Conv2dProblem& p) {
    x = {p.mb, p.ic, p.ih, p.iw, p.layout, p.dtype};
    w = {p.oc, p.ic / p.g, p.kh, p.kw, p.layout, p.dtype};
    y = {p.mb, p.oc, p.oh(), p.ow(), p.layout, p.dtype};
  }
};

// The problem's three device tensors, inputs uploaded from the host buffers.
struct DeviceTensors {
  cuda::DeviceBuffer x, w, y;
  Status Init(const Conv2dProblem& p, const Buffers& b);
};

// Copies the direction's output tensor back into the host buffers.
Status FetchOutput(const Conv2dProblem& p, const DeviceTensors& t, Buffers& b);

// The legacy (v7) path.
Result<std::vector<Algorithm>> V7Candidates(cudnnHandle_t h, const Conv2dProblem& p, const BackendFlags& flags);
Result<EngineSearch> V7Search(cudnnHandle_t h, const Conv2dProblem& p, const BackendFlags& flags, const Buffers& inputs);
Result<std::unique_ptr<PreparedOp>> V7Prepare(cudnnHandle_t h, const Conv2dProblem& p, const Algorithm& algorithm,
                                              Buffers& buffers, const BackendFlags& flags);

// The graph (v8) path.
Result<std::vector<Algorithm>> V8Candidates(cudnnHandle_t h, const Conv2dProblem& p, const BackendFlags& flags);
Result<EngineSearch> V8Search(cudnnHandle_t h, const Conv2dProblem& p, const BackendFlags& flags, const Buffers& inputs);
Result<std::unique_ptr<PreparedOp>> V8Prepare(cudnnHandle_t h, const Conv2dProblem& p, const Algorithm& algorithm,
                                              Buffers& buffers, const BackendFlags& flags);

}  // namespace bc::cudnn
