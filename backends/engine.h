// Engine: the one interface every backend implements.
//
// availability() says whether the engine was built, whether it can run on this
// machine, and why not. algorithms() lists the candidates for a problem in the
// engine's heuristic order, each with its determinism property (from the
// engine's documentation or, where it has none, from how the engine builds it)
// and workspace; an empty list means the engine has no implementation of that
// problem. Prepare() binds a problem, a candidate and host buffers; the
// PreparedOp then runs the computation (Execute, what timings cover) and
// copies the result into the host output buffer (Fetch). Engines return
// Status, never throw.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "harness/algorithm.h"
#include "harness/buffers.h"
#include "harness/case.h"
#include "harness/problem.h"
#include "harness/status.h"

namespace bc {

struct Availability {
  std::string engine;
  bool built = false;
  bool available = false;
  std::string reason;   // why it is (not) available, always set
  std::string version;  // of the library actually loaded, where known
  // Not available because probing it failed with an error (a driver fault, a
  // bad status), not because there is no such device or library here: the
  // cases that need it fail instead of being skipped.
  bool error = false;
};

// The status of using an engine that is not available: UNAVAILABLE (not
// evaluated here), or INTERNAL when probing it failed with an error.
inline Status NotAvailable(const Availability& a) {
  return Status(a.error ? StatusCode::kInternal : StatusCode::kUnavailable, a.reason);
}

class PreparedOp {
 public:
  virtual ~PreparedOp() = default;
  virtual Status Execute() = 0;
  virtual Status Fetch() = 0;
  // What actually ran, as the engine names it ("jit:avx512_core", "CUDNN_...").
  virtual std::string implementation() const = 0;
  // The candidate that was bound, with its determinism property.
  virtual const Algorithm& algorithm() const = 0;
  // The last Execute's time measured on the device (CUDA events), when the
  // engine measures one; host timing is used otherwise.
  virtual std::optional<double> DeviceTimeNs() const { return std::nullopt; }
};

// An engine's own timed search (cudnnFind*AlgorithmEx): the time of every
// algorithm that ran, and the device memory in use at its peak.
struct EngineSearch {
  std::map<std::string, double> time_ns;
  int64_t peak_device_bytes = 0;
};

class Engine {
 public:
  virtual ~Engine() = default;
  virtual std::string_view name() const = 0;
  virtual Device device() const = 0;
  virtual Availability availability() const = 0;
  virtual std::vector<Algorithm> algorithms(const Problem& p) const = 0;
  // algorithms(p), or the engine's error when listing them failed for a
  // reason other than "no implementation" (a library or device fault must
  // fail the case, not look like a problem the engine does not serve).
  virtual Result<std::vector<Algorithm>> Candidates(const Problem& p) const { return algorithms(p); }
  // The algorithm PyTorch pins for deterministic mode with benchmark off, for
  // this problem's direction, when the engine has such a rule.
  virtual std::optional<std::string> PinnedDeterministic(const Problem&) const { return std::nullopt; }
  // The engine's own search, used by benchmark mode instead of timing each
  // candidate from the host; UNIMPLEMENTED when it has none.
  virtual Result<EngineSearch> Search(const Problem&) const {
    return Status(StatusCode::kUnimplemented, "no engine search");
  }
  // `algorithm` empty means the engine's default choice: the first candidate.
  // The inputs in `buffers` must be filled before Prepare; the buffers must
  // outlive the PreparedOp.
  virtual Result<std::unique_ptr<PreparedOp>> Prepare(const Problem& p, const std::string& algorithm,
                                                      Buffers& buffers) const = 0;
};

// Looks `name` up in engine.algorithms(p) (empty: the first); an unknown name
// is an error that lists the known ones, and no candidate at all is
// UNIMPLEMENTED.
Result<Algorithm> FindAlgorithm(const Engine& engine, const Problem& p, const std::string& name);

}  // namespace bc
