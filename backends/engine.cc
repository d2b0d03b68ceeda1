#include "backends/engine.h"

namespace bc {

Result<Algorithm> FindAlgorithm(const Engine& engine, const Problem& p, const std::string& name) {
  BC_ASSIGN_OR_RETURN(const std::vector<Algorithm> all, engine.Candidates(p));
  if (all.empty()) {
    return Status(StatusCode::kUnimplemented,
                  std::string(engine.name()) + " has no implementation of " + FormatProblem(p));
  }
  if (name.empty()) return all.front();
  std::string known;
  for (const Algorithm& a : all) {
    if (a.name == name) return a;
    known += (known.empty() ? "" : ", ") + a.name;
  }
  return Status(StatusCode::kInvalidArgument, "engine " + std::string(engine.name()) + " has no algorithm '" +
                                                  name + "' for " + FormatProblem(p) + " (known: " + known + ")");
}

}  // namespace bc
