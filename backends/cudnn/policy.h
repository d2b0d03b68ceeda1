// cuDNN selection policy that needs no GPU: PyTorch's rules for turning what
// cuDNN reports into candidates and choices, kept apart from the CUDA code so
// CI tests them with recorded data.
//
// - PerfRecord is one cudnnConvolution*AlgoPerf_t in backendcheck's terms.
//   CandidatesFromPerf keeps the successful results in cuDNN's order, each
//   with the determinism cuDNN reports (getValidAlgorithms in Conv_v7.cpp
//   leaves the deterministic filter to the selector). FindTimer answers the
//   selector's timing requests with cudnnFind*AlgorithmEx's own measurements,
//   so the search is cuDNN's and the choice is the shared AlgorithmSelector's.
// - PinnedDefault: the algorithm PyTorch uses per direction when
//   deterministic is on and benchmark off.
// - KeepEngineConfig: the cuDNN graph API path's filter on an engine
//   config's numerical notes (Conv_v8.cpp): drop NONDETERMINISTIC when
//   deterministic, DOWN_CONVERT_INPUTS always, TENSOR_CORE for fp32 without
//   TF32.
// - CudnnMathType: PyTorch's math type per data type and allow_tf32.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "harness/problem.h"
#include "harness/selector.h"

namespace bc::cudnn {

struct PerfRecord {
  std::string algo;  // "implicit_precomp_gemm", "algo_0", ... (AlgoName)
  bool ok = true;    // status == CUDNN_STATUS_SUCCESS
  double time_ms = -1;  // cudnnFind*AlgorithmEx only
  int64_t memory = 0;
  bool deterministic = true;
};

// The name of cuDNN algorithm `index` of a direction, or "" when out of range.
std::string AlgoName(Direction d, int index);
// The index of a name, or -1.
int AlgoIndex(Direction d, const std::string& name);
std::string PinnedDefault(Direction d);
// cuDNN's documented nondeterministic algorithms (developer guide,
// "Reproducibility"): BWD_FILTER_ALGO_0, BWD_FILTER_ALGO_3, BWD_DATA_ALGO_0.
bool DocumentedNondeterministic(Direction d, const std::string& name);

std::vector<Candidate> CandidatesFromPerf(const std::vector<PerfRecord>& perf);
// Times in nanoseconds from FindEx records; a candidate without one is an error.
TimeCandidate FindTimer(const std::vector<PerfRecord>& perf);

enum class NumericalNote { kTensorCore, kDownConvertInputs, kReducedPrecisionReduction, kFft, kNondeterministic,
                           kWinograd, kStrictNanPropagation };
const char* NoteName(NumericalNote n);
// Empty when kept; otherwise why the config is dropped.
std::string DropReason(const std::set<NumericalNote>& notes, bool deterministic, bool allow_tf32, DataType dtype);

enum class MathType { kDefault, kTensorOp, kFma };
const char* MathTypeName(MathType m);
MathType CudnnMathType(DataType dtype, bool allow_tf32);

}  // namespace bc::cudnn
