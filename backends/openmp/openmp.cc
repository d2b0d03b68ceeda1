#include "backends/openmp/openmp.h"

#include <omp.h>

namespace bc {

Availability OpenmpAvailability() {
  Availability a;
  a.engine = "openmp";
#ifdef _OPENMP
  a.built = true;
  a.available = true;
  a.version = "OpenMP " + std::to_string(_OPENMP);
  a.reason = "compiled with OpenMP " + std::to_string(_OPENMP) + ", " +
             std::to_string(omp_get_max_threads()) + " threads by default";
#else
  a.reason = "not built: this build has no OpenMP";
#endif
  return a;
}

}  // namespace bc
