#include "backends/reference/reference.h"

#include <omp.h>

#include <algorithm>

namespace bc {
namespace {

// Index helpers for NCHW activations and (G*OC/G)IHW weights.
struct Geometry {
  int64_t mb, ic, ih, iw, oc, kh, kw, sh, sw, ph, pw, dh, dw, g, oh, ow, icg, ocg;
  explicit Geometry(const Conv2dProblem& p)
      : mb(p.mb), ic(p.ic), ih(p.ih), iw(p.iw), oc(p.oc), kh(p.kh), kw(p.kw), sh(p.sh), sw(p.sw),
        ph(p.ph), pw(p.pw), dh(p.dh), dw(p.dw), g(p.g), oh(p.oh()), ow(p.ow()), icg(p.ic / p.g),
        ocg(p.oc / p.g) {}
  int64_t src(int64_t n, int64_t c, int64_t y, int64_t x) const { return ((n * ic + c) * ih + y) * iw + x; }
  int64_t dst(int64_t n, int64_t k, int64_t y, int64_t x) const { return ((n * oc + k) * oh + y) * ow + x; }
  int64_t wei(int64_t k, int64_t c, int64_t r, int64_t s) const { return ((k * icg + c) * kh + r) * kw + s; }
};

// Sum over input channels [c0, c1) of group-local channels and the kernel
// window, for one output element.
double ForwardPartial(const Geometry& G, const ConvBuffers& b, int64_t n, int64_t k, int64_t y,
                      int64_t x, int64_t c0, int64_t c1) {
  const int64_t group = k / G.ocg;
  double acc = 0;
  for (int64_t c = c0; c < c1; ++c) {
    const int64_t cin = group * G.icg + c;
    for (int64_t r = 0; r < G.kh; ++r) {
      const int64_t iy = y * G.sh - G.ph + r * G.dh;
      if (iy < 0 || iy >= G.ih) continue;
      for (int64_t s = 0; s < G.kw; ++s) {
        const int64_t ix = x * G.sw - G.pw + s * G.dw;
        if (ix < 0 || ix >= G.iw) continue;
        acc += static_cast<double>(b.src[G.src(n, cin, iy, ix)]) * b.wei[G.wei(k, c, r, s)];
      }
    }
  }
  return acc;
}

// Sum over output rows [y0, y1) of samples [n0, n1), for one weight element.
double WeightsPartial(const Geometry& G, const ConvBuffers& b, int64_t k, int64_t c, int64_t r, int64_t s,
                      int64_t n0, int64_t n1, int64_t y0, int64_t y1) {
  const int64_t cin = (k / G.ocg) * G.icg + c;
  double acc = 0;
  for (int64_t n = n0; n < n1; ++n) {
    for (int64_t y = y0; y < y1; ++y) {
      const int64_t iy = y * G.sh - G.ph + r * G.dh;
      if (iy < 0 || iy >= G.ih) continue;
      for (int64_t x = 0; x < G.ow; ++x) {
        const int64_t ix = x * G.sw - G.pw + s * G.dw;
        if (ix < 0 || ix >= G.iw) continue;
        acc += static_cast<double>(b.src[G.src(n, cin, iy, ix)]) * b.dst[G.dst(n, k, y, x)];
      }
    }
  }
  return acc;
}

// Channel block of the atomic forward: one channel, so every output gets as
// many racing contributions as there are input channels per group.
constexpr int64_t kAtomicChannelBlock = 1;

class ReferencePrepared final : public PreparedConv {
 public:
  ReferencePrepared(const Conv2dProblem& p, Algorithm algorithm, ConvBuffers& b)
      : p_(p), algorithm_(std::move(algorithm)), atomic_(algorithm_.name == "atomic"), b_(b) {}
  Status Execute() override {
    if (atomic_) {
      ReferenceConvAtomic(p_, b_);
    } else {
      ReferenceConvOwner(p_, b_);
    }
    return Status::Ok();
  }
  Status Fetch() override { return Status::Ok(); }  // computes in place on host buffers
  std::string implementation() const override { return "reference:" + algorithm_.name; }
  const Algorithm& algorithm() const override { return algorithm_; }

 private:
  Conv2dProblem p_;
  Algorithm algorithm_;
  bool atomic_;
  ConvBuffers& b_;
};

}  // namespace

void ReferenceConvOwner(const Conv2dProblem& p, ConvBuffers& b) {
  const Geometry G(p);
  if (p.direction == Direction::kForward) {
#pragma omp parallel for collapse(2) schedule(static)
    for (int64_t n = 0; n < G.mb; ++n) {
      for (int64_t k = 0; k < G.oc; ++k) {
        for (int64_t y = 0; y < G.oh; ++y) {
          for (int64_t x = 0; x < G.ow; ++x) {
            b.dst[G.dst(n, k, y, x)] = static_cast<float>(ForwardPartial(G, b, n, k, y, x, 0, G.icg));
          }
        }
      }
    }
  } else {
#pragma omp parallel for collapse(2) schedule(static)
    for (int64_t k = 0; k < G.oc; ++k) {
      for (int64_t c = 0; c < G.icg; ++c) {
        for (int64_t r = 0; r < G.kh; ++r) {
          for (int64_t s = 0; s < G.kw; ++s) {
            b.wei[G.wei(k, c, r, s)] = static_cast<float>(WeightsPartial(G, b, k, c, r, s, 0, G.mb, 0, G.oh));
          }
        }
      }
    }
  }
}

void ReferenceConvAtomic(const Conv2dProblem& p, ConvBuffers& b) {
  const Geometry G(p);
  if (p.direction == Direction::kForward) {
    std::fill(b.dst.begin(), b.dst.end(), 0.0f);
    const int64_t blocks = (G.icg + kAtomicChannelBlock - 1) / kAtomicChannelBlock;
#pragma omp parallel for collapse(2) schedule(dynamic, 1)
    for (int64_t n = 0; n < G.mb; ++n) {
      for (int64_t blk = 0; blk < blocks; ++blk) {
        const int64_t c0 = blk * kAtomicChannelBlock;
        const int64_t c1 = std::min(G.icg, c0 + kAtomicChannelBlock);
        for (int64_t k = 0; k < G.oc; ++k) {
          for (int64_t y = 0; y < G.oh; ++y) {
            for (int64_t x = 0; x < G.ow; ++x) {
              const float partial = static_cast<float>(ForwardPartial(G, b, n, k, y, x, c0, c1));
              float& out = b.dst[G.dst(n, k, y, x)];
#pragma omp atomic
              out += partial;
            }
          }
        }
      }
    }
  } else {
    std::fill(b.wei.begin(), b.wei.end(), 0.0f);
#pragma omp parallel for collapse(2) schedule(dynamic, 1)
    for (int64_t n = 0; n < G.mb; ++n) {
      for (int64_t y = 0; y < G.oh; ++y) {
        for (int64_t k = 0; k < G.oc; ++k) {
          for (int64_t c = 0; c < G.icg; ++c) {
            for (int64_t r = 0; r < G.kh; ++r) {
              for (int64_t s = 0; s < G.kw; ++s) {
                const float partial = static_cast<float>(WeightsPartial(G, b, k, c, r, s, n, n + 1, y, y + 1));
                float& out = b.wei[G.wei(k, c, r, s)];
#pragma omp atomic
                out += partial;
              }
            }
          }
        }
      }
    }
  }
}

const ReferenceEngine& ReferenceEngine::Instance() {
  static const ReferenceEngine kEngine;
  return kEngine;
}

Availability ReferenceEngine::availability() const {
  return {"reference", true, true, "built in: OpenMP loops accumulating in fp64", "1"};
}

std::vector<Algorithm> ReferenceEngine::algorithms(const Conv2dProblem&) const {
  return {{"owner", Determinism::kDeterministic, 0}, {"atomic", Determinism::kNondeterministic, 0}};
}

Result<std::unique_ptr<PreparedConv>> ReferenceEngine::Prepare(const Conv2dProblem& p, const std::string& algorithm,
                                                               ConvBuffers& buffers) const {
  Result<Algorithm> found = FindAlgorithm(*this, p, algorithm.empty() ? "owner" : algorithm);
  if (!found.ok()) return found.status();
  return std::unique_ptr<PreparedConv>(new ReferencePrepared(p, found.value(), buffers));
}

}  // namespace bc
