#include "runner/determinism.h"

namespace bc {

ToleranceJudgement JudgeTolerance(const StepRun& run) {
  if (!run.error) return {};
  if (!run.unbounded.empty()) {
    return {true,
            "not evaluated: " + run.unbounded + " (" + run.implementation + "; max abs error " +
                std::to_string(run.error->max_abs) + ")",
            true};
  }
  return {WithinTolerance(*run.error),
          "max abs error " + std::to_string(run.error->max_abs) + "; worst element at " +
              std::to_string(run.error->worst_ratio) + " of its " + ComputeTypeName(run.compute_type) +
              " bound (" + std::to_string(run.error->bound) + ") (max ulp " + std::to_string(run.error->max_ulp) +
              ", non-finite " + std::to_string(run.error->nonfinite) + ")"};
}

CheckRecord ToleranceCheck(const ToleranceJudgement& t, const std::string& prefix) {
  if (t.not_evaluated) {
    return {.name = "tolerance", .outcome = CheckOutcome::kNotApplicable, .detail = prefix + t.detail};
  }
  return Check("tolerance", t.within, prefix + t.detail);
}

DeterminismVerdict JudgeDeterminism(const StepRun& run, const CaseSpec& spec, bool positive_control) {
  DeterminismVerdict v;
  const int distinct = run.DistinctDigests();
  const bool nondeterministic = run.algorithm.determinism == Determinism::kNondeterministic;
  const bool control = positive_control && nondeterministic;
  const std::string what = std::to_string(distinct) + " distinct digest(s) in " +
                           std::to_string(run.digests.size()) + " runs of " + run.implementation;
  if (positive_control && !nondeterministic) {
    v.bitwise = CheckOutcome::kMisconfigured;
    v.message = "a positive control must use an algorithm declared nondeterministic, not " + run.implementation;
  } else if (control && spec.threads < 2 && spec.device == Device::kCpu) {
    v.not_applicable = true;
    v.bitwise = CheckOutcome::kNotApplicable;
    v.message = "a nondeterministic CPU algorithm on one thread has no race to expose";
  } else if (run.degenerate) {
    v.bitwise = CheckOutcome::kMistrusted;
    v.bitwise_as_expected = true;  // not a failure, but never evidence
    v.message = "output is constant: " + what;
  } else if (control) {
    v.bitwise = distinct > 1 ? CheckOutcome::kCaught : CheckOutcome::kMissed;
    v.bitwise_as_expected = distinct > 1;
    v.message = distinct > 1 ? "positive control caught after " + std::to_string(run.RunsToDistinct()) + " runs: " + what
                             : "positive control missed: " + what;
  } else if (nondeterministic) {
    v.bitwise = distinct > 1 ? CheckOutcome::kVaried : CheckOutcome::kStable;
    v.bitwise_as_expected = true;
    v.message = "declared nondeterministic (not a designated control): " + what;
  } else {
    v.bitwise = distinct == 1 ? CheckOutcome::kPassed : CheckOutcome::kFailed;
    v.bitwise_as_expected = distinct == 1;
    v.message = (distinct == 1 ? "bitwise identical: " : "declared deterministic, but ") + what;
  }
  v.checks.push_back({.name = "bitwise",
                      .outcome = v.bitwise,
                      .detail = v.message,
                      .expected = DeterminismName(run.algorithm.determinism),
                      .positive_control = positive_control,
                      .runs_to_distinct = run.RunsToDistinct()});
  if (run.error) {
    const ToleranceJudgement t = JudgeTolerance(run);
    v.within_tolerance = t.within;
    v.tolerance_message = t.detail;
    v.checks.push_back(ToleranceCheck(t));
  }
  return v;
}

}  // namespace bc
