#include "backends/cudnn/cudnn.h"

#include <cuda_runtime.h>
#include <cudnn.h>

#include <array>
#include <mutex>

namespace bc {
namespace {

Status FromCuda(cudaError_t e, const char* call) {
  return Status(StatusCode::kUnavailable, std::string(call) + " returned " + std::to_string(static_cast<int>(e)) +
                                              " (" + cudaGetErrorName(e) + ": " + cudaGetErrorString(e) + ")");
}
Status FromCudnn(cudnnStatus_t s, const char* call) {
  return Status(StatusCode::kInternal, std::string(call) + " returned " + std::to_string(static_cast<int>(s)) +
                                           " (" + cudnnGetErrorString(s) + ")");
}
#define BC_CUDA(call)                                                   \
  do {                                                                  \
    const cudaError_t bc_e_ = (call);                                   \
    if (bc_e_ != cudaSuccess) return FromCuda(bc_e_, #call);            \
  } while (0)
#define BC_CUDNN(call)                                                  \
  do {                                                                  \
    const cudnnStatus_t bc_s_ = (call);                                 \
    if (bc_s_ != CUDNN_STATUS_SUCCESS) return FromCudnn(bc_s_, #call);  \
  } while (0)

// The process's cuDNN handle, created once; null with the reason when the
// machine cannot run cuDNN.
struct HandleState {
  cudnnHandle_t handle = nullptr;
  Availability availability;
};

const HandleState& Handle() {
  static const HandleState state = [] {
    HandleState s;
    Availability& a = s.availability;
    a.engine = "cudnn";
    a.built = true;
    const size_t v = cudnnGetVersion();
    int runtime = 0;
    (void)cudaRuntimeGetVersion(&runtime);
    a.version = "cuDNN " + std::to_string(v / 10000) + "." + std::to_string(v / 100 % 100) + "." +
                std::to_string(v % 100) + ", CUDA runtime " + std::to_string(runtime / 1000) + "." +
                std::to_string(runtime % 1000 / 10);
    int count = 0;
    const cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess) {
      a.reason = FromCuda(e, "cudaGetDeviceCount").message();
      return s;
    }
    if (count == 0) {
      a.reason = "cudaGetDeviceCount found no CUDA device";
      return s;
    }
    const cudnnStatus_t cs = cudnnCreate(&s.handle);
    if (cs != CUDNN_STATUS_SUCCESS) {
      s.handle = nullptr;
      a.reason = FromCudnn(cs, "cudnnCreate").message();
      return s;
    }
    cudaDeviceProp prop{};
    (void)cudaGetDeviceProperties(&prop, 0);
    a.available = true;
    a.reason = "cuDNN handle created on " + std::string(prop.name) + " (sm_" + std::to_string(prop.major) +
               std::to_string(prop.minor) + ")";
    return s;
  }();
  return state;
}

constexpr std::array<const char*, 8> kFwdNames = {"implicit_gemm", "implicit_precomp_gemm", "gemm", "direct",
                                                  "fft", "fft_tiling", "winograd", "winograd_nonfused"};
constexpr std::array<const char*, 7> kBwdFilterNames = {"algo_0", "algo_1", "fft", "algo_3",
                                                        "winograd", "winograd_nonfused", "fft_tiling"};

// RAII for the descriptors of one problem.
struct Descriptors {
  cudnnTensorDescriptor_t x = nullptr, y = nullptr;
  cudnnFilterDescriptor_t w = nullptr;
  cudnnConvolutionDescriptor_t conv = nullptr;
  ~Descriptors() {
    if (x) cudnnDestroyTensorDescriptor(x);
    if (y) cudnnDestroyTensorDescriptor(y);
    if (w) cudnnDestroyFilterDescriptor(w);
    if (conv) cudnnDestroyConvolutionDescriptor(conv);
  }
  Status Init(const Conv2dProblem& p, bool allow_tf32) {
    BC_CUDNN(cudnnCreateTensorDescriptor(&x));
    BC_CUDNN(cudnnCreateTensorDescriptor(&y));
    BC_CUDNN(cudnnCreateFilterDescriptor(&w));
    BC_CUDNN(cudnnCreateConvolutionDescriptor(&conv));
    const auto i = [](int64_t v) { return static_cast<int>(v); };
    BC_CUDNN(cudnnSetTensor4dDescriptor(x, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, i(p.mb), i(p.ic), i(p.ih), i(p.iw)));
    BC_CUDNN(cudnnSetTensor4dDescriptor(y, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, i(p.mb), i(p.oc), i(p.oh()), i(p.ow())));
    BC_CUDNN(cudnnSetFilter4dDescriptor(w, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, i(p.oc), i(p.ic / p.g), i(p.kh), i(p.kw)));
    BC_CUDNN(cudnnSetConvolution2dDescriptor(conv, i(p.ph), i(p.pw), i(p.sh), i(p.sw), i(p.dh), i(p.dw),
                                             CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
    BC_CUDNN(cudnnSetConvolutionGroupCount(conv, i(p.g)));
    BC_CUDNN(cudnnSetConvolutionMathType(conv, allow_tf32 ? CUDNN_DEFAULT_MATH : CUDNN_FMA_MATH));
    return Status::Ok();
  }
};

struct CudnnCandidate {
  int algo = 0;
  Algorithm info;
};

// The candidates of one cudnnGet*Algorithm_v7 answer, in its order, each with
// the determinism field cuDNN reports for it.
template <typename Perf, size_t N>
std::vector<CudnnCandidate> ToCandidates(const Perf* perf, int returned, const std::array<const char*, N>& names) {
  std::vector<CudnnCandidate> out;
  for (int k = 0; k < returned; ++k) {
    const int algo = static_cast<int>(perf[k].algo);
    if (perf[k].status != CUDNN_STATUS_SUCCESS || algo < 0 || algo >= static_cast<int>(N)) continue;
    out.push_back({algo, {names[algo],
                          perf[k].determinism == CUDNN_DETERMINISTIC ? Determinism::kDeterministic
                                                                     : Determinism::kNondeterministic,
                          static_cast<int64_t>(perf[k].memory)}});
  }
  return out;
}

Result<std::vector<CudnnCandidate>> Heuristics(cudnnHandle_t h, const Descriptors& d, const Conv2dProblem& p) {
  int returned = 0;
  if (p.direction == Direction::kForward) {
    std::array<cudnnConvolutionFwdAlgoPerf_t, CUDNN_CONVOLUTION_FWD_ALGO_COUNT> perf{};
    BC_CUDNN(cudnnGetConvolutionForwardAlgorithm_v7(h, d.x, d.w, d.conv, d.y, static_cast<int>(perf.size()),
                                                    &returned, perf.data()));
    return ToCandidates(perf.data(), returned, kFwdNames);
  }
  std::array<cudnnConvolutionBwdFilterAlgoPerf_t, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT> perf{};
  BC_CUDNN(cudnnGetConvolutionBackwardFilterAlgorithm_v7(h, d.x, d.y, d.conv, d.w, static_cast<int>(perf.size()),
                                                         &returned, perf.data()));
  return ToCandidates(perf.data(), returned, kBwdFilterNames);
}

class DeviceBuffer {
 public:
  ~DeviceBuffer() {
    if (ptr_) cudaFree(ptr_);
  }
  Status Allocate(size_t bytes) {
    if (bytes == 0) return Status::Ok();
    BC_CUDA(cudaMalloc(&ptr_, bytes));
    return Status::Ok();
  }
  void* get() const { return ptr_; }

 private:
  void* ptr_ = nullptr;
};

class CudnnPrepared final : public PreparedOp {
 public:
  CudnnPrepared(const Conv2dProblem& p, Buffers& b, CudnnCandidate c) : p_(p), b_(b), c_(std::move(c)) {}

  Status Init(cudnnHandle_t h) {
    h_ = h;
    BC_RETURN_IF_ERROR(d_.Init(p_, CurrentFlags().cudnn_allow_tf32));
    BC_RETURN_IF_ERROR(src_.Allocate(b_.src.size() * sizeof(float)));
    BC_RETURN_IF_ERROR(wei_.Allocate(b_.wei.size() * sizeof(float)));
    BC_RETURN_IF_ERROR(dst_.Allocate(b_.dst.size() * sizeof(float)));
    size_t ws = 0;
    if (p_.direction == Direction::kForward) {
      BC_CUDNN(cudnnGetConvolutionForwardWorkspaceSize(h_, d_.x, d_.w, d_.conv, d_.y,
                                                       static_cast<cudnnConvolutionFwdAlgo_t>(c_.algo), &ws));
      BC_CUDA(cudaMemcpy(wei_.get(), b_.wei.data(), b_.wei.size() * sizeof(float), cudaMemcpyHostToDevice));
    } else {
      BC_CUDNN(cudnnGetConvolutionBackwardFilterWorkspaceSize(
          h_, d_.x, d_.y, d_.conv, d_.w, static_cast<cudnnConvolutionBwdFilterAlgo_t>(c_.algo), &ws));
      BC_CUDA(cudaMemcpy(dst_.get(), b_.dst.data(), b_.dst.size() * sizeof(float), cudaMemcpyHostToDevice));
    }
    BC_CUDA(cudaMemcpy(src_.get(), b_.src.data(), b_.src.size() * sizeof(float), cudaMemcpyHostToDevice));
    ws_bytes_ = ws;
    BC_RETURN_IF_ERROR(ws_.Allocate(ws));
    return Status::Ok();
  }

  Status Execute() override {
    const float alpha = 1, beta = 0;
    if (p_.direction == Direction::kForward) {
      BC_CUDNN(cudnnConvolutionForward(h_, &alpha, d_.x, src_.get(), d_.w, wei_.get(), d_.conv,
                                       static_cast<cudnnConvolutionFwdAlgo_t>(c_.algo), ws_.get(), ws_bytes_,
                                       &beta, d_.y, dst_.get()));
    } else {
      BC_CUDNN(cudnnConvolutionBackwardFilter(h_, &alpha, d_.x, src_.get(), d_.y, dst_.get(), d_.conv,
                                              static_cast<cudnnConvolutionBwdFilterAlgo_t>(c_.algo), ws_.get(),
                                              ws_bytes_, &beta, d_.w, wei_.get()));
    }
    BC_CUDA(cudaDeviceSynchronize());
    return Status::Ok();
  }

  Status Fetch() override {
    std::vector<float>& out = b_.Output(p_);
    void* from = p_.direction == Direction::kForward ? dst_.get() : wei_.get();
    BC_CUDA(cudaMemcpy(out.data(), from, out.size() * sizeof(float), cudaMemcpyDeviceToHost));
    return Status::Ok();
  }

  std::string implementation() const override {
    return std::string(p_.direction == Direction::kForward ? "CUDNN_CONVOLUTION_FWD_ALGO_"
                                                            : "CUDNN_CONVOLUTION_BWD_FILTER_ALGO_") +
           c_.info.name;
  }
  const Algorithm& algorithm() const override { return c_.info; }

 private:
  Conv2dProblem p_;
  Buffers& b_;
  CudnnCandidate c_;
  cudnnHandle_t h_ = nullptr;
  Descriptors d_;
  DeviceBuffer src_, wei_, dst_, ws_;
  size_t ws_bytes_ = 0;
};

}  // namespace

const CudnnEngine& CudnnEngine::Instance() {
  static const CudnnEngine kEngine;
  return kEngine;
}

Availability CudnnEngine::availability() const { return Handle().availability; }

namespace {
// The conv2d directions this engine implements so far.
const Conv2dProblem* Supported(const Problem& p) {
  const auto* c = std::get_if<Conv2dProblem>(&p);
  return c != nullptr && c->direction != Direction::kBackwardData ? c : nullptr;
}
}  // namespace

std::optional<std::string> CudnnEngine::PinnedDeterministic(const Problem& p) const {
  const Conv2dProblem* c = Supported(p);
  if (c == nullptr) return std::nullopt;
  return c->direction == Direction::kForward ? "implicit_precomp_gemm" : "algo_1";  // Conv_v7.cpp
}

std::vector<Algorithm> CudnnEngine::algorithms(const Problem& problem) const {
  const HandleState& hs = Handle();
  const Conv2dProblem* conv = Supported(problem);
  if (hs.handle == nullptr || conv == nullptr) return {};
  const Conv2dProblem& p = *conv;
  Descriptors d;
  if (!d.Init(p, CurrentFlags().cudnn_allow_tf32).ok()) return {};
  Result<std::vector<CudnnCandidate>> c = Heuristics(hs.handle, d, p);
  std::vector<Algorithm> out;
  if (c.ok()) {
    for (const CudnnCandidate& k : c.value()) out.push_back(k.info);
  }
  return out;
}

Result<std::unique_ptr<PreparedOp>> CudnnEngine::Prepare(const Problem& problem, const std::string& algorithm,
                                                         Buffers& buffers) const {
  const HandleState& hs = Handle();
  if (hs.handle == nullptr) return Status(StatusCode::kUnavailable, hs.availability.reason);
  const Conv2dProblem* conv = Supported(problem);
  if (conv == nullptr) {
    return Status(StatusCode::kUnimplemented, "cudnn has no implementation of " + FormatProblem(problem));
  }
  const Conv2dProblem& p = *conv;
  Descriptors d;
  BC_RETURN_IF_ERROR(d.Init(p, CurrentFlags().cudnn_allow_tf32));
  Result<std::vector<CudnnCandidate>> candidates = Heuristics(hs.handle, d, p);
  if (!candidates.ok()) return candidates.status();
  const std::string& wanted = algorithm;
  for (const CudnnCandidate& c : candidates.value()) {
    if (!wanted.empty() && c.info.name != wanted) continue;
    auto prepared = std::make_unique<CudnnPrepared>(p, buffers, c);
    BC_RETURN_IF_ERROR(prepared->Init(hs.handle));
    return std::unique_ptr<PreparedOp>(std::move(prepared));
  }
  return Status(StatusCode::kUnimplemented, "cuDNN offers no algorithm '" + (wanted.empty() ? "(any)" : wanted) +
                                                "' for " + p.Format());
}

}  // namespace bc
