// The CBLAS engine: matmul (C = A B, row-major, fp32) through cblas_sgemm of
// the system's BLAS, the library that Debian's PyTorch and NumPy call for
// fp32 GEMM on the CPU (libblas.so.3: OpenBLAS or the reference BLAS,
// whichever the alternatives system names). Its evidence speaks for that
// library: which one ran, and its version where it says it
// (openblas_get_config), is in the availability record.
// One algorithm, "sgemm": the library partitions the GEMM over its own
// threads, in a fixed way for a fixed thread count.
#include <cblas.h>
#include <dlfcn.h>

#include "backends/engine.h"
#include "backends/registry.h"

namespace bc {
namespace {

class CblasPrepared final : public PreparedOp {
 public:
  CblasPrepared(const MatmulProblem& p, Buffers& b, Algorithm a) : p_(p), b_(b), algorithm_(std::move(a)) {}
  Status Execute() override {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(p_.m), static_cast<int>(p_.n),
                static_cast<int>(p_.k), 1.0f, b_["src"].data(), static_cast<int>(p_.k), b_["wei"].data(),
                static_cast<int>(p_.n), 0.0f, b_["dst"].data(), static_cast<int>(p_.n));
    return Status::Ok();
  }
  Status Fetch() override { return Status::Ok(); }  // computes in place on host buffers
  std::string implementation() const override { return "cblas_sgemm"; }
  const Algorithm& algorithm() const override { return algorithm_; }

 private:
  MatmulProblem p_;
  Buffers& b_;
  Algorithm algorithm_;
};

// The library that cblas_sgemm resolved to, and its own description where it
// has one (OpenBLAS: "OpenBLAS 0.3.21 DYNAMIC_ARCH ...").
std::pair<std::string, std::string> LoadedBlas() {
  Dl_info info{};
  const std::string path =
      dladdr(reinterpret_cast<void*>(&cblas_sgemm), &info) != 0 && info.dli_fname != nullptr ? info.dli_fname : "";
  using Config = char* (*)();
  const auto config = reinterpret_cast<Config>(dlsym(RTLD_DEFAULT, "openblas_get_config"));
  return {path, config != nullptr ? std::string(config()) : std::string()};
}

class CblasEngine final : public Engine {
 public:
  CblasEngine() : Engine("cblas", Device::kCpu) {}
  Availability availability() const override {
    const auto [path, config] = LoadedBlas();
    Availability a{.engine = "cblas", .built = true, .available = true};
    a.reason = "cblas_sgemm from " + (path.empty() ? std::string("an unknown library") : path);
    a.version = config.empty() ? "BLAS (" + path + ")" : config;
    if (config.rfind("OpenBLAS ", 0) == 0) a.library_version = config.substr(9, config.find(' ', 9) - 9);
    return a;
  }
  Result<std::vector<Algorithm>> Candidates(const Problem& p, const BackendFlags&) const override {
    if (!std::holds_alternative<MatmulProblem>(p) || !IsPlainF32(p)) return std::vector<Algorithm>{};
    return std::vector<Algorithm>{{"sgemm", Determinism::kDeterministic, 0}};
  }
  Result<std::unique_ptr<PreparedOp>> Prepare(const Problem& p, const Algorithm& algorithm, Buffers& buffers,
                                              const BackendFlags&) const override {
    const auto* m = std::get_if<MatmulProblem>(&p);
    if (m == nullptr || algorithm.name != "sgemm") {
      return Status(StatusCode::kInvalidArgument, "cblas has no algorithm '" + algorithm.name + "' for " +
                                                      FormatProblem(p));
    }
    return std::unique_ptr<PreparedOp>(new CblasPrepared(*m, buffers, algorithm));
  }
};

}  // namespace

const Engine& CblasEngineInstance() {
  static const CblasEngine kEngine;
  return kEngine;
}

}  // namespace bc
