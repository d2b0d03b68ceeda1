// Internal to the cuDNN engine: every cuDNN call goes through BC_CUDNN, which
// counts it (CudnnCallCount) and maps a failure to a Status.
#pragma once

#include <cudnn.h>

#include <atomic>
#include <string>

#include "backends/cuda/status_map.h"
#include "harness/status.h"

namespace bc::cudnn {

static_assert(cuda::kCudnnNotInitialized == CUDNN_STATUS_NOT_INITIALIZED);
static_assert(cuda::kCudnnSublibraryVersionMismatch == CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH);
static_assert(cuda::kCudnnSublibraryLoadingFailed == CUDNN_STATUS_SUBLIBRARY_LOADING_FAILED);
static_assert(cuda::kCudnnNotSupported == CUDNN_STATUS_NOT_SUPPORTED);
static_assert(cuda::kCudnnNotSupportedIncompatibleCudaDriver == CUDNN_STATUS_NOT_SUPPORTED_INCOMPATIBLE_CUDA_DRIVER);
static_assert(cuda::kCudnnNotSupportedIncompatibleCudart == CUDNN_STATUS_NOT_SUPPORTED_INCOMPATIBLE_CUDART);
static_assert(cuda::kCudnnNotSupportedArchMismatch == CUDNN_STATUS_NOT_SUPPORTED_ARCH_MISMATCH);
static_assert(cuda::kCudnnNotSupportedRuntimePrerequisiteMissing ==
              CUDNN_STATUS_NOT_SUPPORTED_RUNTIME_PREREQUISITE_MISSING);
static_assert(cuda::kCudnnNotSupportedSublibraryUnavailable == CUDNN_STATUS_NOT_SUPPORTED_SUBLIBRARY_UNAVAILABLE);

inline std::atomic<int64_t>& CallCounter() {
  static std::atomic<int64_t> calls{0};
  return calls;
}

inline Status FromCudnn(cudnnStatus_t s, const char* call) {
  return Status(cuda::CudnnStatusCode(static_cast<int>(s)), std::string(call) + " returned " +
                                                                 std::to_string(static_cast<int>(s)) + " (" +
                                                                 cudnnGetErrorString(s) + ")",
                FailureSource::kCudnn);
}

}  // namespace bc::cudnn

#define BC_CUDNN(call)                                                                \
  do {                                                                                \
    ::bc::cudnn::CallCounter().fetch_add(1, std::memory_order_relaxed);               \
    const cudnnStatus_t bc_s_ = (call);                                               \
    if (bc_s_ != CUDNN_STATUS_SUCCESS)                                                \
      return ::bc::cudnn::FromCudnn(bc_s_, #call).Through(__FILE__ ":" BC_STRINGIFY(__LINE__)); \
  } while (0)
