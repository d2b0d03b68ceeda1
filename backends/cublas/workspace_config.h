// PyTorch's check of CUBLAS_WORKSPACE_CONFIG under use_deterministic_algorithms
// (at::Context::alertCuBLASConfigNotDeterministic): with CUDA >= 10.2 cuBLAS
// is deterministic only with ":4096:8" or ":16:8". Pure, so CI tests it.
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

}  // namespace bc::cublas
