// CaseSpec: everything that decides what one test case computes.
//
// A case is a schedule of problems (one step, or several: "fixed" repeats one
// shape, "varying" walks a list) plus where and how it runs: the device, the
// engine ("auto" lets the dispatcher choose, as PyTorch does; "select" runs
// PyTorch's cuDNN selection semantics over every candidate of the device),
// the engine's algorithm (empty: the engine's own choice), the thread count
// and the flags. Its repro string is canonical and parses back to the same
// case:
//   "conv2d:fwd:f32:mb4ic16...*3,conv2d:fwd:f32:... device=cpu engine=select threads=2 cudnn.benchmark=true"
// The first token is the schedule: steps joined by ',', a run of N equal
// steps written once with "*N". Flags appear only where they differ from
// PyTorch's defaults. The generator writes these strings into the case tables
// and every fixture parses its case from them.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "harness/flags.h"
#include "harness/problem.h"
#include "harness/status.h"

namespace bc {

enum class Device { kCpu, kCuda };
const char* DeviceName(Device d);  // "cpu", "cuda"

struct CaseSpec {
  std::vector<Problem> steps = {Conv2dProblem{}};
  Device device = Device::kCpu;
  std::string engine = "auto";
  std::string algorithm;  // empty: the engine's default choice
  int threads = 1;
  BackendFlags flags;
  // Environment variables the process must start with (libraries read them
  // when they initialise: ONEDNN_MAX_CPU_ISA, CUBLAS_WORKSPACE_CONFIG, ...).
  // Written last, as env.NAME=VALUE, sorted by name.
  std::map<std::string, std::string> env;

  // The first variable of `env` this process does not have, as "NAME=VALUE"; empty when all match.
  std::string MissingEnv() const;

  const Problem& problem() const { return steps.front(); }
  std::string FormatSchedule() const;
  std::string Format() const;
  bool operator==(const CaseSpec&) const = default;
};

// The most steps a schedule may have.
inline constexpr int kMaxScheduleSteps = 100000;

Result<CaseSpec> ParseCaseSpec(std::string_view repro);

}  // namespace bc
