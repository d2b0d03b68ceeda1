// The reference engine: the oracle, and the CPU's native stand-in. It runs
// every operation (engines.def's ops "*") through the oracle that the
// operation declares (harness/ops/NAME.cc), with two algorithms:
// - "owner": each output element is computed by one thread in a fixed order,
//   accumulating in fp64, so the result is bitwise identical for any thread
//   count. Deterministic. It is what dispatch uses when mkldnn.enabled is
//   false (PyTorch's native CPU kernels) and what other engines are checked
//   against.
// - "atomic": the operation's racy variant (harness/race.h), whose rounding
//   changes from run to run with two or more threads: the CPU's positive
//   control, built the way cuDNN's atomic algorithms are.
#pragma once

#include "backends/engine.h"

namespace bc {

// The oracle: the owner algorithm, run directly on `b`, for any dtype and layout (buffers are
// logical NCHW; fp16 inputs are already rounded to half). As an engine it
// offers f32 NCHW problems only.
void ReferenceCompute(const Problem& p, Buffers& b);

// The error model of `p`'s output computed in `type` from the inputs in `b`:
// k the longest accumulation (every value, for scatter_add), N the output's
// size, and the largest product magnitude the inputs allow.
ToleranceModel ModelOf(const Problem& p, const Buffers& b, ComputeType type);

// `out` against the oracle run on the same inputs (`inputs` is not
// modified), each element held to its bound under ModelOf: the oracle runs a
// second time on the inputs' magnitudes for the bound's sum of |a_j b_j|.
ErrorMetrics CheckAgainstReference(const Problem& p, const Buffers& inputs, std::span<const float> out,
                                   ComputeType type);

}  // namespace bc
