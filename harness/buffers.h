// Host buffers of one problem, and their seeded inputs.
//
// Roles by problem:
//   conv2d      src [mb,ic,ih,iw], wei [oc,ic/g,kh,kw], dst [mb,oc,oh,ow];
//               fwd: src, wei in, dst out; bwd_data: wei, dst (diff_dst) in,
//               src (diff_src) out; bwd_weights: src, dst in, wei out.
//   matmul      src = A [m,k], wei = B [k,n] in; dst = C [m,n] out.
//   scatter_add src = values [n], index [n] in; dst [d] out.
// Inputs depend on the problem only (ProblemSeed), so every engine, flag set
// and machine sees the same data and digests are comparable across them.
// Buffers are fp32 and logical NCHW whatever the problem's dtype and layout:
// fp16 inputs are fp32 values rounded to half, and engines convert and
// transpose on upload and download.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "harness/problem.h"

namespace bc {

struct Buffers {
  std::vector<float> src, wei, dst;
  std::vector<int32_t> index;

  static Buffers For(const Problem& p);
  // What For(p) allocates, in bytes, without allocating.
  static int64_t BytesFor(const Problem& p);
  std::vector<float>& Output(const Problem& p);
  const std::vector<float>& Output(const Problem& p) const { return const_cast<Buffers*>(this)->Output(p); }
  // The two operands whose products the output sums (the values alone, and
  // nullptr, for scatter_add).
  std::pair<const std::vector<float>*, const std::vector<float>*> Operands(const Problem& p) const;
};

uint64_t ProblemSeed(const Problem& p);
// x rounded to the nearest IEEE half (round to nearest even), as a float.
inline float RoundToHalf(float x) { return static_cast<float>(static_cast<_Float16>(x)); }
// Fills every input of `p` in `b` from ProblemSeed(p).
void FillInputs(const Problem& p, Buffers& b);

}  // namespace bc
