// What one rep of a Compare measures of each configuration, and the order
// the two run in. The Compare fixture and the A/A experiment's sampler
// (benchmarks/perf_trials.cc) share these, so the experiment tests the
// statistics on exactly the samples the perf claims are judged on.
#pragma once

#include <sys/resource.h>

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

// The machine's CPU time and this process's, read together, so that the
// share other processes took over an interval can be known: a ratio timed
// while another process held the cores measures that contention, not the
// setting compared (the ratio rule withholds it, reports/statistics.py).
// User plus system time of a getrusage() reading, in seconds.
double CpuSeconds(const rusage& usage);

struct CpuTimes {
  double machine_busy_s = -1;  // every CPU's non-idle time, /proc/stat (steal included); -1 where unreadable
  double machine_total_s = -1;
  double self_s = 0;           // this process's user and system time, all threads
};
CpuTimes ReadCpuTimes();

// The share (0 to 1) of the machine's CPU time between the two readings
// that went to other processes (the hypervisor's steal included); -1 where
// /proc/stat could not be read or no tick passed.
double OthersCpuShare(const CpuTimes& begin, const CpuTimes& end);
// The CPU time, in seconds, of this process's children that it has waited
// for (and theirs): getrusage(RUSAGE_CHILDREN).
double ChildrenCpuSeconds();
// The same share, less the `own_children_s` seconds that this process's own
// children took meanwhile: a PyTorch probe's interpreter and the workers it
// times a comparison in are the comparison, not another load.
double OthersCpuShare(const CpuTimes& begin, const CpuTimes& end, double own_children_s);

}  // namespace bc
