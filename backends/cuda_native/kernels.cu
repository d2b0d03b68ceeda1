#include "backends/cuda_native/kernels.h"

namespace bc::cuda_native {
namespace {

constexpr int kThreads = 256;

int64_t Blocks(int64_t n) { return (n + kThreads - 1) / kThreads; }

__global__ void Im2ColKernel(ConvGeometry G, const float* x, int64_t c0, float* col) {
  const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i >= G.patch() * G.pixels()) return;
  const int64_t pixel = i % G.pixels(), row = i / G.pixels();
  const int64_t ox = pixel % G.ow, oy = pixel / G.ow;
  const int64_t s = row % G.kw, r = (row / G.kw) % G.kh, c = row / (G.kw * G.kh);
  const int64_t iy = oy * G.sh - G.ph + r * G.dh, ix = ox * G.sw - G.pw + s * G.dw;
  col[i] = iy >= 0 && iy < G.ih && ix >= 0 && ix < G.iw ? x[((c0 + c) * G.ih + iy) * G.iw + ix] : 0.0f;
}

__global__ void Col2ImKernel(ConvGeometry G, const float* col, int64_t c0, float* dx) {
  const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i >= G.icg() * G.ih * G.iw) return;
  const int64_t x = i % G.iw, y = (i / G.iw) % G.ih, c = i / (G.iw * G.ih);
  float acc = 0;
  for (int64_t r = 0; r < G.kh; ++r) {
    const int64_t ty = y + G.ph - r * G.dh;
    if (ty < 0 || ty % G.sh != 0 || ty / G.sh >= G.oh) continue;
    for (int64_t s = 0; s < G.kw; ++s) {
      const int64_t tx = x + G.pw - s * G.dw;
      if (tx < 0 || tx % G.sw != 0 || tx / G.sw >= G.ow) continue;
      acc += col[((c * G.kh + r) * G.kw + s) * G.pixels() + (ty / G.sh) * G.ow + tx / G.sw];
    }
  }
  dx[(c0 + c) * G.ih * G.iw + y * G.iw + x] = acc;
}

__global__ void AtomicWeightsKernel(ConvGeometry G, int64_t mb, const float* x, const float* dy, float* dw) {
  const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i >= mb * G.oc * G.pixels()) return;
  const int64_t pixel = i % G.pixels(), k = (i / G.pixels()) % G.oc, n = i / (G.pixels() * G.oc);
  const int64_t ox = pixel % G.ow, oy = pixel / G.ow;
  const int64_t group = k / G.ocg();
  const float grad = dy[(n * G.oc + k) * G.pixels() + pixel];
  for (int64_t c = 0; c < G.icg(); ++c) {
    const int64_t cin = group * G.icg() + c;
    for (int64_t r = 0; r < G.kh; ++r) {
      const int64_t iy = oy * G.sh - G.ph + r * G.dh;
      if (iy < 0 || iy >= G.ih) continue;
      for (int64_t s = 0; s < G.kw; ++s) {
        const int64_t ix = ox * G.sw - G.pw + s * G.dw;
        if (ix < 0 || ix >= G.iw) continue;
        atomicAdd(&dw[((k * G.icg() + c) * G.kh + r) * G.kw + s], grad * x[((n * G.ic + cin) * G.ih + iy) * G.iw + ix]);
      }
    }
  }
}

__global__ void ZeroKernel(float* p, int64_t n) {
  const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i < n) p[i] = 0.0f;
}

}  // namespace

void Im2Col(const ConvGeometry& G, const float* x_sample, int64_t c0, float* col) {
  Im2ColKernel<<<Blocks(G.patch() * G.pixels()), kThreads>>>(G, x_sample, c0, col);
}

void Col2Im(const ConvGeometry& G, const float* col, int64_t c0, float* dx_sample) {
  Col2ImKernel<<<Blocks(G.icg() * G.ih * G.iw), kThreads>>>(G, col, c0, dx_sample);
}

void AtomicBackwardWeights(const ConvGeometry& G, int64_t mb, const float* x, const float* dy, float* dw) {
  AtomicWeightsKernel<<<Blocks(mb * G.oc * G.pixels()), kThreads>>>(G, mb, x, dy, dw);
}

void Zero(float* p, int64_t n) { ZeroKernel<<<Blocks(n), kThreads>>>(p, n); }

}  // namespace bc::cuda_native
