// The engines of this build, from backends/engines.def (the one list, also
// read by Python), and the availability of every backend torch.backends
// names, including those that are not engines here (openmp, mps).
#pragma once

#include <string_view>
#include <vector>

#include "backends/engine.h"

namespace bc {

// One line of engines.def.
struct EngineEntry {
  std::string_view name;
  Device device;
  std::string_view ops;  // space-separated
  bool cudnn_selection;
  std::string_view library;
  std::string_view system;  // whose behaviour its evidence shows
  std::string_view role;    // its path in the model of PyTorch's dispatch: mkldnn, native, cudnn, blas or ""
  const Engine& engine;

  bool Serves(std::string_view op) const;
  // The harness's fp64 oracle (system "reference"): what every other engine
  // is checked against, placed in the benchmarks but never raced.
  bool IsOracle() const { return system == "reference"; }
};

// In engines.def order: the heuristic order of the select pools.
const std::vector<EngineEntry>& EngineEntries();
const std::vector<const Engine*>& Engines();
// nullptr when no engine has that name.
const Engine* FindEngine(std::string_view name);
// The engine whose engines.def line claims `role` on `device` (the first, in
// file order); nullptr when none does.
const Engine* EngineForRole(Device device, std::string_view role);
const EngineEntry* FindEngineEntry(std::string_view name);
// Every engine's and every other backend's: what torch.backends.*.is_available()
// and torch.cuda.is_available() mirror.
std::vector<Availability> AllAvailability();

// Whether a case whose engine field is `engine_field` ("auto", "select",
// "select:NAME", NAME), running on `engine`, chooses its algorithm under
// cuDNN's selection semantics: always under select, otherwise when the
// engine's registry line says so.
bool UsesCudnnSelection(std::string_view engine_field, std::string_view engine);

// The harness's re-implementation of PyTorch's dispatch and cuDNN selection,
// as verdicts name it: what its evidence shows never decides a claim.
inline constexpr std::string_view kModelSystem = "model";

// The system whose behaviour a case with this engine field shows: the model
// when dispatch chooses (auto, select, select:NAME), otherwise the engine's
// registry line (the model for an unknown name).
std::string_view SystemOf(std::string_view engine_field);

// Each engine's instance function and each backend's availability, as
// engines.def names them; defined in the engine's own .cc.
#define BC_ENGINE(name, instance, device, ops, cudnn_selection, library, system, role) const Engine& instance();
#define BC_BACKEND(name, availability) Availability availability();
#include "backends/engines.def"
#undef BC_ENGINE
#undef BC_BACKEND

}  // namespace bc
