// The main of every test binary: opens the process's evidence file with the
// environment record, records each test's outcome (with the skip reason or
// the first failure) as a "result" record, and closes the file on exit.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <fnmatch.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/evidence.h"
#include "runner/case_table.h"
#include "runner/probe.h"
#include "runner/records.h"
#include "suites/test_evidence.h"

namespace {

// A test's full gtest name, as a filter names it: "Prefix/Suite.Test/param".
std::string FullName(const testing::TestInfo& info) {
  return std::string(info.test_suite_name()) + "." + info.name();
}

class ResultRecorder : public testing::EmptyTestEventListener {
  void OnTestEnd(const testing::TestInfo& info) override {
    const testing::TestResult& result = *info.result();
    bc::ResultRecord r{.test = bc::RecordedName(FullName(info)),
                       .outcome = result.Skipped()  ? bc::ResultOutcome::kSkipped
                                  : result.Failed() ? bc::ResultOutcome::kFailed
                                                    : bc::ResultOutcome::kPassed,
                       .elapsed_ms = static_cast<double>(result.elapsed_time())};
    for (int i = 0; i < result.total_part_count(); ++i) {
      const testing::TestPartResult& part = result.GetTestPartResult(i);
      if (part.skipped() || part.failed()) {
        r.message = part.message();
        break;
      }
    }
    // The test has ended: a failure here is reported by Close(), and the
    // process then exits non-zero, so ctest fails the test.
    if (bc::Status s = bc::ProcessEvidence().Write(bc::ToJson(r)); !s.ok()) {
      std::fprintf(stderr, "backendcheck: %s\n", s.message().c_str());
    }
  }
};

// Test-only fault injection: BACKENDCHECK_INJECT_FAULT="MODE=GLOB,..." with
// MODE crash (SIGSEGV), abort (SIGABRT) or hang (sleeps until killed) makes
// the tests whose full name matches GLOB fail that way as they start, so the
// fault isolation of ctest and the report can be tested with real processes.
class FaultInjector : public testing::EmptyTestEventListener {
 public:
  explicit FaultInjector(std::string spec) : spec_(std::move(spec)) {}
  void OnTestStart(const testing::TestInfo& info) override {
    const std::string name = FullName(info);
    std::stringstream rules(spec_);
    std::string rule;
    while (std::getline(rules, rule, ',')) {
      const size_t eq = rule.find('=');
      if (eq == std::string::npos || fnmatch(rule.substr(eq + 1).c_str(), name.c_str(), 0) != 0) continue;
      const std::string mode = rule.substr(0, eq);
      std::fprintf(stderr, "backendcheck: injecting fault '%s' into %s\n", mode.c_str(), name.c_str());
      std::fflush(stderr);
      if (mode == "crash") std::raise(SIGSEGV);
      if (mode == "abort") std::abort();
      if (mode == "hang") {
        for (;;) std::this_thread::sleep_for(std::chrono::hours(1));
      }
    }
  }

 private:
  std::string spec_;
};

// The case of a generated test whose repro names environment variables this
// process lacks (libraries read them when they initialise), or nothing: such
// a case must run in a process that starts with them.
std::optional<bc::CaseSpec> NeedingItsOwnProcess(const std::string& test) {
  const bc::CaseRow* row = bc::FindGeneratedCase(test.c_str());
  if (row == nullptr) return std::nullopt;
  bc::Result<bc::CaseSpec> spec = bc::ParseCaseSpec(row->repro);
  if (!spec.ok() || spec->MissingEnv().empty()) return std::nullopt;
  return *spec;
}

// ctest runs one such case per process: set them and start this process again.
void StartAgainWithCaseEnvironment(const std::vector<char*>& original_argv) {
  const std::string filter = testing::GTEST_FLAG(filter);
  if (filter.find_first_of("*?:-") != std::string::npos || std::getenv("BACKENDCHECK_ENV_APPLIED") != nullptr) return;
  const std::optional<bc::CaseSpec> spec = NeedingItsOwnProcess(filter);
  if (!spec) return;
  for (const auto& [name, value] : spec->env) ::setenv(name.c_str(), value.c_str(), 1);
  ::setenv("BACKENDCHECK_ENV_APPLIED", "1", 1);
  ::execv("/proc/self/exe", original_argv.data());
  std::perror("backendcheck: execv");  // only reached on failure; the case then skips with the reason
}

// Batch mode (runner/batch.py): BACKENDCHECK_BATCH_LIST names a file of
// test names, one a line, run in this one process; BACKENDCHECK_BATCH_OUT a
// directory where each case leaves what a process of its own would have
// shown: NAME.out (its stdout and stderr) and then NAME.json (its outcome
// and time), NAME with '/' written %2F. NAME.out is opened as the case
// starts, so that the runner knows the case a crash or a hang stopped in.
// A case that needs its own process (NeedingItsOwnProcess) is left out:
// NAME.json says so, and its test runs it alone.
std::string BatchFile(const std::string& name) {
  std::string out;
  for (char c : name) out += c == '/' ? std::string("%2F") : std::string(1, c);
  return out;
}

class BatchRecorder : public testing::EmptyTestEventListener {
 public:
  explicit BatchRecorder(std::filesystem::path dir) : dir_(std::move(dir)) {}
  void OnTestStart(const testing::TestInfo& info) override {
    const std::string name = FullName(info);
    Flush();
    saved_out_ = ::dup(1);
    saved_err_ = ::dup(2);
    const int fd = ::open((dir_ / (BatchFile(name) + ".out")).c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd >= 0) {
      ::dup2(fd, 1);
      ::dup2(fd, 2);
      ::close(fd);
    }
  }
  void OnTestEnd(const testing::TestInfo& info) override {
    Flush();
    if (saved_out_ >= 0) ::dup2(saved_out_, 1), ::close(saved_out_), saved_out_ = -1;
    if (saved_err_ >= 0) ::dup2(saved_err_, 2), ::close(saved_err_), saved_err_ = -1;
    const testing::TestResult& r = *info.result();
    const std::string name = FullName(info);
    WriteWhole(dir_ / (BatchFile(name) + ".json"),
               nlohmann::json{{"test", name},
                              {"outcome", r.Skipped() ? "skipped" : r.Failed() ? "failed" : "passed"},
                              {"ms", r.elapsed_time()}}.dump());
  }
  static void WriteWhole(const std::filesystem::path& path, const std::string& text) {
    const std::filesystem::path tmp = path.string() + ".tmp";
    std::ofstream(tmp) << text << "\n";
    std::filesystem::rename(tmp, path);
  }

 private:
  static void Flush() {
    std::cout.flush();
    std::cerr.flush();
    std::fflush(stdout);
    std::fflush(stderr);
  }
  std::filesystem::path dir_;
  int saved_out_ = -1;
  int saved_err_ = -1;
};

// The batch's filter: its list less the cases that need their own process.
// Returns the directory of its outcomes, or empty outside batch mode.
std::filesystem::path StartBatch() {
  const char* list = std::getenv("BACKENDCHECK_BATCH_LIST");
  const char* out = std::getenv("BACKENDCHECK_BATCH_OUT");
  if (list == nullptr || *list == '\0' || out == nullptr || *out == '\0') return {};
  std::ifstream in(list);
  std::string name, filter;
  while (std::getline(in, name)) {
    if (name.empty()) continue;
    if (NeedingItsOwnProcess(name)) {
      BatchRecorder::WriteWhole(std::filesystem::path(out) / (BatchFile(name) + ".json"),
                                nlohmann::json{{"test", name}, {"outcome", "own process"}}.dump());
      continue;
    }
    filter += (filter.empty() ? "" : ":") + name;
  }
  testing::GTEST_FLAG(filter) = filter.empty() ? "-*" : filter;
  return out;
}

// Under a resource spec (ci/gpu-resource-spec.py; cmake/GpuResources.cmake),
// a GPU test is given one GPU as CTEST_RESOURCE_GROUP_0_GPUS="id:N,slots:K":
// make it the only device this process and its children see, before
// anything initialises CUDA. The spec numbers GPUs by PCI bus id, as
// nvidia-smi does; CUDA's own order (fastest first) may differ, so CUDA is
// told to count the same way.
void UseAllocatedGpu() {
  const char* group = std::getenv("CTEST_RESOURCE_GROUP_0_GPUS");
  if (group == nullptr) return;
  const std::string g(group);
  const size_t id = g.find("id:");
  if (id == std::string::npos) return;
  const std::string device = g.substr(id + 3, g.find(',', id) - id - 3);
  ::setenv("CUDA_DEVICE_ORDER", "PCI_BUS_ID", 1);
  ::setenv("CUDA_VISIBLE_DEVICES", device.c_str(), 1);
}

}  // namespace

namespace bc {
// Binaries without generated tables (harness_tests) have no generated case.
__attribute__((weak)) const CaseRow* FindGeneratedCase(const char*) { return nullptr; }
}  // namespace bc

int main(int argc, char** argv) {
  UseAllocatedGpu();
  if (std::optional<int> probe = bc::MaybeRunProbe(argc, argv)) return *probe;
  std::vector<char*> original_argv(argv, argv + argc);
  original_argv.push_back(nullptr);
  testing::InitGoogleTest(&argc, argv);
  if (!testing::GTEST_FLAG(list_tests)) StartAgainWithCaseEnvironment(original_argv);
  const std::filesystem::path batch = testing::GTEST_FLAG(list_tests) ? std::filesystem::path() : StartBatch();
  const char* dir = std::getenv("BACKENDCHECK_EVIDENCE_DIR");
  if (dir == nullptr || *dir == '\0') dir = std::getenv("BACKENDCHECK_DEFAULT_EVIDENCE_DIR");
  if (dir != nullptr && *dir != '\0' && !testing::GTEST_FLAG(list_tests)) {
    const std::string tag = std::filesystem::path(argv[0]).filename().string();
    if (bc::Status s = bc::ProcessEvidence().Open(dir, tag, bc::ToJson(bc::ProbeEnvironment(testing::GTEST_FLAG(filter)))); !s.ok()) {
      std::fprintf(stderr, "backendcheck: cannot write evidence: %s\n", s.ToString().c_str());
      return 2;
    }
    testing::UnitTest::GetInstance()->listeners().Append(new ResultRecorder);
  }
  // Before the fault injector: a case's name is its batch's before it starts.
  if (!batch.empty()) testing::UnitTest::GetInstance()->listeners().Append(new BatchRecorder(batch));
  if (const char* faults = std::getenv("BACKENDCHECK_INJECT_FAULT"); faults != nullptr && *faults != '\0') {
    testing::UnitTest::GetInstance()->listeners().Append(new FaultInjector(faults));
  }
  const int rc = RUN_ALL_TESTS();
  if (bc::Status s = bc::ProcessEvidence().Close(); !s.ok()) {
    std::fprintf(stderr, "backendcheck: evidence incomplete, so the run fails: %s\n", s.ToString().c_str());
    return rc == 0 ? 2 : rc;
  }
  return rc;
}
