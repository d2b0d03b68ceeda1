// Algorithm: one candidate implementation of a problem, as an engine lists
// it, with its determinism property (documented, or known from how the
// engine builds it) and its workspace. Candidate adds the engine that offers
// it, so one selection can span several engines (the CPU pool: oneDNN's
// implementations plus the reference's variants).
#pragma once

#include <cstdint>
#include <string>

namespace bc {

enum class Determinism { kDeterministic, kNondeterministic };
const char* DeterminismName(Determinism d);  // "deterministic", "nondeterministic"

// An algorithm's workspace before the engine has sized it (a pinned default
// that no heuristic listed): the engine asks its library at preparation.
inline constexpr int64_t kWorkspaceUnknown = -1;

struct Algorithm {
  std::string name;
  Determinism determinism = Determinism::kDeterministic;
  int64_t workspace_bytes = 0;
};

struct Candidate {
  std::string engine;
  Algorithm algorithm;
  // "engine:algorithm", how candidates are named in evidence and repro strings.
  std::string Id() const { return engine + ":" + algorithm.name; }
};

}  // namespace bc
