// torch.backends.mps: is_built() says whether Metal Performance Shaders
// support was compiled in, is_available() whether an Apple GPU can use it.
// Only Apple builds have it; on Linux it is neither built nor available.
#pragma once

#include "backends/engine.h"

namespace bc {
Availability MpsAvailability();
}
