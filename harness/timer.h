// Wall-clock timing of host work and the order statistics the suites record.
// GPU work is timed with CUDA events inside its engine, not with this.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <vector>

namespace bc {

class Stopwatch {
 public:
  Stopwatch() : start_(std::chrono::steady_clock::now()) {}
  int64_t ElapsedNs() const {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start_)
        .count();
  }

 private:
  std::chrono::steady_clock::time_point start_;
};

// Median of a copy (the mean of the middle two for an even count); 0 if empty.
inline double Median(std::vector<int64_t> v) {
  if (v.empty()) return 0;
  const size_t mid = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + mid, v.end());
  const double upper = static_cast<double>(v[mid]);
  if (v.size() % 2 == 1) return upper;
  const double lower = static_cast<double>(*std::max_element(v.begin(), v.begin() + mid));
  return (lower + upper) / 2;
}

}  // namespace bc
