// Cross-layer blame for the invariance grid's batch level
// (probes/invariance.py): the library below PyTorch, run through the
// harness's own engine for it, on the grid's matmul (64 x 1024 by 1024 x
// 1024), with the first k rows computed as a problem of their own. Whether
// that library's own result depends on the batch says, beside PyTorch's cell,
// whether the library or PyTorch's code varies (reports/invariance.py).
//
// Per engine (oneDNN's matmul, the system BLAS's cblas_sgemm), for each k of
// the grid: whether rows [0, k) of the full product have the bits of the
// k-row product, and the kernel the library named. A recording test: it
// fails only when the engine cannot run, and it is not evaluated where the
// library is absent. Its positive control: the k-row product on inputs one
// ulp away must differ from the full product's rows.
#include <gtest/gtest.h>

#include <omp.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "backends/registry.h"
#include "harness/buffers.h"
#include "suites/test_evidence.h"

namespace bc {
namespace {

constexpr int kRows = 64, kInner = 1024, kCols = 1024;
constexpr int kSlices[] = {1, 2, 3, 4, 7, 8, 16, 33};

struct Product {
  std::vector<float> out;
  std::string implementation;
};

Result<Product> RunRows(const Engine& engine, int rows, const std::vector<float>& a, const std::vector<float>& b) {
  BC_ASSIGN_OR_RETURN(const Problem p, ParseProblem("matmul:f32:m" + std::to_string(rows) + "n" +
                                                    std::to_string(kCols) + "k" + std::to_string(kInner)));
  Buffers buffers = Buffers::For(p);
  buffers["src"].assign(a.begin(), a.begin() + static_cast<std::ptrdiff_t>(rows) * kInner);
  buffers["wei"] = b;
  const BackendFlags flags;
  BC_ASSIGN_OR_RETURN(const Algorithm algorithm, FindAlgorithm(engine, p, "", flags));
  BC_ASSIGN_OR_RETURN(std::unique_ptr<PreparedOp> op, engine.Prepare(p, algorithm, buffers, flags));
  BC_RETURN_IF_ERROR(op->Execute());
  BC_RETURN_IF_ERROR(op->Fetch());
  return Product{buffers.Output(p), op->implementation()};
}

bool SameRows(const std::vector<float>& full, const std::vector<float>& part, int rows) {
  return std::memcmp(full.data(), part.data(), sizeof(float) * static_cast<size_t>(rows) * kCols) == 0;
}

class Blame : public testing::TestWithParam<const char*> {};

TEST_P(Blame, LibraryMatmulAcrossBatchSlices) {
  const Engine* engine = FindEngine(GetParam());
  ASSERT_NE(engine, nullptr) << GetParam();
  const Availability availability = engine->availability();
  const std::string repro = std::string("matmul:f32:m") + std::to_string(kRows) + "n" + std::to_string(kCols) + "k" +
                            std::to_string(kInner) + " device=cpu engine=" + GetParam() + " threads=2";
  if (!availability.available) {
    WriteEvidence({.repro = repro, .skip_reason = availability.reason});
    GTEST_SKIP() << availability.reason;
  }
  const Problem full_problem = ParseProblem(repro.substr(0, repro.find(' '))).value();
  Buffers seeded = Buffers::For(full_problem);
  FillInputs(full_problem, seeded);
  const std::vector<float> a = seeded["src"], b = seeded["wei"];
  const int saved = omp_get_max_threads();
  omp_set_num_threads(2);
  Result<Product> full = RunRows(*engine, kRows, a, b);
  ASSERT_TRUE(full.ok()) << full.status().ToString();
  nlohmann::json per = nlohmann::json::object();
  std::vector<std::string> differ;
  for (int k : kSlices) {
    Result<Product> part = RunRows(*engine, k, a, b);
    ASSERT_TRUE(part.ok()) << part.status().ToString();
    const bool same = SameRows(full->out, part->out, k);
    per[std::to_string(k)] = {{"same", same}, {"implementation", part->implementation}};
    if (!same) differ.push_back(std::to_string(k));
  }
  std::vector<float> nudged = a;
  for (float& x : nudged) x = std::nextafter(x, std::numeric_limits<float>::infinity());
  Result<Product> control = RunRows(*engine, kSlices[0], nudged, b);
  ASSERT_TRUE(control.ok()) << control.status().ToString();
  omp_set_num_threads(saved);
  const bool control_varied = !SameRows(full->out, control->out, kSlices[0]);
  std::string detail = std::string(GetParam()) + " (" + availability.version + ", " + full->implementation + "): ";
  detail += differ.empty() ? "rows [0, k) of the 64-row product have the bits of the k-row product at every k"
                           : "rows [0, k) differ from the k-row product at k = " + [&] {
                               std::string s;
                               for (const std::string& k : differ) s += (s.empty() ? "" : ", ") + k;
                               return s;
                             }();
  CheckRecord check = Check("batch slices", control_varied, detail);
  check.observed = nlohmann::json{{"engine", GetParam()},
                                  {"library", availability.version},
                                  {"implementation", full->implementation},
                                  {"per", per},
                                  {"control_varied", control_varied}};
  WriteEvidence(FactRecord(repro, std::move(check)));
  EXPECT_TRUE(control_varied) << "inputs one ulp away gave the same rows: the comparison cannot see a difference";
}

INSTANTIATE_TEST_SUITE_P(Libraries, Blame, testing::Values("onednn", "cblas"),
                         [](const testing::TestParamInfo<const char*>& info) { return std::string(info.param); });

}  // namespace
}  // namespace bc
