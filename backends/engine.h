// Engine: the one interface every backend implements.
//
// availability() says whether the engine was built, whether it can run on this
// machine, and why not. algorithms() lists the candidates for a problem, each
// with its determinism property (from the engine's documentation or, where it
// has none, from the engine's construction) and workspace. Prepare() binds a
// problem, a candidate and host buffers; the PreparedConv then runs the
// computation (Execute, what timings cover) and copies the result into the
// host output buffer (Fetch). Engines return Status, never throw.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

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
};

enum class Determinism { kDeterministic, kNondeterministic };
const char* DeterminismName(Determinism d);  // "deterministic", "nondeterministic"

struct Algorithm {
  std::string name;
  Determinism determinism = Determinism::kDeterministic;
  int64_t workspace_bytes = 0;
};

// Host tensors of one problem. fwd: src, wei in; dst out.
// bwd_weights: src, dst (diff_dst) in; wei (diff_weights) out.
struct ConvBuffers {
  std::vector<float> src, wei, dst;
  static ConvBuffers For(const Conv2dProblem& p);
  std::vector<float>& output(Direction d) { return d == Direction::kForward ? dst : wei; }
};

class PreparedConv {
 public:
  virtual ~PreparedConv() = default;
  virtual Status Execute() = 0;
  virtual Status Fetch() = 0;
  // What actually ran, as the engine names it ("jit:avx512_core", "CUDNN_...").
  virtual std::string implementation() const = 0;
  // The candidate that was bound, with its determinism property.
  virtual const Algorithm& algorithm() const = 0;
};

class Engine {
 public:
  virtual ~Engine() = default;
  virtual std::string_view name() const = 0;
  virtual Device device() const = 0;
  virtual Availability availability() const = 0;
  virtual std::vector<Algorithm> algorithms(const Conv2dProblem& p) const = 0;
  // `algorithm` empty means the engine's default choice under CurrentFlags().
  // The inputs in `buffers` must be filled before Prepare; the buffers must
  // outlive the PreparedConv.
  virtual Result<std::unique_ptr<PreparedConv>> Prepare(const Conv2dProblem& p, const std::string& algorithm,
                                                        ConvBuffers& buffers) const = 0;
};

// Looks `name` up in engine.algorithms(p); an unknown name is an error that
// lists the known ones.
Result<Algorithm> FindAlgorithm(const Engine& engine, const Conv2dProblem& p, const std::string& name);

}  // namespace bc
