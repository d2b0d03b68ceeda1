// index_add: out[index[i], :] += src[i, :] for n rows of c values into d rows
// (torch.Tensor.index_add_ on dimension 0), the indices seeded in [0, d), so
// rows collide and accumulation order matters.
//   index_add:f32:n4096d64c32
// Tensors: src [n,c] and index [n] in, dst [d,c] out.
#pragma once

#include <array>
#include <vector>

#include "harness/op.h"

namespace bc {

struct IndexAddProblem {
  static constexpr std::string_view kName = "index_add";
  static constexpr bool kDirections = false;
  static constexpr bool kLayouts = false;
  static constexpr auto Fields() {
    using P = IndexAddProblem;
    return std::array<Field<P>, 3>{{{"n", &P::n}, {"d", &P::d}, {"c", &P::c}}};
  }

  DataType dtype = DataType::kF32;
  int64_t n = 1, d = 1, c = 1;  // source rows, destination rows, values per row

  double gflop() const { return static_cast<double>(n * c) * 1e-9; }
  // Expected source rows per destination row, rounded up.
  int64_t accumulation_length() const { return (n + d - 1) / d; }
  // The error model takes every row: one destination row may receive them all.
  int64_t bound_length() const { return n; }
  Status CheckShape() const { return Status::Ok(); }
  std::vector<TensorDecl> Tensors() const {
    return {{"src", {n, c}}, {"index", {n}, true, ElemType::kIndex, "", d}, {"dst", {d, c}, false}};
  }
  std::array<const char*, 2> Operands() const { return {"src", nullptr}; }
  void Reference(Buffers& b, bool racy) const;

  bool operator==(const IndexAddProblem&) const = default;
};

namespace ops {
using index_add = IndexAddProblem;
}

}  // namespace bc
