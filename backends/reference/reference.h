// The OpenMP reference engine: the oracle, and the CPU's native stand-in.
//
// Both algorithms accumulate each partial sum in fp64.
// - "owner": each output element is computed by one thread in a fixed order,
//   so the result is bitwise identical for any thread count. Deterministic.
//   It is also what dispatch uses when mkldnn.enabled is false (PyTorch's
//   native CPU convolution) and what other engines are checked against.
// - "atomic": the reduction is split into many tasks (per sample and output
//   row for backward-weights, per sample and channel block for forward), run
//   with dynamic scheduling, each adding its fp64 partial into the fp32 output
//   with an atomic add. With two or more threads the order of those adds, and
//   so the rounding, changes from run to run: the CPU's positive control for
//   determinism checks, built the way cuDNN's atomic algorithms are.
#pragma once

#include "backends/engine.h"

namespace bc {

class ReferenceEngine final : public Engine {
 public:
  static const ReferenceEngine& Instance();

  std::string_view name() const override { return "reference"; }
  Device device() const override { return Device::kCpu; }
  Availability availability() const override;
  std::vector<Algorithm> algorithms(const Conv2dProblem& p) const override;
  Result<std::unique_ptr<PreparedConv>> Prepare(const Conv2dProblem& p, const std::string& algorithm,
                                                ConvBuffers& buffers) const override;
};

// Direct entry points for callers that need the oracle without an engine.
void ReferenceConvOwner(const Conv2dProblem& p, ConvBuffers& b);
void ReferenceConvAtomic(const Conv2dProblem& p, ConvBuffers& b);

}  // namespace bc
