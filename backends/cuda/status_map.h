// Which failures of the CUDA runtime, cuDNN and cuBLAS mean "no such device
// or library here" (UNAVAILABLE: the case is not evaluated), which mean "no
// implementation of this problem" (UNIMPLEMENTED: also not evaluated), and
// which are errors (INTERNAL: the case fails with the library's message).
// Pure arithmetic on the status numbers, so it is compiled and tested on
// every machine; the CUDA translation units check these numbers against
// the headers with static_assert.
#pragma once

#include "harness/status.h"

namespace bc::cuda {

// cudaError_t values (driver_types.h).
inline constexpr int kCudaErrorMemoryAllocation = 2;
inline constexpr int kCudaErrorInitializationError = 3;
inline constexpr int kCudaErrorStubLibrary = 34;
inline constexpr int kCudaErrorInsufficientDriver = 35;
inline constexpr int kCudaErrorCallRequiresNewerDriver = 36;
inline constexpr int kCudaErrorNoDevice = 100;
inline constexpr int kCudaErrorSystemNotReady = 802;
inline constexpr int kCudaErrorSystemDriverMismatch = 803;
inline constexpr int kCudaErrorCompatNotSupportedOnDevice = 804;
// cudnnStatus_t values (cuDNN 9, cudnn_graph.h): categories by thousands.
inline constexpr int kCudnnNotInitialized = 1001;
inline constexpr int kCudnnSublibraryVersionMismatch = 1002;
inline constexpr int kCudnnSublibraryLoadingFailed = 1008;
inline constexpr int kCudnnNotSupported = 3000;
inline constexpr int kCudnnNotSupportedIncompatibleCudaDriver = 3005;
inline constexpr int kCudnnNotSupportedIncompatibleCudart = 3006;
inline constexpr int kCudnnNotSupportedArchMismatch = 3007;
inline constexpr int kCudnnNotSupportedRuntimePrerequisiteMissing = 3008;
inline constexpr int kCudnnNotSupportedSublibraryUnavailable = 3009;
// cublasStatus_t values (cublas_api.h).
inline constexpr int kCublasNotInitialized = 1;
inline constexpr int kCublasArchMismatch = 8;
inline constexpr int kCublasNotSupported = 15;

StatusCode CudaErrorCode(int error);
// An allocation that failed is an out-of-memory (what PyTorch's caching
// allocator raises as c10::OutOfMemoryError); any other error is not.
FailureSource CudaErrorSource(int error);
StatusCode CudnnStatusCode(int status);
StatusCode CublasStatusCode(int status);

}  // namespace bc::cuda
