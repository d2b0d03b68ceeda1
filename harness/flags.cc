#include "harness/flags.h"

#include <charconv>

namespace bc {
namespace {

Status ParseValue(std::string_view name, std::string_view text, bool* out) {
  if (text == "true" || text == "1" || text == "True") {
    *out = true;
  } else if (text == "false" || text == "0" || text == "False") {
    *out = false;
  } else {
    return Status(StatusCode::kInvalidArgument,
                  "flag '" + std::string(name) + "' takes true or false, not '" + std::string(text) + "'");
  }
  return Status::Ok();
}

Status ParseValue(std::string_view name, std::string_view text, int* out) {
  int value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value < 0) {
    return Status(StatusCode::kInvalidArgument, "flag '" + std::string(name) +
                                                    "' takes a non-negative integer, not '" +
                                                    std::string(text) + "'");
  }
  *out = value;
  return Status::Ok();
}

// A word such as "ieee", "tf32" or "auto": lower-case letters, digits and '_'.
Status ParseValue(std::string_view name, std::string_view text, std::string* out) {
  const bool word = !text.empty() && text.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_") ==
                                         std::string_view::npos;
  if (!word) {
    return Status(StatusCode::kInvalidArgument, "flag '" + std::string(name) +
                                                    "' takes a lower-case word (such as ieee or tf32), not '" +
                                                    std::string(text) + "'");
  }
  *out = std::string(text);
  return Status::Ok();
}

std::string Format(bool v) { return v ? "true" : "false"; }
std::string Format(int v) { return std::to_string(v); }
std::string Format(const std::string& v) { return v; }

}  // namespace

Status BackendFlags::Set(std::string_view name, std::string_view value) {
#define BC_FLAG(flag_name, member, type, init) \
  if (name == flag_name) return ParseValue(name, value, &member);
#include "harness/flags.def"
#undef BC_FLAG
  return Status(StatusCode::kInvalidArgument, "unknown flag '" + std::string(name) + "'");
}

std::vector<std::string> BackendFlags::NonDefault() const {
  const BackendFlags defaults;
  std::vector<std::string> out;
#define BC_FLAG(flag_name, member, type, init) \
  if (member != defaults.member) out.push_back(std::string(flag_name) + "=" + Format(member));
#include "harness/flags.def"
#undef BC_FLAG
  return out;
}

std::vector<std::pair<std::string, std::string>> BackendFlags::Values() const {
  std::vector<std::pair<std::string, std::string>> out;
#define BC_FLAG(flag_name, member, type, init) out.emplace_back(flag_name, Format(member));
#include "harness/flags.def"
#undef BC_FLAG
  return out;
}

std::vector<std::string> BackendFlags::All() const {
  std::vector<std::string> out;
  for (const auto& [name, value] : Values()) out.push_back(name + "=" + value);
  return out;
}

const std::vector<std::string>& FlagNames() {
  static const std::vector<std::string> kNames = {
#define BC_FLAG(flag_name, member, type, init) flag_name,
#include "harness/flags.def"
#undef BC_FLAG
  };
  return kNames;
}

BackendFlags& CurrentFlags() {
  static BackendFlags flags;
  return flags;
}

namespace {
BackendFlags WithCudnn(bool enabled, bool benchmark, int limit, bool deterministic, bool tf32,
                       std::string fp32_precision, std::string depthwise_kernel) {
  BackendFlags f = CurrentFlags();
  f.cudnn_fp32_precision = std::move(fp32_precision);
  f.cudnn_depthwise_kernel = std::move(depthwise_kernel);
  f.cudnn_enabled = enabled;
  f.cudnn_benchmark = benchmark;
  f.cudnn_benchmark_limit = limit;
  f.cudnn_deterministic = deterministic;
  f.cudnn_allow_tf32 = tf32;
  return f;
}
}  // namespace

CudnnFlagsScope::CudnnFlagsScope(bool enabled, bool benchmark, int benchmark_limit, bool deterministic,
                                 bool allow_tf32, std::string fp32_precision, std::string depthwise_kernel)
    : guard_(WithCudnn(enabled, benchmark, benchmark_limit, deterministic, allow_tf32, std::move(fp32_precision),
                       std::move(depthwise_kernel))) {}

}  // namespace bc
