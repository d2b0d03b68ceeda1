// conv2d's oracle: direct loops accumulating in fp64, and the atomic
// variant that is the CPU's positive control (see harness/race.h).
#include "harness/ops/conv2d.h"

#include <algorithm>

#include "harness/buffers.h"
#include "harness/race.h"

namespace bc {
namespace {

// The three tensors, whichever is the output.
struct Data {
  float* src;
  float* wei;
  float* dst;
};

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

// Forward: the sum over group-local input channels [c0, c1) and the kernel
// window, for one output element.
double ForwardPartial(const Geometry& G, const Data& b, int64_t n, int64_t k, int64_t y, int64_t x, int64_t c0,
                      int64_t c1) {
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

// Backward-data: the sum over output channels [k0, k1) of the group and the
// kernel window, for one input element.
double DataPartial(const Geometry& G, const Data& b, int64_t n, int64_t cin, int64_t y, int64_t x, int64_t k0,
                   int64_t k1) {
  const int64_t group = cin / G.icg;
  const int64_t c = cin % G.icg;
  double acc = 0;
  for (int64_t kk = k0; kk < k1; ++kk) {
    const int64_t k = group * G.ocg + kk;
    for (int64_t r = 0; r < G.kh; ++r) {
      const int64_t ty = y + G.ph - r * G.dh;
      if (ty < 0 || ty % G.sh != 0 || ty / G.sh >= G.oh) continue;
      for (int64_t s = 0; s < G.kw; ++s) {
        const int64_t tx = x + G.pw - s * G.dw;
        if (tx < 0 || tx % G.sw != 0 || tx / G.sw >= G.ow) continue;
        acc += static_cast<double>(b.dst[G.dst(n, k, ty / G.sh, tx / G.sw)]) * b.wei[G.wei(k, c, r, s)];
      }
    }
  }
  return acc;
}

// Backward-weights: the sum over output rows [y0, y1) of samples [n0, n1),
// for one weight element.
double WeightsPartial(const Geometry& G, const Data& b, int64_t k, int64_t c, int64_t r, int64_t s, int64_t n0,
                      int64_t n1, int64_t y0, int64_t y1) {
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

void ConvOwner(const Conv2dProblem& p, const Data& b) {
  const Geometry G(p);
  switch (p.direction) {
    case Direction::kForward:
#pragma omp parallel for collapse(2) schedule(static)
      for (int64_t n = 0; n < G.mb; ++n)
        for (int64_t k = 0; k < G.oc; ++k)
          for (int64_t y = 0; y < G.oh; ++y)
            for (int64_t x = 0; x < G.ow; ++x)
              b.dst[G.dst(n, k, y, x)] = static_cast<float>(ForwardPartial(G, b, n, k, y, x, 0, G.icg));
      break;
    case Direction::kBackwardData:
#pragma omp parallel for collapse(2) schedule(static)
      for (int64_t n = 0; n < G.mb; ++n)
        for (int64_t c = 0; c < G.ic; ++c)
          for (int64_t y = 0; y < G.ih; ++y)
            for (int64_t x = 0; x < G.iw; ++x)
              b.src[G.src(n, c, y, x)] = static_cast<float>(DataPartial(G, b, n, c, y, x, 0, G.ocg));
      break;
    case Direction::kBackwardWeights:
#pragma omp parallel for collapse(2) schedule(static)
      for (int64_t k = 0; k < G.oc; ++k)
        for (int64_t c = 0; c < G.icg; ++c)
          for (int64_t r = 0; r < G.kh; ++r)
            for (int64_t s = 0; s < G.kw; ++s)
              b.wei[G.wei(k, c, r, s)] = static_cast<float>(WeightsPartial(G, b, k, c, r, s, 0, G.mb, 0, G.oh));
      break;
  }
}

// Each task adds one reduction slice (one input channel, one output channel,
// or one sample's output row) into every output it touches.
void ConvAtomic(const Conv2dProblem& p, const Data& b) {
  const Geometry G(p);
  switch (p.direction) {
    case Direction::kForward:
      std::fill_n(b.dst, p.dst_elems(), 0.0f);
#pragma omp parallel for collapse(2) schedule(dynamic, 1) num_threads(RaceThreads())
      for (int64_t n = 0; n < G.mb; ++n)
        for (int64_t c = 0; c < G.icg; ++c)
          for (int64_t k = 0; k < G.oc; ++k)
            for (int64_t y = 0; y < G.oh; ++y)
              for (int64_t x = 0; x < G.ow; ++x)
                AtomicAdd(b.dst[G.dst(n, k, y, x)], static_cast<float>(ForwardPartial(G, b, n, k, y, x, c, c + 1)));
      break;
    case Direction::kBackwardData:
      std::fill_n(b.src, p.src_elems(), 0.0f);
#pragma omp parallel for collapse(2) schedule(dynamic, 1) num_threads(RaceThreads())
      for (int64_t n = 0; n < G.mb; ++n)
        for (int64_t kk = 0; kk < G.ocg; ++kk)
          for (int64_t c = 0; c < G.ic; ++c)
            for (int64_t y = 0; y < G.ih; ++y)
              for (int64_t x = 0; x < G.iw; ++x)
                AtomicAdd(b.src[G.src(n, c, y, x)], static_cast<float>(DataPartial(G, b, n, c, y, x, kk, kk + 1)));
      break;
    case Direction::kBackwardWeights:
      std::fill_n(b.wei, p.wei_elems(), 0.0f);
#pragma omp parallel for collapse(2) schedule(dynamic, 1) num_threads(RaceThreads())
      for (int64_t n = 0; n < G.mb; ++n)
        for (int64_t y = 0; y < G.oh; ++y)
          for (int64_t k = 0; k < G.oc; ++k)
            for (int64_t c = 0; c < G.icg; ++c)
              for (int64_t r = 0; r < G.kh; ++r)
                for (int64_t s = 0; s < G.kw; ++s)
                  AtomicAdd(b.wei[G.wei(k, c, r, s)],
                            static_cast<float>(WeightsPartial(G, b, k, c, r, s, n, n + 1, y, y + 1)));
      break;
  }
}

}  // namespace

void Conv2dProblem::Reference(Buffers& b, bool racy) const {
  const Data data{b["src"].data(), b["wei"].data(), b["dst"].data()};
  racy ? ConvAtomic(*this, data) : ConvOwner(*this, data);
}

}  // namespace bc
