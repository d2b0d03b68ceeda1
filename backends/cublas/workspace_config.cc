#include "backends/cublas/workspace_config.h"

#include <cstdlib>

namespace bc::cublas {

ConfigCheck CheckWorkspaceConfig(const BackendFlags& flags, const std::optional<std::string>& config,
                                 int cuda_version) {
  ConfigCheck c;
  if (!flags.deterministic_algorithms || cuda_version < 10020) return c;
  if (config && (*config == ":4096:8" || *config == ":16:8")) return c;
  c.message =
      "Deterministic behavior was enabled with either `torch.use_deterministic_algorithms(True)` or "
      "`at::Context::setDeterministicAlgorithms(true)`, but this operation is not deterministic because it uses "
      "CuBLAS and you have CUDA >= 10.2. To enable deterministic behavior in this case, you must set an "
      "environment variable before running your PyTorch application: CUBLAS_WORKSPACE_CONFIG=:4096:8 or "
      "CUBLAS_WORKSPACE_CONFIG=:16:8. For more information, go to "
      "https://docs.nvidia.com/cuda/cublas/index.html#results-reproducibility";
  c.error = !flags.deterministic_algorithms_warn_only;
  return c;
}

ConfigCheck CheckWorkspaceConfigHere(const BackendFlags& flags, int cuda_version) {
  const char* config = std::getenv("CUBLAS_WORKSPACE_CONFIG");
  return CheckWorkspaceConfig(flags, config ? std::optional<std::string>(config) : std::nullopt, cuda_version);
}

GemmMath GemmMathMode(bool cuda_matmul_allow_tf32) {
  return cuda_matmul_allow_tf32 ? GemmMath::kTf32TensorOp : GemmMath::kDefault;
}

}  // namespace bc::cublas
