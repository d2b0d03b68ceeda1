#include "backends/cudnn/cudnn.h"

#include <cudnn.h>

#include <cstdlib>

#include "backends/cuda/device.h"
#include "backends/cudnn/calls.h"
#include "backends/cudnn/graph.h"
#include "backends/cudnn/paths.h"
#include "selection/cudnn_policy.h"
#include "backends/registry.h"

namespace bc {

namespace cudnn {

Status DeviceTensors::Init(const Conv2dProblem& p, const Buffers& b) {
  const Shapes s(p);
  BC_RETURN_IF_ERROR(cuda::Upload(b["src"], s.x, x));
  BC_RETURN_IF_ERROR(cuda::Upload(b["wei"], s.w, w));
  BC_RETURN_IF_ERROR(cuda::Upload(b["dst"], s.y, y));
  return Status::Ok();
}

Status FetchOutput(const Conv2dProblem& p, const DeviceTensors& t, Buffers& b) {
  const Shapes s(p);
  switch (p.direction) {
    case Direction::kForward: return cuda::Download(t.y, s.y, b["dst"]);
    case Direction::kBackwardData: return cuda::Download(t.x, s.x, b["src"]);
    case Direction::kBackwardWeights: return cuda::Download(t.w, s.w, b["wei"]);
  }
  return Status::Ok();
}

}  // namespace cudnn

namespace {

using cudnn::FromCudnn;

// PyTorch's switch between the graph API (default) and the legacy API, read
// once per process as PyTorch reads it (policy.h: only "1" disables).
bool UseGraphApi() {
  static const bool graph = cudnn::GraphApiEnabled(std::getenv("TORCH_CUDNN_V8_API_DISABLED"));
  return graph;
}

// cuDNN's version number (91900) as people write it: "9.19.0".
std::string VersionText(size_t v) {
  return std::to_string(v / 10000) + "." + std::to_string(v / 100 % 100) + "." + std::to_string(v % 100);
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
    a.library_version = VersionText(cudnnGetVersion());  // the library actually loaded, not the header
    a.version = "cuDNN " + a.library_version + ", " + a.version;
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

const Conv2dProblem* Conv(const Problem& p) { return std::get_if<Conv2dProblem>(&p); }

Status NoImplementation(const Problem& p) {
  return Status(StatusCode::kUnimplemented, "cudnn has no implementation of " + FormatProblem(p));
}

}  // namespace

class CudnnEngine final : public Engine {
 public:
  CudnnEngine() : Engine("cudnn", Device::kCuda) {}
  Availability availability() const override;
  Result<std::vector<Algorithm>> Candidates(const Problem& p, const BackendFlags& flags) const override;
  std::optional<std::string> PinnedDeterministic(const Problem& p) const override;
  SelectionRules Rules(const BackendFlags& flags) const override {
    static const int lru = cudnn::V8CacheLimit(std::getenv("TORCH_CUDNN_V8_API_LRU_CACHE_LIMIT"));
    return cudnn::CudnnRules(UseGraphApi() ? cudnn::Api::kGraph : cudnn::Api::kLegacy, flags.cudnn_benchmark,
                             flags.CudnnDeterministicEffective(), lru);
  }
  Result<EngineSearch> Search(const Problem& p, const BackendFlags& flags, const Buffers& inputs) const override;
  ComputeType compute_type(const Problem& p, const BackendFlags& flags) const override {
    return CudnnComputeType(p, flags);
  }
  Result<std::unique_ptr<PreparedOp>> Prepare(const Problem& p, const Algorithm& algorithm, Buffers& buffers,
                                              const BackendFlags& flags) const override;
};

const Engine& CudnnEngineInstance() {
  static const CudnnEngine kEngine;
  return kEngine;
}

Availability CudnnEngine::availability() const { return Handle().availability; }

std::optional<std::string> CudnnEngine::PinnedDeterministic(const Problem& p) const {
  if (Conv(p) == nullptr || UseGraphApi()) return std::nullopt;  // Conv_v8.cpp pins nothing
  return cudnn::PinnedDefault(Conv(p)->direction);
}

Result<std::vector<Algorithm>> CudnnEngine::Candidates(const Problem& problem, const BackendFlags& flags) const {
  const HandleState& hs = Handle();
  const Conv2dProblem* p = Conv(problem);
  if (hs.handle == nullptr || p == nullptr) return std::vector<Algorithm>{};
  return UseGraphApi() ? cudnn::V8Candidates(hs.handle, *p, flags) : cudnn::V7Candidates(hs.handle, *p, flags);
}

Result<EngineSearch> CudnnEngine::Search(const Problem& problem, const BackendFlags& flags, const Buffers& inputs) const {
  const HandleState& hs = Handle();
  if (hs.handle == nullptr) return NotAvailable(hs.availability);
  const Conv2dProblem* p = Conv(problem);
  if (p == nullptr) return NoImplementation(problem);
  return UseGraphApi() ? cudnn::V8Search(hs.handle, *p, flags, inputs) : cudnn::V7Search(hs.handle, *p, flags, inputs);
}

Result<std::unique_ptr<PreparedOp>> CudnnEngine::Prepare(const Problem& problem, const Algorithm& algorithm,
                                                         Buffers& buffers, const BackendFlags& flags) const {
  const HandleState& hs = Handle();
  if (hs.handle == nullptr) return NotAvailable(hs.availability);
  const Conv2dProblem* p = Conv(problem);
  if (p == nullptr) return NoImplementation(problem);
  return UseGraphApi() ? cudnn::V8Prepare(hs.handle, *p, algorithm, buffers, flags)
                       : cudnn::V7Prepare(hs.handle, *p, algorithm, buffers, flags);
}

int64_t CudnnCallCount() { return cudnn::CallCounter().load(std::memory_order_relaxed); }

Result<EngineNotes> AskCudnnEngineNotes(const CudnnRan& ran) {
  const HandleState& hs = Handle();
  if (hs.handle == nullptr) return NotAvailable(hs.availability);
  const std::string engine = ran.engine ? "engine " + std::to_string(*ran.engine) : "an engine";
  const size_t here = cudnnGetVersion();
  if (!ran.version.empty() && ran.version != std::to_string(here)) {
    return Status(StatusCode::kUnavailable, "the log was written by cuDNN " +
                                                VersionText(std::strtoull(ran.version.c_str(), nullptr, 10)) +
                                                " and this build runs cuDNN " + VersionText(here) +
                                                ", whose notes on " + engine + " may differ");
  }
  if (!ran.engine || !ran.convolution) {
    return Status(StatusCode::kInternal, "the log's entry of " + engine + " (" + ran.function +
                                             ") does not describe the convolution it was made for");
  }
  BC_ASSIGN_OR_RETURN(EngineNotes notes, cudnn::AskEngineNotes(hs.handle, *ran.convolution, *ran.engine, ran.knobs));
  notes.cudnn_version = VersionText(here);
  return notes;
}

}  // namespace bc
