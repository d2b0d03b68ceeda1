// The oneDNN engine (what torch.backends.mkldnn switches), through oneDNN's
// C++ API. Tensors are handed to oneDNN in PyTorch's plain layouts; the
// primitive chooses its own (usually blocked) layouts through format "any",
// and reorders to and from them happen in Prepare and Fetch, outside the
// timed Execute. implementation() is oneDNN's own name for the kernel it
// picked (impl_info_str, e.g. "jit:avx512_core"), which depends on the ISA.
//
// Algorithms: "auto" (convolution_auto: oneDNN picks direct or winograd).
// oneDNN documents its primitives as run-to-run deterministic for a fixed
// environment (threads, ISA, library version), so "auto" is deterministic.
#pragma once

#include "backends/engine.h"

namespace bc {

class OnednnEngine final : public Engine {
 public:
  static const OnednnEngine& Instance();

  std::string_view name() const override { return "onednn"; }
  Device device() const override { return Device::kCpu; }
  Availability availability() const override;
  std::vector<Algorithm> algorithms(const Conv2dProblem& p) const override;
  Result<std::unique_ptr<PreparedConv>> Prepare(const Conv2dProblem& p, const std::string& algorithm,
                                                ConvBuffers& buffers) const override;
};

// "avx512_core", "avx2", ...: the ISA oneDNN dispatches to on this CPU.
std::string OnednnEffectiveIsa();

}  // namespace bc
