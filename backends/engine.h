// Engine: the one interface every backend implements.
//
// availability() says whether the engine was built, whether it can run on this
// machine, and why not. Candidates() lists the candidates for a problem in the
// engine's heuristic order, each with its determinism property (from the
// engine's documentation or, where it has none, from how the engine builds it)
// and workspace; an empty list means the engine has no implementation of that
// problem. Prepare() binds a problem, the chosen candidate and host buffers; the
// PreparedOp then runs the computation (Execute, what timings cover) and
// copies the result into the host output buffer (Fetch). The case's flags are
// passed to every call: an engine reads no process-wide state. Engines return
// Status, never throw.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "harness/algorithm.h"
#include "harness/buffers.h"
#include "harness/case.h"
#include "harness/cudnn_log.h"
#include "harness/flags.h"
#include "harness/numerics.h"
#include "harness/problem.h"
#include "selection/selector.h"
#include "harness/status.h"

namespace bc {

struct Availability {
  std::string engine;
  bool built = false;
  bool available = false;
  std::string reason;   // why it is (not) available, always set
  std::string version;  // of the library actually loaded, where known, for people: "cuDNN 9.1.0, CUDA runtime 12.4"
  std::string library_version;  // the wrapped library's own version number alone: "9.1.0"
  // Not available because probing it failed with an error (a driver fault, a
  // bad status), not because there is no such device or library here: the
  // cases that need it fail instead of being skipped.
  bool error = false;
};

// The status of using an engine that is not available: UNAVAILABLE (not
// evaluated here), or INTERNAL when probing it failed with an error.
inline Status NotAvailable(const Availability& a) {
  return Status(a.error ? StatusCode::kInternal : StatusCode::kUnavailable, a.reason);
}

// What kind of kernel ran, in PyTorch's own terms, and oneDNN's part in it:
// the facts a conformance case compares between the model and PyTorch, said
// by the engine that ran it, never read back out of its implementation string.
struct KernelFacts {
  // The dispatch path it took or stands for, as engines.def's roles name
  // them: mkldnn, native, cudnn or blas; empty: the role of its engine's line.
  std::string kernel_class;
  std::string onednn_kernel;   // oneDNN's own implementation name where oneDNN ran ("jit:avx2")
  std::string onednn_version;  // the version of that oneDNN (the engine's library, or the one inside libtorch)
  // The library's numerical notes on the kernel, in cuDNN's terms (TENSOR_CORE,
  // REDUCED_PRECISION_REDUCTION, WINOGRAD, FFT...): what the error bound
  // must know (ArithmeticOf).
  std::vector<std::string> numerical_notes;
  // What cuDNN ran, in one spelling for the model's cuDNN engine and for
  // PyTorch's cuDNN calls (read from cuDNN's API log): "engine 38" (the
  // graph API's global engine index) or "algo 1" (the legacy API's
  // algorithm, in the direction's cudnnConvolution*Algo_t); empty elsewhere.
  std::string cudnn_choice;
  // Why the notes are not known, where the kernel's library could not be
  // asked (cuDNN's log of PyTorch's call named nothing): no bound is chosen.
  std::string notes_unknown;
  // What cuDNN's log of PyTorch's call says ran, where it names the engine
  // but not its notes (cuDNN 9.19's NULL_PTR): the runner asks cuDNN for
  // them (AskNotesTheLogDoesNotGive).
  std::optional<CudnnRan> cudnn_ran;
};

class PreparedOp {
 public:
  virtual ~PreparedOp() = default;
  virtual Status Execute() = 0;
  virtual Status Fetch() = 0;
  // What actually ran, as the engine names it ("jit:avx512_core", "CUDNN_...").
  virtual std::string implementation() const = 0;
  // The candidate that was bound, with its determinism property.
  virtual const Algorithm& algorithm() const = 0;
  // The kind of kernel that ran (the last Execute's, or the preparation's).
  virtual KernelFacts kernel() const { return {}; }
  // The last Execute's time measured on the device (CUDA events), when the
  // engine measures one; host timing is used otherwise.
  virtual std::optional<double> DeviceTimeNs() const { return std::nullopt; }
};

// An engine's own timed search (cudnnFind*AlgorithmEx): the time of every
// algorithm that ran, and the device memory in use at its peak.
struct EngineSearch {
  std::map<std::string, double> time_ns;
  int64_t peak_device_bytes = 0;
};

// fp16 for half problems, fp32 otherwise: every engine's compute type where
// no TF32 rule applies.
inline ComputeType PlainComputeType(const Problem& p) {
  return ProblemDataType(p) == DataType::kF16 ? ComputeType::kF16 : ComputeType::kF32;
}

class Engine {
 public:
  Engine(std::string_view name, Device device) : name_(name), device_(device) {}
  virtual ~Engine() = default;
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;
  // As backends/engines.def spells it, and the device it runs on.
  std::string_view name() const { return name_; }
  Device device() const { return device_; }
  virtual Availability availability() const = 0;
  // The facts of this machine that decide what the engine runs, recorded in
  // every environment record under their own keys (oneDNN: "onednn_isa", the
  // ISA it dispatches to); none by default. Cheap, and never an error.
  virtual std::map<std::string, std::string> platform() const { return {}; }
  // The candidates for `p` under `flags`, in the engine's heuristic order;
  // empty when the engine has no implementation of `p`, an error when listing
  // them failed (a library or device fault fails the case, it does not look
  // like a problem the engine does not serve).
  virtual Result<std::vector<Algorithm>> Candidates(const Problem& p, const BackendFlags& flags) const = 0;
  // The algorithm PyTorch pins for deterministic mode with benchmark off, for
  // this problem's direction, when the engine has such a rule.
  virtual std::optional<std::string> PinnedDeterministic(const Problem&) const { return std::nullopt; }
  // How PyTorch's choice cache and cudnn.benchmark_limit apply to this
  // engine's candidates under `flags`, when cuDNN's selection semantics
  // choose among them (the default: the cache in benchmark mode only, the
  // limit applied).
  virtual SelectionRules Rules(const BackendFlags&) const { return {}; }
  // The engine's own search (cudnnFind*AlgorithmEx) on the step's filled
  // `inputs`, used by benchmark mode instead of timing each candidate from
  // the host; UNIMPLEMENTED when it has none.
  virtual Result<EngineSearch> Search(const Problem&, const BackendFlags&, const Buffers& /*inputs*/) const {
    return Status(StatusCode::kUnimplemented, "no engine search");
  }
  // Binds `algorithm` (one of Candidates(p, flags)) to `buffers`, whose
  // inputs are filled; the buffers must outlive the PreparedOp.
  virtual Result<std::unique_ptr<PreparedOp>> Prepare(const Problem& p, const Algorithm& algorithm, Buffers& buffers,
                                                      const BackendFlags& flags) const = 0;
  // The arithmetic this engine computes `p` in under `flags`, as PyTorch sets
  // it (the type the error bound covers): fp16 for half problems, fp32
  // otherwise; the engines that reach cuDNN or cuBLAS say where TF32 is
  // allowed (CudnnComputeType, CublasComputeType).
  virtual ComputeType compute_type(const Problem& p, const BackendFlags& /*flags*/) const {
    return PlainComputeType(p);
  }

 private:
  std::string_view name_;
  Device device_;
};

// An engine this build does not have (its library was not found at configure
// time): not built, with the reason; it lists no candidate and refuses every
// preparation with that reason.
class UnbuiltEngine final : public Engine {
 public:
  UnbuiltEngine(std::string_view name, Device device, std::string reason)
      : Engine(name, device), reason_(std::move(reason)) {}
  Availability availability() const override;
  Result<std::vector<Algorithm>> Candidates(const Problem&, const BackendFlags&) const override {
    return std::vector<Algorithm>{};
  }
  Result<EngineSearch> Search(const Problem&, const BackendFlags&, const Buffers&) const override;
  Result<std::unique_ptr<PreparedOp>> Prepare(const Problem&, const Algorithm&, Buffers&,
                                              const BackendFlags&) const override;

 private:
  std::string reason_;
};

// The algorithm name that stands for the first candidate the engine declares
// nondeterministic (cuDNN's graph API names its engine configs per device and
// version; a positive control picks one by its NONDETERMINISTIC note).
inline constexpr const char* kAnyNondeterministic = "any_nondeterministic";

// Looks `name` up in engine.Candidates(p, flags) (empty: the first;
// kAnyNondeterministic: the first declared nondeterministic); an unknown name
// is an error that lists the known ones, and no candidate at all, or no
// nondeterministic one, is UNIMPLEMENTED.
Result<Algorithm> FindAlgorithm(const Engine& engine, const Problem& p, const std::string& name,
                                const BackendFlags& flags);
// Every candidate the engine declares nondeterministic for `p`, in its
// heuristic order: what a positive control naming kAnyNondeterministic tries
// in turn (RunCase) until one builds, runs and varies. Empty when none.
Result<std::vector<Algorithm>> NondeterministicAlgorithms(const Engine& engine, const Problem& p,
                                                          const BackendFlags& flags);

// The compute types of PyTorch's two CUDA libraries: fp16 for half problems;
// TF32 allowed for fp32 convolutions through cuDNN by cudnn.allow_tf32 (or
// the fp32_precision settings), and for cuBLAS GEMMs (matmul, and the im2col
// GEMMs of the native CUDA convolution) by cuda.matmul.allow_tf32; fp32
// otherwise. "Allowed" is what the bound must cover: cuDNN and cuBLAS may
// still choose an fp32 kernel.
ComputeType CudnnComputeType(const Problem& p, const BackendFlags& flags);
ComputeType CublasComputeType(const Problem& p, const BackendFlags& flags);

// The named engine's compute_type (an unknown name: fp32, or fp16 for half).
ComputeType ComputeTypeOf(const Problem& p, std::string_view engine, const BackendFlags& flags);

}  // namespace bc
