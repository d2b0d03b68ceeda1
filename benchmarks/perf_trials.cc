// The sampler of the A/A and injected-slowdown experiment
// (benchmarks/aa_experiment.py): runs two cases side by side exactly as the
// Compare fixture does (interleaved reps, alternating order, the same
// per-rep measurements), `trials` times over, and prints one JSON line per
// trial: {"trial": i, "a": {...samples}, "b": {...samples}}.
//
//   perf_trials --a REPRO [--b REPRO] [--trials N] [--reps N] [--repeats N]
//
// --b defaults to --a (an A/A trial). Exit 1 with one line on a bad
// argument or a failed run; 77 when this machine cannot evaluate the case.
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "runner/case_run.h"
#include "runner/compare.h"
#include "runner/records.h"

namespace {

int Fail(const std::string& message) {
  std::cerr << "perf_trials: " << message << "\n";
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  std::string a_repro, b_repro;
  int trials = 200, reps = 9, repeats = 3;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (i + 1 >= argc) return Fail("'" + arg + "' needs a value");
    const std::string value = argv[++i];
    if (arg == "--a") {
      a_repro = value;
    } else if (arg == "--b") {
      b_repro = value;
    } else if (arg == "--trials" || arg == "--reps" || arg == "--repeats") {
      const int n = std::atoi(value.c_str());
      if (n < 1) return Fail(arg + " must be a positive integer, not '" + value + "'");
      (arg == "--trials" ? trials : arg == "--reps" ? reps : repeats) = n;
    } else {
      return Fail("unknown argument '" + arg + "'");
    }
  }
  if (a_repro.empty()) return Fail("--a REPRO is required");
  if (b_repro.empty()) b_repro = a_repro;
  bc::Result<bc::CaseSpec> a = bc::ParseCaseSpec(a_repro), b = bc::ParseCaseSpec(b_repro);
  if (!a.ok()) return Fail("--a: " + a.status().ToString());
  if (!b.ok()) return Fail("--b: " + b.status().ToString());
  const bc::RunOptions options{.repeats = repeats, .compare_to_reference = false};
  for (int t = 0; t < trials; ++t) {
    std::vector<bc::Sample> sa, sb;
    for (int rep = 0; rep < reps; ++rep) {
      for (int k = 0; k < 2; ++k) {
        const bool is_a = bc::CompareRunsA(rep, k);
        bc::Result<bc::CaseRun> run = bc::RunCase(is_a ? a.value() : b.value(), options);
        if (!run.ok()) {
          std::cerr << "perf_trials: " << run.status().ToString() << "\n";
          return bc::IsNotEvaluated(run.status()) ? 77 : 1;
        }
        (is_a ? sa : sb).push_back(bc::Measure(run.value()));
      }
    }
    const nlohmann::json line{{"trial", t},
                              {"a", bc::ToJson(a->Format(), sa)},
                              {"b", bc::ToJson(b->Format(), sb)}};
    std::cout << line.dump() << std::endl;
  }
  return 0;
}
