// Running one conv case the way every fixture does: parse the case, dispatch
// it under its flags and thread count, fill seeded inputs, run it `repeats`
// times with a digest of the output after each run, and compare the last
// output with the reference oracle. RunCase returns UNAVAILABLE or
// UNIMPLEMENTED for what this machine cannot evaluate (the caller skips with
// that reason), and other errors for real failures.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "backends/dispatch.h"
#include "harness/case.h"
#include "harness/numerics.h"
#include "suites/case_table.h"

namespace bc {

struct CaseRun {
  CaseSpec spec;
  std::string engine;
  std::string engine_version;
  std::string dispatch_reason;
  Algorithm algorithm;
  std::string implementation;
  std::vector<uint64_t> digests;
  std::vector<int64_t> times_ns;
  std::optional<ErrorMetrics> error;  // against the reference, when compared
  double tolerance = 0;
  bool degenerate = false;

  int DistinctDigests() const;
};

struct RunOptions {
  int repeats = 1;
  bool compare_to_reference = true;
};

// Inputs depend on the problem only, so every engine, flag set and machine
// sees the same data and digests are comparable across them.
uint64_t ProblemSeed(const Conv2dProblem& p);

Result<CaseRun> RunCase(const CaseSpec& spec, const RunOptions& options);

// True for the statuses that mean "not evaluated here".
bool IsNotEvaluated(const Status& s);

// The evidence record of a run (kind "case"), for the test currently running.
nlohmann::json CaseRecord(const CaseRow& row, const CaseRun& run);
// The record of a case that could not be evaluated, with the reason.
nlohmann::json SkippedCaseRecord(const CaseRow& row, const std::string& reason);
// "Suite.Test" of the running gtest test ("Prefix/Fixture.Test/Param").
std::string CurrentTestName();

// Parses row.repro and checks it is canonical (the generator and the harness
// agree on the format). Fails the current test otherwise.
Result<CaseSpec> ParseRow(const CaseRow& row);

}  // namespace bc
