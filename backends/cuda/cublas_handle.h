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
      return ::bc::cuda::FromCublas(bc_s_, #call " at " __FILE__ ":" BC_STRINGIFY(__LINE__)); \
  } while (0)

struct CublasState {
  cublasHandle_t handle = nullptr;
  Availability availability;  // engine "cublas"; version of the loaded library
  int cuda_version = 0;       // cudaRuntimeGetVersion
};

const CublasState& SharedCublas();

}  // namespace bc::cuda
