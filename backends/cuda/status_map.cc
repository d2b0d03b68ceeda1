#include "backends/cuda/status_map.h"

namespace bc::cuda {

StatusCode CudaErrorCode(int error) {
  switch (error) {
    case kCudaErrorInitializationError:  // no driver loaded
    case kCudaErrorStubLibrary:          // the stub libcuda, not a driver
    case kCudaErrorInsufficientDriver:
    case kCudaErrorCallRequiresNewerDriver:
    case kCudaErrorNoDevice:
    case kCudaErrorSystemNotReady:
    case kCudaErrorSystemDriverMismatch:
    case kCudaErrorCompatNotSupportedOnDevice:
      return StatusCode::kUnavailable;
    default:  // a bad value, an illegal address, out of memory, a launch failure...
      return StatusCode::kInternal;
  }
}

FailureSource CudaErrorSource(int error) {
  return error == kCudaErrorMemoryAllocation ? FailureSource::kOutOfMemory : FailureSource::kOther;
}

StatusCode CudnnStatusCode(int status) {
  switch (status) {
    case kCudnnNotInitialized:  // cudnnCreate without a usable driver or device
    case kCudnnSublibraryVersionMismatch:
    case kCudnnSublibraryLoadingFailed:
    case kCudnnNotSupportedIncompatibleCudaDriver:
    case kCudnnNotSupportedIncompatibleCudart:
    case kCudnnNotSupportedArchMismatch:
    case kCudnnNotSupportedRuntimePrerequisiteMissing:
    case kCudnnNotSupportedSublibraryUnavailable:
      return StatusCode::kUnavailable;
    default:
      break;
  }
  // The other 3xxx: this problem (shape, type, layout, padding, pattern) has
  // no implementation. Bad parameters (2xxx), internal errors (4xxx) and
  // failed executions (5xxx) are errors.
  if (status >= kCudnnNotSupported && status < kCudnnNotSupported + 1000) return StatusCode::kUnimplemented;
  return StatusCode::kInternal;
}

StatusCode CublasStatusCode(int status) {
  switch (status) {
    case kCublasNotInitialized:  // cublasCreate without a usable driver or device
    case kCublasArchMismatch:
      return StatusCode::kUnavailable;
    case kCublasNotSupported:
      return StatusCode::kUnimplemented;
    default:
      return StatusCode::kInternal;
  }
}

}  // namespace bc::cuda
