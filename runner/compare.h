// What one rep of a Compare measures of each configuration, and the order
// the two run in. The Compare fixture and the A/A experiment's sampler
// (benchmarks/perf_trials.cc) share these, so the experiment tests the
// statistics on exactly the samples the perf claims are judged on.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "runner/case_run.h"

namespace bc {

struct Sample {
  int64_t total_ns = 0;   // the schedule, searches included
  double steady_ns = 0;   // median run time after the first step (or first run): the warm-up is excluded
  int64_t first_ns = 0;   // the first run of the first step: the warm-up itself
  int64_t search_ns = 0;  // time spent timing candidates
  int64_t workspace_bytes = 0;
  int64_t rss_peak_bytes = 0;
  std::string chosen;
};

Sample Measure(const CaseRun& run);

// Whether the k-th (0 or 1) run of rep `rep` is configuration A: A first on
// even reps, B first on odd ones, so drift on a shared machine hits both alike.
inline bool CompareRunsA(int rep, int k) { return (k == 0) == (rep % 2 == 0); }

}  // namespace bc
