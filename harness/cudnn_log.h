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
  // The entry's "Time: 2026-11-26T17:39:37.042334" in microseconds (since
  // 1970, as the log's clock reads); -1 where the entry has none.
  int64_t time_us = -1;
};

std::vector<CudnnLogCall> ParseCudnnLog(std::string_view text);

// One tensor of a convolution as the log describes it (a
// CUDNN_BACKEND_TENSOR_DESCRIPTOR's fields: "type", "dimA", "strideA",
// "uid", "alignmentInBytes").
struct CudnnLogTensor {
  std::string data_type;  // CUDNN_DATA_HALF
  std::vector<int64_t> dims, strides;
  int64_t uid = 0;
  int64_t alignment = 0;  // bytes
};

// The convolution of the operation graph an engine config was made for, as
// the log describes it inside the config's engine (engine > opGraph >
// operation): enough to build the same graph again and ask cuDNN about an
// engine for it. The tensors by role, whatever the direction: x (x or dx),
// w (w or dw), y (y or dy).
struct CudnnLogConvolution {
  std::string operation;  // CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR
  CudnnLogTensor x, w, y;
  std::string compute_type;  // CUDNN_DATA_FLOAT
  std::string mode;          // CUDNN_CROSS_CORRELATION
  std::vector<int64_t> pre_paddings, post_paddings, strides, dilations;
  double alpha = 1, beta = 0;

  // For people: "CONVOLUTION_FORWARD HALF x[2,8,14,14] w[8,8,3,3]
  // y[2,8,14,14] padding [1,1] stride [1,1] dilation [1,1]".
  std::string Describe() const;
};

// What one executing call ran.
struct CudnnRan {
  std::string function;
  std::string version;  // of the cuDNN that logged it: "91900"
  // The graph API (cudnnBackendExecute): the engine config of the plan.
  std::optional<int64_t> engine;                         // CUDNN_ATTR_ENGINE_GLOBAL_INDEX
  std::vector<std::pair<std::string, int64_t>> knobs;    // SPLIT_K=1 (CUDNN_KNOB_TYPE_ left out)
  std::vector<std::string> numerical_notes;              // TENSOR_CORE (CUDNN_NUMERICAL_NOTE_ left out)
  // Whether the entry showed the engine's numerical notes at all: cuDNN 9
  // prints "numericalNotes: ...; val=NULL_PTR;" for an engine whose notes it
  // was not asked for (the engine of a plan being executed, in 9.19).
  bool notes_known = false;
  std::vector<std::string> behavior_notes;               // RUNTIME_COMPILATION
  // The convolution the engine was made for, where the entry describes it
  // whole (9.19 does in an execution's plan); absent otherwise.
  std::optional<CudnnLogConvolution> convolution;
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
// calls (and cudnnConvolutionBiasActivationForward); the executions of
// CudnnEventsIn.
std::vector<CudnnRan> CudnnRunsIn(std::string_view text);

// A mark that a process writes into its own cuDNN log between the calls it
// wants told apart: a tensor descriptor set to five dimensions
// {1, 1, 1, 1, kCudnnMarkBase + N} (cudnnSetTensorNdDescriptor, which cuDNN
// logs with its dimensions), read back as mark N. No PyTorch call sets such
// a descriptor. probes/cudnn_choices.py writes them (MARK_BASE there,
// held to this value by its test).
inline constexpr int64_t kCudnnMarkBase = 7770000;

// What a log shows, in order, for telling PyTorch's own calls apart: each
// convolution execution (as CudnnRunsIn), each execution plan finalised
// (cudnnBackendFinalize of an EXECUTION_PLAN descriptor: a plan built) and
// each mark.
struct CudnnEvent {
  enum class Kind { kExecution, kPlanBuilt, kMark };
  Kind kind = Kind::kExecution;
  CudnnRan ran;                // the execution's, or the plan's engine config
  int64_t mark = -1;           // kMark: N
  int64_t time_us = -1;        // its entry's time; -1 where the log gives none
  // The time of the next API call the log shows after it (cuDNN's own
  // *Internal entries and the entries of calls returning aside): during
  // cuDNN's frontend's timing of plans, which waits for each timed run
  // before the next call, the run's time on the device plus the log's own.
  int64_t next_call_us = -1;
  // The status its call returned, where cuDNN 9 logged the return
  // ("CUDNN_STATUS_SUCCESS (0)"); empty where the log shows no return entry.
  std::string status;
};
// An execution whose own entry shows no notes takes them from the nearest
// earlier entry since the last mark that describes one engine of the same
// global index and shows its notes (PyTorch asks every candidate's notes
// before it builds plans: Conv_v8.cpp's filter); where none does, its notes
// stay unknown (notes_known false), never "none". An event of an engine
// whose entry does not describe its convolution takes the one the nearest
// event between the same marks describes (a child runs one convolution
// between two marks).
std::vector<CudnnEvent> CudnnEventsIn(std::string_view text);

}  // namespace bc
