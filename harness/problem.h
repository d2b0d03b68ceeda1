// Conv2dProblem: one convolution, described completely and canonically.
//
// The repro string is the problem's identity: Format() writes every field in a
// fixed order, Parse() reads it back (also with the optional fields left out,
// filling PyTorch's defaults), and Parse(Format(p)) == p for every valid p.
// Example: "conv2d:fwd:f32:mb8ic64ih56iw56oc64kh3kw3sh1sw1ph1pw1dh1dw1g1".
// Layout is NCHW for activations and OIHW for weights (PyTorch's contiguous).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "harness/status.h"

namespace bc {

enum class Direction { kForward, kBackwardWeights };
const char* DirectionName(Direction d);  // "fwd", "bwd_weights"

enum class DataType { kF32 };
const char* DataTypeName(DataType t);  // "f32"

struct Conv2dProblem {
  Direction direction = Direction::kForward;
  DataType dtype = DataType::kF32;
  int64_t mb = 1, ic = 1, ih = 1, iw = 1, oc = 1, kh = 1, kw = 1;
  int64_t sh = 1, sw = 1, ph = 0, pw = 0, dh = 1, dw = 1, g = 1;

  int64_t oh() const { return (ih + 2 * ph - dh * (kh - 1) - 1) / sh + 1; }
  int64_t ow() const { return (iw + 2 * pw - dw * (kw - 1) - 1) / sw + 1; }
  int64_t src_elems() const { return mb * ic * ih * iw; }
  int64_t wei_elems() const { return oc * (ic / g) * kh * kw; }
  int64_t dst_elems() const { return mb * oc * oh() * ow(); }
  // Multiply-adds of one pass (the same for every direction).
  int64_t macs() const { return mb * oc * oh() * ow() * (ic / g) * kh * kw; }
  double gflop() const { return 2.0 * static_cast<double>(macs()) * 1e-9; }
  // Length of the sum behind one output element: what bounds rounding error.
  int64_t accumulation_length() const;

  std::string Format() const;
  // Shape part only: "mb8ic64ih56iw56oc64kh3kw3sh1sw1ph1pw1dh1dw1g1".
  std::string FormatShape() const;
  // Checks sizes are positive, consistent and below the element budget.
  Status Validate() const;

  bool operator==(const Conv2dProblem&) const = default;
};

// Largest tensor, in elements, that a problem may ask for.
inline constexpr int64_t kMaxTensorElems = int64_t{1} << 32;

Result<Conv2dProblem> ParseConv2dProblem(std::string_view repro);

}  // namespace bc
