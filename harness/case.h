// CaseSpec: everything that decides what one test case computes.
//
// A case is a problem plus where and how it runs: the device, the engine
// ("auto" lets the dispatcher choose, as PyTorch does), the engine's
// algorithm (empty: the engine's own choice), the thread count and the flags.
// Its repro string is canonical (fixed order, flags only where they differ
// from PyTorch's defaults) and parses back to the same case:
//   "conv2d:fwd:f32:mb4ic16... device=cpu engine=onednn threads=2 cudnn.benchmark=true"
// The generator writes these strings into the case tables; every fixture
// parses its case from them, so the string is the single definition.
#pragma once

#include <string>
#include <string_view>

#include "harness/flags.h"
#include "harness/problem.h"
#include "harness/status.h"

namespace bc {

enum class Device { kCpu, kCuda };
const char* DeviceName(Device d);  // "cpu", "cuda"

struct CaseSpec {
  Conv2dProblem problem;
  Device device = Device::kCpu;
  std::string engine = "auto";
  std::string algorithm;  // empty: the engine's default choice
  int threads = 1;
  BackendFlags flags;

  std::string Format() const;
  bool operator==(const CaseSpec&) const = default;
};

Result<CaseSpec> ParseCaseSpec(std::string_view repro);

}  // namespace bc
