// Whether PyTorch runs an fp32 convolution through cuDNN, or an fp32 matmul
// through cuBLAS, with TF32: the model's rule, by the version under test.
//
// Before the fp32_precision settings (PyTorch 1.x to 2.8) the allow_tf32 flags
// decide alone. With them (at::Context::float32Precision), the allow_tf32
// setters write the precisions (cudnn.allow_tf32: cuda/conv and cuda/rnn to
// "tf32" or "none"; cuda.matmul.allow_tf32: cuda/matmul to "tf32" or "ieee"),
// the case's own fp32_precision settings are set after them, and a precision
// of "none" inherits from cudnn.fp32_precision (cuda/all), then from
// fp32_precision (generic); "bf16" means nothing to CUDA. So a global
// fp32_precision="tf32" keeps TF32 on for convolutions even with
// cudnn.allow_tf32=False.
#pragma once

#include <string>

#include "harness/flags.h"

namespace bc {

enum class Tf32Rules { kAllowTf32, kFp32Precision };
enum class CudaOp { kConv, kMatmul };

struct Tf32Choice {
  bool tf32 = false;
  std::string why;  // the chain of settings the answer came through
};

Tf32Choice DecideCudaTf32(const BackendFlags& f, CudaOp op, Tf32Rules rules);

// The rules of the torch under test: its libtorch's headers, read at
// configure time; the allow_tf32 rules where no torch was found.
Tf32Rules TorchTf32Rules();

inline bool CudnnConvTf32(const BackendFlags& f) { return DecideCudaTf32(f, CudaOp::kConv, TorchTf32Rules()).tf32; }
inline bool CublasTf32(const BackendFlags& f) { return DecideCudaTf32(f, CudaOp::kMatmul, TorchTf32Rules()).tf32; }

}  // namespace bc
