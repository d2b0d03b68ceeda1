// The engine-independent part of the environment record: host, CPU model and
// ISA flags, thread counts, compiler and build options. The test main adds
// each engine's availability and version to it (harness has no engine code).
#pragma once

#include <nlohmann/json.hpp>

namespace bc {

nlohmann::json ProbeHostEnvironment();

}  // namespace bc
