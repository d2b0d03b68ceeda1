// Determinism: run a case several times in one process and compare digests.
//
// The expectation comes from the algorithm's declared determinism property:
// a deterministic algorithm must give one digest; a nondeterministic one is a
// positive control, and the same check must catch it (more than one digest),
// or the check is not to be trusted. Every run is also compared with the
// reference oracle, and degenerate output is recorded as mistrusted.
// The case tables (Cpu/, Gpu/) are generated from catalog/matrices/*.toml.
#include <gtest/gtest.h>

#include "runner/case_run.h"
#include "runner/determinism.h"
#include "suites/fixtures.h"
#include "suites/test_evidence.h"

namespace bc::suite {

TEST_P(Determinism, Bitwise) {
  const CaseRow& row = GetParam();
  Result<CaseSpec> spec = ParseRow(row);
  ASSERT_TRUE(spec.ok()) << spec.status().ToString();

  const bool bitwise = CheckRequested(row, "bitwise");
  const bool tolerance = CheckRequested(row, "tolerance");
  Result<CaseRun> run = RunCase(spec.value(), {.repeats = row.repeats,
                                               .compare_to_reference = tolerance,
                                               .until_distinct_ns = row.positive_control ? kControlBudgetNs : 0});
  if (!run.ok() && IsNotEvaluated(run.status())) {
    WriteEvidence(SkippedRecord(row, run.status().message()));
    GTEST_SKIP() << run.status().message();
  }
  ASSERT_TRUE(run.ok()) << run.status().ToString() << "\nrepro: " << row.repro;

  DeterminismVerdict verdict = JudgeDeterminism(run->first(), run->spec, row.positive_control);
  if (!bitwise) {  // the suite asked for tolerance only: the digests are recorded, not judged
    verdict.bitwise_as_expected = true;
    verdict.not_applicable = false;
    std::erase_if(verdict.checks, [](const CheckRecord& c) { return c.name == "bitwise"; });
  }
  CaseRecord record = RunRecord(row, run.value());
  record.checks = verdict.checks;
  WriteEvidence(std::move(record));

  if (verdict.not_applicable) GTEST_SKIP() << verdict.message;
  EXPECT_TRUE(verdict.bitwise_as_expected) << verdict.message << "\nrepro: " << row.repro;
  EXPECT_TRUE(verdict.within_tolerance) << verdict.tolerance_message << "\nrepro: " << row.repro;
}

}  // namespace bc::suite
