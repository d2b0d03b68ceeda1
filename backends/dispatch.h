// Dispatch: which engine runs a case, decided the way PyTorch decides it, with
// the reason recorded as evidence.
//
// CPU: mkldnn.enabled and oneDNN available -> onednn (PyTorch's use_mkldnn);
//      otherwise the native path, here the reference engine ("owner").
// CUDA: cudnn.enabled -> cudnn, when available; otherwise PyTorch's native
//      CUDA kernels, which this build does not provide (an error that says so).
// A case that names an engine forces it; the device must match.
// cuDNN flags never route CPU work: torch.backends does not choose the device.
#pragma once

#include <string>

#include "backends/engine.h"
#include "harness/case.h"

namespace bc {

struct DispatchDecision {
  const Engine* engine = nullptr;
  std::string algorithm;  // empty: the engine's default under the flags
  std::string reason;
};

Result<DispatchDecision> Dispatch(const CaseSpec& c, const BackendFlags& flags);

}  // namespace bc
