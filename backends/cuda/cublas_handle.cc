#include "backends/cuda/cublas_handle.h"

#include "backends/cublas/workspace_config.h"
#include "backends/cuda/device.h"
#include "backends/cuda/status_map.h"

namespace bc::cuda {

static_assert(kCublasNotInitialized == CUBLAS_STATUS_NOT_INITIALIZED);
static_assert(kCublasArchMismatch == CUBLAS_STATUS_ARCH_MISMATCH);
static_assert(kCublasNotSupported == CUBLAS_STATUS_NOT_SUPPORTED);
static_assert(static_cast<int>(cublas::GemmMath::kDefault) == CUBLAS_DEFAULT_MATH);
static_assert(static_cast<int>(cublas::GemmMath::kTf32TensorOp) == CUBLAS_TF32_TENSOR_OP_MATH);

Status FromCublas(cublasStatus_t s, const char* call) {
  return Status(CublasStatusCode(static_cast<int>(s)), std::string(call) + " returned " +
                                                           std::to_string(static_cast<int>(s)) + " (" +
                                                           cublasGetStatusString(s) + ")");
}

const CublasState& SharedCublas() {
  static const CublasState state = [] {
    CublasState s;
    s.availability = CudaAvailability();
    s.availability.engine = "cublas";
    (void)cudaRuntimeGetVersion(&s.cuda_version);
    int major = 0, minor = 0, patch = 0;
    (void)cublasGetProperty(MAJOR_VERSION, &major);
    (void)cublasGetProperty(MINOR_VERSION, &minor);
    (void)cublasGetProperty(PATCH_LEVEL, &patch);
    s.availability.library_version = std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
    s.availability.version = "cuBLAS " + s.availability.library_version + ", " + s.availability.version;
    if (!s.availability.available) return s;
    const cublasStatus_t cs = cublasCreate(&s.handle);
    if (cs != CUBLAS_STATUS_SUCCESS) {
      s.handle = nullptr;
      s.availability.available = false;
      const Status failed = FromCublas(cs, "cublasCreate");
      s.availability.reason = failed.message();
      s.availability.error = failed.code() != StatusCode::kUnavailable;
    }
    return s;
  }();
  return state;
}

Result<cublasHandle_t> CublasForGemm(bool cuda_matmul_allow_tf32) {
  const CublasState& s = SharedCublas();
  if (s.handle == nullptr) return NotAvailable(s.availability);
  BC_CUBLAS(cublasSetMathMode(s.handle, static_cast<cublasMath_t>(cublas::GemmMathMode(cuda_matmul_allow_tf32))));
  return s.handle;
}

}  // namespace bc::cuda
