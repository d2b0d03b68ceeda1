// Selection evidence: schedules in one process (Schedule), two
// configurations side by side (Compare), and fresh processes (CrossProcess).
// The case tables are generated from catalog/matrices/*.toml.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

#include "backends/registry.h"
#include "harness/timer.h"
#include "runner/case_run.h"
#include "runner/compare.h"
#include "runner/determinism.h"
#include "suites/fixtures.h"
#include "runner/probe.h"
#include "suites/test_evidence.h"

namespace bc::suite {
namespace {

// The selector's flags as dispatch derives them for cuDNN semantics.
bool CudnnSemantics(const CaseSpec& c) { return UsesCudnnSelection(c.engine, c.engine); }

std::string Join(const std::vector<std::string>& parts) {
  std::string out;
  for (const std::string& p : parts) {
    if (!out.empty()) out += ',';
    out += p;
  }
  return out;
}

// Runs a case; on "not evaluated" records the skip, sets `skip` to the
// reason and returns nullopt.
std::optional<CaseRun> RunOrSkip(const CaseRow& row, const CaseSpec& spec, int repeats, std::string* skip,
                                 bool compare_to_reference = false) {
  Result<CaseRun> run = RunCase(spec, {.repeats = repeats, .compare_to_reference = compare_to_reference});
  if (!run.ok() && IsNotEvaluated(run.status())) {
    *skip = run.status().message();
    WriteEvidence(SkippedRecord(row, *skip));
    return std::nullopt;
  }
  EXPECT_TRUE(run.ok()) << run.status().ToString() << "\nrepro: " << row.repro;
  if (!run.ok()) return std::nullopt;
  return std::move(run).value();
}

}  // namespace

TEST_P(Schedule, Run) {
  const CaseRow& row = GetParam();
  Result<CaseSpec> spec = ParseRow(row);
  ASSERT_TRUE(spec.ok()) << spec.status().ToString();
  std::string skip;
  const bool tolerance = CheckRequested(row, "tolerance");
  std::optional<CaseRun> run = RunOrSkip(row, spec.value(), row.repeats, &skip, tolerance);
  if (!run) {
    if (!skip.empty()) GTEST_SKIP() << skip;
    return;
  }
  std::vector<CheckRecord> checks;
  if (tolerance) {
    for (size_t i = 0; i < run->steps.size(); ++i) {
      const StepRun& s = run->steps[i];
      if (!s.error) continue;
      const ToleranceJudgement t = JudgeTolerance(s);
      checks.push_back(ToleranceCheck(t, "step " + std::to_string(i) + ": "));
      EXPECT_TRUE(t.within) << "step " << i << ": " << t.detail << "\nrepro: " << row.repro;
    }
  }
  if (!CheckRequested(row, "selection")) {
    CaseRecord record = RunRecord(row, *run);
    record.checks = std::move(checks);
    WriteEvidence(std::move(record));
    return;
  }
  const BackendFlags& f = spec->flags;
  const bool selects = spec->algorithm.empty();
  const bool benchmark = selects && CudnnSemantics(spec.value()) && f.cudnn_benchmark;
  const bool deterministic = CudnnSemantics(spec.value()) ? f.CudnnDeterministicEffective() : f.deterministic_algorithms;

  std::set<std::string> distinct;
  for (const Problem& p : spec->steps) distinct.insert(FormatProblem(p));
  const int expected_searches = benchmark ? static_cast<int>(distinct.size()) : 0;
  checks.push_back(Check("searches", run->searches == expected_searches,
                         std::to_string(run->searches) + " search(es) over " + std::to_string(spec->steps.size()) +
                             " step(s) of " + std::to_string(distinct.size()) + " distinct problem(s), expected " +
                             std::to_string(expected_searches)));
  EXPECT_EQ(run->searches, expected_searches) << row.repro;

  bool fastest = true, det_only = true, within_limit = true;
  std::string detail_fastest, detail_det, detail_limit;
  for (size_t i = 0; i < run->steps.size(); ++i) {
    const StepRun& s = run->steps[i];
    if (!s.selection) continue;
    const Selection& sel = *s.selection;
    if (sel.cache == "miss" && !sel.time_ns.empty()) {
      // The selector's own rule (ties to the earlier candidate), one function for both.
      const std::optional<Candidate> best = FastestTimed(sel.eligible, sel.time_ns);
      if (!best || best->Id() != sel.chosen.Id()) {
        fastest = false;
        detail_fastest = "step " + std::to_string(i) + " chose " + sel.chosen.Id() + ", fastest was " +
                         (best ? best->Id() : "none");
      }
      const int limit = f.cudnn_benchmark_limit;
      if (limit > 0 && static_cast<int>(sel.time_ns.size()) > limit) {
        within_limit = false;
        detail_limit = std::to_string(sel.time_ns.size()) + " timed with benchmark_limit " + std::to_string(limit);
      }
    }
    if (deterministic) {
      bool ok = sel.chosen.algorithm.determinism == bc::Determinism::kDeterministic;
      for (const Candidate& c : sel.candidates) {
        if (c.algorithm.determinism != bc::Determinism::kDeterministic && sel.time_ns.count(c.Id())) ok = false;
      }
      if (!ok) {
        det_only = false;
        detail_det = "step " + std::to_string(i) + " chose or timed a nondeterministic candidate";
      }
    }
  }
  if (benchmark) {
    checks.push_back(Check("chosen_fastest", fastest, fastest ? "every search chose its fastest timed candidate"
                                                              : detail_fastest));
    checks.push_back(Check("benchmark_limit", within_limit,
                           within_limit ? "no search timed more than cudnn.benchmark_limit candidates" : detail_limit));
  }
  if (deterministic) {
    checks.push_back(Check("deterministic_only", det_only,
                           det_only ? "only deterministic candidates were timed or chosen" : detail_det));
  }
  EXPECT_TRUE(fastest) << detail_fastest;
  EXPECT_TRUE(within_limit) << detail_limit;
  EXPECT_TRUE(det_only) << detail_det;
  CaseRecord record = RunRecord(row, *run);
  // The selection checks judge the harness's re-implementation of PyTorch's
  // cache, limit and filters, whichever library's candidates it timed: model
  // evidence, on cuDNN as on the CPU pool.
  record.system = std::string(kModelSystem);
  record.checks = std::move(checks);
  WriteEvidence(std::move(record));
}

TEST_P(Compare, SideBySide) {
  const CaseRow& row = GetParam();
  const nlohmann::json options = RowOptions(row);
  Result<CaseSpec> a = ParseRow(row);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  Result<CaseSpec> b = ParseCaseSpec(options.value("versus", std::string()));
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  const int reps = options.value("reps", 9);
  std::vector<Sample> sa, sb;
  std::optional<CaseRun> last_a;
  const CpuTimes began = ReadCpuTimes();
  for (int rep = 0; rep < reps; ++rep) {
    for (int k = 0; k < 2; ++k) {
      const bool is_a = CompareRunsA(rep, k);
      std::string skip;
      std::optional<CaseRun> run = RunOrSkip(row, is_a ? a.value() : b.value(), row.repeats, &skip);
      if (!run) {
        if (!skip.empty()) GTEST_SKIP() << skip;
        return;
      }
      ASSERT_FALSE(run->steps.back().degenerate) << "degenerate output: " << (is_a ? row.repro : b->Format());
      (is_a ? sa : sb).push_back(Measure(*run));
      if (is_a) last_a = std::move(run);
    }
  }
  CaseRecord record = RunRecord(row, *last_a);
  record.compare = CompareRecord{.repro_a = row.repro,
                                 .repro_b = b->Format(),
                                 .a = std::move(sa),
                                 .b = std::move(sb),
                                 .versus_flags = options.value("versus_flags", nlohmann::json::object()),
                                 .reps = reps,
                                 .others_cpu = OthersCpuShare(began, ReadCpuTimes())};
  record.checks.push_back(Check("measured", true, std::to_string(reps) + " interleaved reps"));
  WriteEvidence(std::move(record));
}

TEST_P(CrossProcess, Probe) {
  const CaseRow& row = GetParam();
  const nlohmann::json options = RowOptions(row);
  Result<CaseSpec> spec = ParseRow(row);
  ASSERT_TRUE(spec.ok()) << spec.status().ToString();
  const int processes = options.value("processes", 10);
  const std::string expect = options.value("expect", std::string("observe"));
  nlohmann::json envs = options.value("env", nlohmann::json::array({nlohmann::json::object()}));

  CrossProcessRecord x;
  std::map<std::string, int>& choices = x.choice_distribution;
  std::map<std::string, int>& digests = x.digest_distribution;
  std::map<std::string, std::set<std::string>> digests_by_env;
  for (const nlohmann::json& env_json : envs) {
    std::map<std::string, std::string> env = env_json.get<std::map<std::string, std::string>>();
    std::string env_label;
    for (const auto& [k, v] : env) env_label += (env_label.empty() ? "" : " ") + k + "=" + v;
    if (env_label.empty()) env_label = "(inherited)";
    for (int i = 0; i < processes; ++i) {
      Result<ProbeResult> probe = SpawnProbe(row.repro, row.repeats, env);
      ASSERT_TRUE(probe.ok()) << probe.status().ToString();
      if (probe->exit_code == kProbeNotEvaluated) {
        const std::string reason = probe->output.value("status", std::string("not evaluated"));
        WriteEvidence(SkippedRecord(row, reason));
        GTEST_SKIP() << reason;
      }
      ASSERT_EQ(probe->exit_code, 0) << probe->stderr_text << probe->output.dump();
      std::vector<std::string> chosen, last_digests;
      for (const nlohmann::json& step : probe->output["steps"]) {
        chosen.push_back(step["chosen"].get<std::string>());
        last_digests.push_back(step["digests"].back().get<std::string>());
      }
      const std::string choice = Join(chosen), digest = Join(last_digests);
      ++choices[choice];
      ++digests[digest];
      digests_by_env[env_label].insert(digest);
      x.processes.push_back({.env = env_label,
                             .chosen = choice,
                             .digest = digest,
                             .implementation = probe->output["steps"][0]["implementation"].get<std::string>(),
                             .threads = probe->output["threads"].get<int>()});
    }
  }
  std::vector<CheckRecord> checks;
  if (expect == "same_choice") {
    checks.push_back(Check("same_choice", choices.size() == 1,
                           std::to_string(choices.size()) + " distinct choice(s) in " +
                               std::to_string(x.processes.size()) + " processes"));
    EXPECT_EQ(choices.size(), 1u) << nlohmann::json(choices).dump();
  } else if (expect == "same_digest") {
    checks.push_back(Check("same_digest", digests.size() == 1,
                           std::to_string(digests.size()) + " distinct digest(s) in " +
                               std::to_string(x.processes.size()) + " processes"));
    EXPECT_EQ(digests.size(), 1u) << nlohmann::json(digests).dump();
  }
  for (const auto& [label, set] : digests_by_env) x.digests_stable_within_env = x.digests_stable_within_env && set.size() == 1;
  CaseRecord record = SkippedRecord(row, "");
  record.cross_process = std::move(x);
  record.checks = std::move(checks);
  WriteEvidence(std::move(record));
}

}  // namespace bc::suite

