// Internal to the cuDNN engine: PyTorch's graph (backend) API path, after
// Conv_v8.cpp. One convolution becomes an operation graph; heuristics (mode
// INSTANT, or B when TORCH_CUDNN_USE_HEURISTIC_MODE_B is set) list engine
// configs; configs are dropped on their numerical notes (policy.h:
// NONDETERMINISTIC under deterministic, DOWN_CONVERT_INPUTS, TENSOR_CORE for
// fp32 without TF32); each kept config that finalizes into an execution plan
// is a candidate named "cfgK_engG" (K its heuristic rank, G cuDNN's global
// engine index), nondeterministic when it carries the NONDETERMINISTIC note.
// Tensors are described by dimensions in NCHW order and strides, which carry
// the layout.
#pragma once

#include <cudnn.h>

#include <memory>
#include <set>
#include <string>
#include <vector>

#include "backends/cudnn/policy.h"
#include "harness/problem.h"
#include "harness/status.h"

namespace bc::cudnn {

using Descriptor = std::shared_ptr<void>;  // a cudnnBackendDescriptor_t, destroyed with its last owner

struct Plan {
  std::string name;
  std::set<NumericalNote> notes;
  Descriptor plan;
  int64_t workspace_bytes = 0;
  bool deterministic() const { return notes.count(NumericalNote::kNondeterministic) == 0; }
};

struct GraphPlans {
  std::vector<Plan> plans;             // kept, in heuristic order
  std::vector<std::string> dropped;    // "cfgK_engG: why", for evidence
  std::vector<Descriptor> keep_alive;  // tensors, operation, graph, configs
};

// Unique ids of the three tensors in variant packs.
inline constexpr int64_t kUidX = 'x', kUidW = 'w', kUidY = 'y';

Result<GraphPlans> BuildPlans(cudnnHandle_t handle, const Conv2dProblem& p, bool deterministic, bool allow_tf32);

// Runs a plan on device pointers to x, w, y (each direction reads and
// writes the ones its operation names).
Status ExecutePlan(cudnnHandle_t handle, const Plan& plan, void* x, void* w, void* y, void* workspace);

}  // namespace bc::cudnn
