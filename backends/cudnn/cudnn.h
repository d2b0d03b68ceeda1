// The cuDNN engine (what torch.backends.cudnn switches): conv2d forward,
// backward-data and backward-filter, fp32 and fp16, NCHW and NHWC, through
// either of PyTorch's two paths, chosen once per process as PyTorch chooses:
// by default the graph (backend) API, as Conv_v8.cpp uses it (v8.cc,
// graph.h); with TORCH_CUDNN_V8_API_DISABLED=1 (only "1": policy.h CheckEnv),
// the legacy API as Conv_v7.cpp uses it (v7.cc).
//
// availability(): built when the CUDA toolkit and cuDNN were found at
// configure time; available when CUDA finds a device and cudnnCreate
// succeeds; otherwise the reason carries the CUDA or cuDNN error. No cuDNN
// call that takes a handle is made without a successful cudnnCreate.
//
// Legacy path: Candidates() is cudnnGet*Algorithm_v7's list in its order,
// each result named with its math type where that is not the descriptor's
// and carrying its determinism and memory; Search() is
// cudnnFind*AlgorithmEx, which times every algorithm on the device (no
// benchmark_limit); Prepare sets the result's math type on the descriptor
// and allocates the result's memory. Deterministic with benchmark off pins
// PyTorch's default algorithm.
// Graph path: candidates are engine configs named "cfgK_engG" (heuristics)
// or "fbK_engG" (fallback list); see v8.cc for what is built and timed when.
// Both paths: the shared AlgorithmSelector chooses under Rules() (policy.h
// CudnnRules: the cache and benchmark_limit as each path applies them);
// Execute is timed with CUDA events.
//
// Every cuDNN call goes through one macro that counts it: CudnnCallCount()
// proves that no cuDNN call happens where PyTorch would make none
// (cudnn.enabled=false).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "backends/engine.h"
#include "harness/cudnn_log.h"

namespace bc {

// cuDNN calls made by this process so far (0 in a build without cuDNN).
int64_t CudnnCallCount();

// cuDNN's own notes on one engine, by the names its log gives them
// (CUDNN_NUMERICAL_NOTE_ and CUDNN_BEHAVIOR_NOTE_ left out), and the cuDNN
// that gave them ("9.19.0").
struct EngineNotes {
  std::vector<std::string> numerical;  // NONDETERMINISTIC, TENSOR_CORE...
  std::vector<std::string> behavior;   // RUNTIME_COMPILATION...
  std::string cudnn_version;
};

// Where cuDNN's log does not give an engine's notes (cuDNN 9.19 prints
// "numericalNotes: val=NULL_PTR" for the engine of a plan it executes), this
// asks cuDNN for them: the engine of `ran` (CUDNN_ATTR_ENGINE_GLOBAL_INDEX)
// with its knob choices, on the operation graph of the convolution the log
// describes for it, through this engine's handle. UNAVAILABLE (not
// evaluated) where this machine cannot ask: no device or driver, no cuDNN
// in this build, or a cuDNN of another version than the one that wrote the
// log, whose notes may differ; UNIMPLEMENTED (not evaluated) where the log
// describes what this build does not rebuild (another operation, a data
// type or knob its headers do not name); INTERNAL where the entry names no
// engine or describes no convolution, or cuDNN refuses the engine or the
// knobs on the graph built again (it is not the graph PyTorch ran).
Result<EngineNotes> AskCudnnEngineNotes(const CudnnRan& ran);

}  // namespace bc
