// The model held to PyTorch (Conformance, generated from the matrices'
// conformance suites): one case run through the harness's dispatch (the
// model, engine=auto) and through PyTorch on the same device, side by side:
// the kernel class, oneDNN's kernel on the CPU, cuDNN's engine or algorithm
// on a GPU (PyTorch's read from cuDNN's API log), the bits and the alert.
// The report's "Model versus PyTorch" lists every disagreement.
#include <gtest/gtest.h>

#include "harness/tensor_data.h"
#include "runner/case_run.h"
#include "runner/case_table.h"
#include "runner/records.h"
#include "suites/fixtures.h"
#include "suites/test_evidence.h"

namespace bc::suite {
namespace {

// One side of a conformance case: what ran and what it gave, or its alert or
// error. The kernel class and oneDNN's kernel and version are what the
// engine that ran says of it (PreparedOp::kernel): PyTorch's engine names the
// ConvBackend it took (mkldnn, cudnn, or its native kernels), a model engine
// the role its engines.def line claims; cuDNN's engine or algorithm is the
// one cuDNN ran for either side.
ConformanceSide Side(const Result<CaseRun>& run) {
  ConformanceSide s;
  if (!run.ok()) {
    (run.status().code() == StatusCode::kNotDeterministic ? s.alert : s.error) = run.status().message();
    return s;
  }
  const StepRun& step = run->first();
  s.engine = step.engine;
  s.algorithm = step.algorithm.name;
  s.implementation = step.implementation;
  s.digest = step.digests.empty() ? "" : DigestHex(step.digests.back());
  s.kernel_class = step.kernel.kernel_class;
  s.onednn_kernel = step.kernel.onednn_kernel;
  s.onednn_version = step.kernel.onednn_version;
  s.cudnn_choice = step.kernel.cudnn_choice;
  return s;
}

}  // namespace

TEST_P(Conformance, ModelVersusPytorch) {
  const CaseRow& row = GetParam();
  Result<CaseSpec> model_spec = ParseRow(row);
  ASSERT_TRUE(model_spec.ok()) << model_spec.status().ToString();
  ASSERT_EQ(model_spec->engine, "auto") << "a conformance case runs the model as engine=auto";
  CaseSpec torch_spec = model_spec.value();
  torch_spec.engine = torch_spec.device == Device::kCuda ? "pytorch_cuda" : "pytorch";
  const RunOptions options{.repeats = 2, .compare_to_reference = false};
  const Result<CaseRun> torch_run = RunCase(torch_spec, options);
  if (!torch_run.ok() && IsNotEvaluated(torch_run.status())) {
    WriteEvidence(SkippedRecord(row, torch_run.status().message()));
    GTEST_SKIP() << torch_run.status().message();
  }
  const Result<CaseRun> model_run = RunCase(model_spec.value(), options);
  CaseRecord record = model_run.ok() ? RunRecord(row, model_run.value()) : SkippedRecord(row, "");
  record.conformance = ConformanceRecord{.model = Side(model_run), .pytorch = Side(torch_run)};
  const ConformanceRecord& c = *record.conformance;
  record.checks.push_back(Check("same_kernel_class", c.model.kernel_class == c.pytorch.kernel_class,
                                "model " + c.model.kernel_class + " (" + c.model.implementation + "), PyTorch " +
                                    c.pytorch.kernel_class + " (" + c.pytorch.implementation + ")"));
  record.checks.push_back(Check("same_alert", c.model.alert.empty() == c.pytorch.alert.empty(),
                                "model: " + (c.model.alert.empty() ? "no alert" : c.model.alert) +
                                    "; PyTorch: " + (c.pytorch.alert.empty() ? "no alert" : c.pytorch.alert)));
  WriteEvidence(std::move(record));
  // Disagreements are findings for the report, not failures; a side that
  // could not run at all is one.
  EXPECT_TRUE(c.model.error.empty()) << c.model.error;
  EXPECT_TRUE(c.pytorch.error.empty()) << c.pytorch.error;
}

}  // namespace bc::suite
