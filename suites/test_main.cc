// The main of every test binary: opens the process's evidence file with the
// environment record, records each test's outcome (with the skip reason or
// the first failure) as a "result" record, and closes the file on exit.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <vector>

#include "backends/onednn/onednn.h"
#include "backends/registry.h"
#include "harness/environment.h"
#include "harness/evidence.h"
#include "suites/case_table.h"
#include "suites/probe.h"

namespace {

class ResultRecorder : public testing::EmptyTestEventListener {
  void OnTestEnd(const testing::TestInfo& info) override {
    const testing::TestResult& result = *info.result();
    nlohmann::json r;
    r["kind"] = "result";
    r["test"] = std::string(info.test_suite_name()) + "." + info.name();
    r["outcome"] = result.Skipped() ? "skipped" : result.Failed() ? "failed" : "passed";
    r["elapsed_ms"] = result.elapsed_time();
    std::string message;
    for (int i = 0; i < result.total_part_count(); ++i) {
      const testing::TestPartResult& part = result.GetTestPartResult(i);
      if (part.skipped() || part.failed()) {
        message = part.message();
        break;
      }
    }
    r["message"] = message;
    (void)bc::ProcessEvidence().Write(std::move(r));
  }
};

nlohmann::json Environment() {
  nlohmann::json env = bc::ProbeHostEnvironment();
  env["onednn_isa"] = bc::OnednnEffectiveIsa();
  nlohmann::json backends = nlohmann::json::object();
  for (const bc::Availability& a : bc::AllAvailability()) {
    backends[a.engine] = {{"built", a.built}, {"available", a.available}, {"reason", a.reason}, {"version", a.version}};
  }
  env["backends"] = backends;
  env["default_flags"] = bc::BackendFlags().All();
  env["gtest_filter"] = testing::GTEST_FLAG(filter);
  return env;
}

// A generated case whose repro names environment variables must run in a
// process that starts with them (libraries read them when they initialise).
// ctest runs one case per process: set them and start this process again.
void StartAgainWithCaseEnvironment(const std::vector<char*>& original_argv) {
  const std::string filter = testing::GTEST_FLAG(filter);
  if (filter.find_first_of("*?:-") != std::string::npos || std::getenv("BACKENDCHECK_ENV_APPLIED") != nullptr) return;
  const bc::CaseRow* row = bc::FindGeneratedCase(filter.c_str());
  if (row == nullptr) return;
  bc::Result<bc::CaseSpec> spec = bc::ParseCaseSpec(row->repro);
  if (!spec.ok() || spec->MissingEnv().empty()) return;
  for (const auto& [name, value] : spec->env) ::setenv(name.c_str(), value.c_str(), 1);
  ::setenv("BACKENDCHECK_ENV_APPLIED", "1", 1);
  ::execv("/proc/self/exe", original_argv.data());
  std::perror("backendcheck: execv");  // only reached on failure; the case then skips with the reason
}

}  // namespace

namespace bc {
// Binaries without generated tables (harness_tests) have no generated case.
__attribute__((weak)) const CaseRow* FindGeneratedCase(const char*) { return nullptr; }
}  // namespace bc

int main(int argc, char** argv) {
  if (std::optional<int> probe = bc::MaybeRunProbe(argc, argv)) return *probe;
  std::vector<char*> original_argv(argv, argv + argc);
  original_argv.push_back(nullptr);
  testing::InitGoogleTest(&argc, argv);
  if (!testing::GTEST_FLAG(list_tests)) StartAgainWithCaseEnvironment(original_argv);
  const char* dir = std::getenv("BACKENDCHECK_EVIDENCE_DIR");
  if (dir == nullptr || *dir == '\0') dir = std::getenv("BACKENDCHECK_DEFAULT_EVIDENCE_DIR");
  if (dir != nullptr && *dir != '\0' && !testing::GTEST_FLAG(list_tests)) {
    const std::string tag = std::filesystem::path(argv[0]).filename().string();
    if (bc::Status s = bc::ProcessEvidence().Open(dir, tag, Environment()); !s.ok()) {
      std::fprintf(stderr, "backendcheck: cannot write evidence: %s\n", s.ToString().c_str());
      return 2;
    }
    testing::UnitTest::GetInstance()->listeners().Append(new ResultRecorder);
  }
  const int rc = RUN_ALL_TESTS();
  if (bc::Status s = bc::ProcessEvidence().Close(); !s.ok()) {
    std::fprintf(stderr, "backendcheck: %s\n", s.ToString().c_str());
    return rc == 0 ? 2 : rc;
  }
  return rc;
}
