#include "harness/case.h"

#include <charconv>
#include <vector>

namespace bc {

const char* DeviceName(Device d) { return d == Device::kCpu ? "cpu" : "cuda"; }

std::string CaseSpec::Format() const {
  std::string s = problem.Format() + " device=" + DeviceName(device) + " engine=" + engine;
  if (!algorithm.empty()) s += " algo=" + algorithm;
  s += " threads=" + std::to_string(threads);
  for (const std::string& f : flags.NonDefault()) s += " " + f;
  return s;
}

Result<CaseSpec> ParseCaseSpec(std::string_view repro) {
  std::vector<std::string_view> tokens;
  size_t i = 0;
  while (i < repro.size()) {
    while (i < repro.size() && repro[i] == ' ') ++i;
    size_t end = repro.find(' ', i);
    if (end == std::string_view::npos) end = repro.size();
    if (end > i) tokens.push_back(repro.substr(i, end - i));
    i = end;
  }
  const auto invalid = [&](const std::string& what) {
    return Status(StatusCode::kInvalidArgument, "case '" + std::string(repro) + "': " + what);
  };
  if (tokens.empty()) return invalid("empty");
  Result<Conv2dProblem> problem = ParseConv2dProblem(tokens[0]);
  if (!problem.ok()) return problem.status();
  CaseSpec c;
  c.problem = problem.value();
  for (size_t t = 1; t < tokens.size(); ++t) {
    const size_t eq = tokens[t].find('=');
    if (eq == std::string_view::npos) return invalid("expected key=value, got '" + std::string(tokens[t]) + "'");
    const std::string_view key = tokens[t].substr(0, eq);
    const std::string_view value = tokens[t].substr(eq + 1);
    if (key == "device") {
      if (value == "cpu") {
        c.device = Device::kCpu;
      } else if (value == "cuda") {
        c.device = Device::kCuda;
      } else {
        return invalid("unknown device '" + std::string(value) + "' (cpu, cuda)");
      }
    } else if (key == "engine") {
      if (value.empty()) return invalid("engine needs a name");
      c.engine = value;
    } else if (key == "algo") {
      c.algorithm = value;
    } else if (key == "threads") {
      auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), c.threads);
      if (ec != std::errc() || end != value.data() + value.size() || c.threads < 1 || c.threads > 1024) {
        return invalid("threads must be an integer in 1..1024, got '" + std::string(value) + "'");
      }
    } else if (Status s = c.flags.Set(key, value); !s.ok()) {
      return invalid(s.message());
    }
  }
  return c;
}

}  // namespace bc
