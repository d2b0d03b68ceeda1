#include "backends/mps/mps.h"

namespace bc {

Availability MpsAvailability() {
  Availability a;
  a.engine = "mps";
#if defined(__APPLE__)
  a.reason = "not built: backendcheck has no Metal engine yet";
#else
  a.reason = "not built: MPS (Apple Metal Performance Shaders) exists only on macOS builds";
#endif
  return a;
}

}  // namespace bc
