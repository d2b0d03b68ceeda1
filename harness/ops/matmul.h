// matmul: C[m,n] = A[m,k] B[k,n], row-major (torch.mm).
//   matmul:f32:m128n256k64
// Tensors: src = A and wei = B in, dst = C out.
#pragma once

#include <array>
#include <vector>

#include "harness/op.h"

namespace bc {

struct MatmulProblem {
  static constexpr std::string_view kName = "matmul";
  static constexpr bool kDirections = false;
  static constexpr bool kLayouts = false;
  static constexpr auto Fields() {
    using P = MatmulProblem;
    return std::array<Field<P>, 3>{{{"m", &P::m}, {"n", &P::n}, {"k", &P::k}}};
  }

  DataType dtype = DataType::kF32;
  int64_t m = 1, n = 1, k = 1;

  double gflop() const { return 2.0 * static_cast<double>(m * n * k) * 1e-9; }
  int64_t accumulation_length() const { return k; }
  Status CheckShape() const { return Status::Ok(); }
  std::vector<TensorDecl> Tensors() const { return {{"src", {m, k}}, {"wei", {k, n}}, {"dst", {m, n}, false}}; }
  std::array<const char*, 2> Operands() const { return {"src", "wei"}; }
  void Reference(Buffers& b, bool racy) const;

  bool operator==(const MatmulProblem&) const = default;
};

namespace ops {
using matmul = MatmulProblem;
}

}  // namespace bc
