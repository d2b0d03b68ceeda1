// Host buffers of one problem by role, and their seeded inputs.
//
// The roles, shapes and directions are the operation's own declaration
// (TensorsOf, harness/ops/NAME.h): Buffers::For allocates each, FillInputs
// fills every input. Inputs depend on the problem only (ProblemSeed), so
// every engine, flag set and machine sees the same data and digests are
// comparable across them. Float tensors are fp32 and logical NCHW whatever
// the problem's dtype and layout: fp16 inputs are fp32 values rounded to
// half, and engines convert and transpose on upload and download.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "harness/problem.h"

namespace bc {

class Buffers {
 public:
  static Buffers For(const Problem& p);
  // What For(p) allocates, in bytes, without allocating.
  static int64_t BytesFor(const Problem& p);

  // The float tensor of `role`; a role the problem does not declare is a
  // harness bug and throws std::out_of_range naming it.
  std::vector<float>& operator[](std::string_view role);
  const std::vector<float>& operator[](std::string_view role) const;
  std::vector<int32_t>& indices(std::string_view role);
  const std::vector<int32_t>& indices(std::string_view role) const;
  bool has(std::string_view role) const { return f32_.contains(role) || index_.contains(role); }
  // Every float tensor, in role order.
  std::map<std::string, std::vector<float>, std::less<>>& floats() { return f32_; }

  std::vector<float>& Output(const Problem& p);
  const std::vector<float>& Output(const Problem& p) const { return const_cast<Buffers*>(this)->Output(p); }
  // The two operands whose products the output sums (the values alone, and
  // nullptr, for an operation that sums values).
  std::pair<const std::vector<float>*, const std::vector<float>*> Operands(const Problem& p) const;

 private:
  std::map<std::string, std::vector<float>, std::less<>> f32_;
  std::map<std::string, std::vector<int32_t>, std::less<>> index_;
};

uint64_t ProblemSeed(const Problem& p);
// x rounded to the nearest IEEE half (round to nearest even), as a float.
inline float RoundToHalf(float x) { return static_cast<float>(static_cast<_Float16>(x)); }
// Fills every input of `p` in `b` from ProblemSeed(p).
void FillInputs(const Problem& p, Buffers& b);

}  // namespace bc
