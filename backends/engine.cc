#include "backends/engine.h"

namespace bc {

Result<Algorithm> FindAlgorithm(const Engine& engine, const Problem& p, const std::string& name) {
  Result<std::vector<Algorithm>> listed = engine.Candidates(p);
  if (!listed.ok()) return listed.status();
  const std::vector<Algorithm>& all = listed.value();
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
