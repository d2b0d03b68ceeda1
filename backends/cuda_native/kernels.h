// Launchers of the native CUDA kernels (kernels.cu), on the default stream.
// Tensors are fp32, NCHW; `c0` selects the group's first channel.
#pragma once

#include <cstdint>

#ifdef __CUDACC__
#define BC_HOST_DEVICE __host__ __device__
#else
#define BC_HOST_DEVICE
#endif

namespace bc::cuda_native {

struct ConvGeometry {
  int64_t ic, ih, iw, oc, kh, kw, sh, sw, ph, pw, dh, dw, g, oh, ow;
  BC_HOST_DEVICE int64_t icg() const { return ic / g; }
  BC_HOST_DEVICE int64_t ocg() const { return oc / g; }
  BC_HOST_DEVICE int64_t patch() const { return icg() * kh * kw; }  // rows of the column matrix
  BC_HOST_DEVICE int64_t pixels() const { return oh * ow; }          // its columns
};

// col[(c*kh + r)*kw + s][oy*ow + ox] = x[c0 + c][oy*sh - ph + r*dh][ox*sw - pw + s*dw] (0 outside).
void Im2Col(const ConvGeometry& G, const float* x_sample, int64_t c0, float* col);
// The inverse gather: each input element sums the column entries it fed,
// one thread per element, so the result does not depend on scheduling.
void Col2Im(const ConvGeometry& G, const float* col, int64_t c0, float* dx_sample);
// dW[k][c][r][s] += dy * x with atomicAdd, one thread per (n, k, oy, ox):
// the order of additions changes from run to run.
void AtomicBackwardWeights(const ConvGeometry& G, int64_t mb, const float* x, const float* dy, float* dw);
// Zeroes n floats.
void Zero(float* p, int64_t n);

}  // namespace bc::cuda_native
