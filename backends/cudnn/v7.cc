// The legacy cuDNN API as PyTorch's Conv_v7.cpp uses it: candidates from
// cudnnGet*Algorithm_v7 in its order, a search with cudnnFind*AlgorithmEx on
// the step's inputs, and execution with the algorithm's workspace.
#include <algorithm>
#include <array>
#include <functional>

#include "backends/cudnn/paths.h"
#include "selection/cudnn_policy.h"
#include "harness/tf32.h"

namespace bc::cudnn {
namespace {

cudnnDataType_t CudnnType(DataType t) { return t == DataType::kF16 ? CUDNN_DATA_HALF : CUDNN_DATA_FLOAT; }
cudnnTensorFormat_t CudnnFormat(Layout l) { return l == Layout::kNhwc ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW; }
cudnnMathType_t CudnnMath(MathType m) {
  switch (m) {
    case MathType::kTensorOp: return CUDNN_TENSOR_OP_MATH;
    case MathType::kTensorOpAllowConversion: return CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION;
    case MathType::kFma: return CUDNN_FMA_MATH;
    case MathType::kDefault: break;
  }
  return CUDNN_DEFAULT_MATH;
}
MathType FromCudnnMath(cudnnMathType_t m) {
  switch (m) {
    case CUDNN_TENSOR_OP_MATH: return MathType::kTensorOp;
    case CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION: return MathType::kTensorOpAllowConversion;
    case CUDNN_FMA_MATH: return MathType::kFma;
    default: break;
  }
  return MathType::kDefault;
}

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
  // `math`: the descriptor's math type (CudnnMathType for the search, the
  // chosen result's own for execution, as Conv_v7.cpp sets perf.mathType).
  Status Init(const Conv2dProblem& p, MathType math) {
    BC_CUDNN(cudnnCreateTensorDescriptor(&x));
    BC_CUDNN(cudnnCreateTensorDescriptor(&y));
    BC_CUDNN(cudnnCreateFilterDescriptor(&w));
    BC_CUDNN(cudnnCreateConvolutionDescriptor(&conv));
    const auto i = [](int64_t v) { return static_cast<int>(v); };
    const cudnnDataType_t dt = CudnnType(p.dtype);
    const cudnnTensorFormat_t fmt = CudnnFormat(p.layout);
    BC_CUDNN(cudnnSetTensor4dDescriptor(x, fmt, dt, i(p.mb), i(p.ic), i(p.ih), i(p.iw)));
    BC_CUDNN(cudnnSetTensor4dDescriptor(y, fmt, dt, i(p.mb), i(p.oc), i(p.oh()), i(p.ow())));
    BC_CUDNN(cudnnSetFilter4dDescriptor(w, dt, fmt, i(p.oc), i(p.ic / p.g), i(p.kh), i(p.kw)));
    // fp16 computes in fp32, as PyTorch configures it.
    BC_CUDNN(cudnnSetConvolution2dDescriptor(conv, i(p.ph), i(p.pw), i(p.sh), i(p.sw), i(p.dh), i(p.dw),
                                             CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
    BC_CUDNN(cudnnSetConvolutionGroupCount(conv, i(p.g)));
    BC_CUDNN(cudnnSetConvolutionMathType(conv, CudnnMath(math)));
    return Status::Ok();
  }
};

// Each result named by its algorithm and, where it is not the descriptor's,
// its math type (PerfName), with the workspace it reports (perf.memory).
template <typename Perf, size_t N>
std::vector<PerfRecord> ToRecords(const Conv2dProblem& p, bool allow_tf32, const std::array<Perf, N>& perf,
                                  int returned, bool timed) {
  std::vector<PerfRecord> out;
  for (int k = 0; k < returned; ++k) {
    const Perf& r = perf[k];
    out.push_back({PerfName(p.direction, static_cast<int>(r.algo), FromCudnnMath(r.mathType), p.dtype, allow_tf32),
                   r.status == CUDNN_STATUS_SUCCESS, timed ? static_cast<double>(r.time) : -1.0,
                   static_cast<int64_t>(r.memory), r.determinism == CUDNN_DETERMINISTIC});
  }
  return out;
}

Result<std::vector<PerfRecord>> Heuristics(cudnnHandle_t h, const Descriptors& d, const Conv2dProblem& p,
                                           bool allow_tf32) {
  int n = 0;
  const int asked = static_cast<int>(SearchedAlgos(p.direction).size());
  switch (p.direction) {
    case Direction::kForward: {
      std::array<cudnnConvolutionFwdAlgoPerf_t, CUDNN_CONVOLUTION_FWD_ALGO_COUNT> perf{};
      BC_CUDNN(cudnnGetConvolutionForwardAlgorithm_v7(h, d.x, d.w, d.conv, d.y, asked, &n, perf.data()));
      return ToRecords(p, allow_tf32, perf, n, false);
    }
    case Direction::kBackwardData: {
      std::array<cudnnConvolutionBwdDataAlgoPerf_t, CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT> perf{};
      BC_CUDNN(cudnnGetConvolutionBackwardDataAlgorithm_v7(h, d.w, d.y, d.conv, d.x, asked, &n, perf.data()));
      return ToRecords(p, allow_tf32, perf, n, false);
    }
    case Direction::kBackwardWeights: {
      std::array<cudnnConvolutionBwdFilterAlgoPerf_t, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT> perf{};
      BC_CUDNN(cudnnGetConvolutionBackwardFilterAlgorithm_v7(h, d.x, d.y, d.conv, d.w, asked, &n, perf.data()));
      return ToRecords(p, allow_tf32, perf, n, false);
    }
  }
  return Status(StatusCode::kInternal, "unknown direction");
}

// cudnnGetConvolution*WorkspaceSize of one algorithm (PyTorch's getWorkspaceSize).
Result<size_t> WorkspaceSize(cudnnHandle_t h, const Descriptors& d, const Conv2dProblem& p, int algo) {
  size_t bytes = 0;
  switch (p.direction) {
    case Direction::kForward:
      BC_CUDNN(cudnnGetConvolutionForwardWorkspaceSize(h, d.x, d.w, d.conv, d.y,
                                                       static_cast<cudnnConvolutionFwdAlgo_t>(algo), &bytes));
      break;
    case Direction::kBackwardData:
      BC_CUDNN(cudnnGetConvolutionBackwardDataWorkspaceSize(h, d.w, d.y, d.conv, d.x,
                                                            static_cast<cudnnConvolutionBwdDataAlgo_t>(algo), &bytes));
      break;
    case Direction::kBackwardWeights:
      BC_CUDNN(cudnnGetConvolutionBackwardFilterWorkspaceSize(
          h, d.x, d.y, d.conv, d.w, static_cast<cudnnConvolutionBwdFilterAlgo_t>(algo), &bytes));
      break;
  }
  return bytes;
}

Status Run(cudnnHandle_t h, const Descriptors& d, const Conv2dProblem& p, int algo, DeviceTensors& t, void* ws,
           size_t ws_bytes) {
  const float alpha = 1, beta = 0;
  switch (p.direction) {
    case Direction::kForward:
      BC_CUDNN(cudnnConvolutionForward(h, &alpha, d.x, t.x.get(), d.w, t.w.get(), d.conv,
                                       static_cast<cudnnConvolutionFwdAlgo_t>(algo), ws, ws_bytes, &beta, d.y,
                                       t.y.get()));
      break;
    case Direction::kBackwardData:
      BC_CUDNN(cudnnConvolutionBackwardData(h, &alpha, d.w, t.w.get(), d.y, t.y.get(), d.conv,
                                            static_cast<cudnnConvolutionBwdDataAlgo_t>(algo), ws, ws_bytes, &beta,
                                            d.x, t.x.get()));
      break;
    case Direction::kBackwardWeights:
      BC_CUDNN(cudnnConvolutionBackwardFilter(h, &alpha, d.x, t.x.get(), d.y, t.y.get(), d.conv,
                                              static_cast<cudnnConvolutionBwdFilterAlgo_t>(algo), ws, ws_bytes,
                                              &beta, d.w, t.w.get()));
      break;
  }
  return Status::Ok();
}

// One perf result bound to the problem's tensors: the descriptor takes the
// result's math type and the workspace is the result's memory, as Conv_v7.cpp
// runs it.
class CudnnPrepared final : public PreparedOp {
 public:
  CudnnPrepared(const Conv2dProblem& p, Buffers& b, Algorithm a, ParsedPerfName parsed)
      : p_(p), b_(b), algorithm_(std::move(a)), algo_(parsed.algo), math_(parsed.math) {}

  Status Init(cudnnHandle_t h) {
    h_ = h;
    ws_bytes_ = static_cast<size_t>(std::max<int64_t>(0, algorithm_.workspace_bytes));
    BC_RETURN_IF_ERROR(d_.Init(p_, math_));
    if (algorithm_.workspace_bytes == kWorkspaceUnknown) {  // the pinned default, unlisted: as getWorkspaceSize
      BC_ASSIGN_OR_RETURN(ws_bytes_, WorkspaceSize(h, d_, p_, algo_));
      algorithm_.workspace_bytes = static_cast<int64_t>(ws_bytes_);
    }
    BC_RETURN_IF_ERROR(t_.Init(p_, b_));
    return ws_.Allocate(ws_bytes_);
  }

  Status Execute() override {
    return cuda::TimedOnDevice(timer_, device_ns_, [&] { return Run(h_, d_, p_, algo_, t_, ws_.get(), ws_bytes_); });
  }
  Status Fetch() override { return FetchOutput(p_, t_, b_); }

  std::string implementation() const override {
    static constexpr const char* kPrefix[] = {"CUDNN_CONVOLUTION_FWD_ALGO_", "CUDNN_CONVOLUTION_BWD_DATA_ALGO_",
                                              "CUDNN_CONVOLUTION_BWD_FILTER_ALGO_"};
    std::string name = AlgoName(p_.direction, algo_);
    for (char& c : name) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    if (name.rfind("ALGO_", 0) == 0) name = name.substr(5);
    return kPrefix[static_cast<int>(p_.direction)] + name + " (" + MathTypeName(math_) + ", workspace " +
           std::to_string(ws_bytes_) + " B)";
  }
  const Algorithm& algorithm() const override { return algorithm_; }
  KernelFacts kernel() const override {
    return {.numerical_notes = LegacyNotes(p_.direction, algo_), .cudnn_choice = "algo " + std::to_string(algo_)};
  }
  std::optional<double> DeviceTimeNs() const override { return device_ns_; }

 private:
  Conv2dProblem p_;
  Buffers& b_;
  Algorithm algorithm_;
  int algo_ = -1;
  MathType math_ = MathType::kDefault;
  cudnnHandle_t h_ = nullptr;
  Descriptors d_;
  DeviceTensors t_;
  cuda::DeviceBuffer ws_;
  size_t ws_bytes_ = 0;
  cuda::EventTimer timer_;
  std::optional<double> device_ns_;
};

}  // namespace

Result<std::vector<Algorithm>> V7Candidates(cudnnHandle_t h, const Conv2dProblem& p, const BackendFlags& flags) {
  const bool tf32 = CudnnConvTf32(flags);
  Descriptors d;
  BC_RETURN_IF_ERROR(d.Init(p, CudnnMathType(p.dtype, tf32)));
  BC_ASSIGN_OR_RETURN(const std::vector<PerfRecord> perf, Heuristics(h, d, p, tf32));
  std::vector<Algorithm> out;
  for (const Candidate& c : CandidatesFromPerf(perf)) out.push_back(c.algorithm);
  return out;
}

Result<EngineSearch> V7Search(cudnnHandle_t h, const Conv2dProblem& p, const BackendFlags& flags, const Buffers& inputs) {
  DeviceTensors t;
  BC_RETURN_IF_ERROR(t.Init(p, inputs));
  const bool tf32 = CudnnConvTf32(flags);
  Descriptors d;
  BC_RETURN_IF_ERROR(d.Init(p, CudnnMathType(p.dtype, tf32)));
  // The search workspace as PyTorch's getMaxWorkspaceSize sizes it: the
  // largest that one of the searched algorithms needs (those cuDNN cannot
  // size are passed over), less any this device cannot allocate.
  const std::vector<int> searched = SearchedAlgos(p.direction);
  std::vector<size_t> sizes;
  for (int algo : searched) {
    if (Result<size_t> bytes = WorkspaceSize(h, d, p, algo); bytes.ok() && *bytes > 0) sizes.push_back(*bytes);
  }
  std::sort(sizes.begin(), sizes.end(), std::greater<>());
  cuda::DeviceBuffer ws;
  size_t ws_bytes = 0;
  for (size_t bytes : sizes) {
    if (ws.Allocate(bytes).ok()) {
      ws_bytes = bytes;
      break;
    }
  }
  EngineSearch out;
  out.peak_device_bytes = cuda::DeviceBytesInUse();
  int n = 0;
  const int asked = static_cast<int>(searched.size());
  std::vector<PerfRecord> records;
  switch (p.direction) {
    case Direction::kForward: {
      std::array<cudnnConvolutionFwdAlgoPerf_t, CUDNN_CONVOLUTION_FWD_ALGO_COUNT> perf{};
      BC_CUDNN(cudnnFindConvolutionForwardAlgorithmEx(h, d.x, t.x.get(), d.w, t.w.get(), d.conv, d.y,
                                                      t.y.get(), asked, &n, perf.data(), ws.get(), ws_bytes));
      records = ToRecords(p, tf32, perf, n, true);
      break;
    }
    case Direction::kBackwardData: {
      std::array<cudnnConvolutionBwdDataAlgoPerf_t, CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT> perf{};
      BC_CUDNN(cudnnFindConvolutionBackwardDataAlgorithmEx(h, d.w, t.w.get(), d.y, t.y.get(), d.conv, d.x,
                                                           t.x.get(), asked, &n, perf.data(), ws.get(),
                                                           ws_bytes));
      records = ToRecords(p, tf32, perf, n, true);
      break;
    }
    case Direction::kBackwardWeights: {
      std::array<cudnnConvolutionBwdFilterAlgoPerf_t, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT> perf{};
      BC_CUDNN(cudnnFindConvolutionBackwardFilterAlgorithmEx(h, d.x, t.x.get(), d.y, t.y.get(), d.conv,
                                                             d.w, t.w.get(), asked, &n, perf.data(), ws.get(),
                                                             ws_bytes));
      records = ToRecords(p, tf32, perf, n, true);
      break;
    }
  }
  out.peak_device_bytes = std::max(out.peak_device_bytes, cuda::DeviceBytesInUse());
  for (const PerfRecord& r : records) {
    if (r.ok && r.time_ms >= 0) out.time_ns[r.algo] = r.time_ms * 1e6;
  }
  return out;
}

Result<std::unique_ptr<PreparedOp>> V7Prepare(cudnnHandle_t h, const Conv2dProblem& p, const Algorithm& algorithm,
                                              Buffers& buffers, const BackendFlags& flags) {
  // `algorithm` is one of V7Candidates (or the pinned default among them):
  // its name carries the math type and its workspace the result's memory.
  const std::optional<ParsedPerfName> parsed = ParsePerfName(p.direction, algorithm.name, p.dtype, CudnnConvTf32(flags));
  if (!parsed) return Status(StatusCode::kInvalidArgument, "unknown cuDNN algorithm " + algorithm.name);
  auto prepared = std::make_unique<CudnnPrepared>(p, buffers, algorithm, *parsed);
  BC_RETURN_IF_ERROR(prepared->Init(h));
  return std::unique_ptr<PreparedOp>(std::move(prepared));
}

}  // namespace bc::cudnn
