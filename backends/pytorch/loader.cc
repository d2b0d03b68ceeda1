// The PyTorch engines as the registry sees them: libbc_pytorch.so (the engine
// over libtorch, backends/pytorch/pytorch.cc) is loaded with dlopen the first
// time a case needs PyTorch, so that every other test process starts without
// libtorch. Until then availability() says what the build knows: the libtorch
// version found at configure time and whether it has CUDA. A module that does
// not load is an error of the case that needed it, not a skip. In a build
// without libtorch both engines are "not built", with the reason. Whether a
// CUDA device is there is asked of the CUDA runtime the GPU engines link (the
// one libtorch loads), so that asking loads neither libtorch nor
// libtorch_cuda; where the CUDA runtime answers that there is no device, the
// reason is its error.
#include <dlfcn.h>

#include <mutex>

#include "backends/registry.h"
#if BC_WITH_CUDA
#include "backends/cuda/device.h"
#endif

#ifndef BC_PYTORCH_MODULE
#define BC_PYTORCH_MODULE ""
#endif
#ifndef BC_TORCH_VERSION
#define BC_TORCH_VERSION ""
#endif
#ifndef BC_TORCH_HAS_CUDA
#define BC_TORCH_HAS_CUDA 0
#endif

namespace bc {
namespace {

constexpr const char* kNotBuilt =
    "not built: libtorch not found at configure time (install libtorch-dev, or pass "
    "-DTorch_DIR=<libtorch>/share/cmake/Torch)";

class LazyPytorchEngine final : public Engine {
 public:
  LazyPytorchEngine(std::string_view name, Device device) : Engine(name, device) {}

  Availability availability() const override {
    Availability a{.engine = std::string(name())};
    if (std::string_view(BC_PYTORCH_MODULE).empty()) {
      a.reason = kNotBuilt;
      return a;
    }
    a.built = true;
    a.library_version = BC_TORCH_VERSION;
    if (device() == Device::kCuda && !BC_TORCH_HAS_CUDA) {
      a.version = "PyTorch " + a.library_version;
      a.reason = "this libtorch (PyTorch " + a.library_version + ") was built without CUDA";
      return a;
    }
    if (!Loaded()) {
      a.version = "PyTorch " + a.library_version;
      a.available = true;
      a.reason = "libtorch " + a.library_version + ", loaded on first use from " + BC_PYTORCH_MODULE;
#if BC_WITH_CUDA
      if (device() == Device::kCuda) {
        const Availability cuda = cuda::CudaAvailability();
        a.available = cuda.available;
        a.error = cuda.error;
        a.reason = "PyTorch " + a.library_version + " with CUDA: " + cuda.reason;
      }
      return a;
#else
      if (device() == Device::kCpu) return a;
#endif
    }
    const Result<const Engine*> engine = Load();
    if (!engine.ok()) {
      a.reason = engine.status().message();
      a.error = true;
      return a;
    }
    return engine.value()->availability();
  }

  // On CUDA, PyTorch's convolutions reach cuDNN while cudnn.enabled is on and
  // its GEMMs cuBLAS; on the CPU, fp32 (or fp16) throughout.
  ComputeType compute_type(const Problem& p, const BackendFlags& flags) const override {
    if (device() != Device::kCuda) return Engine::compute_type(p, flags);
    return std::holds_alternative<Conv2dProblem>(p) && flags.cudnn_enabled ? CudnnComputeType(p, flags)
                                                                           : CublasComputeType(p, flags);
  }

  Result<std::vector<Algorithm>> Candidates(const Problem& p, const BackendFlags& flags) const override {
    BC_ASSIGN_OR_RETURN(const Engine* engine, Load());
    return engine->Candidates(p, flags);
  }

  Result<std::unique_ptr<PreparedOp>> Prepare(const Problem& p, const Algorithm& algorithm, Buffers& buffers,
                                              const BackendFlags& flags) const override {
    BC_ASSIGN_OR_RETURN(const Engine* engine, Load());
    return engine->Prepare(p, algorithm, buffers, flags);
  }

 private:
  static std::mutex& Mutex() {
    static std::mutex mu;
    return mu;
  }
  bool Loaded() const {
    std::lock_guard lock(Mutex());
    return engine_ != nullptr;
  }
  Result<const Engine*> Load() const {
    std::lock_guard lock(Mutex());
    if (engine_ != nullptr) return engine_;
    if (std::string_view(BC_PYTORCH_MODULE).empty()) return Status(StatusCode::kUnavailable, kNotBuilt);
    void* handle = ::dlopen(BC_PYTORCH_MODULE, RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      return Status(StatusCode::kInternal, std::string("cannot load the PyTorch engine: ") + ::dlerror());
    }
    using Entry = const Engine* (*)(int);
    const auto entry = reinterpret_cast<Entry>(::dlsym(handle, "bc_pytorch_engine"));
    if (entry == nullptr) {
      return Status(StatusCode::kInternal, std::string(BC_PYTORCH_MODULE) + " has no bc_pytorch_engine");
    }
    engine_ = entry(device() == Device::kCuda ? 1 : 0);
    return engine_;
  }

  mutable const Engine* engine_ = nullptr;
};

}  // namespace

const Engine& PytorchEngineInstance() {
  static const LazyPytorchEngine kEngine("pytorch", Device::kCpu);
  return kEngine;
}

const Engine& PytorchCudaEngineInstance() {
  static const LazyPytorchEngine kEngine("pytorch_cuda", Device::kCuda);
  return kEngine;
}

}  // namespace bc
