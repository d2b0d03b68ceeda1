// torch.backends semantics that only PyTorch's Python has (the flags()
// context manager, the defaults and attributes of this version,
// is_available(), the alert and its warn_only form, manual_seed), each run by
// probes/torch_backends.py in a fresh interpreter that imports torch
// (or, for a group of probes that share one where the run names a place for
// it, relayed by that interpreter to theirs: probes/shared_child.py).
// The interpreter is BACKENDCHECK_TORCH_PYTHON when set, otherwise the one
// configured (-DBACKENDCHECK_TORCH_PYTHON, by default the build's Python,
// Debian's /usr/bin/python3). Without torch there, each test skips with the
// import error. Every fact is PyTorch's evidence, recorded with its version;
// what PyTorch did is a finding, held to catalog/known_findings.toml by the
// report, and fails a test only where the probe could not observe it.
#include <gtest/gtest.h>

#include <dlfcn.h>
#include <unistd.h>

#include <omp.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

#include "backends/registry.h"
#include "harness/buffers.h"
#include "harness/onednn_verbose.h"
#include "runner/compare.h"
#include "runner/probe.h"
#include "suites/test_evidence.h"

#ifndef BC_TORCH_PYTHON
#define BC_TORCH_PYTHON "python3"
#endif
#ifndef BC_SOURCE_DIR
#define BC_SOURCE_DIR "."
#endif
#ifndef BC_PROBE_PATH
#define BC_PROBE_PATH ""
#endif
#ifndef BC_CUDNN_LOG_TOOL
#define BC_CUDNN_LOG_TOOL "bc_cudnn_log"
#endif

namespace bc {
namespace {

std::string Interpreter() {
  const char* v = std::getenv("BACKENDCHECK_TORCH_PYTHON");
  return v != nullptr && *v != '\0' ? v : BC_TORCH_PYTHON;
}

// This process's environment ("NAME=value"), less the variables named.
std::vector<std::string> EnvironmentWithout(std::initializer_list<std::string_view> names) {
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string_view v(*e);
    if (std::none_of(names.begin(), names.end(),
                     [&](std::string_view name) { return v.size() > name.size() && v.substr(0, name.size()) == name &&
                                                         v[name.size()] == '='; })) {
      env.emplace_back(v);
    }
  }
  return env;
}

// Runs one probe of probes/torch_backends.py and records what it
// saw: its fact, and where it reports them, a comparison (a Compare record,
// its others_cpu the share of the machine other processes took while the
// probe ran, the probe's own processes aside) and fresh processes' choices
// (a CrossProcess record), read by runner/records' CompareFromJson and
// CrossProcessFromJson. The probes that log their children's cuDNN calls
// find the log's reader at BACKENDCHECK_CUDNN_LOG_TOOL, and a torch whose
// environment the harness does not manage the wheels of the probes' packages
// at BACKENDCHECK_PROBE_PATH (the build's, unless the environment names one).
void RunTorchProbe(const std::string& probe) {
  std::vector<std::string> env = EnvironmentWithout({});
  for (const auto& [name, built] : {std::pair<const char*, const char*>{"BACKENDCHECK_CUDNN_LOG_TOOL", BC_CUDNN_LOG_TOOL},
                                    {"BACKENDCHECK_PROBE_PATH", BC_PROBE_PATH}}) {
    if (const char* v = std::getenv(name); (v == nullptr || *v == '\0') && *built != '\0') {
      env.push_back(std::string(name) + "=" + built);
    }
  }
  const CpuTimes began = ReadCpuTimes();
  const double children_began = ChildrenCpuSeconds();
  Result<ProbeResult> r =
      SpawnJson({Interpreter(), std::string(BC_SOURCE_DIR) + "/probes/torch_backends.py", probe}, env);
  const double others_cpu = OthersCpuShare(began, ReadCpuTimes(), ChildrenCpuSeconds() - children_began);
  const std::string repro = "torch_backends.py " + probe;
  // The probe could not observe PyTorch: an error of the harness, recorded
  // as such (never a failed fact, which would refute the claim) and failing
  // the test.
  const auto harness_error = [&](const std::string& why) {
    WriteEvidence(FactRecord(repro, {.name = probe, .outcome = CheckOutcome::kError, .detail = why}, "pytorch"));
    ADD_FAILURE() << why;
  };
  if (!r.ok()) return harness_error("the probe did not run: " + r.status().ToString());
  if (r->exit_code == kProbeNotEvaluated) {
    const std::string why = Interpreter() + ": " + r->output.value("error", std::string("cannot import torch"));
    WriteEvidence({.repro = repro, .system = "pytorch", .skip_reason = why});
    GTEST_SKIP() << why;
  }
  if (r->exit_code != 0 || !r->output.contains("passed")) {
    const std::string said = r->output.is_object() && r->output.contains("error")
                                 ? r->output["error"].get<std::string>()
                                 : "no result line; stderr: " + r->stderr_text.substr(0, 500);
    const std::string torch = r->output.is_object() ? r->output.value("torch", std::string("?")) : "?";
    return harness_error("PyTorch " + torch + " (" + Interpreter() +
                         "): probe " + probe + " failed (exit " + std::to_string(r->exit_code) + "): " + said);
  }
  const bool passed = r->output.value("passed", false);
  const std::string detail = "PyTorch " + r->output.value("torch", std::string("?")) + " (" + Interpreter() +
                             "): " + r->output.value("detail", std::string());
  CheckRecord check = Check(probe, passed, detail);
  // Part of the probe's own work failed (an entry of the documented list
  // that crashed, say): the harness's error, with what it did observe.
  // That fails the test: the harness could not observe all it was to.
  if (r->output.value("harness_error", false)) {
    check.outcome = CheckOutcome::kError;
    ADD_FAILURE() << "part of probe " << probe << " could not observe PyTorch: " << detail;
  }
  if (r->output.contains("observed") && r->output["observed"].is_object()) {
    nlohmann::json observed = r->output["observed"];
    // oneDNN's verbose lines a probe captured, by label: read here by the
    // one parser of them (harness/onednn_verbose), kept as kernel names.
    if (observed.contains("onednn_verbose") && observed["onednn_verbose"].is_object()) {
      nlohmann::json kernels = nlohmann::json::object();
      for (const auto& [label, text] : observed["onednn_verbose"].items()) {
        kernels[label] = text.is_string() ? OnednnKernelsIn(text.template get<std::string>()) : std::string();
      }
      observed["onednn_kernels"] = kernels;
      observed.erase("onednn_verbose");
    }
    check.observed = std::move(observed);
  }
  // A "same bits" or "no effect" probe whose positive control did not vary:
  // its fact is mistrusted (decides nothing), and the test fails, as a
  // missed control does.
  const std::string mistrusted = r->output.value("mistrusted", std::string());
  if (!mistrusted.empty() && check.outcome != CheckOutcome::kError) {
    check.outcome = CheckOutcome::kMistrusted;
    check.detail += "; mistrusted: " + mistrusted;
  }
  CaseRecord record = FactRecord(repro, std::move(check), "pytorch");
  if (r->output.contains("compare")) {
    Result<CompareRecord> compare = CompareFromJson(r->output["compare"]);
    if (!compare.ok()) return harness_error("probe " + probe + " reported a comparison that does not read: " +
                                            compare.status().message());
    compare->others_cpu = others_cpu;
    record.compare = std::move(compare).value();
  }
  if (r->output.contains("cross_process")) {
    Result<CrossProcessRecord> processes = CrossProcessFromJson(r->output["cross_process"]);
    if (!processes.ok()) return harness_error("probe " + probe + " reported processes that do not read: " +
                                              processes.status().message());
    record.cross_process = std::move(processes).value();
  }
  WriteEvidence(std::move(record));
  EXPECT_TRUE(mistrusted.empty()) << mistrusted;
  // What PyTorch did is a finding, not a failure of this test: the fact is
  // recorded (passed or failed) and the report holds it to what is known for
  // this platform (catalog/known_findings.toml). The test fails only where the
  // probe could not observe (above) or its control did not vary.
  if (!passed) std::printf("finding: %s\n", detail.c_str());
}

// One TEST per probe, each TorchPython.<test> running RunTorchProbe(<name>),
// generated from the probes' declarations (probes/declared.toml, by
// generators/probes.py) with the tests' ctest properties.
#include "pytorch_python_probes.inc"


void WriteFloats(const std::filesystem::path& path, const std::vector<float>& v) {
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(v.data()),
                                              static_cast<std::streamsize>(v.size() * sizeof(float)));
}

// A guard of every PyTorch verdict: nothing the harness links or loads into
// a test process changes the PyTorch under test. A system BLAS in the
// process's global symbol scope, for one, takes over the GEMMs of a wheel's
// libtorch (whose MKL symbols it interposes), and PyTorch then computes as
// another build would. The PyTorch engine's at::mm, on one thread, must give
// bitwise what torch.mm gives on the same operands in a bare interpreter of
// the same install (LD_PRELOAD removed), at every shape of kGuardShapes, and
// name the BLAS that interpreter maps. The shapes cross where a BLAS changes
// strategy on one thread (the matrix-vector path at m = 1, depths on both
// sides of the usual k-blocks of 256 to 512, odd remainders of the register
// blocks), so that two libraries that agree at one shape are still told
// apart. The test prints what it saw as one JSON line, which its control
// reads.
constexpr const char* kGuardShapes[] = {"m192n160k224", "m1n256k1031", "m37n45k769", "m64n64k1537",
                                        "m256n128k2048"};

TEST(TorchPython, TheHarnessLeavesPytorchAlone) {
  const Engine* torch = FindEngine("pytorch");
  ASSERT_NE(torch, nullptr);
  const Availability a = torch->availability();
  if (!a.available) GTEST_SKIP() << a.reason;
  char dir_template[] = "/tmp/bc-same-torch-XXXXXX";
  ASSERT_NE(::mkdtemp(dir_template), nullptr) << std::strerror(errno);
  const std::filesystem::path dir(dir_template);
  std::ofstream shapes(dir / "shapes");
  std::vector<std::vector<float>> ours;
  std::string implementation;
  const int saved = omp_get_max_threads();
  omp_set_num_threads(1);
  const BackendFlags flags;
  for (size_t i = 0; i < std::size(kGuardShapes); ++i) {
    const Problem p = ParseProblem(std::string("matmul:f32:") + kGuardShapes[i]).value();
    const auto& m = std::get<MatmulProblem>(p);
    Buffers buffers = Buffers::For(p);
    FillInputs(p, buffers);
    Result<Algorithm> algorithm = FindAlgorithm(*torch, p, "", flags);
    ASSERT_TRUE(algorithm.ok()) << algorithm.status().ToString();
    Result<std::unique_ptr<PreparedOp>> op = torch->Prepare(p, algorithm.value(), buffers, flags);
    ASSERT_TRUE(op.ok()) << op.status().ToString();
    ASSERT_TRUE((*op)->Execute().ok());
    ASSERT_TRUE((*op)->Fetch().ok());
    implementation = (*op)->implementation();
    WriteFloats(dir / ("a" + std::to_string(i) + ".f32"), buffers["src"]);
    WriteFloats(dir / ("b" + std::to_string(i) + ".f32"), buffers["wei"]);
    shapes << m.m << " " << m.k << " " << m.n << "\n";
    ours.push_back(buffers.Output(p));
  }
  shapes.close();
  omp_set_num_threads(saved);

  std::vector<std::string> env = EnvironmentWithout({"LD_PRELOAD"});
  env.push_back("BACKENDCHECK_SAME_TORCH_DIR=" + dir.string());
  Result<ProbeResult> r =
      SpawnJson({Interpreter(), std::string(BC_SOURCE_DIR) + "/probes/torch_backends.py", "same_torch"}, env);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  if (r->exit_code == kProbeNotEvaluated) {
    std::filesystem::remove_all(dir);
    GTEST_SKIP() << Interpreter() << ": " << r->output.value("error", std::string("cannot import torch"));
  }
  ASSERT_EQ(r->exit_code, 0) << r->output.dump() << r->stderr_text;
  size_t differ = 0, elements = 0;
  nlohmann::json per = nlohmann::json::object();
  for (size_t i = 0; i < ours.size(); ++i) {
    std::ifstream in(dir / ("out" + std::to_string(i) + ".f32"), std::ios::binary);
    std::vector<float> theirs(ours[i].size());
    in.read(reinterpret_cast<char*>(theirs.data()), static_cast<std::streamsize>(theirs.size() * sizeof(float)));
    ASSERT_EQ(in.gcount(), static_cast<std::streamsize>(theirs.size() * sizeof(float))) << kGuardShapes[i];
    size_t here = 0;
    for (size_t j = 0; j < ours[i].size(); ++j) here += std::memcmp(&ours[i][j], &theirs[j], sizeof(float)) != 0;
    per[kGuardShapes[i]] = here;
    differ += here;
    elements += ours[i].size();
  }
  std::filesystem::remove_all(dir);
  const std::string blas = r->output["observed"].value("blas", std::string());
  std::printf("%s\n", nlohmann::json{{"differ", differ},
                                     {"elements", elements},
                                     {"per_shape", per},
                                     {"implementation", implementation},
                                     {"bare_blas", blas}}.dump().c_str());
  EXPECT_EQ(differ, 0u) << "at::mm in this test process and torch.mm in " << Interpreter() << " differ in " << differ
                        << " of " << elements << " elements (" << per.dump()
                        << "): the process changed the PyTorch under test (" << implementation << ")";
  EXPECT_NE(implementation.find("[BLAS: " + blas + "]"), std::string::npos)
      << "a bare interpreter maps BLAS " << blas << ", this process's PyTorch ran " << implementation;
}

// The guard's positive control: the same test in a child process with the
// system BLAS preloaded into its global scope (what linking an engine
// against libblas.so.3 did) must fail, and its bits must differ at some
// shape of kGuardShapes. Not evaluated where there is no system BLAS, where
// this PyTorch already calls one (Debian's), so that a preloaded one has
// nothing to change, or where the two BLASes gave the same bits at every
// shape tried (the guard then caught it by the BLAS's name only).
TEST(TorchPython, TheGuardCatchesASystemBlasInTheProcess) {
  if (const Availability a = FindEngine("pytorch")->availability(); !a.available) GTEST_SKIP() << a.reason;
  if (void* blas = ::dlopen("libblas.so.3", RTLD_LAZY | RTLD_LOCAL); blas == nullptr) {
    GTEST_SKIP() << "no system BLAS here: " << ::dlerror();
  } else {
    ::dlclose(blas);
  }
  std::vector<std::string> env =
      EnvironmentWithout({"LD_PRELOAD", "BACKENDCHECK_EVIDENCE_DIR", "BACKENDCHECK_DEFAULT_EVIDENCE_DIR"});
  env.push_back("LD_PRELOAD=libblas.so.3");
  Result<ProbeResult> child =
      SpawnJson({"/proc/self/exe", "--gtest_filter=TorchPython.TheHarnessLeavesPytorchAlone"}, env);
  ASSERT_TRUE(child.ok()) << child.status().ToString();
  const std::string bare = child->output.value("bare_blas", std::string());
  if (bare != "none mapped") {
    GTEST_SKIP() << "this PyTorch already calls the system BLAS (" << bare
                 << "): a preloaded one has nothing to change";
  }
  EXPECT_NE(child->exit_code, 0) << "with libblas.so.3 preloaded the guard saw no change: " << child->output.dump();
  // The bits are the control's evidence only where the two libraries differ
  // at some shape the guard tries; where none does on this CPU, the guard
  // caught the preloaded BLAS by its name alone, and the bitwise half of
  // the control is not evaluated here.
  if (child->exit_code != 0 && child->output.value("differ", 0) == 0) {
    GTEST_SKIP() << "the system BLAS and this PyTorch's own gave the same bits at every shape the guard tries ("
                 << child->output.value("per_shape", nlohmann::json::object()).dump()
                 << " elements differ) on this CPU; the guard caught the preloaded BLAS by its name ("
                 << child->output.value("implementation", std::string()) << ")";
  }
  EXPECT_GT(child->output.value("differ", 0), 0) << child->output.dump();
}

}  // namespace
}  // namespace bc
