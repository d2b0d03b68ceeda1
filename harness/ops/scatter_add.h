// scatter_add: out[index[i]] += src[i] over n values into d destinations
// (torch.Tensor.scatter_add_ on one dimension), the indices seeded in [0, d).
//   scatter_add:f32:n100000d1000
// Tensors: src (the values) and index in, dst out.
#pragma once

#include <array>
#include <vector>

#include "harness/op.h"

namespace bc {

struct ScatterAddProblem {
  static constexpr std::string_view kName = "scatter_add";
  static constexpr bool kDirections = false;
  static constexpr bool kLayouts = false;
  static constexpr auto Fields() {
    using P = ScatterAddProblem;
    return std::array<Field<P>, 2>{{{"n", &P::n}, {"d", &P::d}}};
  }

  DataType dtype = DataType::kF32;
  int64_t n = 1, d = 1;  // values scattered, destination size

  double gflop() const { return static_cast<double>(n) * 1e-9; }
  // Expected contributions per destination element, rounded up.
  int64_t accumulation_length() const { return (n + d - 1) / d; }
  // The error model takes every value: one destination may receive them all.
  int64_t bound_length() const { return n; }
  Status CheckShape() const { return Status::Ok(); }
  std::vector<TensorDecl> Tensors() const {
    return {{"src", {n}}, {"index", {n}, true, ElemType::kIndex, "", d}, {"dst", {d}, false}};
  }
  std::array<const char*, 2> Operands() const { return {"src", nullptr}; }
  void Reference(Buffers& b, bool racy) const;

  bool operator==(const ScatterAddProblem&) const = default;
};

namespace ops {
using scatter_add = ScatterAddProblem;
}

}  // namespace bc
