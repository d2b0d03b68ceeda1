#include "runner/compare.h"

#include <algorithm>

#include "harness/timer.h"

namespace bc {

Sample Measure(const CaseRun& run) {
  Sample s;
  std::vector<int64_t> later;
  for (size_t i = 0; i < run.steps.size(); ++i) {
    const StepRun& step = run.steps[i];
    s.total_ns += step.step_ns;
    if (step.selection) s.search_ns += static_cast<int64_t>(step.selection->search_ns);
    s.workspace_bytes = std::max(s.workspace_bytes, step.workspace_bytes);
    s.rss_peak_bytes = std::max(s.rss_peak_bytes, step.rss_peak_bytes);
    for (size_t r = 0; r < step.times_ns.size(); ++r) {
      if (run.steps.size() > 1 ? i > 0 : r > 0) later.push_back(step.times_ns[r]);
    }
    if (!s.chosen.empty()) s.chosen += ",";
    s.chosen += step.engine + ":" + step.algorithm.name;
  }
  s.first_ns = run.steps.front().times_ns.empty() ? 0 : run.steps.front().times_ns.front();
  s.steady_ns = later.empty() ? static_cast<double>(run.steps.back().times_ns.back()) : Median(later);
  return s;
}

}  // namespace bc
