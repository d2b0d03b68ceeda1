// Internal to the cuDNN engine: PyTorch's graph (backend) API path, after
// Conv_v8.cpp. One convolution becomes an operation graph; heuristics (mode
// INSTANT, or B: policy.h GraphHeuristicMode) and the fallback list name
// engine configs; configs are dropped on their numerical notes (policy.h:
// NONDETERMINISTIC under deterministic, DOWN_CONVERT_INPUTS, TENSOR_CORE for
// fp32 without TF32) and on CUDNN_ERRATA_JSON_FILE's rules; a kept config is nondeterministic when it carries the
// NONDETERMINISTIC note, and becomes an execution plan only when it is tried.
// Tensors are described by dimensions in NCHW order and strides, which carry
// the layout.
#pragma once

#include <cudnn.h>

#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "backends/cudnn/cudnn.h"
#include "harness/cudnn_log.h"
#include "harness/problem.h"
#include "harness/status.h"
#include "selection/cudnn_policy.h"

namespace bc::cudnn {

using Descriptor = std::shared_ptr<void>;  // a cudnnBackendDescriptor_t, destroyed with its last owner

// An engine config that the numerical-note filter kept: "cfgK_engG" from
// heuristics (K its rank, G cuDNN's global engine index) or "fbK_engG" from
// the fallback list.
struct Config {
  std::string name;
  std::set<NumericalNote> notes;
  Descriptor config;
  int64_t engine = -1;
  bool deterministic() const { return notes.count(NumericalNote::kNondeterministic) == 0; }
};

// A config finalised into an execution plan.
struct Plan {
  std::string name;
  std::set<NumericalNote> notes;
  Descriptor plan;
  int64_t workspace_bytes = 0;
  int64_t engine = -1;  // cuDNN's global engine index
  bool deterministic() const { return notes.count(NumericalNote::kNondeterministic) == 0; }
};

// One problem's operation graph and the configs kept for it: heuristics' in
// their order, then the fallback list's engines that heuristics did not name
// (PyTorch's two generator sources).
struct GraphConfigs {
  std::vector<Config> configs;
  std::vector<std::string> dropped;    // "NAME: why", for evidence
  std::vector<Descriptor> keep_alive;  // tensors, operation, graph, heuristics
};

// Unique ids of the three tensors in variant packs.
inline constexpr int64_t kUidX = 'x', kUidW = 'w', kUidY = 'y';

// `errata`: CUDNN_ERRATA_JSON_FILE's rules; a config they block is dropped.
Result<GraphConfigs> ListConfigs(cudnnHandle_t handle, const Conv2dProblem& p, bool deterministic, bool allow_tf32,
                                 HeurMode mode, const std::vector<ErrataRule>& errata);

// Finalises a config into an execution plan (what PyTorch builds only for
// the configs it tries).
Result<Plan> BuildPlan(cudnnHandle_t handle, const Config& config);

// The variant pack of device pointers to x, w, y and the workspace: built once
// per prepared op, outside any timed region.
Result<Descriptor> VariantPack(void* x, void* w, void* y, void* workspace);

// Runs a plan on a variant pack (each direction reads and writes the tensors
// its operation names).
Status ExecutePlan(cudnnHandle_t handle, const Plan& plan, const Descriptor& pack);

// cuDNN's notes on engine `engine` (its global index) for the convolution
// cuDNN's API log describes, with the knob choices the log shows (names
// without CUDNN_KNOB_TYPE_): the graph built again from the log's
// descriptors, the engine finalised for it, its config finalised with those
// knobs, and the notes of the config's engine read as PyTorch's filter reads
// them. UNIMPLEMENTED where the log describes what this build does not
// rebuild (another operation, a data type or knob these headers do not
// name); INTERNAL where cuDNN refuses the engine or its knobs on that graph.
Result<EngineNotes> AskEngineNotes(cudnnHandle_t handle, const CudnnLogConvolution& convolution, int64_t engine,
                                   const std::vector<std::pair<std::string, int64_t>>& knobs);

}  // namespace bc::cudnn
