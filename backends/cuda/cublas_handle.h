// The process's cuBLAS handle, shared by the engines that call cuBLAS
// (cublas, cuda_native), and cuBLAS status mapping. Created only when CUDA
// finds a device; otherwise null with the CUDA error as the reason.
#pragma once

#include <cublas_v2.h>

#include "backends/engine.h"

namespace bc::cuda {

Status FromCublas(cublasStatus_t s, const char* call);

#define BC_CUBLAS(call)                                                               \
  do {                                                                                \
    const cublasStatus_t bc_s_ = (call);                                              \
    if (bc_s_ != CUBLAS_STATUS_SUCCESS)                                               \
      return ::bc::cuda::FromCublas(bc_s_, #call).Through(__FILE__ ":" BC_STRINGIFY(__LINE__)); \
  } while (0)

struct CublasState {
  cublasHandle_t handle = nullptr;
  Availability availability;  // engine "cublas"; version of the loaded library
  int cuda_version = 0;       // cudaRuntimeGetVersion
};

const CublasState& SharedCublas();

// The shared handle with its math mode set for the next GEMM
// (cublas::GemmMathMode): call it before every GEMM, as PyTorch sets the
// mode each time it takes the handle.
Result<cublasHandle_t> CublasForGemm(bool cuda_matmul_allow_tf32);

}  // namespace bc::cuda
