#include "backends/engine.h"

namespace bc {

const char* DeterminismName(Determinism d) {
  return d == Determinism::kDeterministic ? "deterministic" : "nondeterministic";
}

ConvBuffers ConvBuffers::For(const Conv2dProblem& p) {
  ConvBuffers b;
  b.src.resize(static_cast<size_t>(p.src_elems()));
  b.wei.resize(static_cast<size_t>(p.wei_elems()));
  b.dst.resize(static_cast<size_t>(p.dst_elems()));
  return b;
}

Result<Algorithm> FindAlgorithm(const Engine& engine, const Conv2dProblem& p, const std::string& name) {
  std::string known;
  for (const Algorithm& a : engine.algorithms(p)) {
    if (a.name == name) return a;
    known += (known.empty() ? "" : ", ") + a.name;
  }
  return Status(StatusCode::kInvalidArgument, "engine " + std::string(engine.name()) + " has no algorithm '" +
                                                  name + "' for " + p.Format() + " (known: " + known + ")");
}

}  // namespace bc
