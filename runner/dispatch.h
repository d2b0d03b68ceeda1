// Dispatch: which engine and algorithm run one problem, decided the way
// PyTorch decides, with every decision recorded as evidence.
//
// Engine (the case's engine field):
//   auto    CPU convolution: mkldnn.enabled, PyTorch's use_mkldnn shape
//           heuristic (PytorchChoosesMkldnn) and oneDNN implements it ->
//           onednn; otherwise, and for every other CPU op (PyTorch's fp32
//           mm calls its BLAS), the native path, here the reference engine.
//           CUDA: convolution with cudnn.enabled -> cudnn; without ->
//           cuda_native (im2col + cuBLAS, no cuDNN call); matmul -> cublas.
//   NAME    that engine, forced; the device must match.
//   select  PyTorch's cuDNN selection semantics (cudnn.benchmark,
//           cudnn.deterministic, cudnn.benchmark_limit) over every candidate
//           of every engine of the device; "select:NAME" over one engine's.
//           On the CPU this exercises the selection mechanism on real
//           candidates; PyTorch itself has no CPU benchmark mode.
// Algorithm: the case's algorithm when it names one; otherwise the
// AlgorithmSelector decides. Its deterministic filter is, for cuDNN and
// "select", cudnn.deterministic or use_deterministic_algorithms; for the CPU
// engines, use_deterministic_algorithms (or mkldnn.deterministic for oneDNN):
// cudnn.deterministic does not reach them. cuDNN flags never route CPU work.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "backends/engine.h"
#include "harness/case.h"
#include "selection/selector.h"

namespace bc {

struct DispatchDecision {
  Candidate chosen;
  const Engine* engine = nullptr;  // the chosen candidate's engine
  std::string reason;              // why this engine
  std::optional<Selection> selection;  // when the selector decided
  int64_t search_peak_device_bytes = 0;  // from the engine's own search, when it ran
  std::string cache_key;                 // the selector's key and options, for Dispatcher::Ran
  SelectorOptions options;
};

// PyTorch's ConvParams::use_mkldnn for a CPU conv2d (Convolution.cpp): fp32,
// not a single-threaded unstrided 1x1 at batch < 16, and not a tiny problem
// (one image of at most 20480 input elements with a kernel of at most 3 on
// a side and one group), where PyTorch finds its native kernel faster.
bool PytorchChoosesMkldnn(const Conv2dProblem& c, int threads);

class Dispatcher {
 public:
  // Chooses for one step of `c` under `flags`; `time` times one candidate
  // when the selector benchmarks, and an engine's own search runs on
  // `inputs`, the step's filled buffers. In benchmark mode the selection
  // cache is consulted before any candidate is listed; each engine's
  // candidates are listed at most once per call.
  Result<DispatchDecision> Decide(const CaseSpec& c, const Problem& p, const BackendFlags& flags,
                                  const TimeCandidate& time, const Buffers& inputs);
  // The decision's choice failed at execution and `ran` ran instead (its
  // Selection::then): the cache keeps what ran, as PyTorch's does.
  void Ran(const DispatchDecision& d, const Candidate& ran) { selector_.Ran(d.cache_key, d.options, ran); }
  const AlgorithmSelector& selector() const { return selector_; }

 private:
  AlgorithmSelector selector_;
};


}  // namespace bc
