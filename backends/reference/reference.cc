#include "backends/reference/reference.h"
#include "backends/registry.h"

#include <omp.h>

#include <algorithm>
#include <cmath>

namespace bc {
namespace {

// Index helpers for NCHW activations and (G*OC/G)IHW weights.
struct Geometry {
  int64_t mb, ic, ih, iw, oc, kh, kw, sh, sw, ph, pw, dh, dw, g, oh, ow, icg, ocg;
  explicit Geometry(const Conv2dProblem& p)
      : mb(p.mb), ic(p.ic), ih(p.ih), iw(p.iw), oc(p.oc), kh(p.kh), kw(p.kw), sh(p.sh), sw(p.sw),
        ph(p.ph), pw(p.pw), dh(p.dh), dw(p.dw), g(p.g), oh(p.oh()), ow(p.ow()), icg(p.ic / p.g),
        ocg(p.oc / p.g) {}
  int64_t src(int64_t n, int64_t c, int64_t y, int64_t x) const { return ((n * ic + c) * ih + y) * iw + x; }
  int64_t dst(int64_t n, int64_t k, int64_t y, int64_t x) const { return ((n * oc + k) * oh + y) * ow + x; }
  int64_t wei(int64_t k, int64_t c, int64_t r, int64_t s) const { return ((k * icg + c) * kh + r) * kw + s; }
};

void AtomicAdd(float& out, float v) {
#pragma omp atomic
  out += v;
}

// The atomic algorithm's threads: with two or more, kOversubscribe times as
// many as the case asks for. Two threads race only while both run: on a
// machine whose cores are taken by other work they may run one after the
// other, each taking the next task in order, and every run then adds in the
// same order. With more threads than cores the scheduler preempts them in
// the middle of their tasks and another thread's later task lands first,
// the way a GPU's many warps interleave their atomics.
constexpr int kOversubscribe = 4;
int RaceThreads() {
  const int threads = omp_get_max_threads();
  return threads < 2 ? 1 : threads * kOversubscribe;
}

// Forward: the sum over group-local input channels [c0, c1) and the kernel
// window, for one output element.
double ForwardPartial(const Geometry& G, const Buffers& b, int64_t n, int64_t k, int64_t y, int64_t x, int64_t c0,
                      int64_t c1) {
  const int64_t group = k / G.ocg;
  double acc = 0;
  for (int64_t c = c0; c < c1; ++c) {
    const int64_t cin = group * G.icg + c;
    for (int64_t r = 0; r < G.kh; ++r) {
      const int64_t iy = y * G.sh - G.ph + r * G.dh;
      if (iy < 0 || iy >= G.ih) continue;
      for (int64_t s = 0; s < G.kw; ++s) {
        const int64_t ix = x * G.sw - G.pw + s * G.dw;
        if (ix < 0 || ix >= G.iw) continue;
        acc += static_cast<double>(b.src[G.src(n, cin, iy, ix)]) * b.wei[G.wei(k, c, r, s)];
      }
    }
  }
  return acc;
}

// Backward-data: the sum over output channels [k0, k1) of the group and the
// kernel window, for one input element.
double DataPartial(const Geometry& G, const Buffers& b, int64_t n, int64_t cin, int64_t y, int64_t x, int64_t k0,
                   int64_t k1) {
  const int64_t group = cin / G.icg;
  const int64_t c = cin % G.icg;
  double acc = 0;
  for (int64_t kk = k0; kk < k1; ++kk) {
    const int64_t k = group * G.ocg + kk;
    for (int64_t r = 0; r < G.kh; ++r) {
      const int64_t ty = y + G.ph - r * G.dh;
      if (ty < 0 || ty % G.sh != 0 || ty / G.sh >= G.oh) continue;
      for (int64_t s = 0; s < G.kw; ++s) {
        const int64_t tx = x + G.pw - s * G.dw;
        if (tx < 0 || tx % G.sw != 0 || tx / G.sw >= G.ow) continue;
        acc += static_cast<double>(b.dst[G.dst(n, k, ty / G.sh, tx / G.sw)]) * b.wei[G.wei(k, c, r, s)];
      }
    }
  }
  return acc;
}

// Backward-weights: the sum over output rows [y0, y1) of samples [n0, n1),
// for one weight element.
double WeightsPartial(const Geometry& G, const Buffers& b, int64_t k, int64_t c, int64_t r, int64_t s, int64_t n0,
                      int64_t n1, int64_t y0, int64_t y1) {
  const int64_t cin = (k / G.ocg) * G.icg + c;
  double acc = 0;
  for (int64_t n = n0; n < n1; ++n) {
    for (int64_t y = y0; y < y1; ++y) {
      const int64_t iy = y * G.sh - G.ph + r * G.dh;
      if (iy < 0 || iy >= G.ih) continue;
      for (int64_t x = 0; x < G.ow; ++x) {
        const int64_t ix = x * G.sw - G.pw + s * G.dw;
        if (ix < 0 || ix >= G.iw) continue;
        acc += static_cast<double>(b.src[G.src(n, cin, iy, ix)]) * b.dst[G.dst(n, k, y, x)];
      }
    }
  }
  return acc;
}

void ConvOwner(const Conv2dProblem& p, Buffers& b) {
  const Geometry G(p);
  switch (p.direction) {
    case Direction::kForward:
#pragma omp parallel for collapse(2) schedule(static)
      for (int64_t n = 0; n < G.mb; ++n)
        for (int64_t k = 0; k < G.oc; ++k)
          for (int64_t y = 0; y < G.oh; ++y)
            for (int64_t x = 0; x < G.ow; ++x)
              b.dst[G.dst(n, k, y, x)] = static_cast<float>(ForwardPartial(G, b, n, k, y, x, 0, G.icg));
      break;
    case Direction::kBackwardData:
#pragma omp parallel for collapse(2) schedule(static)
      for (int64_t n = 0; n < G.mb; ++n)
        for (int64_t c = 0; c < G.ic; ++c)
          for (int64_t y = 0; y < G.ih; ++y)
            for (int64_t x = 0; x < G.iw; ++x)
              b.src[G.src(n, c, y, x)] = static_cast<float>(DataPartial(G, b, n, c, y, x, 0, G.ocg));
      break;
    case Direction::kBackwardWeights:
#pragma omp parallel for collapse(2) schedule(static)
      for (int64_t k = 0; k < G.oc; ++k)
        for (int64_t c = 0; c < G.icg; ++c)
          for (int64_t r = 0; r < G.kh; ++r)
            for (int64_t s = 0; s < G.kw; ++s)
              b.wei[G.wei(k, c, r, s)] = static_cast<float>(WeightsPartial(G, b, k, c, r, s, 0, G.mb, 0, G.oh));
      break;
  }
}

// Each task adds one reduction slice (one input channel, one output channel,
// or one sample's output row) into every output it touches.
void ConvAtomic(const Conv2dProblem& p, Buffers& b) {
  const Geometry G(p);
  switch (p.direction) {
    case Direction::kForward:
      std::fill(b.dst.begin(), b.dst.end(), 0.0f);
#pragma omp parallel for collapse(2) schedule(dynamic, 1) num_threads(RaceThreads())
      for (int64_t n = 0; n < G.mb; ++n)
        for (int64_t c = 0; c < G.icg; ++c)
          for (int64_t k = 0; k < G.oc; ++k)
            for (int64_t y = 0; y < G.oh; ++y)
              for (int64_t x = 0; x < G.ow; ++x)
                AtomicAdd(b.dst[G.dst(n, k, y, x)], static_cast<float>(ForwardPartial(G, b, n, k, y, x, c, c + 1)));
      break;
    case Direction::kBackwardData:
      std::fill(b.src.begin(), b.src.end(), 0.0f);
#pragma omp parallel for collapse(2) schedule(dynamic, 1) num_threads(RaceThreads())
      for (int64_t n = 0; n < G.mb; ++n)
        for (int64_t kk = 0; kk < G.ocg; ++kk)
          for (int64_t c = 0; c < G.ic; ++c)
            for (int64_t y = 0; y < G.ih; ++y)
              for (int64_t x = 0; x < G.iw; ++x)
                AtomicAdd(b.src[G.src(n, c, y, x)], static_cast<float>(DataPartial(G, b, n, c, y, x, kk, kk + 1)));
      break;
    case Direction::kBackwardWeights:
      std::fill(b.wei.begin(), b.wei.end(), 0.0f);
#pragma omp parallel for collapse(2) schedule(dynamic, 1) num_threads(RaceThreads())
      for (int64_t n = 0; n < G.mb; ++n)
        for (int64_t y = 0; y < G.oh; ++y)
          for (int64_t k = 0; k < G.oc; ++k)
            for (int64_t c = 0; c < G.icg; ++c)
              for (int64_t r = 0; r < G.kh; ++r)
                for (int64_t s = 0; s < G.kw; ++s)
                  AtomicAdd(b.wei[G.wei(k, c, r, s)],
                            static_cast<float>(WeightsPartial(G, b, k, c, r, s, n, n + 1, y, y + 1)));
      break;
  }
}

// Reduction slice of the atomic matmul: small, so each output gets many adds.
constexpr int64_t kMatmulSlice = 4;

void MatmulCompute(const MatmulProblem& p, Buffers& b, bool atomic) {
  const int64_t M = p.m, N = p.n, K = p.k;
  if (!atomic) {
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < M; ++i) {
      for (int64_t j = 0; j < N; ++j) {
        double acc = 0;
        for (int64_t k = 0; k < K; ++k) acc += static_cast<double>(b.src[i * K + k]) * b.wei[k * N + j];
        b.dst[i * N + j] = static_cast<float>(acc);
      }
    }
    return;
  }
  std::fill(b.dst.begin(), b.dst.end(), 0.0f);
  const int64_t slices = (K + kMatmulSlice - 1) / kMatmulSlice;
#pragma omp parallel for collapse(2) schedule(dynamic, 1) num_threads(RaceThreads())
  for (int64_t i = 0; i < M; ++i) {
    for (int64_t slice = 0; slice < slices; ++slice) {
      const int64_t k0 = slice * kMatmulSlice, k1 = std::min(K, k0 + kMatmulSlice);
      for (int64_t j = 0; j < N; ++j) {
        double acc = 0;
        for (int64_t k = k0; k < k1; ++k) acc += static_cast<double>(b.src[i * K + k]) * b.wei[k * N + j];
        AtomicAdd(b.dst[i * N + j], static_cast<float>(acc));
      }
    }
  }
}

void ScatterAddAtomic(const ScatterAddProblem& p, Buffers& b) {
  std::fill(b.dst.begin(), b.dst.end(), 0.0f);
#pragma omp parallel for schedule(dynamic, 256) num_threads(RaceThreads())
  for (int64_t i = 0; i < p.n; ++i) AtomicAdd(b.dst[static_cast<size_t>(b.index[i])], b.src[i]);
}

// Every value added into its destination in index order, in fp64: one pass,
// one owner, the same bits for any thread count (PyTorch's CPU scatter_add is
// deterministic too: it has no alert under use_deterministic_algorithms).
void ScatterAddOwner(const ScatterAddProblem& p, Buffers& b) {
  std::vector<double> acc(b.dst.size(), 0.0);
  for (int64_t i = 0; i < p.n; ++i) acc[static_cast<size_t>(b.index[i])] += b.src[i];
  for (size_t j = 0; j < acc.size(); ++j) b.dst[j] = static_cast<float>(acc[j]);
}

void Compute(const Problem& p, Buffers& b, bool atomic) {
  if (const auto* c = std::get_if<Conv2dProblem>(&p)) {
    atomic ? ConvAtomic(*c, b) : ConvOwner(*c, b);
  } else if (const auto* m = std::get_if<MatmulProblem>(&p)) {
    MatmulCompute(*m, b, atomic);
  } else if (const auto* s = std::get_if<ScatterAddProblem>(&p)) {
    atomic ? ScatterAddAtomic(*s, b) : ScatterAddOwner(*s, b);
  }
}

class ReferencePrepared final : public PreparedOp {
 public:
  ReferencePrepared(const Problem& p, Algorithm algorithm, Buffers& b)
      : p_(p), algorithm_(std::move(algorithm)), b_(b) {}
  Status Execute() override {
    Compute(p_, b_, algorithm_.name == "atomic");
    return Status::Ok();
  }
  Status Fetch() override { return Status::Ok(); }  // computes in place on host buffers
  std::string implementation() const override { return "reference:" + algorithm_.name; }
  const Algorithm& algorithm() const override { return algorithm_; }

 private:
  Problem p_;
  Algorithm algorithm_;
  Buffers& b_;
};

}  // namespace

void ReferenceCompute(const Problem& p, Buffers& b) { Compute(p, b, /*atomic=*/false); }

namespace {

float MaxAbs(const std::vector<float>& v) {
  float m = 0;
  for (float x : v) m = std::max(m, std::fabs(x));
  return m;
}

}  // namespace

ToleranceModel ModelOf(const Problem& p, const Buffers& b, ComputeType type) {
  ToleranceModel m;
  m.type = type;
  const auto* scatter = std::get_if<ScatterAddProblem>(&p);
  m.accumulation_length = scatter != nullptr ? scatter->n : AccumulationLength(p);
  const auto [a, w] = b.Operands(p);
  m.max_term = static_cast<double>(MaxAbs(*a)) * (w != nullptr ? MaxAbs(*w) : 1.0);
  m.outputs = static_cast<int64_t>(b.Output(p).size());
  return m;
}

ErrorMetrics CheckAgainstReference(const Problem& p, const Buffers& inputs, std::span<const float> out,
                                   ComputeType type) {
  Buffers ref = inputs;  // the oracle overwrites the output
  ReferenceCompute(p, ref);
  Buffers magnitudes = inputs;
  for (std::vector<float>* v : {&magnitudes.src, &magnitudes.wei, &magnitudes.dst}) {
    for (float& x : *v) x = std::fabs(x);
  }
  ReferenceCompute(p, magnitudes);
  return Compare(out, ref.Output(p), magnitudes.Output(p), ModelOf(p, inputs, type));
}

class ReferenceEngine final : public Engine {
 public:
  ReferenceEngine() : Engine("reference", Device::kCpu) {}
  Availability availability() const override;
  Result<std::vector<Algorithm>> Candidates(const Problem& p, const BackendFlags& flags) const override;
  std::optional<std::string> PinnedDeterministic(const Problem& p) const override;
  Result<std::unique_ptr<PreparedOp>> Prepare(const Problem& p, const Algorithm& algorithm, Buffers& buffers,
                                              const BackendFlags& flags) const override;
};

const Engine& ReferenceEngineInstance() {
  static const ReferenceEngine kEngine;
  return kEngine;
}

Availability ReferenceEngine::availability() const {
  return {"reference", true, true, "built in: OpenMP loops accumulating in fp64", "1"};
}

Result<std::vector<Algorithm>> ReferenceEngine::Candidates(const Problem& p, const BackendFlags&) const {
  if (!IsPlainF32(p)) return std::vector<Algorithm>{};  // the oracle serves other types through ReferenceCompute only
  const Algorithm atomic{"atomic", Determinism::kNondeterministic, 0};
  return std::vector<Algorithm>{{"owner", Determinism::kDeterministic, 0}, atomic};
}

std::optional<std::string> ReferenceEngine::PinnedDeterministic(const Problem&) const { return "owner"; }

Result<std::unique_ptr<PreparedOp>> ReferenceEngine::Prepare(const Problem& p, const Algorithm& algorithm,
                                                             Buffers& buffers, const BackendFlags&) const {
  if (algorithm.name != "owner" && algorithm.name != "atomic") {
    return Status(StatusCode::kInvalidArgument, "reference has no algorithm '" + algorithm.name + "'");
  }
  return std::unique_ptr<PreparedOp>(new ReferencePrepared(p, algorithm, buffers));
}

}  // namespace bc
