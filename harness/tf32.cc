#include "harness/tf32.h"

namespace bc {

Tf32Choice DecideCudaTf32(const BackendFlags& f, CudaOp op, Tf32Rules rules) {
  const bool conv = op == CudaOp::kConv;
  const std::string legacy_name = conv ? "cudnn.allow_tf32" : "cuda.matmul.allow_tf32";
  const bool legacy = conv ? f.cudnn_allow_tf32 : f.cuda_matmul_allow_tf32;
  if (rules == Tf32Rules::kAllowTf32) {
    return {legacy, legacy_name + "=" + (legacy ? "true" : "false") + " (no fp32_precision settings in this PyTorch)"};
  }
  static const BackendFlags defaults;
  // The op's own precision: what the allow_tf32 setter wrote, unless the
  // case set the op's fp32_precision itself.
  const std::string BackendFlags::*own = conv ? &BackendFlags::cudnn_conv_fp32_precision
                                              : &BackendFlags::cuda_matmul_fp32_precision;
  const std::string own_name = conv ? "cudnn.conv.fp32_precision" : "cuda.matmul.fp32_precision";
  std::string value = legacy ? "tf32" : (conv ? "none" : "ieee");
  std::string why = own_name + " " + value + " (" + legacy_name + "=" + (legacy ? "true" : "false") + ")";
  if (f.*own != defaults.*own) {
    value = f.*own;
    why = own_name + " " + value;
  }
  if (value == "none") {
    value = f.cudnn_fp32_precision;
    why += " -> cudnn.fp32_precision " + value;
  }
  if (value == "none") {
    value = f.fp32_precision;
    why += " -> fp32_precision " + value;
  }
  if (value == "bf16") why += " (CUDA has no bf16: none)";
  return {value == "tf32", why};
}

Tf32Rules TorchTf32Rules() {
#if defined(BC_TORCH_FP32_API) && BC_TORCH_FP32_API > 0
  return Tf32Rules::kFp32Precision;
#else
  return Tf32Rules::kAllowTf32;
#endif
}

}  // namespace bc
