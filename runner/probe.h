// Probe mode: a test binary run as `BINARY --bc_probe=REPRO [--bc_repeats=N]`
// runs that one case and prints one JSON line with, per step, the chosen
// candidate, the implementation and the output digests, and exits (0 ran,
// 3 not evaluated here, 1 failed). CrossProcess runs probes in fresh
// processes, so each starts with an empty selector cache and its own
// environment. In a probe, OMP_NUM_THREADS (when set) overrides the case's
// thread count, so the environment decides it.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/status.h"

namespace bc {

inline constexpr int kProbeNotEvaluated = 3;

// Handles probe mode when argv asks for it; returns the exit code then.
std::optional<int> MaybeRunProbe(int argc, char** argv);

struct ProbeResult {
  int exit_code = 0;
  nlohmann::json output;  // the probe's JSON line
  std::string stderr_text;
};

// Runs this binary as a probe of `repro` with `env` added to the environment
// (evidence directories removed, so probes write no evidence).
Result<ProbeResult> SpawnProbe(const std::string& repro, int repeats, const std::map<std::string, std::string>& env);

// Runs `args` (args[0] looked up on PATH) with exactly `env` ("NAME=value"),
// collects stdout and stderr, and parses the last stdout line that starts
// with '{' as the result.
Result<ProbeResult> SpawnJson(std::vector<std::string> args, std::vector<std::string> env);

}  // namespace bc
