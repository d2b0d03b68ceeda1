// The GPU side of a build configured without the CUDA toolkit or cuDNN: there
// is no device to describe. Each GPU engine's own stand-in, which reports
// truthfully that it was not built and why, is written by bc_engine()
// (cmake/Engines.cmake).
#include "backends/cuda/gpu.h"
#include "backends/cudnn/cudnn.h"
#include "backends/registry.h"

namespace bc {

int64_t CudnnCallCount() { return 0; }

Result<EngineNotes> AskCudnnEngineNotes(const CudnnRan&) {
  return Status(StatusCode::kUnavailable, "cuDNN cannot be asked: " + CudnnEngineInstance().availability().reason);
}

namespace cuda {

std::optional<GpuInfo> FirstGpu() { return std::nullopt; }
CudaVersions LoadedCudaVersions() { return {}; }

}  // namespace cuda
}  // namespace bc
