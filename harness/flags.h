// BackendFlags: the process-wide switches of torch.backends, mirrored.
//
// The fields and their defaults are those of PyTorch (see flags.def, the one
// list of them). A case carries its flags and passes them to the dispatcher
// and to every engine call; nothing reads them back from process-wide state.
// CurrentFlags() models PyTorch's own process-wide flags, for the claims
// about how torch.backends sets and restores them: FlagsGuard sets new values
// for a scope and restores the previous ones on exit, also when the scope is
// left by an early return. CudnnFlagsScope mirrors torch.backends.cudnn.flags(),
// including its trap: its parameters default to enabled=false.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "harness/status.h"

namespace bc {

struct BackendFlags {
  using str = std::string;  // flags.def's string type (the fp32_precision settings)
#define BC_FLAG(name, member, type, init) type member = init;
#include "harness/flags.def"
#undef BC_FLAG

  // use_deterministic_algorithms(mode, warn_only).
  void UseDeterministicAlgorithms(bool mode, bool warn_only = false) {
    deterministic_algorithms = mode;
    deterministic_algorithms_warn_only = warn_only;
  }
  // What cuDNN's algorithm filter obeys: cudnn.deterministic or
  // use_deterministic_algorithms (aten/src/ATen/native/Convolution.cpp).
  bool CudnnDeterministicEffective() const {
    return cudnn_deterministic || deterministic_algorithms;
  }

  // Sets one flag by its torch name from text ("true"/"false"/"1"/"0", an
  // integer, or a lower-case word such as "ieee"). Unknown names and
  // malformed values are errors naming both; which words a setting accepts
  // is PyTorch's to say.
  Status Set(std::string_view name, std::string_view value);
  // Names of the flags whose value differs from PyTorch's default, in the
  // order of flags.def, as "name=value" tokens.
  std::vector<std::string> NonDefault() const;
  // Every flag as (name, value text), in flags.def order.
  std::vector<std::pair<std::string, std::string>> Values() const;
  // Every flag as "name=value", in flags.def order.
  std::vector<std::string> All() const;

  bool operator==(const BackendFlags&) const = default;
};

// The flag names in flags.def order.
const std::vector<std::string>& FlagNames();

// The process-wide flags (what torch.backends.* reads and writes).
BackendFlags& CurrentFlags();

class FlagsGuard {
 public:
  explicit FlagsGuard(const BackendFlags& flags) : saved_(CurrentFlags()) { CurrentFlags() = flags; }
  ~FlagsGuard() { CurrentFlags() = saved_; }
  FlagsGuard(const FlagsGuard&) = delete;
  FlagsGuard& operator=(const FlagsGuard&) = delete;

 private:
  BackendFlags saved_;
};

// torch.backends.cudnn.flags(enabled=False, benchmark=False,
// benchmark_limit=10, deterministic=False, allow_tf32=True,
// fp32_precision="none", depthwise_kernel="auto"): a scope that sets the cuDNN
// flags, with torch's parameter defaults (the last two since recent 2.x;
// fp32_precision is cudnn.fp32_precision, the setting for all cuDNN ops).
class CudnnFlagsScope {
 public:
  explicit CudnnFlagsScope(bool enabled = false, bool benchmark = false, int benchmark_limit = 10,
                           bool deterministic = false, bool allow_tf32 = true,
                           std::string fp32_precision = "none", std::string depthwise_kernel = "auto");

 private:
  FlagsGuard guard_;
};

}  // namespace bc
