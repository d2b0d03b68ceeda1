// Error metrics against a reference, the error bound of the arithmetic that
// produced a result, and the test for degenerate output.
//
// Compare() reports the largest absolute error, the largest relative error
// (against max(|ref|, the smallest normal float)), the largest distance in
// units in the last place and the largest |ref|; given the per-element sum of
// the magnitudes of each output's terms and a ToleranceModel, it also checks
// every element against its own bound (ElementBound, derived in
// numerics.cc) and reports the worst ratio of error to bound.
// IsDegenerate() marks outputs that prove nothing (all zero, or constant):
// a determinism check passed on such data is MISTRUSTED, not PASSED.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace bc {

// The arithmetic a result was computed in.
//   kF32   fp32 inputs, fp32 products and accumulation (CPU, CUDA FMA math).
//   kTf32  fp32 inputs rounded to TF32 (10 explicit mantissa bits) by tensor
//          cores, exact products, fp32 accumulation.
//   kF16   fp16 inputs and output, exact products, fp32 accumulation (as
//          PyTorch configures cuDNN and cuBLAS for half).
enum class ComputeType { kF32, kTf32, kF16 };
const char* ComputeTypeName(ComputeType t);

// Unit roundoffs of one compute type (relative, per rounding). Where the
// rounding of inputs and outputs is not documented (TF32 conversion, the
// store to fp16), the unit is one full ulp, which covers rounding to nearest
// and toward zero alike.
struct Rounding {
  double input;       // each input, on its way into a product
  double product;     // each product
  double accumulate;  // each addition
  double output;      // the final store
};
Rounding RoundingOf(ComputeType t);

struct ToleranceModel {
  ComputeType type = ComputeType::kF32;
  int64_t accumulation_length = 1;  // k: terms summed into one output, at most
  double max_term = 1;              // max|a|·max|b| over the two inputs of the products
  int64_t outputs = 1;              // N: elements checked, for the confidence level
};

// The arithmetic an error bound covers once the numerical notes of the
// kernel that ran are known (cuDNN's names): `allowed` (what the flags
// allow, ComputeTypeOf) where no note breaks the bound's assumptions; no
// bound at all (`unbounded` says why, and the tolerance check is not
// evaluated, never failed) where the kernel transforms its operands
// (WINOGRAD, FFT), which the bound's direct sum of products does not cover,
// or accumulates in reduced precision (REDUCED_PRECISION_REDUCTION; see
// numerics.cc for why that gets no bound of its own).
struct BoundedArithmetic {
  ComputeType type = ComputeType::kF32;
  std::string unbounded;  // empty: `type` bounds the result
};
// `notes_unknown`: why the notes could not be had (no bound then either).
BoundedArithmetic ArithmeticOf(ComputeType allowed, const std::vector<std::string>& notes,
                               const std::string& notes_unknown = {});

// lambda of the probabilistic bounds: the whole output stays within its bound
// with probability at least 1 - 1e-9 (a union over N outputs and k terms).
double Confidence(const ToleranceModel& m);

// The bound on |out_i - ref_i| for an output whose exact value is ref_i and
// whose terms' magnitudes sum to abs_sum_i (see numerics.cc).
double ElementBound(const ToleranceModel& m, double abs_ref, double abs_sum);

struct ErrorMetrics {
  double max_abs = 0;
  double max_rel = 0;
  int64_t max_ulp = 0;
  double max_abs_ref = 0;
  int64_t nonfinite = 0;  // NaN or Inf in the output where the reference is finite
  // With a model: the largest |out_i - ref_i| / bound_i, and the bound at
  // that element (the most demanding one).
  bool bounded = false;
  double worst_ratio = 0;
  double bound = 0;
};

ErrorMetrics Compare(std::span<const float> out, std::span<const float> ref);
// `abs_sum` holds, per element, the reference computed on the magnitudes of
// the inputs (sum of |a_j b_j|).
ErrorMetrics Compare(std::span<const float> out, std::span<const float> ref, std::span<const float> abs_sum,
                     const ToleranceModel& model);

// Distance in representable floats; 0 for equal values, huge for NaN.
int64_t UlpDistance(float a, float b);

// No new NaN/Inf and every element within its bound (Compare with a model);
// without a model, only an exact result passes.
bool WithinTolerance(const ErrorMetrics& m);

bool IsDegenerate(std::span<const float> out);

}  // namespace bc
