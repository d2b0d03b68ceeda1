// cuDNN's API log (CUDNN_LOGLEVEL_DBG=3 with CUDNN_LOGDEST_DBG, or the
// messages of a callback set with cudnnSetCallback), read as cuDNN 9 prints
// it: one entry per API call,
//   I! CuDNN (v91200 46) function cudnnBackendExecute() called:
//   i!     executionPlan: type=CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR:
//   i!         engineConfig: type=CUDNN_BACKEND_ENGINECFG_DESCRIPTOR:
//   i!     ...: type=int64_t; val=32;
//   i! Time: ...
// (four spaces a level), and as cuDNN 9's documentation shows it, without
// the "I!"/"i!" marks and with "cuDNN (v90000)". What the parser keeps is
// what a convolution ran: the engine config of each execution plan cuDNN
// executed (its engine's global index, its knob choices, its numerical and
// behaviour notes) and the algorithm of each legacy convolution call.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace bc {

// One "name: type=T; val=V;" line of an entry (value empty where the line
// opens a descriptor whose fields follow one level deeper).
struct CudnnLogField {
  int depth = 0;  // 0: a parameter of the call
  std::string name;
  std::string type;
  std::string value;
};

struct CudnnLogCall {
  std::string function;  // cudnnBackendExecute
  std::string version;   // 91200
  std::vector<CudnnLogField> fields;
};

std::vector<CudnnLogCall> ParseCudnnLog(std::string_view text);

// What one executing call ran.
struct CudnnRan {
  std::string function;
  // The graph API (cudnnBackendExecute): the engine config of the plan.
  std::optional<int64_t> engine;                         // CUDNN_ATTR_ENGINE_GLOBAL_INDEX
  std::vector<std::pair<std::string, int64_t>> knobs;    // SPLIT_K=1 (CUDNN_KNOB_TYPE_ left out)
  std::vector<std::string> numerical_notes;              // TENSOR_CORE (CUDNN_NUMERICAL_NOTE_ left out)
  std::vector<std::string> behavior_notes;               // RUNTIME_COMPILATION
  // The legacy API (cudnnConvolutionForward/BackwardData/BackwardFilter):
  // the algorithm's enumerator and its value.
  std::string legacy_algo;                               // CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM
  int legacy_index = -1;

  // "eng38 SPLIT_K=1 [TENSOR_CORE]", "CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM";
  // "" where the call named neither an engine nor an algorithm.
  std::string Name() const;
};

// Every convolution execution the log shows, in order: cudnnBackendExecute
// and the legacy cudnnConvolution{Forward,BackwardData,BackwardFilter}
// calls (and cudnnConvolutionBiasActivationForward).
std::vector<CudnnRan> CudnnRunsIn(std::string_view text);

}  // namespace bc
