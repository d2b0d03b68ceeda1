// The cuDNN engine (what torch.backends.cudnn switches): conv2d forward,
// backward-data and backward-filter, fp32 and fp16, NCHW and NHWC, through
// either of PyTorch's two paths. By default the graph (backend) API, as
// Conv_v8.cpp uses it (graph.h); with TORCH_CUDNN_V8_API_DISABLED set, the
// legacy API as Conv_v7.cpp uses it, described below.
//
// availability(): built when the CUDA toolkit and cuDNN were found at
// configure time; available when CUDA finds a device and cudnnCreate
// succeeds; otherwise the reason carries the CUDA or cuDNN error. No cuDNN
// call that takes a handle is made without a successful cudnnCreate.
//
// Candidates() (v7.cc): cudnnGet*Algorithm_v7's list in its order, each with the
// determinism field cuDNN reports. Search(): cudnnFind*AlgorithmEx, which
// times every algorithm on the device; the shared AlgorithmSelector then
// chooses (see backends/cudnn/policy.h). The math type follows PyTorch
// (tensor-op math for fp16, FMA math for fp32 with allow_tf32 off). Execute
// is timed with CUDA events.
//
// Every cuDNN call goes through one macro that counts it: CudnnCallCount()
// proves that no cuDNN call happens where PyTorch would make none
// (cudnn.enabled=false).
// On the graph path the candidates are the engine configs that heuristics
// return and the numerical-note filter keeps, named "cfgK_engG"; a search
// times each plan with CUDA events; there is no pinned default.
#pragma once

#include <cstdint>

#include "backends/engine.h"

namespace bc {

// cuDNN calls made by this process so far (0 in a build without cuDNN).
int64_t CudnnCallCount();

}  // namespace bc
