// The first CUDA device as the environment record describes it, with no CUDA
// header: the test main and the report's platform name read it in every
// build. nullopt where this build has no CUDA or the machine no device.
#pragma once

#include <optional>
#include <string>

namespace bc::cuda {

struct GpuInfo {
  std::string name;          // "NVIDIA H100 80GB HBM3"
  std::string arch;          // "sm_90"
  int count = 0;             // devices visible to the process
  std::string driver;        // the driver's CUDA API version, "12.4"
  std::string cuda_runtime;  // the CUDA runtime this build loaded, "12.4"
};

std::optional<GpuInfo> FirstGpu();

// The CUDA driver's API version and the runtime's this build loaded ("12.4";
// the driver "0" where there is none), with or without a device; both empty
// in a build without CUDA. A driver older than the runtime is the usual
// reason a GPU machine reports no device.
struct CudaVersions {
  std::string driver, runtime;
};
CudaVersions LoadedCudaVersions();

}  // namespace bc::cuda
