#include "backends/registry.h"

namespace bc {

bool EngineEntry::Serves(std::string_view op) const {
  if (ops == "*") return true;  // every declared operation (harness/ops)
  std::string_view rest = ops;
  while (!rest.empty()) {
    const size_t space = rest.find(' ');
    if (rest.substr(0, space) == op) return true;
    rest = space == std::string_view::npos ? std::string_view() : rest.substr(space + 1);
  }
  return false;
}

const std::vector<EngineEntry>& EngineEntries() {
  static const std::vector<EngineEntry> kEntries = {
#define BC_ENGINE(name, instance, device, ops, cudnn_selection, library, system, role)                              \
  {name, std::string_view(#device) == "cuda" ? Device::kCuda : Device::kCpu, ops, cudnn_selection, library, system, \
   role, instance()},
#define BC_BACKEND(name, availability)
#include "backends/engines.def"
#undef BC_ENGINE
#undef BC_BACKEND
  };
  return kEntries;
}

const std::vector<const Engine*>& Engines() {
  static const std::vector<const Engine*> kEngines = [] {
    std::vector<const Engine*> out;
    for (const EngineEntry& e : EngineEntries()) out.push_back(&e.engine);
    return out;
  }();
  return kEngines;
}

const EngineEntry* FindEngineEntry(std::string_view name) {
  for (const EngineEntry& e : EngineEntries()) {
    if (e.name == name) return &e;
  }
  return nullptr;
}

const Engine* FindEngine(std::string_view name) {
  const EngineEntry* e = FindEngineEntry(name);
  return e == nullptr ? nullptr : &e->engine;
}

const Engine* EngineForRole(Device device, std::string_view role) {
  for (const EngineEntry& e : EngineEntries()) {
    if (e.device == device && !role.empty() && e.role == role) return &e.engine;
  }
  return nullptr;
}

std::vector<Availability> AllAvailability() {
  std::vector<Availability> out;
  for (const EngineEntry& e : EngineEntries()) out.push_back(e.engine.availability());
#define BC_ENGINE(name, instance, device, ops, cudnn_selection, library, system, role)
#define BC_BACKEND(name, availability) out.push_back(availability());
#include "backends/engines.def"
#undef BC_ENGINE
#undef BC_BACKEND
  return out;
}

bool UsesCudnnSelection(std::string_view engine_field, std::string_view engine) {
  if (engine_field.rfind("select", 0) == 0) return true;
  const EngineEntry* e = FindEngineEntry(engine);
  return e != nullptr && e->cudnn_selection;
}

std::string_view SystemOf(std::string_view engine_field) {
  if (engine_field == "auto" || engine_field.rfind("select", 0) == 0) return kModelSystem;
  const EngineEntry* e = FindEngineEntry(engine_field);
  return e == nullptr ? kModelSystem : e->system;
}

}  // namespace bc
