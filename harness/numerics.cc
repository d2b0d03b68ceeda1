#include "harness/numerics.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>

namespace bc {

int64_t UlpDistance(float a, float b) {
  if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<int64_t>::max();
  // Map the sign-magnitude bit pattern onto a monotonic integer line.
  const auto ordered = [](float f) {
    const int32_t i = std::bit_cast<int32_t>(f);
    return i < 0 ? int64_t{std::numeric_limits<int32_t>::min()} - i : int64_t{i};
  };
  const int64_t d = ordered(a) - ordered(b);
  return d < 0 ? -d : d;
}

ErrorMetrics Compare(std::span<const float> out, std::span<const float> ref) {
  ErrorMetrics m;
  const size_t n = std::min(out.size(), ref.size());
  for (size_t i = 0; i < n; ++i) {
    const double r = ref[i];
    const double o = out[i];
    if (!std::isfinite(o) && std::isfinite(r)) {
      ++m.nonfinite;
      continue;
    }
    const double abs_err = std::fabs(o - r);
    m.max_abs = std::max(m.max_abs, abs_err);
    m.max_rel = std::max(m.max_rel, abs_err / std::max(std::fabs(r), double{std::numeric_limits<float>::min()}));
    m.max_ulp = std::max(m.max_ulp, UlpDistance(out[i], ref[i]));
    m.max_abs_ref = std::max(m.max_abs_ref, std::fabs(r));
  }
  if (out.size() != ref.size()) m.nonfinite += static_cast<int64_t>(std::max(out.size(), ref.size()) - n);
  return m;
}

double ToleranceBound(const ErrorMetrics& m, int64_t accumulation_length) {
  const double eps = std::numeric_limits<float>::epsilon();
  return (2.0 * eps * static_cast<double>(accumulation_length) + 1e-6) * std::max(1.0, m.max_abs_ref);
}

bool WithinTolerance(const ErrorMetrics& m, int64_t accumulation_length) {
  return m.nonfinite == 0 && m.max_abs <= ToleranceBound(m, accumulation_length);
}

bool IsDegenerate(std::span<const float> out) {
  if (out.empty()) return true;
  const float first = out[0];
  // +0 and -0 count as one value; so does every NaN.
  return std::all_of(out.begin(), out.end(), [first](float v) {
    return v == first || (std::isnan(v) && std::isnan(first));
  });
}

}  // namespace bc
