// The CBLAS engine: matmul (C = A B, row-major, fp32) through cblas_sgemm of
// the system's BLAS, the library Debian's PyTorch and NumPy call for fp32
// GEMM on the CPU (libblas.so.3: OpenBLAS or the reference BLAS, whichever
// the alternatives system names). Its evidence speaks for that library:
// which one ran, and its version where it says it (openblas_get_config), is
// in the availability record.
//
// The library is opened on first use with RTLD_LOCAL and nothing links it:
// in a process's global symbol scope a BLAS would interpose the BLAS symbols
// of a wheel's libtorch and change the PyTorch under test
// (TorchPython.TheHarnessLeavesPytorchAlone guards this). Only the CBLAS ABI
// is assumed, so no header or package is needed to build it; without the
// library the engine is unavailable, with the loader's reason.
// One algorithm, "sgemm": the library partitions the GEMM over its own
// threads (set to the case's count where it says how), in a fixed way for a
// fixed thread count.
#include <dlfcn.h>
#include <omp.h>

#include "backends/engine.h"
#include "backends/registry.h"

namespace bc {
namespace {

// The CBLAS ABI's constants (cblas.h: CBLAS_ORDER, CBLAS_TRANSPOSE).
constexpr int kRowMajor = 101, kNoTrans = 111;

struct Blas {
  using Sgemm = void (*)(int, int, int, int, int, int, float, const float*, int, const float*, int, float, float*,
                         int);
  Sgemm sgemm = nullptr;
  void (*set_threads)(int) = nullptr;  // openblas_set_num_threads, where the library has it
  std::string path;                    // the file cblas_sgemm resolved in
  std::string config;                  // openblas_get_config(): "OpenBLAS 0.3.21 DYNAMIC_ARCH ..."
  std::string error;                   // why it is not here
};

const Blas& Library() {
  static const Blas blas = [] {
    Blas b;
    void* handle = ::dlopen("libblas.so.3", RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      b.error = ::dlerror();
      return b;
    }
    b.sgemm = reinterpret_cast<Blas::Sgemm>(::dlsym(handle, "cblas_sgemm"));
    if (b.sgemm == nullptr) {
      b.error = "libblas.so.3 has no cblas_sgemm";
      return b;
    }
    b.set_threads = reinterpret_cast<void (*)(int)>(::dlsym(handle, "openblas_set_num_threads"));
    Dl_info info{};
    if (::dladdr(reinterpret_cast<void*>(b.sgemm), &info) != 0 && info.dli_fname != nullptr) b.path = info.dli_fname;
    if (const auto config = reinterpret_cast<char* (*)()>(::dlsym(handle, "openblas_get_config"))) b.config = config();
    return b;
  }();
  return blas;
}

class CblasPrepared final : public PreparedOp {
 public:
  CblasPrepared(const MatmulProblem& p, Buffers& b, Algorithm a) : p_(p), b_(b), algorithm_(std::move(a)) {}
  Status Execute() override {
    Library().sgemm(kRowMajor, kNoTrans, kNoTrans, static_cast<int>(p_.m), static_cast<int>(p_.n), static_cast<int>(p_.k),
               1.0f, b_["src"].data(), static_cast<int>(p_.k), b_["wei"].data(), static_cast<int>(p_.n), 0.0f,
               b_["dst"].data(), static_cast<int>(p_.n));
    return Status::Ok();
  }
  Status Fetch() override { return Status::Ok(); }  // computes in place on host buffers
  std::string implementation() const override { return "cblas_sgemm (" + Library().path + ")"; }
  const Algorithm& algorithm() const override { return algorithm_; }

 private:
  MatmulProblem p_;
  Buffers& b_;
  Algorithm algorithm_;
};

class CblasEngine final : public Engine {
 public:
  CblasEngine() : Engine("cblas", Device::kCpu) {}
  Availability availability() const override {
    const Blas& blas = Library();
    Availability a{.engine = "cblas", .built = true, .available = blas.sgemm != nullptr};
    if (!a.available) {
      a.reason = "no system BLAS: " + blas.error;
      return a;
    }
    a.reason = "cblas_sgemm from " + blas.path + ", opened on first use (RTLD_LOCAL)";
    a.version = blas.config.empty() ? "BLAS (" + blas.path + ")" : blas.config;
    if (blas.config.rfind("OpenBLAS ", 0) == 0) a.library_version = blas.config.substr(9, blas.config.find(' ', 9) - 9);
    return a;
  }
  Result<std::vector<Algorithm>> Candidates(const Problem& p, const BackendFlags&) const override {
    if (!std::holds_alternative<MatmulProblem>(p) || !IsPlainF32(p) || Library().sgemm == nullptr) {
      return std::vector<Algorithm>{};
    }
    return std::vector<Algorithm>{{"sgemm", Determinism::kDeterministic, 0}};
  }
  Result<std::unique_ptr<PreparedOp>> Prepare(const Problem& p, const Algorithm& algorithm, Buffers& buffers,
                                              const BackendFlags&) const override {
    const Availability a = availability();
    if (!a.available) return NotAvailable(a);
    const auto* m = std::get_if<MatmulProblem>(&p);
    if (m == nullptr || algorithm.name != "sgemm") {
      return Status(StatusCode::kInvalidArgument, "cblas has no algorithm '" + algorithm.name + "' for " +
                                                      FormatProblem(p));
    }
    // The case's threads (RunCase sets OpenMP's count) for OpenBLAS's own
    // pool, set here rather than in the timed Execute.
    if (Library().set_threads != nullptr) Library().set_threads(omp_get_max_threads());
    return std::unique_ptr<PreparedOp>(new CblasPrepared(*m, buffers, algorithm));
  }
};

}  // namespace

const Engine& CblasEngineInstance() {
  static const CblasEngine kEngine;
  return kEngine;
}

}  // namespace bc
