// The cuDNN graph API as PyTorch's Conv_v8.cpp uses it (the default path).
// Candidates are the engine configs that heuristics and the fallback list
// name and the numerical-note filter keeps (graph.h). A config becomes an
// execution plan only when it is tried, once per process: benchmark off
// builds plans in order until one builds (try_configs), and lists the
// configs after it unbuilt; benchmark on builds every plan and times them in
// order until cudnn.benchmark_limit of them ran (0: all), passing over those
// that fail, with one warm-up and one timed run
// each (cudnn-frontend's time_sorted_plan, CUDNN_FIND_SAMPLE_ONCE), on one
// workspace and one variant pack. A prepared op builds its variant pack
// before any timed run, so a timing covers cudnnBackendExecute alone.
#include <cstdlib>
#include <map>
#include <mutex>
#include <set>

#include "backends/cudnn/graph.h"
#include "backends/cudnn/paths.h"
#include "harness/tf32.h"

namespace bc::cudnn {
namespace {

// One problem's configs under one set of flags, and the plans built from
// them so far (a plan that failed to build keeps its failure).
struct GraphState {
  GraphConfigs graph;
  std::map<std::string, Result<Plan>> plans;
};

HeurMode ModeFor(const BackendFlags& f) {
  static const bool mode_b = HeuristicModeB(std::getenv("TORCH_CUDNN_USE_HEURISTIC_MODE_B"));
  return GraphHeuristicMode(f.cudnn_benchmark, mode_b);
}

Result<std::shared_ptr<GraphState>> StateOf(cudnnHandle_t h, const Conv2dProblem& p, const BackendFlags& f) {
  static std::mutex mu;
  static std::map<std::string, std::shared_ptr<GraphState>> states;
  const bool deterministic = f.CudnnDeterministicEffective();
  const HeurMode mode = ModeFor(f);
  const bool tf32 = CudnnConvTf32(f);
  const std::string key = FormatProblem(p) + "|deterministic=" + (deterministic ? "1" : "0") +
                          "|allow_tf32=" + (tf32 ? "1" : "0") + "|mode=" +
                          (mode == HeurMode::kB ? "B" : "INSTANT");
  const std::lock_guard<std::mutex> lock(mu);
  if (auto it = states.find(key); it != states.end()) return it->second;
  static const Result<std::vector<ErrataRule>> errata = LoadErrata(std::getenv("CUDNN_ERRATA_JSON_FILE"));
  if (!errata.ok()) return errata.status();
  BC_ASSIGN_OR_RETURN(GraphConfigs graph, ListConfigs(h, p, deterministic, tf32, mode, errata.value()));
  auto state = std::make_shared<GraphState>();
  state->graph = std::move(graph);
  states[key] = state;
  return state;
}

const Result<Plan>& PlanOf(cudnnHandle_t h, GraphState& s, const Config& c) {
  auto it = s.plans.find(c.name);
  if (it == s.plans.end()) it = s.plans.emplace(c.name, BuildPlan(h, c)).first;
  return it->second;
}

// A graph-API execution plan bound to a problem's device tensors.
class GraphPrepared final : public PreparedOp {
 public:
  GraphPrepared(const Conv2dProblem& p, Buffers& b, std::shared_ptr<GraphState> state, Plan plan)
      : p_(p), b_(b), state_(std::move(state)), plan_(std::move(plan)),
        algorithm_{plan_.name, plan_.deterministic() ? Determinism::kDeterministic : Determinism::kNondeterministic,
                   plan_.workspace_bytes} {}
  Status Init(cudnnHandle_t h) {
    h_ = h;
    BC_RETURN_IF_ERROR(t_.Init(p_, b_));
    BC_RETURN_IF_ERROR(ws_.Allocate(static_cast<size_t>(plan_.workspace_bytes)));
    BC_ASSIGN_OR_RETURN(pack_, VariantPack(t_.x.get(), t_.w.get(), t_.y.get(), ws_.get()));
    return Status::Ok();
  }
  Status Execute() override {
    return cuda::TimedOnDevice(timer_, device_ns_, [&] { return ExecutePlan(h_, plan_, pack_); });
  }
  Status Fetch() override { return FetchOutput(p_, t_, b_); }
  std::string implementation() const override {
    std::string notes;
    for (NumericalNote n : plan_.notes) notes += std::string(notes.empty() ? "" : ",") + NoteName(n);
    return "cuDNN graph API " + plan_.name + (notes.empty() ? "" : " [" + notes + "]");
  }
  const Algorithm& algorithm() const override { return algorithm_; }
  KernelFacts kernel() const override {
    KernelFacts k;
    for (NumericalNote n : plan_.notes) k.numerical_notes.emplace_back(NoteName(n));
    if (plan_.engine >= 0) k.cudnn_choice = "engine " + std::to_string(plan_.engine);
    return k;
  }
  std::optional<double> DeviceTimeNs() const override { return device_ns_; }

 private:
  Conv2dProblem p_;
  Buffers& b_;
  std::shared_ptr<GraphState> state_;  // keeps the graph's descriptors alive
  Plan plan_;
  Algorithm algorithm_;
  cudnnHandle_t h_ = nullptr;
  DeviceTensors t_;
  cuda::DeviceBuffer ws_;
  Descriptor pack_;
  cuda::EventTimer timer_;
  std::optional<double> device_ns_;
};

}  // namespace

Result<std::vector<Algorithm>> V8Candidates(cudnnHandle_t h, const Conv2dProblem& p, const BackendFlags& flags) {
  BC_ASSIGN_OR_RETURN(std::shared_ptr<GraphState> state, StateOf(h, p, flags));
  if (state->graph.configs.empty()) {
    std::string dropped;
    for (const std::string& d : state->graph.dropped) dropped += (dropped.empty() ? "" : "; ") + d;
    return Status(StatusCode::kUnimplemented, "no cuDNN engine config for " + FormatProblem(Problem(p)) +
                                                  " passes the numerical-note filter (" + dropped + ")");
  }
  std::vector<std::pair<std::string, bool>> configs;
  for (const Config& c : state->graph.configs) configs.emplace_back(c.name, c.deterministic());
  return GraphCandidates(configs, flags.cudnn_benchmark, [&](size_t i) -> Result<int64_t> {
    const Result<Plan>& plan = PlanOf(h, *state, state->graph.configs[i]);
    if (!plan.ok()) return plan.status();
    return plan->workspace_bytes;
  });
}

Result<EngineSearch> V8Search(cudnnHandle_t h, const Conv2dProblem& p, const BackendFlags& flags, const Buffers& inputs) {
  BC_ASSIGN_OR_RETURN(std::shared_ptr<GraphState> state, StateOf(h, p, flags));
  DeviceTensors t;
  BC_RETURN_IF_ERROR(t.Init(p, inputs));
  // Every config that builds a plan (generate_and_filter_plans); the limit
  // counts the plans that ran, not the configs (time_sorted_plan).
  std::vector<const Plan*> built;
  std::vector<int64_t> needs;
  for (size_t i = 0; i < state->graph.configs.size(); ++i) {
    const Result<Plan>& plan = PlanOf(h, *state, state->graph.configs[i]);
    if (!plan.ok()) continue;
    built.push_back(&plan.value());
    needs.push_back(plan->workspace_bytes);
  }
  // One workspace for every plan, fitted as generate_and_filter_plans fits it
  // (FitSearchWorkspace); the device's free memory stands for the caching
  // allocator's largest block, which it is at least.
  cuda::DeviceBuffer ws;
  BC_ASSIGN_OR_RETURN(const int64_t free_bytes, cuda::DeviceBytesFree());
  BC_ASSIGN_OR_RETURN(const WorkspaceFit fit,
                      FitSearchWorkspace(needs, free_bytes, [&](int64_t bytes) {
                        return ws.Allocate(static_cast<size_t>(bytes)).ok();
                      }));
  std::vector<const Plan*> plans;
  for (size_t i : fit.kept) plans.push_back(built[i]);
  BC_ASSIGN_OR_RETURN(const Descriptor pack, VariantPack(t.x.get(), t.w.get(), t.y.get(), ws.get()));
  EngineSearch out;
  out.peak_device_bytes = cuda::DeviceBytesInUse();
  cuda::EventTimer timer;
  std::set<float> kept;
  // time_sorted_plan: a plan whose warm-up fails is passed over and not
  // counted against the limit; the timed run's status is not checked; a
  // plan timed equal to one kept is dropped (KeepTimedPlan).
  TimeUntilLimit(plans.size(), flags.cudnn_benchmark_limit, [&](size_t i) {
    const Plan& plan = *plans[i];
    if (!ExecutePlan(h, plan, pack).ok()) return false;  // the warm-up run
    timer.Start();
    (void)ExecutePlan(h, plan, pack);
    Result<double> ms = timer.StopMs();
    if (ms.ok() && KeepTimedPlan(kept, static_cast<float>(ms.value()))) out.time_ns[plan.name] = ms.value() * 1e6;
    return true;
  });
  return out;
}

Result<std::unique_ptr<PreparedOp>> V8Prepare(cudnnHandle_t h, const Conv2dProblem& p, const Algorithm& algorithm,
                                              Buffers& buffers, const BackendFlags& flags) {
  BC_ASSIGN_OR_RETURN(std::shared_ptr<GraphState> state, StateOf(h, p, flags));
  for (const Config& c : state->graph.configs) {
    if (c.name != algorithm.name) continue;
    const Result<Plan>& plan = PlanOf(h, *state, c);
    if (!plan.ok()) {
      return plan.status().Prefixed("cuDNN graph config " + c.name + " does not build a plan for " +
                                    FormatProblem(Problem(p)) + ": ");
    }
    auto prepared = std::make_unique<GraphPrepared>(p, buffers, state, plan.value());
    BC_RETURN_IF_ERROR(prepared->Init(h));
    return std::unique_ptr<PreparedOp>(std::move(prepared));
  }
  return Status(StatusCode::kUnimplemented, "no cuDNN graph config '" + algorithm.name + "' for " + FormatProblem(Problem(p)));
}

}  // namespace bc::cudnn
