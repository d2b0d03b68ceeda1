// conv2d: PyTorch's conv2d and its two gradients, NCHW activations and OIHW
// weights (PyTorch's contiguous).
//   conv2d:fwd:f32:mb8ic64ih56iw56oc64kh3kw3sh1sw1ph1pw1dh1dw1g1
//   conv2d:bwd_data:f16:nhwc:mb8...   (the layout is written only when not nchw)
// A repro may leave out iw, kw, sw, pw and dw (square: the h value), and sh,
// ph, dh and g (1, 0, 1, 1), as benchdnn and PyTorch's int arguments do.
// Tensors by direction (the roles keep their forward names):
//   fwd          src [mb,ic,ih,iw], wei [oc,ic/g,kh,kw] in; dst [mb,oc,oh,ow] out
//   bwd_data     wei, dst (diff_dst) in; src (diff_src) out
//   bwd_weights  src, dst (diff_dst) in; wei (diff_weights) out
#pragma once

#include <array>
#include <vector>

#include "harness/op.h"

namespace bc {

struct Conv2dProblem {
  static constexpr std::string_view kName = "conv2d";
  static constexpr bool kDirections = true;
  static constexpr bool kLayouts = true;
  static constexpr auto Fields() {
    using P = Conv2dProblem;
    return std::array<Field<P>, 14>{{{"mb", &P::mb},
                                     {"ic", &P::ic},
                                     {"ih", &P::ih},
                                     {"iw", &P::iw, false, 2},
                                     {"oc", &P::oc},
                                     {"kh", &P::kh},
                                     {"kw", &P::kw, false, 5},
                                     {"sh", &P::sh, false, -1, 1},
                                     {"sw", &P::sw, false, 7},
                                     {"ph", &P::ph, false, -1, 0, true},
                                     {"pw", &P::pw, false, 9, 0, true},
                                     {"dh", &P::dh, false, -1, 1},
                                     {"dw", &P::dw, false, 11},
                                     {"g", &P::g, false, -1, 1}}};
  }

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
  int64_t accumulation_length() const {
    switch (direction) {
      case Direction::kForward: return (ic / g) * kh * kw;
      case Direction::kBackwardData: return (oc / g) * kh * kw;
      case Direction::kBackwardWeights: return mb * oh() * ow();
    }
    return 1;
  }

  Status CheckShape() const {
    if (ic % g != 0 || oc % g != 0) {
      return Status(StatusCode::kInvalidArgument, "groups g" + std::to_string(g) + " must divide ic" +
                                                      std::to_string(ic) + " and oc" + std::to_string(oc));
    }
    if (oh() < 1 || ow() < 1) return Status(StatusCode::kInvalidArgument, "kernel does not fit the padded input");
    return Status::Ok();
  }
  std::vector<TensorDecl> Tensors() const {
    const bool fwd = direction == Direction::kForward, data = direction == Direction::kBackwardData;
    return {{"src", {mb, ic, ih, iw}, !data},
            {"wei", {oc, ic / g, kh, kw}, fwd || data},
            {"dst", {mb, oc, oh(), ow()}, !fwd, ElemType::kF32, fwd ? "" : "diff_dst"}};
  }
  std::array<const char*, 2> Operands() const {
    switch (direction) {
      case Direction::kForward: return {"src", "wei"};
      case Direction::kBackwardData: return {"wei", "dst"};
      case Direction::kBackwardWeights: return {"src", "dst"};
    }
    return {"src", "wei"};
  }
  void Reference(Buffers& b, bool racy) const;

  bool operator==(const Conv2dProblem&) const = default;
};

namespace ops {
using conv2d = Conv2dProblem;
}

}  // namespace bc
