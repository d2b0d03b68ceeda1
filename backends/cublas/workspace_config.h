// What PyTorch decides before each cuBLAS GEMM (at::cuda::blas), for every
// engine that calls cuBLAS (cublas, cuda_native). Pure, so CI tests it.
// - CheckWorkspaceConfig: at::Context::alertCuBLASConfigNotDeterministic:
//   under use_deterministic_algorithms with CUDA >= 10.2, cuBLAS is
//   deterministic only with CUBLAS_WORKSPACE_CONFIG ":4096:8" or ":16:8".
// - GemmMathMode: the handle's math mode, set before every GEMM as
//   getCurrentCUDABlasHandle sets it, so no engine inherits another's.
#pragma once

#include <optional>
#include <string>

#include "harness/flags.h"

namespace bc::cublas {

struct ConfigCheck {
  bool error = false;    // the operation must not run
  std::string message;   // PyTorch's text, for the error or the warning; empty when fine
};

// `config` is the variable's value (nullopt when unset); `cuda_version` as
// cudaRuntimeGetVersion reports it (10020 for 10.2).
ConfigCheck CheckWorkspaceConfig(const BackendFlags& flags, const std::optional<std::string>& config,
                                 int cuda_version);
// The same, on this process's CUBLAS_WORKSPACE_CONFIG.
ConfigCheck CheckWorkspaceConfigHere(const BackendFlags& flags, int cuda_version);

// cublasMath_t values (cublas_api.h).
enum class GemmMath { kDefault = 0, kTf32TensorOp = 3 };
GemmMath GemmMathMode(bool cuda_matmul_allow_tf32);

}  // namespace bc::cublas
