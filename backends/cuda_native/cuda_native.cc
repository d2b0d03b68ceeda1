// The native CUDA engine: what PyTorch falls back to when cudnn.enabled is
// false. conv2d fp32 NCHW in three directions as im2col + cuBLAS GEMM
// ("im2col_gemm", deterministic: a gather col2im, and backward-weights
// accumulated over the batch by sequential GEMMs), plus "atomic" for
// backward-weights: one thread per output pixel adding into the weight
// gradient with atomicAdd, the GPU's own nondeterministic path and positive
// control. GEMMs follow cuda.matmul.allow_tf32, and under
// use_deterministic_algorithms need CUBLAS_WORKSPACE_CONFIG as every cuBLAS
// GEMM of PyTorch does (backends/cublas/workspace_config.h). It makes no
// cuDNN call.
#include "backends/engine.h"
#include "backends/registry.h"

#include "backends/cublas/workspace_config.h"
#include "backends/cuda/cublas_handle.h"
#include "backends/cuda/device.h"
#include "backends/cuda_native/kernels.h"
#include "harness/tf32.h"

namespace bc {
namespace {

// cuda_native is available where cuBLAS is: it is CUDA kernels plus cuBLAS.
Availability NativeAvailability() {
  Availability a = cuda::SharedCublas().availability;
  a.engine = "cuda_native";
  return a;
}

bool Supported(const Problem& p) {
  const auto* c = std::get_if<Conv2dProblem>(&p);
  return c != nullptr && IsPlainF32(p);
}

class NativePrepared final : public PreparedOp {
 public:
  NativePrepared(const Conv2dProblem& p, Buffers& b, Algorithm a, bool allow_tf32, std::string warning)
      : p_(p), b_(b), algorithm_(std::move(a)), allow_tf32_(allow_tf32), warning_(std::move(warning)) {
    G_ = {p.ic, p.ih, p.iw, p.oc, p.kh, p.kw, p.sh, p.sw, p.ph, p.pw, p.dh, p.dw, p.g, p.oh(), p.ow()};
  }

  Status Init() {
    BC_RETURN_IF_ERROR(cuda::Upload(b_["src"], {p_.mb, p_.ic, p_.ih, p_.iw}, x_));
    BC_RETURN_IF_ERROR(cuda::Upload(b_["wei"], {p_.oc, p_.ic / p_.g, p_.kh, p_.kw}, w_));
    BC_RETURN_IF_ERROR(cuda::Upload(b_["dst"], {p_.mb, p_.oc, p_.oh(), p_.ow()}, y_));
    return col_.Allocate(static_cast<size_t>(G_.patch() * G_.pixels()) * sizeof(float));
  }

  Status Execute() override {
    BC_ASSIGN_OR_RETURN(cublasHandle_t h, cuda::CublasForGemm(allow_tf32_));
    return cuda::TimedOnDevice(timer_, device_ns_, [&]() -> Status {
      float* x = static_cast<float*>(x_.get());
      float* w = static_cast<float*>(w_.get());
      float* y = static_cast<float*>(y_.get());
      float* col = static_cast<float*>(col_.get());
      const int P = static_cast<int>(G_.pixels()), K = static_cast<int>(G_.patch()), O = static_cast<int>(G_.ocg());
      const float one = 1, zero = 0;
      if (p_.direction == Direction::kBackwardWeights && algorithm_.name == "atomic") {
        cuda_native::Zero(w, p_.wei_elems());
        cuda_native::AtomicBackwardWeights(G_, p_.mb, x, y, w);
      } else {
        if (p_.direction == Direction::kBackwardWeights) cuda_native::Zero(w, p_.wei_elems());
        // Row-major matrices seen column-major: see kernels.h for the shapes.
        for (int64_t n = 0; n < p_.mb; ++n) {
          for (int64_t g = 0; g < p_.g; ++g) {
            float* xs = x + n * p_.ic * p_.ih * p_.iw;
            float* wg = w + g * G_.ocg() * G_.patch();
            float* yg = y + (n * p_.oc + g * G_.ocg()) * G_.pixels();
            const int64_t c0 = g * G_.icg();
            switch (p_.direction) {
              case Direction::kForward:  // Y_g = W_g col
                cuda_native::Im2Col(G_, xs, c0, col);
                BC_CUBLAS(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, P, O, K, &one, col, P, wg, K, &zero, yg, P));
                break;
              case Direction::kBackwardData:  // col = W_g^T dY_g, then gather into dX
                BC_CUBLAS(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_T, P, K, O, &one, yg, P, wg, K, &zero, col, P));
                cuda_native::Col2Im(G_, col, c0, xs);
                break;
              case Direction::kBackwardWeights:  // dW_g += dY_g col^T, sample after sample
                cuda_native::Im2Col(G_, xs, c0, col);
                BC_CUBLAS(cublasSgemm(h, CUBLAS_OP_T, CUBLAS_OP_N, K, O, P, &one, col, P, yg, P, &one, wg, K));
                break;
            }
          }
        }
      }
      BC_CUDA(cudaGetLastError());
      return Status::Ok();
    });
  }

  Status Fetch() override {
    switch (p_.direction) {
      case Direction::kForward: return cuda::Download(y_, {p_.mb, p_.oc, p_.oh(), p_.ow()}, b_["dst"]);
      case Direction::kBackwardData: return cuda::Download(x_, {p_.mb, p_.ic, p_.ih, p_.iw}, b_["src"]);
      case Direction::kBackwardWeights: return cuda::Download(w_, {p_.oc, p_.ic / p_.g, p_.kh, p_.kw}, b_["wei"]);
    }
    return Status::Ok();
  }

  std::string implementation() const override {
    return "cuda_native:" + algorithm_.name + (warning_.empty() ? "" : " [warning: " + warning_ + "]");
  }
  const Algorithm& algorithm() const override { return algorithm_; }
  std::optional<double> DeviceTimeNs() const override { return device_ns_; }

 private:
  Conv2dProblem p_;
  Buffers& b_;
  Algorithm algorithm_;
  bool allow_tf32_;  // cuda.matmul.allow_tf32 of the case
  std::string warning_;  // the workspace-config warning under warn_only
  cuda_native::ConvGeometry G_{};
  cuda::DeviceBuffer x_, w_, y_, col_;
  cuda::EventTimer timer_;
  std::optional<double> device_ns_;
};

}  // namespace

class CudaNativeEngine final : public Engine {
 public:
  CudaNativeEngine() : Engine("cuda_native", Device::kCuda) {}
  Availability availability() const override;
  Result<std::vector<Algorithm>> Candidates(const Problem& p, const BackendFlags& flags) const override;
  Result<std::unique_ptr<PreparedOp>> Prepare(const Problem& p, const Algorithm& algorithm, Buffers& buffers,
                                              const BackendFlags& flags) const override;
  // Its GEMMs are cuBLAS's, under cuda.matmul.allow_tf32.
  ComputeType compute_type(const Problem& p, const BackendFlags& flags) const override {
    return CublasComputeType(p, flags);
  }
};

const Engine& CudaNativeEngineInstance() {
  static const CudaNativeEngine kEngine;
  return kEngine;
}

Availability CudaNativeEngine::availability() const { return NativeAvailability(); }

Result<std::vector<Algorithm>> CudaNativeEngine::Candidates(const Problem& p, const BackendFlags&) const {
  if (cuda::SharedCublas().handle == nullptr || !Supported(p)) return std::vector<Algorithm>{};
  std::vector<Algorithm> out = {{"im2col_gemm", Determinism::kDeterministic, 0}};
  if (std::get<Conv2dProblem>(p).direction == Direction::kBackwardWeights) {
    out.push_back({"atomic", Determinism::kNondeterministic, 0});
  }
  return out;
}

Result<std::unique_ptr<PreparedOp>> CudaNativeEngine::Prepare(const Problem& p, const Algorithm& algorithm,
                                                              Buffers& buffers, const BackendFlags& flags) const {
  if (cuda::SharedCublas().handle == nullptr) return NotAvailable(NativeAvailability());
  if (!Supported(p)) return Status(StatusCode::kUnimplemented, "cuda_native has no implementation of " + FormatProblem(p));
  // Its GEMMs are cuBLAS's: PyTorch's at::cuda::blas checks the workspace
  // configuration before each, as for matmul.
  const cublas::ConfigCheck check = cublas::CheckWorkspaceConfigHere(flags, cuda::SharedCublas().cuda_version);
  if (check.error) return Status(StatusCode::kNotDeterministic, check.message);
  auto prepared = std::make_unique<NativePrepared>(std::get<Conv2dProblem>(p), buffers, algorithm,
                                                   CublasTf32(flags), check.message);
  BC_RETURN_IF_ERROR(prepared->Init());
  return std::unique_ptr<PreparedOp>(std::move(prepared));
}

}  // namespace bc
