// The cuDNN graph API as PyTorch's Conv_v8.cpp uses it (the default path):
// candidates are the engine configs that heuristics return and the
// numerical-note filter keeps (graph.h), a search times each plan with CUDA
// events, and a prepared op executes its plan.
#include "backends/cudnn/graph.h"
#include "backends/cudnn/paths.h"

namespace bc::cudnn {
namespace {

// A graph-API execution plan bound to a problem's device tensors.
class GraphPrepared final : public PreparedOp {
 public:
  GraphPrepared(const Conv2dProblem& p, Buffers& b, GraphPlans plans, Plan plan)
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
                         [&] { return ExecutePlan(h_, plan_, t_.x.get(), t_.w.get(), t_.y.get(), ws_.get()); });
  }
  Status Fetch() override { return FetchOutput(p_, t_, b_); }
  std::string implementation() const override {
    std::string notes;
    for (NumericalNote n : plan_.notes) notes += std::string(notes.empty() ? "" : ",") + NoteName(n);
    return "cuDNN graph API " + plan_.name + (notes.empty() ? "" : " [" + notes + "]");
  }
  const Algorithm& algorithm() const override { return algorithm_; }
  std::optional<double> DeviceTimeNs() const override { return device_ns_; }

 private:
  Conv2dProblem p_;
  Buffers& b_;
  GraphPlans plans_;
  Plan plan_;
  Algorithm algorithm_;
  cudnnHandle_t h_ = nullptr;
  DeviceTensors t_;
  cuda::DeviceBuffer ws_;
  cuda::EventTimer timer_;
  std::optional<double> device_ns_;
};

Result<GraphPlans> Plans(cudnnHandle_t h, const Conv2dProblem& p, const BackendFlags& f) {
  return BuildPlans(h, p, f.CudnnDeterministicEffective(), f.cudnn_allow_tf32);
}

}  // namespace

Result<std::vector<Algorithm>> V8Candidates(cudnnHandle_t h, const Conv2dProblem& p, const BackendFlags& flags) {
  BC_ASSIGN_OR_RETURN(const GraphPlans plans, Plans(h, p, flags));
  std::vector<Algorithm> out;
  for (const Plan& plan : plans.plans) {
    out.push_back({plan.name, plan.deterministic() ? Determinism::kDeterministic : Determinism::kNondeterministic,
                   plan.workspace_bytes});
  }
  return out;
}

Result<EngineSearch> V8Search(cudnnHandle_t h, const Conv2dProblem& p, const BackendFlags& flags, const Buffers& inputs) {
  DeviceTensors t;
  BC_RETURN_IF_ERROR(t.Init(p, inputs));
  // Like PyTorch's v8 benchmark: every kept plan, warmed up once, best of three.
  Result<GraphPlans> plans = Plans(h, p, flags);
  if (!plans.ok()) return plans.status();
  EngineSearch out;
  out.peak_device_bytes = cuda::DeviceBytesInUse();
  cuda::EventTimer timer;
  for (const Plan& plan : plans->plans) {
    cuda::DeviceBuffer ws;
    if (!ws.Allocate(static_cast<size_t>(plan.workspace_bytes)).ok()) continue;
    out.peak_device_bytes = std::max(out.peak_device_bytes, cuda::DeviceBytesInUse());
    if (!ExecutePlan(h, plan, t.x.get(), t.w.get(), t.y.get(), ws.get()).ok()) continue;
    double best = -1;
    for (int i = 0; i < 3; ++i) {
      timer.Start();
      if (!ExecutePlan(h, plan, t.x.get(), t.w.get(), t.y.get(), ws.get()).ok()) break;
      Result<double> ms = timer.StopMs();
      if (ms.ok() && (best < 0 || ms.value() < best)) best = ms.value();
    }
    if (best >= 0) out.time_ns[plan.name] = best * 1e6;
  }
  return out;
}

Result<std::unique_ptr<PreparedOp>> V8Prepare(cudnnHandle_t h, const Conv2dProblem& p, const Algorithm& algorithm,
                                              Buffers& buffers, const BackendFlags& flags) {
  BC_ASSIGN_OR_RETURN(GraphPlans plans, Plans(h, p, flags));
  for (const Plan& plan : plans.plans) {
    if (plan.name != algorithm.name) continue;
    Plan chosen = plan;
    auto prepared = std::make_unique<GraphPrepared>(p, buffers, std::move(plans), std::move(chosen));
    BC_RETURN_IF_ERROR(prepared->Init(h));
    return std::unique_ptr<PreparedOp>(std::move(prepared));
  }
  return Status(StatusCode::kUnimplemented, "no cuDNN graph plan '" + algorithm.name + "' for " + FormatProblem(Problem(p)));
}

}  // namespace bc::cudnn
