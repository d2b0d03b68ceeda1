// The determinism check's judgement of one run, shared by the generated
// determinism cases and the explicit tests of the check itself.
//
// bitwise: passed (one digest), failed (several digests from an algorithm
// declared deterministic), caught (several digests from a positive control),
// missed (a positive control that gave one digest: the check proved nothing),
// varied or stable (an algorithm declared nondeterministic that is not a
// designated control: either is allowed), mistrusted (degenerate output,
// whatever the digests). A positive control must be declared
// nondeterministic, and on the CPU needs two threads to race.
#pragma once

#include <string>
#include <vector>

#include "runner/case_run.h"
#include "runner/case_table.h"
#include "runner/records.h"

namespace bc {

struct DeterminismVerdict {
  CheckOutcome bitwise = CheckOutcome::kFailed;
  bool bitwise_as_expected = false;
  bool not_applicable = false;
  bool within_tolerance = true;
  std::string message;
  std::string tolerance_message;
  std::vector<CheckRecord> checks;  // bitwise, and tolerance when the run was compared
};

// The tolerance check of one step that was compared with the reference:
// whether its error is within the accumulation-length bound, and the detail.
struct ToleranceJudgement {
  bool within = true;
  std::string detail;
  bool not_evaluated = false;  // no bound covers what ran (StepRun::unbounded): neither passed nor failed
};
ToleranceJudgement JudgeTolerance(const StepRun& run);
// Its check record: passed, failed, or not applicable where no bound covers
// what ran; `prefix` starts the detail ("step 2: ").
CheckRecord ToleranceCheck(const ToleranceJudgement& t, const std::string& prefix = "");

DeterminismVerdict JudgeDeterminism(const StepRun& run, const CaseSpec& spec, bool positive_control);

}  // namespace bc
