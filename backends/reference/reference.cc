#include "backends/reference/reference.h"
#include "backends/registry.h"

#include <algorithm>
#include <cmath>

namespace bc {
namespace {

class ReferencePrepared final : public PreparedOp {
 public:
  ReferencePrepared(const Problem& p, Algorithm algorithm, Buffers& b)
      : p_(p), algorithm_(std::move(algorithm)), b_(b) {}
  Status Execute() override {
    RunReference(p_, b_, algorithm_.name == "atomic");
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

void ReferenceCompute(const Problem& p, Buffers& b) { RunReference(p, b, /*racy=*/false); }

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
  m.accumulation_length = BoundLength(p);
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
  for (auto& [role, v] : magnitudes.floats()) {
    for (float& x : v) x = std::fabs(x);
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
