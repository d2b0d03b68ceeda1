// torch.backends semantics that only PyTorch's Python has (the flags()
// context manager, the defaults and attributes of this version,
// is_available(), the alert and its warn_only form, manual_seed), each run by
// suites/probes/torch_backends.py in a fresh interpreter that imports torch.
// The interpreter is BACKENDCHECK_TORCH_PYTHON when set, otherwise the one
// configured (-DBACKENDCHECK_TORCH_PYTHON, by default the build's Python,
// Debian's /usr/bin/python3). Without torch there, each test skips with the
// import error. Every fact is PyTorch's evidence, recorded with its version.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "suites/probe.h"
#include "suites/test_evidence.h"

#ifndef BC_TORCH_PYTHON
#define BC_TORCH_PYTHON "python3"
#endif
#ifndef BC_SOURCE_DIR
#define BC_SOURCE_DIR "."
#endif

namespace bc {
namespace {

std::string Interpreter() {
  const char* v = std::getenv("BACKENDCHECK_TORCH_PYTHON");
  return v != nullptr && *v != '\0' ? v : BC_TORCH_PYTHON;
}

void RunTorchProbe(const std::string& probe) {
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) env.emplace_back(*e);
  Result<ProbeResult> r =
      SpawnJson({Interpreter(), std::string(BC_SOURCE_DIR) + "/suites/probes/torch_backends.py", probe}, env);
  const std::string repro = "torch_backends.py " + probe;
  // The probe could not observe PyTorch: an error of the harness, recorded
  // as such (never a failed fact, which would refute the claim) and failing
  // the test.
  const auto harness_error = [&](const std::string& why) {
    WriteEvidence(FactRecord(repro, {.name = probe, .outcome = CheckOutcome::kError, .detail = why}, "pytorch"));
    ADD_FAILURE() << why;
  };
  if (!r.ok()) return harness_error("the probe did not run: " + r.status().ToString());
  if (r->exit_code == kProbeNotEvaluated) {
    const std::string why = Interpreter() + ": " + r->output.value("error", std::string("cannot import torch"));
    WriteEvidence({.repro = repro, .system = "pytorch", .skip_reason = why});
    GTEST_SKIP() << why;
  }
  if (r->exit_code != 0 || !r->output.contains("passed")) {
    const std::string said = r->output.is_object() && r->output.contains("error")
                                 ? r->output["error"].get<std::string>()
                                 : "no result line; stderr: " + r->stderr_text.substr(0, 500);
    const std::string torch = r->output.is_object() ? r->output.value("torch", std::string("?")) : "?";
    return harness_error("PyTorch " + torch + " (" + Interpreter() +
                         "): probe " + probe + " failed (exit " + std::to_string(r->exit_code) + "): " + said);
  }
  const bool passed = r->output.value("passed", false);
  const std::string detail = "PyTorch " + r->output.value("torch", std::string("?")) + " (" + Interpreter() +
                             "): " + r->output.value("detail", std::string());
  CheckRecord check = Check(probe, passed, detail);
  // Part of the probe's own work failed (an entry of the documented list
  // that crashed, say): the harness's error, with what it did observe.
  if (r->output.value("harness_error", false)) check.outcome = CheckOutcome::kError;
  if (r->output.contains("observed") && r->output["observed"].is_object()) check.observed = r->output["observed"];
  WriteEvidence(FactRecord(repro, std::move(check), "pytorch"));
  EXPECT_TRUE(passed) << detail;
}

TEST(TorchPython, BuildConfiguration) { RunTorchProbe("build_config"); }
TEST(TorchPython, DefaultsAreTheDocumentedOnes) { RunTorchProbe("defaults"); }
TEST(TorchPython, CudnnFlagsScopeSetsAndRestores) { RunTorchProbe("flags_scope"); }
TEST(TorchPython, DeterministicAlgorithmsRaisePyTorchsAlert) { RunTorchProbe("alert"); }
TEST(TorchPython, WarnOnlyWarnsAndRuns) { RunTorchProbe("warn_only"); }
TEST(TorchPython, CudnnDeterministicDoesNotReachCpuOperations) { RunTorchProbe("cudnn_deterministic_scope"); }
TEST(TorchPython, MkldnnIsAvailableReportsTheBuild) { RunTorchProbe("mkldnn_available"); }
TEST(TorchPython, OpenmpIsAvailable) { RunTorchProbe("openmp_available"); }
TEST(TorchPython, MpsIsNeitherBuiltNorAvailableOffApple) { RunTorchProbe("mps_available"); }
TEST(TorchPython, ManualSeedIsNotABackendFlag) { RunTorchProbe("seed_not_backends"); }
// use_deterministic_algorithms's own list, entry by entry (suites/probes/documented.py).
TEST(TorchPython, DocumentedDeterminismList) { RunTorchProbe("documented"); }
// Per version: not evaluated, naming the version, where it lacks the setting.
TEST(TorchPython, MkldnnDeterministicFlagSetsAndRestores) { RunTorchProbe("mkldnn_deterministic"); }
TEST(TorchPython, Fp32PrecisionAndAllowTf32DoNotMix) { RunTorchProbe("fp32_precision"); }

}  // namespace
}  // namespace bc
