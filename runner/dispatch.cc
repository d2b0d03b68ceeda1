#include "runner/dispatch.h"

#include "backends/registry.h"
#include "harness/tf32.h"

#include <memory>
#include <optional>

namespace bc {
namespace {

// The engine that plays `role` in PyTorch's dispatch on `device` (engines.def's
// role column): the model routes by role, never by an engine's name.
Result<const Engine*> ForRole(Device device, std::string_view role) {
  if (const Engine* e = EngineForRole(device, role)) return e;
  return Status(StatusCode::kInternal, "no engine in engines.def claims the " + std::string(role) + " role on " +
                                           DeviceName(device));
}

Status Unavailable(const Engine& e) {
  const Status s = NotAvailable(e.availability());
  return Status(s.code(), std::string(e.name()) + " unavailable: " + s.message());
}

// The engines a case may choose from for `p` (one, or the "select" pool),
// with the reason; an error when none is usable. Where deciding needed the
// candidates of the one engine chosen (auto on the CPU asks whether oneDNN
// implements the op), they are kept in `listed`, so nothing is listed twice.
Result<std::vector<const Engine*>> EnginesFor(const CaseSpec& c, const Problem& p, const BackendFlags& flags,
                                              std::string* reason, std::optional<std::vector<Algorithm>>* listed) {
  const std::string& name = c.engine;
  if (name == "select" || name.rfind("select:", 0) == 0) {
    std::vector<const Engine*> pool;
    const std::string only = name == "select" ? "" : name.substr(7);
    for (const Engine* e : Engines()) {
      if (e->device() != c.device || (!only.empty() && e->name() != only)) continue;
      if (!e->availability().available) {
        if (!only.empty()) return Unavailable(*e);
        continue;
      }
      pool.push_back(e);
    }
    if (!only.empty() && pool.empty() && FindEngine(only) == nullptr) {
      return Status(StatusCode::kInvalidArgument, "unknown engine '" + only + "'");
    }
    if (pool.empty()) {
      const Engine* cudnn = EngineForRole(c.device, "cudnn");
      return Status(StatusCode::kUnavailable,
                    std::string("no engine available on ") + DeviceName(c.device) +
                        (cudnn != nullptr ? ": " + std::string(cudnn->name()) +
                                                " unavailable: " + cudnn->availability().reason
                                          : ""));
    }
    *reason = "cuDNN selection semantics over the " + std::string(DeviceName(c.device)) + " candidate pool" +
              (only.empty() ? "" : " of " + only);
    return pool;
  }
  const Engine* e = nullptr;
  if (name != "auto") {
    e = FindEngine(name);
    if (e == nullptr) return Status(StatusCode::kInvalidArgument, "unknown engine '" + name + "'");
    if (e->device() != c.device) {
      return Status(StatusCode::kInvalidArgument, "engine " + name + " runs on " + DeviceName(e->device()) +
                                                      ", not " + DeviceName(c.device));
    }
    *reason = "engine forced by the case (engine=" + name + ")";
  } else if (c.device == Device::kCpu) {
    BC_ASSIGN_OR_RETURN(const Engine* onednn, ForRole(c.device, "mkldnn"));
    const Availability a = onednn->availability();
    const auto* conv = std::get_if<Conv2dProblem>(&p);
    const bool heuristic = conv != nullptr && PytorchChoosesMkldnn(*conv, c.threads);
    if (flags.mkldnn_enabled && a.available && heuristic) {
      BC_ASSIGN_OR_RETURN(*listed, onednn->Candidates(p, flags));
      if ((*listed)->empty()) listed->reset();
    }
    if (listed->has_value()) {
      e = onednn;
      *reason = "mkldnn.enabled=true, PyTorch's use_mkldnn heuristic holds and oneDNN implements " +
                std::string(OpName(p));
    } else {
      BC_ASSIGN_OR_RETURN(e, ForRole(c.device, "native"));
      *reason = conv == nullptr       ? std::string(OpName(p)) + " on the CPU: PyTorch's native kernel (its BLAS for "
                                                                 "fp32 GEMM), not oneDNN"
                : !flags.mkldnn_enabled ? "mkldnn.enabled=false: native CPU path"
                : !a.available          ? "oneDNN unavailable (" + a.reason + "): native CPU path"
                : !heuristic            ? "PyTorch's use_mkldnn heuristic prefers its native convolution for this "
                                          "shape and thread count"
                                        : "oneDNN does not implement " + std::string(OpName(p)) + ": native CPU path";
    }
  } else if (!std::holds_alternative<Conv2dProblem>(p)) {
    BC_ASSIGN_OR_RETURN(e, ForRole(c.device, "blas"));
    *reason = std::string(OpName(p)) + " on CUDA runs through cuBLAS, whatever the cuDNN flags";
  } else if (!flags.cudnn_enabled) {
    BC_ASSIGN_OR_RETURN(e, ForRole(c.device, "native"));
    *reason = "cudnn.enabled=false: PyTorch's native CUDA convolution (im2col + cuBLAS), no cuDNN call";
  } else {
    BC_ASSIGN_OR_RETURN(e, ForRole(c.device, "cudnn"));
    *reason = "cudnn.enabled=true";
  }
  if (!e->availability().available) return Unavailable(*e);
  return std::vector<const Engine*>{e};
}

}  // namespace

bool PytorchChoosesMkldnn(const Conv2dProblem& c, int threads) {
  const bool strided = c.sh > 1 || c.sw > 1, dilated = c.dh > 1 || c.dw > 1;
  const bool not_single_threaded_1x1 = strided || dilated || c.mb >= 16 || c.kw != 1 || c.kh != 1 || threads > 1;
  const bool not_tiny = c.g > 1 || (c.kw > 3 && c.kh > 3) || c.mb > 1 || c.mb * c.ic * c.ih * c.iw > 20480;
  return c.dtype == DataType::kF32 && not_single_threaded_1x1 && not_tiny;
}

Result<DispatchDecision> Dispatcher::Decide(const CaseSpec& c, const Problem& p, const BackendFlags& flags,
                                            const TimeCandidate& time, const Buffers& inputs) {
  DispatchDecision d;
  std::optional<std::vector<Algorithm>> listed;
  Result<std::vector<const Engine*>> engines = EnginesFor(c, p, flags, &d.reason, &listed);
  if (!engines.ok()) return engines.status();
  const std::vector<const Engine*>& pool = engines.value();

  if (!c.algorithm.empty()) {  // the case names the algorithm: no selection
    if (pool.size() != 1) return Status(StatusCode::kInvalidArgument, "algo= needs a single engine, not " + c.engine);
    Result<Algorithm> a = FindAlgorithm(*pool.front(), p, c.algorithm, flags);
    if (!a.ok()) return a.status();
    d.engine = pool.front();
    d.chosen = {std::string(d.engine->name()), a.value()};
    d.reason += "; algorithm forced by the case (algo=" + c.algorithm + ")";
    return d;
  }

  SelectorOptions options;
  const bool cudnn_semantics = UsesCudnnSelection(c.engine, pool.front()->name());
  options.deterministic_algorithms = flags.deterministic_algorithms;
  options.warn_only = flags.deterministic_algorithms_warn_only;
  if (cudnn_semantics) {
    const SelectionRules rules = pool.front()->Rules(flags);
    options.benchmark = flags.cudnn_benchmark;
    options.benchmark_limit = rules.benchmark_limit ? flags.cudnn_benchmark_limit : 0;
    options.cache_limit = rules.cache_limit;
    options.cache_without_benchmark = rules.cache_without_benchmark;
    options.retry_at_execution = rules.retry_at_execution;
    options.store_without_benchmark = rules.store_without_benchmark;
    options.deterministic = flags.CudnnDeterministicEffective();
  } else {
    options.deterministic =
        flags.deterministic_algorithms || (pool.front() == EngineForRole(pool.front()->device(), "mkldnn") && flags.mkldnn_deterministic);
  }
  // The fields of PyTorch's ConvolutionParams that the problem string does
  // not already hold: the device, the pool and allow_tf32.
  const std::string key = FormatProblem(p) + "|" + DeviceName(c.device) + "|" + c.engine +
                          "|allow_tf32=" + (CudnnConvTf32(flags) ? "1" : "0");
  if (std::optional<Selection> hit = selector_.Cached(key, options)) {
    d.selection = *hit;
    d.chosen = hit->chosen;
    d.engine = FindEngine(d.chosen.engine);
    return d;
  }
  std::vector<Candidate> candidates;
  for (const Engine* e : pool) {
    if (!listed.has_value()) {
      BC_ASSIGN_OR_RETURN(listed, e->Candidates(p, flags));
    }
    for (const Algorithm& a : *listed) candidates.push_back({std::string(e->name()), a});
    listed.reset();
    // Only cuDNN pins an algorithm for deterministic mode; PyTorch's CPU paths
    // run their kernel whatever use_deterministic_algorithms says.
    if (cudnn_semantics && options.pinned_deterministic.empty()) {
      if (std::optional<std::string> pinned = e->PinnedDeterministic(p)) {
        options.pinned_deterministic = std::string(e->name()) + ":" + *pinned;
      }
    }
  }
  // A single engine with its own search (cudnnFind*AlgorithmEx) times the
  // candidates itself; it runs once, and only when the selector searches.
  auto search = std::make_shared<std::optional<Result<EngineSearch>>>();
  TimeCandidate timer = time;
  if (pool.size() == 1) {
    const Engine* engine = pool.front();
    timer = [engine, p, search, time, &flags, &inputs](const Candidate& cand) -> Result<double> {
      if (!search->has_value()) *search = engine->Search(p, flags, inputs);
      const Result<EngineSearch>& found = search->value();
      if (!found.ok()) return found.status().code() == StatusCode::kUnimplemented ? time(cand) : found.status();
      auto it = found->time_ns.find(cand.algorithm.name);
      if (it == found->time_ns.end()) return Status(StatusCode::kInternal, "the engine's search did not run " + cand.Id());
      return it->second;
    };
  }
  d.cache_key = key;  // for Dispatcher::Ran, when the choice gives way at execution
  d.options = options;
  Result<Selection> s = selector_.Select(key, FormatProblem(p), candidates, options, timer);
  if (!s.ok()) return s.status();
  if (search->has_value() && search->value().ok()) d.search_peak_device_bytes = search->value()->peak_device_bytes;
  d.selection = s.value();
  d.chosen = s->chosen;
  d.engine = FindEngine(d.chosen.engine);
  return d;
}

}  // namespace bc
