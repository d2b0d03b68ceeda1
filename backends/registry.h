// The engines of this build, in one visible list (no static registration),
// and the availability of every backend torch.backends names, including those
// that are not conv engines here (openmp, mps).
#pragma once

#include <string_view>
#include <vector>

#include "backends/engine.h"

namespace bc {

const std::vector<const Engine*>& Engines();
// nullptr when no engine has that name.
const Engine* FindEngine(std::string_view name);
// onednn, openmp, cudnn, cublas, cuda_native, mps, reference: what
// torch.backends.*.is_available() and torch.cuda.is_available() mirror.
std::vector<Availability> AllAvailability();

}  // namespace bc
