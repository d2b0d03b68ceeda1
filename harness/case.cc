#include "harness/case.h"

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <vector>

namespace bc {

const char* DeviceName(Device d) { return d == Device::kCpu ? "cpu" : "cuda"; }

namespace {

std::vector<std::string_view> SplitSchedule(std::string_view s) {
  std::vector<std::string_view> out;
  size_t start = 0;
  while (start <= s.size()) {
    const size_t comma = s.find(',', start);
    out.push_back(s.substr(start, comma == std::string_view::npos ? s.size() - start : comma - start));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return out;
}

}  // namespace

std::string CaseSpec::FormatSchedule() const {
  std::string s;
  for (size_t i = 0; i < steps.size();) {
    size_t run = 1;
    while (i + run < steps.size() && steps[i + run] == steps[i]) ++run;
    if (!s.empty()) s += ",";
    s += FormatProblem(steps[i]);
    if (run > 1) {
      s += '*';
      s += std::to_string(run);
    }
    i += run;
  }
  return s;
}

std::string CaseSpec::Format() const {
  std::string s = FormatSchedule() + " device=" + DeviceName(device) + " engine=" + engine;
  if (!algorithm.empty()) s += " algo=" + algorithm;
  s += " threads=" + std::to_string(threads);
  for (const std::string& f : flags.NonDefault()) s += " " + f;
  for (const auto& [name, value] : env) s += " env." + name + "=" + value;
  return s;
}

std::string CaseSpec::MissingEnv() const {
  for (const auto& [name, value] : env) {
    const char* have = std::getenv(name.c_str());
    if (have == nullptr || value != have) return name + "=" + value;
  }
  return "";
}

namespace {

// The text with control characters (and DEL) as \xHH, so that an error
// message cannot drive the terminal it is printed to.
std::string Printable(std::string_view text) {
  std::string out;
  for (const char ch : text) {
    const auto u = static_cast<unsigned char>(ch);
    if (u < 0x20 || u == 0x7f) {
      static constexpr char kHex[] = "0123456789abcdef";
      out += "\\x";
      out += kHex[u >> 4];
      out += kHex[u & 15];
    } else {
      out += ch;
    }
  }
  return out;
}

}  // namespace

Result<CaseSpec> ParseCaseSpec(std::string_view repro) {
  if (std::any_of(repro.begin(), repro.end(), [](char ch) {
        const auto u = static_cast<unsigned char>(ch);
        return u < 0x20 || u == 0x7f;
      })) {
    return Status(StatusCode::kInvalidArgument,
                  "case '" + Printable(repro) + "': a control character is not allowed in a case (shown as \\xHH)");
  }
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
  CaseSpec c;
  c.steps.clear();
  for (std::string_view step : SplitSchedule(tokens[0])) {
    int64_t count = 1;
    if (const size_t star = step.rfind('*'); star != std::string_view::npos) {
      const std::string_view n = step.substr(star + 1);
      auto [end, ec] = std::from_chars(n.data(), n.data() + n.size(), count);
      if (ec != std::errc() || end != n.data() + n.size() || count < 1 || count > kMaxScheduleSteps) {
        return invalid("a step count must be an integer in 1.." + std::to_string(kMaxScheduleSteps) + ", got '" +
                       std::string(n) + "'");
      }
      step = step.substr(0, star);
    }
    Result<Problem> problem = ParseProblem(step);
    if (!problem.ok()) return problem.status();
    if (static_cast<int64_t>(c.steps.size()) + count > kMaxScheduleSteps) {
      return invalid("a schedule may have at most " + std::to_string(kMaxScheduleSteps) + " steps");
    }
    c.steps.insert(c.steps.end(), static_cast<size_t>(count), problem.value());
  }
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
    } else if (key.rfind("env.", 0) == 0) {
      const std::string_view name = key.substr(4);
      const bool valid = !name.empty() && std::all_of(name.begin(), name.end(), [](char ch) {
        return (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_';
      });
      if (!valid || value.empty()) return invalid("env.NAME=VALUE needs an upper-case NAME and a VALUE");
      c.env[std::string(name)] = value;
    } else if (Status s = c.flags.Set(key, value); !s.ok()) {
      return invalid(s.message());
    }
  }
  return c;
}

}  // namespace bc
