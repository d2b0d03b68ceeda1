// Problems: what one operation computes, described completely and
// canonically. Each kind's repro string is its identity: Format() writes
// every field in a fixed order, ParseProblem() reads it back (also with
// optional fields left out, filling PyTorch's defaults), and
// ParseProblem(FormatProblem(p)) == p for every valid p.
//   conv2d:fwd:f32:mb8ic64ih56iw56oc64kh3kw3sh1sw1ph1pw1dh1dw1g1
//   conv2d:bwd_data:f16:nhwc:mb8...   (the layout is written only when not nchw)
//   matmul:f32:m128n256k64            C[m,n] = A[m,k] B[k,n], row-major
//   scatter_add:f32:n100000d1000      out[idx[i]] += v[i], idx seeded in [0, d)
// Conv layout is NCHW for activations and OIHW for weights (PyTorch's
// contiguous).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <variant>

#include "harness/status.h"

namespace bc {

enum class Direction { kForward, kBackwardData, kBackwardWeights };
const char* DirectionName(Direction d);  // "fwd", "bwd_data", "bwd_weights"

enum class DataType { kF32, kF16 };
const char* DataTypeName(DataType t);  // "f32", "f16"

// The memory layout an engine uses for activations (weights follow: OIHW or
// OHWI). Host buffers are always logical NCHW; engines transpose on upload
// and download, so digests compare across layouts.
enum class Layout { kNchw, kNhwc };
const char* LayoutName(Layout l);  // "nchw", "nhwc"

// Largest tensor, in elements, that a problem may ask for.
inline constexpr int64_t kMaxTensorElems = int64_t{1} << 32;

struct Conv2dProblem {
  Direction direction = Direction::kForward;
  DataType dtype = DataType::kF32;
  Layout layout = Layout::kNchw;
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
  Status Validate() const;
  bool operator==(const Conv2dProblem&) const = default;
};

struct MatmulProblem {
  DataType dtype = DataType::kF32;
  int64_t m = 1, n = 1, k = 1;

  double gflop() const { return 2.0 * static_cast<double>(m * n * k) * 1e-9; }
  int64_t accumulation_length() const { return k; }
  std::string Format() const;
  std::string FormatShape() const;  // "m128n256k64"
  Status Validate() const;
  bool operator==(const MatmulProblem&) const = default;
};

struct ScatterAddProblem {
  DataType dtype = DataType::kF32;
  int64_t n = 1, d = 1;  // values scattered, destination size

  double gflop() const { return static_cast<double>(n) * 1e-9; }
  // Expected contributions per destination element, rounded up.
  int64_t accumulation_length() const { return (n + d - 1) / d; }
  std::string Format() const;
  std::string FormatShape() const;  // "n100000d1000"
  Status Validate() const;
  bool operator==(const ScatterAddProblem&) const = default;
};

using Problem = std::variant<Conv2dProblem, MatmulProblem, ScatterAddProblem>;

std::string FormatProblem(const Problem& p);
std::string FormatShape(const Problem& p);
const char* OpName(const Problem& p);  // "conv2d", "matmul", "scatter_add"
Direction ProblemDirection(const Problem& p);  // kForward for matmul and scatter_add
DataType ProblemDataType(const Problem& p);
// True for the plain case every engine implements: f32, NCHW.
bool IsPlainF32(const Problem& p);
double ProblemGflop(const Problem& p);
int64_t AccumulationLength(const Problem& p);

Result<Problem> ParseProblem(std::string_view repro);
Result<Conv2dProblem> ParseConv2dProblem(std::string_view repro);

}  // namespace bc
