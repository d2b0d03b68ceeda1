#include "harness/numerics.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <optional>

namespace bc {

const char* ComputeTypeName(ComputeType t) {
  switch (t) {
    case ComputeType::kF32: return "fp32";
    case ComputeType::kTf32: return "tf32";
    case ComputeType::kF16: return "fp16";
  }
  return "?";
}

BoundedArithmetic ArithmeticOf(ComputeType allowed, const std::vector<std::string>& notes,
                               const std::string& notes_unknown) {
  if (!notes_unknown.empty()) {
    return {allowed, "the numerical notes of the kernel that ran are not known (" + notes_unknown +
                         "), so no bound can be chosen for it"};
  }
  const auto has = [&](const char* note) { return std::find(notes.begin(), notes.end(), note) != notes.end(); };
  for (const char* transform : {"WINOGRAD", "FFT"}) {
    if (has(transform)) {
      return {allowed, std::string("the kernel's ") + transform + " transform is outside the bound, which covers a "
                                                                  "direct sum of products"};
    }
  }
  // A half accumulator (each product and partial sum rounded to fp16) has a
  // bound of this file's form, with u = 2^-10 for both: emulated over the GPU
  // matrix in both rounding modes it held (worst element at 0.16 of it), but
  // a 1% error reached only 0.001 to 0.22 of it, and at k = 25,088 a 100%
  // error would pass. A check that cannot see a wrong result is no evidence,
  // so such a config's tolerance is not evaluated.
  if (has("REDUCED_PRECISION_REDUCTION")) {
    return {allowed, "the kernel accumulates in reduced precision (REDUCED_PRECISION_REDUCTION), where a bound "
                     "that always holds could not catch even a 1% error"};
  }
  return {allowed, ""};
}

// fp32: p = 24 significant bits, unit roundoff u = 2^-24.
// TF32 and fp16: p = 11, so an input loses at most 2^-10 of its value (one
// ulp: rounding to nearest loses half of that, truncation up to all of it).
// A product of two 11-bit significands has at most 22 bits: exact in fp32.
// Accumulation is fp32 everywhere (PyTorch asks cuDNN and cuBLAS for an fp32
// compute type with half data). Tensor cores truncate in their accumulators
// (Fasi, Higham, Mikaitis and Pranesh, "Numerical behavior of NVIDIA tensor
// cores", PeerJ CS 2021): each truncation errs toward zero, so against
// partial sums whose signs vary as these data's do its bias cancels like the
// zero-mean part, and the unit stays 2^-24; suites/tolerance_test.cc
// checks the bound on emulated truncating accumulators too.
Rounding RoundingOf(ComputeType t) {
  constexpr double kU32 = 0x1p-24, kUlp11 = 0x1p-10;
  switch (t) {
    case ComputeType::kF32: return {0, kU32, kU32, 0};
    case ComputeType::kTf32: return {kUlp11, 0, kU32, 0};
    case ComputeType::kF16: return {0, 0, kU32, kUlp11};  // inputs are fp16 already (FillInputs)
  }
  return {};
}

// Each output is y = sum_j a_j b_j over k terms; A = sum_j |a_j b_j| is the
// reference computed on the inputs' magnitudes; M = max|a|·max|b|.
//
// 1. Inputs. Rounded inputs are a_j(1+alpha_j), b_j(1+beta_j) with
//    |alpha|, |beta| <= e (Rounding::input). Write each as a mean plus a
//    zero-mean part of at most e/2: truncation has mean at most e/2 in
//    magnitude, rounding to nearest none. The means contribute at most
//    e·|y| (both inputs, same direction: the bias of truncation); the
//    zero-mean parts are independent across j, and Hoeffding's inequality
//    bounds their sum sum_j a_j(alpha'_j + beta'_j) by
//    lambda·(e/2)·sqrt(2·sum_j a_j^2 b_j^2) <= lambda·(e/2)·sqrt(2·A·M);
//    the second-order term is at most e^2·A.
// 2. Products and accumulation. Any summation order passes each term
//    through at most k roundings of the accumulator (plus one for the
//    product when it is not exact). Higham and Mary's probabilistic bound
//    ("A new approach to probabilistic rounding error analysis", SISC 2019,
//    Theorem 4.2 with their gamma~ linearised) gives
//    lambda·sqrt(k+1)·u·A, with u the larger of the product and
//    accumulation units, where the worst case is k·u·A. It assumes
//    independent zero-mean errors, which rounding to nearest gives on such
//    data (for truncation, see RoundingOf).
// 3. Output. Storing into fp16 adds at most one ulp, Rounding::output·|y|.
//
// So |out - y| <= (e + o)·|y| + e^2·A + lambda·(e/2)·sqrt(2·A·M)
//                 + lambda·sqrt(k+1)·u·A.
// The reference is fp64 rounded once to fp32, far inside the bound.
//
// lambda: Higham and Mary's bound fails with probability at most
// 2k·exp(-lambda^2/2) per output (Hoeffding's term fails less often), so over
// N outputs lambda = sqrt(2·ln(2kN/p)) keeps the failure probability of a
// whole check below p = 1e-9: about 9 for the GPU matrix's shapes.
//
// What this catches: an error of 1% of |y| is caught where the bound is
// below 0.01·|y|; with uniform data |y| grows as sqrt(k) and A as k, so
// the power falls with k (suites/tolerance_test.cc measures it for every
// shape and direction of the GPU matrix).
double Confidence(const ToleranceModel& m) {
  const double kn = 2.0 * static_cast<double>(std::max<int64_t>(1, m.accumulation_length)) *
                    static_cast<double>(std::max<int64_t>(1, m.outputs));
  return std::sqrt(2.0 * std::log(kn / 1e-9));
}

namespace {

// ElementBound's coefficients, which depend on the model only: computed once
// per comparison, not once per element.
struct BoundTerms {
  double linear;     // (e + o): times |y|
  double quadratic;  // e^2: times A
  double input;      // lambda·(e/2)·sqrt(2M): times sqrt(A)
  double sum;        // lambda·sqrt(k(+1))·u: times A
  explicit BoundTerms(const ToleranceModel& m) {
    const Rounding r = RoundingOf(m.type);
    const double lambda = Confidence(m);
    const double k = static_cast<double>(std::max<int64_t>(1, m.accumulation_length));
    linear = r.input + r.output;
    quadratic = r.input * r.input;
    input = lambda * (r.input / 2) * std::sqrt(2.0 * m.max_term);
    sum = lambda * std::sqrt(k + (r.product > 0 ? 1 : 0)) * std::max(r.product, r.accumulate);
  }
  double operator()(double abs_ref, double abs_sum) const {
    return linear * abs_ref + quadratic * abs_sum + input * std::sqrt(abs_sum) + sum * abs_sum;
  }
};

}  // namespace

double ElementBound(const ToleranceModel& m, double abs_ref, double abs_sum) { return BoundTerms(m)(abs_ref, abs_sum); }

int64_t UlpDistance(float a, float b) {
  if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<int64_t>::max();
  // Map the sign-magnitude bit pattern onto a monotonic integer line.
  const auto ordered = [](float f) {
    const int32_t i = std::bit_cast<int32_t>(f);
    return i < 0 ? int64_t{std::numeric_limits<int32_t>::min()} - i : int64_t{i};
  };
  const int64_t d = ordered(a) - ordered(b);
  return d < 0 ? -d : d;
}

namespace {

ErrorMetrics CompareWith(std::span<const float> out, std::span<const float> ref, std::span<const float> abs_sum,
                         const ToleranceModel* model) {
  ErrorMetrics m;
  m.bounded = model != nullptr;
  const std::optional<BoundTerms> bound_of = model ? std::optional<BoundTerms>(*model) : std::nullopt;
  const size_t n = std::min(out.size(), ref.size());
  for (size_t i = 0; i < n; ++i) {
    const double r = ref[i];
    const double o = out[i];
    if (!std::isfinite(o) && std::isfinite(r)) {
      ++m.nonfinite;
      continue;
    }
    const double abs_err = std::fabs(o - r);
    m.max_abs = std::max(m.max_abs, abs_err);
    m.max_rel = std::max(m.max_rel, abs_err / std::max(std::fabs(r), double{std::numeric_limits<float>::min()}));
    m.max_ulp = std::max(m.max_ulp, UlpDistance(out[i], ref[i]));
    m.max_abs_ref = std::max(m.max_abs_ref, std::fabs(r));
    if (!bound_of) continue;
    const double bound = (*bound_of)(std::fabs(r), i < abs_sum.size() ? std::fabs(abs_sum[i]) : 0.0);
    const double ratio = abs_err == 0 ? 0 : bound > 0 ? abs_err / bound : std::numeric_limits<double>::infinity();
    if (ratio > m.worst_ratio || (i == 0 && ratio == 0)) {
      m.worst_ratio = ratio;
      m.bound = bound;
    }
  }
  if (out.size() != ref.size()) m.nonfinite += static_cast<int64_t>(std::max(out.size(), ref.size()) - n);
  return m;
}

}  // namespace

ErrorMetrics Compare(std::span<const float> out, std::span<const float> ref) {
  return CompareWith(out, ref, {}, nullptr);
}

ErrorMetrics Compare(std::span<const float> out, std::span<const float> ref, std::span<const float> abs_sum,
                     const ToleranceModel& model) {
  return CompareWith(out, ref, abs_sum, &model);
}

bool WithinTolerance(const ErrorMetrics& m) {
  if (m.nonfinite != 0) return false;
  return m.bounded ? m.worst_ratio <= 1.0 : m.max_abs == 0;
}

bool IsDegenerate(std::span<const float> out) {
  if (out.empty()) return true;
  const float first = out[0];
  // +0 and -0 count as one value; so does every NaN.
  return std::all_of(out.begin(), out.end(), [first](float v) {
    return v == first || (std::isnan(v) && std::isnan(first));
  });
}

}  // namespace bc
