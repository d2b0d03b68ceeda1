// Internal to the cuDNN engine: every cuDNN call goes through BC_CUDNN, which
// counts it (CudnnCallCount) and maps a failure to a Status.
#pragma once

#include <cudnn.h>

#include <atomic>
#include <string>

#include "harness/status.h"

namespace bc::cudnn {

inline std::atomic<int64_t>& CallCounter() {
  static std::atomic<int64_t> calls{0};
  return calls;
}

inline Status FromCudnn(cudnnStatus_t s, const char* call) {
  return Status(StatusCode::kInternal, std::string(call) + " returned " + std::to_string(static_cast<int>(s)) +
                                           " (" + cudnnGetErrorString(s) + ")");
}

}  // namespace bc::cudnn

#define BC_CUDNN(call)                                                                \
  do {                                                                                \
    ::bc::cudnn::CallCounter().fetch_add(1, std::memory_order_relaxed);               \
    const cudnnStatus_t bc_s_ = (call);                                               \
    if (bc_s_ != CUDNN_STATUS_SUCCESS) return ::bc::cudnn::FromCudnn(bc_s_, #call);   \
  } while (0)
