#include "backends/registry.h"

#include "backends/cublas/cublas.h"
#include "backends/cuda_native/cuda_native.h"
#include "backends/cudnn/cudnn.h"
#include "backends/mps/mps.h"
#include "backends/onednn/onednn.h"
#include "backends/openmp/openmp.h"
#include "backends/reference/reference.h"

namespace bc {

// Heuristic order of the "select" pools: a device's engines in this order.
const std::vector<const Engine*>& Engines() {
  static const std::vector<const Engine*> kEngines = {
      &OnednnEngine::Instance(),
      &ReferenceEngine::Instance(),
      &CudnnEngine::Instance(),
      &CudaNativeEngine::Instance(),
      &CublasEngine::Instance(),
  };
  return kEngines;
}

const Engine* FindEngine(std::string_view name) {
  for (const Engine* e : Engines()) {
    if (e->name() == name) return e;
  }
  return nullptr;
}

std::vector<Availability> AllAvailability() {
  return {OnednnEngine::Instance().availability(),      OpenmpAvailability(),
          CudnnEngine::Instance().availability(),       CublasEngine::Instance().availability(),
          CudaNativeEngine::Instance().availability(),  MpsAvailability(),
          ReferenceEngine::Instance().availability()};
}

}  // namespace bc
