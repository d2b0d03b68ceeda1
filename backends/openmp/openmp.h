// torch.backends.openmp.is_available(): whether this build has OpenMP. It
// reports build support; the OpenMP runtime needs no hardware probe.
#pragma once

#include "backends/engine.h"

namespace bc {
Availability OpenmpAvailability();
}
