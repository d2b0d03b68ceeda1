#include "runner/compare.h"

#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>

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

double CpuSeconds(const rusage& usage) {
  return static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
         static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) * 1e-6;
}

CpuTimes ReadCpuTimes() {
  CpuTimes t;
  rusage self{};
  if (getrusage(RUSAGE_SELF, &self) == 0) t.self_s = CpuSeconds(self);
  // The first line sums every CPU: user nice system idle iowait irq softirq
  // steal (guest time is already inside user).
  std::ifstream stat("/proc/stat");
  std::string line, label;
  if (!std::getline(stat, line)) return t;
  std::istringstream in(line);
  int64_t v[8] = {};
  in >> label;
  for (int64_t& x : v) in >> x;
  const double tick = static_cast<double>(sysconf(_SC_CLK_TCK));
  if (!in || label != "cpu" || tick <= 0) return t;
  int64_t total = 0;
  for (int64_t x : v) total += x;
  t.machine_total_s = static_cast<double>(total) / tick;
  t.machine_busy_s = static_cast<double>(total - v[3] - v[4]) / tick;
  return t;
}

double OthersCpuShare(const CpuTimes& begin, const CpuTimes& end) { return OthersCpuShare(begin, end, 0); }

double ChildrenCpuSeconds() {
  rusage children{};
  return getrusage(RUSAGE_CHILDREN, &children) == 0 ? CpuSeconds(children) : 0;
}

double OthersCpuShare(const CpuTimes& begin, const CpuTimes& end, double own_children_s) {
  if (begin.machine_total_s < 0 || end.machine_total_s < 0) return -1;
  const double total = end.machine_total_s - begin.machine_total_s;
  if (total <= 0) return -1;
  // /proc/stat counts in ticks, rusage in microseconds: clamp the rounding.
  const double others = (end.machine_busy_s - begin.machine_busy_s) - (end.self_s - begin.self_s) - own_children_s;
  return std::clamp(others / total, 0.0, 1.0);
}

}  // namespace bc
