// What an operation declares, once, in its own file under harness/ops/ (the
// way benchdnn's drivers hook into one harness and PyTorch's OpInfo describes
// an operator): everything else — the repro string's parse, format and
// validation (harness/problem.cc), the host buffers (harness/buffers.cc), the
// reference engine, the error model, the generator's canonical strings (the
// bc_problem tool) and the benchmarks — is generic over these declarations.
//
// An operation is a struct NAMEProblem in harness/ops/NAME.h with
//   static constexpr std::string_view kName        "conv2d": the repro's first token
//   static constexpr bool kDirections              true: the repro names fwd, bwd_data or
//                                                  bwd_weights (and the struct has `direction`)
//   static constexpr bool kLayouts                 true: nchw or nhwc (and the struct has `layout`)
//   static constexpr auto Fields()                 its shape: std::array<Field<NAMEProblem>, N>,
//                                                  in the order the repro writes them
//   DataType dtype
//   Status CheckShape() const                      what the fields' ranges do not say
//   std::vector<TensorDecl> Tensors() const        its tensors by role, for its direction
//   std::array<const char*, 2> Operands() const    the roles whose products an output sums
//                                                  (the second nullptr: it sums values)
//   double gflop() const
//   int64_t accumulation_length() const            terms behind one output element
//   int64_t bound_length() const                   the error model's k (optional: the
//                                                  accumulation length)
//   void Reference(Buffers& b, bool racy) const    the fp64 oracle in harness/ops/NAME.cc;
//                                                  racy: the atomic positive control
// and, last, `namespace ops { using NAME = NAMEProblem; }`: CMake lists
// harness/ops/*.h into the build's ops_list.h, so a new file is a new
// operation with no list to edit.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "harness/status.h"

namespace bc {

class Buffers;

enum class Direction { kForward, kBackwardData, kBackwardWeights };
const char* DirectionName(Direction d);  // "fwd", "bwd_data", "bwd_weights"

enum class DataType { kF32, kF16 };
const char* DataTypeName(DataType t);  // "f32", "f16"

// The memory layout an engine uses for activations (weights follow: OIHW or
// OHWI). Host buffers are always logical NCHW; engines transpose on upload
// and download, so digests compare across layouts.
enum class Layout { kNchw, kNhwc };
const char* LayoutName(Layout l);  // "nchw", "nhwc"

// Every value of each, in the order repro strings and error messages list them.
inline constexpr std::array kAllDirections = {Direction::kForward, Direction::kBackwardData,
                                              Direction::kBackwardWeights};
inline constexpr std::array kAllDataTypes = {DataType::kF32, DataType::kF16};
inline constexpr std::array kAllLayouts = {Layout::kNchw, Layout::kNhwc};

// Largest tensor, in elements, that a problem may ask for.
inline constexpr int64_t kMaxTensorElems = int64_t{1} << 32;

// One integer field of an operation's shape, written "key<value>" ("mb8").
template <typename P>
struct Field {
  const char* key;
  int64_t P::*member;
  bool required = true;   // a repro without it does not parse
  int square_of = -1;     // left out: the value of this earlier field (kw takes kh)
  int64_t fallback = 1;   // left out, and square_of < 0
  bool may_be_zero = false;
};

enum class ElemType { kF32, kIndex };

// One tensor of a problem. Float tensors are fp32 and logical NCHW whatever
// the problem's dtype and layout; index tensors are int32.
struct TensorDecl {
  std::string role;          // its name in Buffers: "src", "wei", "dst", "index", ...
  std::vector<int64_t> dims;
  bool input = true;         // false: the output
  ElemType type = ElemType::kF32;
  std::string seed;          // the name its seeded fill uses (empty: the role)
  int64_t index_bound = 0;   // an index tensor's values lie in [0, index_bound)

  int64_t elems() const {
    int64_t n = 1;
    for (int64_t d : dims) n *= d;
    return n;
  }
};

}  // namespace bc
