// Error metrics against a reference, and the test for degenerate output.
//
// Compare() reports the largest absolute error, the largest relative error
// (against max(|ref|, the smallest normal float)), the largest distance in
// units in the last place, and the largest |ref|. WithinTolerance() applies a
// norm-wise bound that grows with the accumulation length, the standard
// first-order bound for a sum of k rounded terms in fp32.
// IsDegenerate() marks outputs that prove nothing (all zero, or constant):
// a determinism check passed on such data is MISTRUSTED, not PASSED.
#pragma once

#include <cstdint>
#include <span>

namespace bc {

struct ErrorMetrics {
  double max_abs = 0;
  double max_rel = 0;
  int64_t max_ulp = 0;
  double max_abs_ref = 0;
  int64_t nonfinite = 0;  // NaN or Inf in the output where the reference is finite
};

ErrorMetrics Compare(std::span<const float> out, std::span<const float> ref);

// Distance in representable floats; 0 for equal values, huge for NaN.
int64_t UlpDistance(float a, float b);

// max_abs <= (k * eps_f32 * 2 + 1e-6) * max(1, max|ref|) and no new NaN/Inf.
bool WithinTolerance(const ErrorMetrics& m, int64_t accumulation_length);
double ToleranceBound(const ErrorMetrics& m, int64_t accumulation_length);

bool IsDegenerate(std::span<const float> out);

}  // namespace bc
