#include "backends/engine.h"
#include "backends/registry.h"
#include "harness/tf32.h"

namespace bc {

Availability UnbuiltEngine::availability() const {
  return {.engine = std::string(name()), .built = false, .available = false, .reason = reason_};
}

Result<EngineSearch> UnbuiltEngine::Search(const Problem&, const BackendFlags&, const Buffers&) const {
  return Status(StatusCode::kUnavailable, reason_);
}

Result<std::unique_ptr<PreparedOp>> UnbuiltEngine::Prepare(const Problem&, const Algorithm&, Buffers&,
                                                           const BackendFlags&) const {
  return Status(StatusCode::kUnavailable, reason_);
}

namespace {

std::vector<Algorithm> OnlyNondeterministic(std::vector<Algorithm> all) {
  std::erase_if(all, [](const Algorithm& a) { return a.determinism != Determinism::kNondeterministic; });
  return all;
}

}  // namespace

Result<std::vector<Algorithm>> NondeterministicAlgorithms(const Engine& engine, const Problem& p,
                                                          const BackendFlags& flags) {
  BC_ASSIGN_OR_RETURN(std::vector<Algorithm> all, engine.Candidates(p, flags));
  return OnlyNondeterministic(std::move(all));
}

Result<Algorithm> FindAlgorithm(const Engine& engine, const Problem& p, const std::string& name,
                                const BackendFlags& flags) {
  BC_ASSIGN_OR_RETURN(const std::vector<Algorithm> all, engine.Candidates(p, flags));
  if (all.empty()) {
    return Status(StatusCode::kUnimplemented,
                  std::string(engine.name()) + " has no implementation of " + FormatProblem(p));
  }
  if (name.empty()) return all.front();
  if (name == kAnyNondeterministic) {
    if (const std::vector<Algorithm> racy = OnlyNondeterministic(all); !racy.empty()) return racy.front();
    return Status(StatusCode::kUnimplemented, std::string(engine.name()) + " offers no nondeterministic algorithm for " +
                                                  FormatProblem(p) + " under these flags");
  }
  std::string known;
  for (const Algorithm& a : all) {
    if (a.name == name) return a;
    known += (known.empty() ? "" : ", ") + a.name;
  }
  return Status(StatusCode::kInvalidArgument, "engine " + std::string(engine.name()) + " has no algorithm '" +
                                                  name + "' for " + FormatProblem(p) + " (known: " + known + ")");
}

ComputeType CudnnComputeType(const Problem& p, const BackendFlags& flags) {
  const ComputeType plain = PlainComputeType(p);
  return plain == ComputeType::kF32 && CudnnConvTf32(flags) ? ComputeType::kTf32 : plain;
}

ComputeType CublasComputeType(const Problem& p, const BackendFlags& flags) {
  const ComputeType plain = PlainComputeType(p);
  return plain == ComputeType::kF32 && CublasTf32(flags) ? ComputeType::kTf32 : plain;
}

ComputeType ComputeTypeOf(const Problem& p, std::string_view engine, const BackendFlags& flags) {
  const Engine* e = FindEngine(engine);
  return e != nullptr ? e->compute_type(p, flags) : PlainComputeType(p);
}

}  // namespace bc
