#include "backends/cudnn/cudnn.h"

#include <cudnn.h>

#include <array>
#include <cstdlib>
#include <cstring>

#include "backends/cuda/device.h"
#include "backends/cudnn/calls.h"
#include "backends/cudnn/graph.h"
#include "backends/cudnn/policy.h"

namespace bc {
namespace {

using cudnn::FromCudnn;

// PyTorch's switch between the graph API (default) and the legacy API.
bool UseGraphApi() {
  const char* v = std::getenv("TORCH_CUDNN_V8_API_DISABLED");
  return v == nullptr || *v == '\0' || std::strcmp(v, "0") == 0;
}

struct HandleState {
  cudnnHandle_t handle = nullptr;
  Availability availability;
};

const HandleState& Handle() {
  static const HandleState state = [] {
    HandleState s;
    Availability& a = s.availability;
    a = cuda::CudaAvailability();
    a.engine = "cudnn";
    const size_t v = cudnnGetVersion();  // the library actually loaded, not the header
    a.version = "cuDNN " + std::to_string(v / 10000) + "." + std::to_string(v / 100 % 100) + "." +
                std::to_string(v % 100) + ", " + a.version;
    if (!a.available) return s;
    cudnn::CallCounter().fetch_add(1, std::memory_order_relaxed);
    const cudnnStatus_t cs = cudnnCreate(&s.handle);
    if (cs != CUDNN_STATUS_SUCCESS) {
      s.handle = nullptr;
      a.available = false;
      const Status failed = FromCudnn(cs, "cudnnCreate");
      a.reason = failed.message();
      a.error = failed.code() != StatusCode::kUnavailable;
      return s;
    }
    a.reason = std::string("cuDNN handle created, ") + (UseGraphApi() ? "graph API (v8) path" : "legacy API (v7) path") +
               "; " + a.reason;
    return s;
  }();
  return state;
}

cudnnDataType_t CudnnType(DataType t) { return t == DataType::kF16 ? CUDNN_DATA_HALF : CUDNN_DATA_FLOAT; }
cudnnTensorFormat_t CudnnFormat(Layout l) { return l == Layout::kNhwc ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW; }
cudnnMathType_t CudnnMath(cudnn::MathType m) {
  switch (m) {
    case cudnn::MathType::kTensorOp: return CUDNN_TENSOR_OP_MATH;
    case cudnn::MathType::kFma: return CUDNN_FMA_MATH;
    case cudnn::MathType::kDefault: break;
  }
  return CUDNN_DEFAULT_MATH;
}

// The three tensors of a conv problem, in its layout and dtype.
struct Shapes {
  cuda::TensorShape x, w, y;
  explicit Shapes(const Conv2dProblem& p) {
    x = {p.mb, p.ic, p.ih, p.iw, p.layout, p.dtype};
    w = {p.oc, p.ic / p.g, p.kh, p.kw, p.layout, p.dtype};
    y = {p.mb, p.oc, p.oh(), p.ow(), p.layout, p.dtype};
  }
};

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
    const cudnnDataType_t dt = CudnnType(p.dtype);
    const cudnnTensorFormat_t fmt = CudnnFormat(p.layout);
    BC_CUDNN(cudnnSetTensor4dDescriptor(x, fmt, dt, i(p.mb), i(p.ic), i(p.ih), i(p.iw)));
    BC_CUDNN(cudnnSetTensor4dDescriptor(y, fmt, dt, i(p.mb), i(p.oc), i(p.oh()), i(p.ow())));
    BC_CUDNN(cudnnSetFilter4dDescriptor(w, dt, fmt, i(p.oc), i(p.ic / p.g), i(p.kh), i(p.kw)));
    // fp16 computes in fp32, as PyTorch configures it.
    BC_CUDNN(cudnnSetConvolution2dDescriptor(conv, i(p.ph), i(p.pw), i(p.sh), i(p.sw), i(p.dh), i(p.dw),
                                             CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
    BC_CUDNN(cudnnSetConvolutionGroupCount(conv, i(p.g)));
    BC_CUDNN(cudnnSetConvolutionMathType(conv, CudnnMath(cudnn::CudnnMathType(p.dtype, allow_tf32))));
    return Status::Ok();
  }
};

template <typename Perf>
cudnn::PerfRecord ToRecord(Direction d, const Perf& perf) {
  return {cudnn::AlgoName(d, static_cast<int>(perf.algo)), perf.status == CUDNN_STATUS_SUCCESS,
          static_cast<double>(perf.time), static_cast<int64_t>(perf.memory),
          perf.determinism == CUDNN_DETERMINISTIC};
}

template <typename Perf, size_t N>
std::vector<cudnn::PerfRecord> ToRecords(Direction d, const std::array<Perf, N>& perf, int returned, bool timed) {
  std::vector<cudnn::PerfRecord> out;
  for (int k = 0; k < returned; ++k) {
    cudnn::PerfRecord r = ToRecord(d, perf[k]);
    if (!timed) r.time_ms = -1;
    out.push_back(r);
  }
  return out;
}

Result<std::vector<cudnn::PerfRecord>> Heuristics(cudnnHandle_t h, const Descriptors& d, const Conv2dProblem& p) {
  int n = 0;
  switch (p.direction) {
    case Direction::kForward: {
      std::array<cudnnConvolutionFwdAlgoPerf_t, CUDNN_CONVOLUTION_FWD_ALGO_COUNT> perf{};
      BC_CUDNN(cudnnGetConvolutionForwardAlgorithm_v7(h, d.x, d.w, d.conv, d.y, perf.size(), &n, perf.data()));
      return ToRecords(p.direction, perf, n, false);
    }
    case Direction::kBackwardData: {
      std::array<cudnnConvolutionBwdDataAlgoPerf_t, CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT> perf{};
      BC_CUDNN(cudnnGetConvolutionBackwardDataAlgorithm_v7(h, d.w, d.y, d.conv, d.x, perf.size(), &n, perf.data()));
      return ToRecords(p.direction, perf, n, false);
    }
    case Direction::kBackwardWeights: {
      std::array<cudnnConvolutionBwdFilterAlgoPerf_t, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT> perf{};
      BC_CUDNN(cudnnGetConvolutionBackwardFilterAlgorithm_v7(h, d.x, d.y, d.conv, d.w, perf.size(), &n, perf.data()));
      return ToRecords(p.direction, perf, n, false);
    }
  }
  return Status(StatusCode::kInternal, "unknown direction");
}

Status WorkspaceSize(cudnnHandle_t h, const Descriptors& d, const Conv2dProblem& p, int algo, size_t* bytes) {
  switch (p.direction) {
    case Direction::kForward:
      BC_CUDNN(cudnnGetConvolutionForwardWorkspaceSize(h, d.x, d.w, d.conv, d.y,
                                                       static_cast<cudnnConvolutionFwdAlgo_t>(algo), bytes));
      break;
    case Direction::kBackwardData:
      BC_CUDNN(cudnnGetConvolutionBackwardDataWorkspaceSize(h, d.w, d.y, d.conv, d.x,
                                                            static_cast<cudnnConvolutionBwdDataAlgo_t>(algo), bytes));
      break;
    case Direction::kBackwardWeights:
      BC_CUDNN(cudnnGetConvolutionBackwardFilterWorkspaceSize(
          h, d.x, d.y, d.conv, d.w, static_cast<cudnnConvolutionBwdFilterAlgo_t>(algo), bytes));
      break;
  }
  return Status::Ok();
}

// The problem's three device tensors, inputs uploaded from the host buffers.
struct DeviceTensors {
  cuda::DeviceBuffer x, w, y;
  Status Init(const Conv2dProblem& p, const Buffers& b) {
    const Shapes s(p);
    BC_RETURN_IF_ERROR(cuda::Upload(b.src, s.x, x));
    BC_RETURN_IF_ERROR(cuda::Upload(b.wei, s.w, w));
    BC_RETURN_IF_ERROR(cuda::Upload(b.dst, s.y, y));
    return Status::Ok();
  }
};

// Copies the direction's output tensor back into the host buffers.
Status FetchOutput(const Conv2dProblem& p, const DeviceTensors& t, Buffers& b) {
  const Shapes s(p);
  switch (p.direction) {
    case Direction::kForward: return cuda::Download(t.y, s.y, b.dst);
    case Direction::kBackwardData: return cuda::Download(t.x, s.x, b.src);
    case Direction::kBackwardWeights: return cuda::Download(t.w, s.w, b.wei);
  }
  return Status::Ok();
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

class CudnnPrepared final : public PreparedOp {
 public:
  CudnnPrepared(const Conv2dProblem& p, Buffers& b, Algorithm a) : p_(p), b_(b), algorithm_(std::move(a)) {}

  Status Init(cudnnHandle_t h) {
    h_ = h;
    algo_ = cudnn::AlgoIndex(p_.direction, algorithm_.name);
    if (algo_ < 0) return Status(StatusCode::kInvalidArgument, "unknown cuDNN algorithm " + algorithm_.name);
    BC_RETURN_IF_ERROR(d_.Init(p_, CurrentFlags().cudnn_allow_tf32));
    BC_RETURN_IF_ERROR(t_.Init(p_, b_));
    BC_RETURN_IF_ERROR(WorkspaceSize(h_, d_, p_, algo_, &ws_bytes_));
    return ws_.Allocate(ws_bytes_);
  }

  Status Execute() override {
    return cuda::TimedOnDevice(timer_, device_ns_, [&] { return Run(h_, d_, p_, algo_, t_, ws_.get(), ws_bytes_); });
  }
  Status Fetch() override { return FetchOutput(p_, t_, b_); }

  std::string implementation() const override {
    static constexpr const char* kPrefix[] = {"CUDNN_CONVOLUTION_FWD_ALGO_", "CUDNN_CONVOLUTION_BWD_DATA_ALGO_",
                                              "CUDNN_CONVOLUTION_BWD_FILTER_ALGO_"};
    std::string name = algorithm_.name;
    for (char& c : name) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    if (name.rfind("ALGO_", 0) == 0) name = name.substr(5);
    return kPrefix[static_cast<int>(p_.direction)] + name + " (" +
           cudnn::MathTypeName(cudnn::CudnnMathType(p_.dtype, CurrentFlags().cudnn_allow_tf32)) + ")";
  }
  const Algorithm& algorithm() const override { return algorithm_; }
  std::optional<double> DeviceTimeNs() const override { return device_ns_; }

 private:
  Conv2dProblem p_;
  Buffers& b_;
  Algorithm algorithm_;
  int algo_ = -1;
  cudnnHandle_t h_ = nullptr;
  Descriptors d_;
  DeviceTensors t_;
  cuda::DeviceBuffer ws_;
  size_t ws_bytes_ = 0;
  cuda::EventTimer timer_;
  std::optional<double> device_ns_;
};

// A graph-API execution plan bound to a problem's device tensors.
class GraphPrepared final : public PreparedOp {
 public:
  GraphPrepared(const Conv2dProblem& p, Buffers& b, cudnn::GraphPlans plans, cudnn::Plan plan)
      : p_(p), b_(b), plans_(std::move(plans)), plan_(std::move(plan)) {
    algorithm_ = {plan_.name, plan_.deterministic() ? Determinism::kDeterministic : Determinism::kNondeterministic,
                  plan_.workspace_bytes};
  }
  Status Init(cudnnHandle_t h) {
    h_ = h;
    BC_RETURN_IF_ERROR(t_.Init(p_, b_));
    return ws_.Allocate(static_cast<size_t>(plan_.workspace_bytes));
  }
  Status Execute() override {
    return cuda::TimedOnDevice(timer_, device_ns_,
                         [&] { return cudnn::ExecutePlan(h_, plan_, t_.x.get(), t_.w.get(), t_.y.get(), ws_.get()); });
  }
  Status Fetch() override { return FetchOutput(p_, t_, b_); }
  std::string implementation() const override {
    std::string notes;
    for (cudnn::NumericalNote n : plan_.notes) notes += std::string(notes.empty() ? "" : ",") + cudnn::NoteName(n);
    return "cuDNN graph API " + plan_.name + (notes.empty() ? "" : " [" + notes + "]");
  }
  const Algorithm& algorithm() const override { return algorithm_; }
  std::optional<double> DeviceTimeNs() const override { return device_ns_; }

 private:
  Conv2dProblem p_;
  Buffers& b_;
  cudnn::GraphPlans plans_;
  cudnn::Plan plan_;
  Algorithm algorithm_;
  cudnnHandle_t h_ = nullptr;
  DeviceTensors t_;
  cuda::DeviceBuffer ws_;
  cuda::EventTimer timer_;
  std::optional<double> device_ns_;
};

Result<cudnn::GraphPlans> Plans(cudnnHandle_t h, const Conv2dProblem& p) {
  const BackendFlags& f = CurrentFlags();
  return cudnn::BuildPlans(h, p, f.CudnnDeterministicEffective(), f.cudnn_allow_tf32);
}

const Conv2dProblem* Conv(const Problem& p) { return std::get_if<Conv2dProblem>(&p); }

}  // namespace

const CudnnEngine& CudnnEngine::Instance() {
  static const CudnnEngine kEngine;
  return kEngine;
}

Availability CudnnEngine::availability() const { return Handle().availability; }

std::optional<std::string> CudnnEngine::PinnedDeterministic(const Problem& p) const {
  if (Conv(p) == nullptr || UseGraphApi()) return std::nullopt;  // Conv_v8.cpp pins nothing
  return cudnn::PinnedDefault(Conv(p)->direction);
}

std::vector<Algorithm> CudnnEngine::algorithms(const Problem& problem) const {
  Result<std::vector<Algorithm>> listed = Candidates(problem);
  return listed.ok() ? listed.value() : std::vector<Algorithm>{};
}

Result<std::vector<Algorithm>> CudnnEngine::Candidates(const Problem& problem) const {
  const HandleState& hs = Handle();
  const Conv2dProblem* p = Conv(problem);
  if (hs.handle == nullptr || p == nullptr) return std::vector<Algorithm>{};
  std::vector<Algorithm> out;
  if (UseGraphApi()) {
    Result<cudnn::GraphPlans> plans = Plans(hs.handle, *p);
    if (!plans.ok()) return plans.status();
    for (const cudnn::Plan& plan : plans->plans) {
      out.push_back({plan.name, plan.deterministic() ? Determinism::kDeterministic : Determinism::kNondeterministic,
                     plan.workspace_bytes});
    }
    return out;
  }
  Descriptors d;
  BC_RETURN_IF_ERROR(d.Init(*p, CurrentFlags().cudnn_allow_tf32));
  Result<std::vector<cudnn::PerfRecord>> perf = Heuristics(hs.handle, d, *p);
  if (!perf.ok()) return perf.status();
  for (const Candidate& c : cudnn::CandidatesFromPerf(perf.value())) out.push_back(c.algorithm);
  return out;
}

Result<EngineSearch> CudnnEngine::Search(const Problem& problem) const {
  const HandleState& hs = Handle();
  if (hs.handle == nullptr) return NotAvailable(hs.availability);
  const Conv2dProblem* p = Conv(problem);
  if (p == nullptr) return Status(StatusCode::kUnimplemented, "cudnn has no implementation of " + FormatProblem(problem));
  Buffers b = Buffers::For(problem);
  FillInputs(problem, b);
  DeviceTensors t;
  BC_RETURN_IF_ERROR(t.Init(*p, b));
  if (UseGraphApi()) {
    // Like PyTorch's v8 benchmark: every kept plan, warmed up once, best of three.
    Result<cudnn::GraphPlans> plans = Plans(hs.handle, *p);
    if (!plans.ok()) return plans.status();
    EngineSearch out;
    out.peak_device_bytes = cuda::DeviceBytesInUse();
    cuda::EventTimer timer;
    for (const cudnn::Plan& plan : plans->plans) {
      cuda::DeviceBuffer ws;
      if (!ws.Allocate(static_cast<size_t>(plan.workspace_bytes)).ok()) continue;
      out.peak_device_bytes = std::max(out.peak_device_bytes, cuda::DeviceBytesInUse());
      if (!cudnn::ExecutePlan(hs.handle, plan, t.x.get(), t.w.get(), t.y.get(), ws.get()).ok()) continue;
      double best = -1;
      for (int i = 0; i < 3; ++i) {
        timer.Start();
        if (!cudnn::ExecutePlan(hs.handle, plan, t.x.get(), t.w.get(), t.y.get(), ws.get()).ok()) break;
        Result<double> ms = timer.StopMs();
        if (ms.ok() && (best < 0 || ms.value() < best)) best = ms.value();
      }
      if (best >= 0) out.time_ns[plan.name] = best * 1e6;
    }
    return out;
  }
  Descriptors d;
  BC_RETURN_IF_ERROR(d.Init(*p, CurrentFlags().cudnn_allow_tf32));
  // The largest workspace any algorithm asks for, as PyTorch sizes the search.
  size_t ws_bytes = 0;
  Result<std::vector<cudnn::PerfRecord>> heur = Heuristics(hs.handle, d, *p);
  if (!heur.ok()) return heur.status();
  for (const cudnn::PerfRecord& r : heur.value()) {
    if (r.ok) ws_bytes = std::max(ws_bytes, static_cast<size_t>(r.memory));
  }
  cuda::DeviceBuffer ws;
  BC_RETURN_IF_ERROR(ws.Allocate(ws_bytes));
  EngineSearch out;
  out.peak_device_bytes = cuda::DeviceBytesInUse();
  int n = 0;
  std::vector<cudnn::PerfRecord> records;
  switch (p->direction) {
    case Direction::kForward: {
      std::array<cudnnConvolutionFwdAlgoPerf_t, CUDNN_CONVOLUTION_FWD_ALGO_COUNT> perf{};
      BC_CUDNN(cudnnFindConvolutionForwardAlgorithmEx(hs.handle, d.x, t.x.get(), d.w, t.w.get(), d.conv, d.y,
                                                      t.y.get(), perf.size(), &n, perf.data(), ws.get(), ws_bytes));
      records = ToRecords(p->direction, perf, n, true);
      break;
    }
    case Direction::kBackwardData: {
      std::array<cudnnConvolutionBwdDataAlgoPerf_t, CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT> perf{};
      BC_CUDNN(cudnnFindConvolutionBackwardDataAlgorithmEx(hs.handle, d.w, t.w.get(), d.y, t.y.get(), d.conv, d.x,
                                                           t.x.get(), perf.size(), &n, perf.data(), ws.get(),
                                                           ws_bytes));
      records = ToRecords(p->direction, perf, n, true);
      break;
    }
    case Direction::kBackwardWeights: {
      std::array<cudnnConvolutionBwdFilterAlgoPerf_t, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT> perf{};
      BC_CUDNN(cudnnFindConvolutionBackwardFilterAlgorithmEx(hs.handle, d.x, t.x.get(), d.y, t.y.get(), d.conv,
                                                             d.w, t.w.get(), perf.size(), &n, perf.data(), ws.get(),
                                                             ws_bytes));
      records = ToRecords(p->direction, perf, n, true);
      break;
    }
  }
  out.peak_device_bytes = std::max(out.peak_device_bytes, cuda::DeviceBytesInUse());
  for (const cudnn::PerfRecord& r : records) {
    if (r.ok && r.time_ms >= 0) out.time_ns[r.algo] = r.time_ms * 1e6;
  }
  return out;
}

Result<std::unique_ptr<PreparedOp>> CudnnEngine::Prepare(const Problem& problem, const std::string& algorithm,
                                                         Buffers& buffers) const {
  const HandleState& hs = Handle();
  if (hs.handle == nullptr) return NotAvailable(hs.availability);
  const Conv2dProblem* p = Conv(problem);
  if (p == nullptr) return Status(StatusCode::kUnimplemented, "cudnn has no implementation of " + FormatProblem(problem));
  if (UseGraphApi()) {
    Result<cudnn::GraphPlans> plans = Plans(hs.handle, *p);
    if (!plans.ok()) return plans.status();
    for (const cudnn::Plan& plan : plans->plans) {
      if (!algorithm.empty() && plan.name != algorithm) continue;
      auto prepared = std::make_unique<GraphPrepared>(*p, buffers, plans.value(), plan);
      BC_RETURN_IF_ERROR(prepared->Init(hs.handle));
      return std::unique_ptr<PreparedOp>(std::move(prepared));
    }
    return Status(StatusCode::kUnimplemented, "no cuDNN graph plan '" + (algorithm.empty() ? "(any)" : algorithm) +
                                                  "' for " + FormatProblem(problem));
  }
  Result<Algorithm> a = FindAlgorithm(*this, problem, algorithm);
  // A pinned or forced algorithm need not be in the heuristic list (PyTorch
  // pins without asking); cuDNN itself says whether it supports the problem.
  Algorithm chosen = a.ok() ? a.value()
                            : Algorithm{algorithm,
                                        cudnn::DocumentedNondeterministic(p->direction, algorithm)
                                            ? Determinism::kNondeterministic
                                            : Determinism::kDeterministic,
                                        0};
  if (!a.ok() && (algorithm.empty() || cudnn::AlgoIndex(p->direction, algorithm) < 0)) return a.status();
  auto prepared = std::make_unique<CudnnPrepared>(*p, buffers, chosen);
  BC_RETURN_IF_ERROR(prepared->Init(hs.handle));
  return std::unique_ptr<PreparedOp>(std::move(prepared));
}

int64_t CudnnCallCount() { return cudnn::CallCounter().load(std::memory_order_relaxed); }

}  // namespace bc
