// The tolerance of harness/numerics.h against the arithmetic of a GPU,
// emulated on the CPU: for every problem of the GPU matrix (catalog/matrices/
// gpu.toml, every tier), each output element is recomputed the way fp32,
// TF32 and fp16 compute it: inputs rounded to TF32 or fp16, products in fp32,
// accumulation in fp32 in sequence (the order with the largest error), the
// output stored in fp16, each rounding to nearest and, separately, toward zero
// (tensor cores truncate). Every emulated result must lie within its bound,
// and the same result made wrong by 1% must not.
//
// Elements are sampled where the whole output would cost too much (about
// kWork multiply-adds per problem and variant); the model's confidence still
// counts the whole output.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cfenv>
#include <cmath>
#include <cstdio>
#include <map>
#include <random>
#include <set>
#include <sstream>

#include "backends/reference/reference.h"
#include "harness/buffers.h"
#include "harness/case.h"
#include "harness/numerics.h"

#ifndef BC_SOURCE_DIR
#error "BC_SOURCE_DIR must name the source tree"
#endif
#ifndef BC_PYTHON
#error "BC_PYTHON must name the interpreter that runs the generator"
#endif

namespace bc {
namespace {

constexpr int64_t kWork = 12'000'000;

// Every problem (as fp32, NCHW) that a GPU case of any tier runs.
std::vector<Problem> ListGpuMatrixProblems() {
  const std::string command = std::string("cd '") + BC_SOURCE_DIR + "' && BACKENDCHECK_PROBLEM_TOOL='" +
                              BC_PROBLEM_TOOL + "' '" + BC_PYTHON +
                              "' -m generators list --tier nightly catalog/matrices/gpu.toml";
  FILE* pipe = popen(command.c_str(), "r");
  std::vector<Problem> out;
  if (pipe == nullptr) return out;
  std::set<std::string> seen;
  char line[4096];
  while (std::fgets(line, sizeof(line), pipe) != nullptr) {
    const std::string text(line);
    if (text.rfind("    ", 0) != 0) continue;  // the repro lines are indented
    Result<CaseSpec> spec = ParseCaseSpec(text.substr(4, text.find_last_not_of("\n") - 3));
    if (!spec.ok()) continue;
    for (Problem p : spec->steps) {
      if (auto* c = std::get_if<Conv2dProblem>(&p)) {
        c->dtype = DataType::kF32;
        c->layout = Layout::kNchw;
      } else if (auto* m = std::get_if<MatmulProblem>(&p)) {
        m->dtype = DataType::kF32;
      }
      if (seen.insert(FormatProblem(p)).second) out.push_back(p);
    }
  }
  pclose(pipe);
  return out;
}

// Listed once per process (the generator runs in a child process).
const std::vector<Problem>& GpuMatrixProblems() {
  static const std::vector<Problem> problems = ListGpuMatrixProblems();
  return problems;
}

Problem AsHalf(Problem p) {
  std::visit([](auto& q) { q.dtype = DataType::kF16; }, p);
  return p;
}

// The products summed into output element `i` (buffers are logical NCHW).
void Terms(const Problem& p, const Buffers& b, int64_t i, std::vector<std::pair<float, float>>& t) {
  t.clear();
  if (const auto* m = std::get_if<MatmulProblem>(&p)) {
    const int64_t row = i / m->n, col = i % m->n;
    for (int64_t k = 0; k < m->k; ++k) t.emplace_back(b["src"][row * m->k + k], b["wei"][k * m->n + col]);
    return;
  }
  const Conv2dProblem& c = std::get<Conv2dProblem>(p);
  const int64_t icg = c.ic / c.g, ocg = c.oc / c.g, oh = c.oh(), ow = c.ow();
  const auto x = [&](int64_t n, int64_t ch, int64_t h, int64_t w) { return b["src"][((n * c.ic + ch) * c.ih + h) * c.iw + w]; };
  const auto wt = [&](int64_t o, int64_t ch, int64_t r, int64_t s) { return b["wei"][((o * icg + ch) * c.kh + r) * c.kw + s]; };
  const auto y = [&](int64_t n, int64_t o, int64_t h, int64_t w) { return b["dst"][((n * c.oc + o) * oh + h) * ow + w]; };
  switch (c.direction) {
    case Direction::kForward: {
      const int64_t n = i / (c.oc * oh * ow), o = i / (oh * ow) % c.oc, yy = i / ow % oh, xx = i % ow;
      const int64_t g = o / ocg;
      for (int64_t ch = 0; ch < icg; ++ch) {
        for (int64_t r = 0; r < c.kh; ++r) {
          for (int64_t s = 0; s < c.kw; ++s) {
            const int64_t h = yy * c.sh - c.ph + r * c.dh, w = xx * c.sw - c.pw + s * c.dw;
            if (h >= 0 && h < c.ih && w >= 0 && w < c.iw) t.emplace_back(x(n, g * icg + ch, h, w), wt(o, ch, r, s));
          }
        }
      }
      return;
    }
    case Direction::kBackwardData: {
      const int64_t n = i / (c.ic * c.ih * c.iw), cin = i / (c.ih * c.iw) % c.ic, h = i / c.iw % c.ih, w = i % c.iw;
      const int64_t g = cin / icg, ch = cin % icg;
      for (int64_t ol = 0; ol < ocg; ++ol) {
        for (int64_t r = 0; r < c.kh; ++r) {
          for (int64_t s = 0; s < c.kw; ++s) {
            const int64_t th = h + c.ph - r * c.dh, tw = w + c.pw - s * c.dw;
            if (th < 0 || tw < 0 || th % c.sh != 0 || tw % c.sw != 0) continue;
            const int64_t yy = th / c.sh, xx = tw / c.sw;
            if (yy < oh && xx < ow) t.emplace_back(wt(g * ocg + ol, ch, r, s), y(n, g * ocg + ol, yy, xx));
          }
        }
      }
      return;
    }
    case Direction::kBackwardWeights: {
      const int64_t o = i / (icg * c.kh * c.kw), ch = i / (c.kh * c.kw) % icg, r = i / c.kw % c.kh, s = i % c.kw;
      const int64_t g = o / ocg;
      for (int64_t n = 0; n < c.mb; ++n) {
        for (int64_t yy = 0; yy < oh; ++yy) {
          for (int64_t xx = 0; xx < ow; ++xx) {
            const int64_t h = yy * c.sh - c.ph + r * c.dh, w = xx * c.sw - c.pw + s * c.dw;
            if (h >= 0 && h < c.ih && w >= 0 && w < c.iw) t.emplace_back(x(n, g * icg + ch, h, w), y(n, o, yy, xx));
          }
        }
      }
      return;
    }
  }
}

enum class Mode { kNearest, kTowardZero };

float Tf32(float v, Mode m) {
  uint32_t bits = std::bit_cast<uint32_t>(v);
  if (m == Mode::kNearest) bits += 0xFFFu + ((bits >> 13) & 1u);  // ties to even
  return std::bit_cast<float>(bits & ~0x1FFFu);
}

float Half(float v, Mode m) {
  if (m == Mode::kNearest || std::fabs(v) < 0x1p-14f) return RoundToHalf(v);
  return std::bit_cast<float>(std::bit_cast<uint32_t>(v) & ~0x1FFFu);  // a normal half keeps 10 bits
}

// The fp environment's rounding mode for a scope.
class RoundingScope {
 public:
  explicit RoundingScope(Mode m) : saved_(std::fegetround()) {
    std::fesetround(m == Mode::kNearest ? FE_TONEAREST : FE_TOWARDZERO);
  }
  ~RoundingScope() { std::fesetround(saved_); }

 private:
  int saved_;
};

// One element as `type` computes it, rounding in `mode`.
float Emulate(const std::vector<std::pair<float, float>>& terms, ComputeType type, Mode mode) {
  const RoundingScope scope(mode);
  volatile float acc = 0;  // volatile: each addition rounds in the scope's mode, in order
  for (const auto& [a, b] : terms) {
    const float x = type == ComputeType::kTf32 ? Tf32(a, mode) : a;
    const float w = type == ComputeType::kTf32 ? Tf32(b, mode) : b;
    volatile float product = x * w;  // rounded on its own, not fused into the addition
    acc = acc + product;
  }
  return type == ComputeType::kF16 ? Half(acc, mode) : acc;
}

struct Sampled {
  std::vector<float> ref, abs_sum;
  std::vector<int64_t> index;
};

struct Outcome {
  double worst_ratio = 0;      // the emulated result against its bound
  double caught_scaled = 0;    // the result scaled by 1.01: worst ratio (> 1: caught)
  double caught_one = 0;       // one element off by 1% of max|ref|
};

std::string Describe(const Problem& p, ComputeType t, Mode m) {
  return FormatProblem(p) + " " + ComputeTypeName(t) + (m == Mode::kNearest ? " nearest" : " toward zero");
}

class GpuArithmetic : public testing::TestWithParam<ComputeType> {};

TEST_P(GpuArithmetic, BoundHoldsOnEveryGpuShapeAndCatchesOnePercent) {
  const ComputeType type = GetParam();
  const std::vector<Problem>& problems = GpuMatrixProblems();
  ASSERT_GE(problems.size(), 10u) << "the GPU matrix did not expand (" << BC_PYTHON << " -m generators list)";
  std::ostringstream table;
  std::vector<std::pair<float, float>> terms;
  for (const Problem& base : problems) {
    const Problem p = type == ComputeType::kF16 ? AsHalf(base) : base;
    Buffers b = Buffers::For(p);
    FillInputs(p, b);
    const int64_t n = static_cast<int64_t>(b.Output(p).size());
    const int64_t k = AccumulationLength(p);
    const int64_t want = std::clamp<int64_t>(kWork / std::max<int64_t>(1, k), 64, n);
    Sampled s;
    std::mt19937_64 rng(ProblemSeed(p));
    for (int64_t j = 0; j < want; ++j) s.index.push_back(want == n ? j : static_cast<int64_t>(rng() % n));
    double max_ref = 0;
    size_t max_at = 0;
    std::vector<std::vector<std::pair<float, float>>> all_terms;
    for (int64_t i : s.index) {
      Terms(p, b, i, terms);
      double y = 0, a = 0;
      for (const auto& [u, v] : terms) {
        y += static_cast<double>(u) * v;
        a += std::fabs(static_cast<double>(u) * v);
      }
      s.ref.push_back(static_cast<float>(y));
      s.abs_sum.push_back(static_cast<float>(a));
      if (std::fabs(y) > max_ref) {
        max_ref = std::fabs(y);
        max_at = s.ref.size() - 1;
      }
      all_terms.push_back(terms);
    }
    const ToleranceModel model = ModelOf(p, b, type);
    for (Mode mode : {Mode::kNearest, Mode::kTowardZero}) {
      std::vector<float> out;
      for (const auto& t : all_terms) out.push_back(Emulate(t, type, mode));
      const ErrorMetrics held = Compare(out, s.ref, s.abs_sum, model);
      EXPECT_TRUE(WithinTolerance(held)) << Describe(p, type, mode) << ": error " << held.max_abs
                                         << " is " << held.worst_ratio << " of its bound " << held.bound;
      std::vector<float> scaled = out, one = out;
      for (size_t j = 0; j < out.size(); ++j) scaled[j] = out[j] + 0.01f * s.ref[j];
      one[(max_at + out.size() / 2) % out.size()] += static_cast<float>(0.01 * max_ref);
      const ErrorMetrics wrong = Compare(scaled, s.ref, s.abs_sum, model);
      const ErrorMetrics wrong_one = Compare(one, s.ref, s.abs_sum, model);
      EXPECT_FALSE(WithinTolerance(wrong)) << Describe(p, type, mode) << ": a 1% error passes (worst "
                                           << wrong.worst_ratio << " of the bound)";
      EXPECT_FALSE(WithinTolerance(wrong_one)) << Describe(p, type, mode)
                                               << ": one element off by 1% of max|ref| passes";
      char row[256];
      std::snprintf(row, sizeof(row), "%-70s %-12s k=%-8lld error/bound %.3f  1%%-error/bound %.2f (one element %.2f)\n",
                    FormatProblem(p).c_str(), mode == Mode::kNearest ? "nearest" : "toward-zero",
                    static_cast<long long>(k), held.worst_ratio, wrong.worst_ratio, wrong_one.worst_ratio);
      table << row;
    }
  }
  std::printf("%s bound over the GPU matrix (emulated):\n%s", ComputeTypeName(type), table.str().c_str());
}

INSTANTIATE_TEST_SUITE_P(Emulated, GpuArithmetic,
                         testing::Values(ComputeType::kF32, ComputeType::kTf32, ComputeType::kF16),
                         [](const testing::TestParamInfo<ComputeType>& info) {
                           return std::string(ComputeTypeName(info.param));
                         });

// The products the emulation sums are the oracle's: its exact sums agree
// with ReferenceCompute on every element of a small problem per direction.
TEST(GpuArithmetic, TermsAreTheReferencesTerms) {
  std::vector<std::pair<float, float>> terms;
  for (const char* text : {"conv2d:fwd:f32:mb2ic4ih7oc6kh3ph1sh2g2", "conv2d:bwd_data:f32:mb2ic4ih7oc6kh3ph1sh2g2",
                           "conv2d:bwd_weights:f32:mb2ic4ih7oc6kh3ph1sh2g2", "matmul:f32:m5n3k7"}) {
    const Problem p = ParseProblem(text).value();
    Buffers b = Buffers::For(p);
    FillInputs(p, b);
    Buffers ref = b;
    ReferenceCompute(p, ref);
    const std::vector<float>& want = ref.Output(p);
    for (int64_t i = 0; i < static_cast<int64_t>(want.size()); ++i) {
      Terms(p, b, i, terms);
      double y = 0;
      for (const auto& [u, v] : terms) y += static_cast<double>(u) * v;
      ASSERT_EQ(static_cast<float>(y), want[i]) << text << " element " << i;
    }
  }
}

}  // namespace
}  // namespace bc
