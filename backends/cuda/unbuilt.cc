// The GPU side of a build configured without the CUDA toolkit or cuDNN: each
// GPU engine reports, truthfully, that it was not built and why, and there is
// no device to describe.
#include "backends/cuda/gpu.h"
#include "backends/cudnn/cudnn.h"
#include "backends/registry.h"

namespace bc {

const Engine& CudnnEngineInstance() {
  static const UnbuiltEngine kEngine("cudnn", Device::kCuda, "not built: CUDA toolkit or cuDNN not found at configure time");
  return kEngine;
}

const Engine& CudaNativeEngineInstance() {
  static const UnbuiltEngine kEngine("cuda_native", Device::kCuda, "not built: CUDA toolkit not found at configure time");
  return kEngine;
}

const Engine& CublasEngineInstance() {
  static const UnbuiltEngine kEngine("cublas", Device::kCuda, "not built: CUDA toolkit not found at configure time");
  return kEngine;
}

int64_t CudnnCallCount() { return 0; }

namespace cuda {

std::optional<GpuInfo> FirstGpu() { return std::nullopt; }
CudaVersions LoadedCudaVersions() { return {}; }

}  // namespace cuda
}  // namespace bc
