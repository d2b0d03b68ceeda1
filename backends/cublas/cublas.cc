// The cuBLAS engine: matmul (C = A B, row-major) through cublasGemmEx, fp32
// and fp16. For fp32 the compute type follows cuda.matmul.allow_tf32
// (CUBLAS_COMPUTE_32F_FAST_TF32 when on), and the handle's math mode is set
// before every GEMM (cuda::CublasForGemm), as PyTorch sets it.
// cuBLAS is bitwise reproducible on one GPU architecture and toolkit for a
// single stream; under use_deterministic_algorithms PyTorch also demands
// CUBLAS_WORKSPACE_CONFIG=:4096:8 or :16:8 (workspace_config.h): Prepare
// fails with PyTorch's error, or runs with its warning under warn_only.
#include "backends/engine.h"
#include "backends/registry.h"

#include "backends/cublas/workspace_config.h"
#include "backends/cuda/cublas_handle.h"
#include "backends/cuda/device.h"
#include "harness/tf32.h"

namespace bc {
namespace {

const cuda::CublasState& Handle() { return cuda::SharedCublas(); }

class CublasPrepared final : public PreparedOp {
 public:
  CublasPrepared(const MatmulProblem& p, Buffers& b, Algorithm a, std::string warning, bool allow_tf32)
      : p_(p), b_(b), algorithm_(std::move(a)), warning_(std::move(warning)), allow_tf32_(allow_tf32) {}

  Status Init() {
    // Row-major A [m,k], B [k,n], C [m,n] as 2-d tensors: (1, 1, rows, cols).
    BC_RETURN_IF_ERROR(cuda::Upload(b_["src"], {1, 1, p_.m, p_.k, Layout::kNchw, p_.dtype}, a_));
    BC_RETURN_IF_ERROR(cuda::Upload(b_["wei"], {1, 1, p_.k, p_.n, Layout::kNchw, p_.dtype}, bm_));
    BC_RETURN_IF_ERROR(cuda::Upload(b_["dst"], {1, 1, p_.m, p_.n, Layout::kNchw, p_.dtype}, c_));
    return Status::Ok();
  }

  Status Execute() override {
    const float alpha = 1, beta = 0;
    const cudaDataType_t t = p_.dtype == DataType::kF16 ? CUDA_R_16F : CUDA_R_32F;
    BC_ASSIGN_OR_RETURN(cublasHandle_t h, cuda::CublasForGemm(allow_tf32_));
    // Column-major cuBLAS computes C^T = B^T A^T, which is row-major C = A B.
    return cuda::TimedOnDevice(timer_, device_ns_, [&]() -> Status {
      BC_CUBLAS(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, static_cast<int>(p_.n),
                             static_cast<int>(p_.m), static_cast<int>(p_.k), &alpha, bm_.get(), t,
                             static_cast<int>(p_.n), a_.get(), t, static_cast<int>(p_.k), &beta, c_.get(), t,
                             static_cast<int>(p_.n), ComputeType(), CUBLAS_GEMM_DEFAULT));
      return Status::Ok();
    });
  }

  Status Fetch() override { return cuda::Download(c_, {1, 1, p_.m, p_.n, Layout::kNchw, p_.dtype}, b_["dst"]); }
  std::string implementation() const override {
    return std::string("cublasGemmEx ") +
           (ComputeType() == CUBLAS_COMPUTE_32F_FAST_TF32 ? "CUBLAS_COMPUTE_32F_FAST_TF32" : "CUBLAS_COMPUTE_32F") +
           (warning_.empty() ? "" : " [warning: " + warning_ + "]");
  }
  const Algorithm& algorithm() const override { return algorithm_; }
  std::optional<double> DeviceTimeNs() const override { return device_ns_; }

 private:
  cublasComputeType_t ComputeType() const {
    return p_.dtype == DataType::kF32 && allow_tf32_ ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
  }
  MatmulProblem p_;
  Buffers& b_;
  Algorithm algorithm_;
  std::string warning_;
  bool allow_tf32_;  // cuda.matmul.allow_tf32 of the case
  cuda::DeviceBuffer a_, bm_, c_;
  cuda::EventTimer timer_;
  std::optional<double> device_ns_;
};

}  // namespace

class CublasEngine final : public Engine {
 public:
  CublasEngine() : Engine("cublas", Device::kCuda) {}
  Availability availability() const override;
  Result<std::vector<Algorithm>> Candidates(const Problem& p, const BackendFlags& flags) const override;
  Result<std::unique_ptr<PreparedOp>> Prepare(const Problem& p, const Algorithm& algorithm, Buffers& buffers,
                                              const BackendFlags& flags) const override;
  // Its GEMMs are cuBLAS's, under cuda.matmul.allow_tf32.
  ComputeType compute_type(const Problem& p, const BackendFlags& flags) const override {
    return CublasComputeType(p, flags);
  }
};

const Engine& CublasEngineInstance() {
  static const CublasEngine kEngine;
  return kEngine;
}

Availability CublasEngine::availability() const { return Handle().availability; }

Result<std::vector<Algorithm>> CublasEngine::Candidates(const Problem& p, const BackendFlags&) const {
  if (Handle().handle == nullptr || !std::holds_alternative<MatmulProblem>(p)) return std::vector<Algorithm>{};
  return std::vector<Algorithm>{{"gemm_ex", Determinism::kDeterministic, 0}};
}

Result<std::unique_ptr<PreparedOp>> CublasEngine::Prepare(const Problem& p, const Algorithm& algorithm,
                                                          Buffers& buffers, const BackendFlags& flags) const {
  const cuda::CublasState& hs = Handle();
  if (hs.handle == nullptr) return NotAvailable(hs.availability);
  if (!std::holds_alternative<MatmulProblem>(p)) {
    return Status(StatusCode::kUnimplemented, "cublas has no implementation of " + FormatProblem(p));
  }
  const cublas::ConfigCheck check = cublas::CheckWorkspaceConfigHere(flags, hs.cuda_version);
  if (check.error) return Status(StatusCode::kNotDeterministic, check.message);
  auto prepared = std::make_unique<CublasPrepared>(std::get<MatmulProblem>(p), buffers, algorithm, check.message,
                                                   CublasTf32(flags));
  BC_RETURN_IF_ERROR(prepared->Init());
  return std::unique_ptr<PreparedOp>(std::move(prepared));
}

}  // namespace bc
