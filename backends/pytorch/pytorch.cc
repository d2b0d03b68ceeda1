// The PyTorch engine: PyTorch itself, through libtorch's ATen API, so that
// PyTorch's own dispatch decides which kernel runs. It is the engine claims
// about PyTorch are judged on; the rest of the harness (dispatch.cc and the
// AlgorithmSelector over the raw engines) is the model of it.
//
// Operations, on the same seeded inputs as every other engine:
//   conv2d  at::convolution (fwd) and at::convolution_backward with the
//           output mask of the direction (bwd_data, bwd_weights): "aten".
//   matmul  at::mm: "aten".
//   scatter_add  "index_put_accumulate" (index_put_ with accumulate=True),
//           and "put" (put_ with accumulate=False, last write wins), which
//           PyTorch refuses under use_deterministic_algorithms(True): the
//           alert is PyTorch's own.
// Flags are set the way torch.backends sets them, on at::globalContext(),
// before every run. A flag this PyTorch does not have makes the case not
// evaluated with that reason (mkldnn.deterministic does not exist in 1.13).
// Version gates (TORCH_VERSION_MAJOR) only where the API differs:
// select_conv_backend's signature and setDeterministicMkldnn. The
// fp32_precision API (strings in its first releases, enums later) and
// cudnn.depthwise_kernel are found in this libtorch's own headers by CMake
// (BC_TORCH_FP32_PRECISION_API, BC_TORCH_CUDNN_DEPTHWISE_KERNEL), as their
// first versions are not the same across PyTorch's branches.
// implementation() names the kernel class PyTorch chose for a convolution
// (at::native::select_conv_backend: Mkldnn, Slow2d, SlowDilated2d, Cudnn,
// ...), and the BLAS library loaded into the process for its GEMM paths.
// Where PyTorch's cuDNN path ran, it names what cuDNN ran, as cuDNN's own API
// log shows it (the engine config, or the legacy algorithm, with its
// numerical notes), and the error bound is chosen by those notes.
//
// Devices: "pytorch" runs on the CPU; "pytorch_cuda" on the first CUDA device
// when this libtorch was built with CUDA and a device is present.
//
// This file is a module of its own (libbc_pytorch.so), loaded on first use
// by backends/pytorch/loader.cc: a process that runs no PyTorch case does not
// pay for loading libtorch (about 0.6 s per test process here).
#include <ATen/ATen.h>
#include <ATen/Context.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/Parallel.h>
#include <ATen/native/ConvUtils.h>
#include <ATen/Version.h>
#include <ATen/detail/CUDAHooksInterface.h>
#include <c10/util/Exception.h>
#include <torch/csrc/api/include/torch/version.h>

#include <ATen/native/verbose_wrapper.h>
#include <omp.h>
#include <dlfcn.h>
#include <limits.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <iterator>
#include <set>

#if BC_PYTORCH_CUDNN_LOG
#include <cudnn_graph.h>
#endif

#include "backends/engine.h"
#include "harness/cudnn_log.h"
#include "harness/onednn_verbose.h"
#include "selection/cudnn_policy.h"

namespace bc {
namespace {

std::string BackendName(at::native::ConvBackend b) {
  using B = at::native::ConvBackend;
  switch (b) {
    case B::CudaDepthwise2d: return "CudaDepthwise2d";
    case B::CudaDepthwise3d: return "CudaDepthwise3d";
    case B::Cudnn: return "Cudnn";
    case B::CudnnTranspose: return "CudnnTranspose";
    case B::Empty: return "Empty";
    case B::Miopen: return "Miopen";
    case B::MiopenDepthwise: return "MiopenDepthwise";
    case B::MiopenTranspose: return "MiopenTranspose";
    case B::Mkldnn: return "Mkldnn";
    case B::MkldnnEmpty: return "MkldnnEmpty";
    case B::NnpackSpatial: return "NnpackSpatial";
    case B::Overrideable: return "Overrideable";
    case B::Slow2d: return "Slow2d";
    case B::Slow3d: return "Slow3d";
    case B::SlowDilated2d: return "SlowDilated2d";
    case B::SlowDilated3d: return "SlowDilated3d";
    case B::SlowTranspose2d: return "SlowTranspose2d";
    case B::SlowTranspose3d: return "SlowTranspose3d";
    case B::Winograd3x3Depthwise: return "Winograd3x3Depthwise";
    case B::Xnnpack2d: return "Xnnpack2d";
    case B::Mps: return "Mps";
    case B::MpsTranspose: return "MpsTranspose";
    default: break;  // kinds a later PyTorch added (MkldnnTranspose, ...)
  }
  return "ConvBackend(" + std::to_string(static_cast<int>(b)) + ")";
}

// The names oneDNN gives the kernels `run` executes: the verbose mode of the
// oneDNN inside this libtorch (torch::verbose::_mkldnn_set_verbose, what
// torch.backends.mkldnn.verbose calls; PyPI's wheels link oneDNN statically
// and hidden, so no other libdnnl can switch it) turned on around one
// untimed run, its lines on stdout captured in a temporary file and parsed in
// either of oneDNN's formats (harness/onednn_verbose). A failure to capture
// is an error, not an empty name.
Result<std::string> OnednnKernels(const std::function<void()>& run) {
  std::fflush(stdout);
  const int saved = ::dup(STDOUT_FILENO);
  std::FILE* capture = std::tmpfile();
  if (saved < 0 || capture == nullptr) {
    if (capture != nullptr) std::fclose(capture);
    if (saved >= 0) ::close(saved);
    return Status(StatusCode::kInternal, std::string("cannot capture oneDNN's verbose output: ") +
                                             std::strerror(errno));
  }
  ::dup2(::fileno(capture), STDOUT_FILENO);
  torch::verbose::_mkldnn_set_verbose(1);
  run();
  std::fflush(stdout);
  torch::verbose::_mkldnn_set_verbose(0);
  ::dup2(saved, STDOUT_FILENO);
  ::close(saved);
  std::rewind(capture);
  std::string text;
  char chunk[4096];
  size_t n = 0;
  while ((n = std::fread(chunk, 1, sizeof(chunk), capture)) > 0) text.append(chunk, n);
  std::fclose(capture);
  return OnednnKernelsIn(text);
}

#if BC_PYTORCH_CUDNN_LOG
// cuDNN's API log of `run`: the messages of the cuDNN this libtorch loaded
// (libcudnn.so.9, found already loaded), received by a callback set with
// cudnnSetCallback for info, warnings and errors, as CUDNN_LOGLEVEL_DBG=3
// logs them; the earlier callback and mask are restored after. At most
// kCudnnLogLimit bytes are kept.
constexpr size_t kCudnnLogLimit = 64 << 20;

void OnCudnnMessage(cudnnSeverity_t, void* udata, const cudnnDebug_t*, const char* msg) {
  auto* text = static_cast<std::string*>(udata);
  if (msg == nullptr || text->size() >= kCudnnLogLimit) return;
  text->append(msg);
  if (text->empty() || text->back() != '\n') text->push_back('\n');
}

Result<std::string> CudnnApiLog(const std::function<void()>& run) {
  void* lib = nullptr;
  for (const char* name : {"libcudnn.so.9", "libcudnn_graph.so.9"}) {
    if ((lib = ::dlopen(name, RTLD_NOW | RTLD_NOLOAD)) != nullptr) break;
  }
  if (lib == nullptr) return Status(StatusCode::kInternal, "no cuDNN 9 is loaded in this process");
  const auto set = reinterpret_cast<decltype(&cudnnSetCallback)>(::dlsym(lib, "cudnnSetCallback"));
  const auto get = reinterpret_cast<decltype(&cudnnGetCallback)>(::dlsym(lib, "cudnnGetCallback"));
  std::string text;
  unsigned mask = 0;
  void* udata = nullptr;
  cudnnCallback_t previous = nullptr;
  cudnnStatus_t status = CUDNN_STATUS_SUCCESS;
  if (set == nullptr || get == nullptr) {
    status = CUDNN_STATUS_NOT_SUPPORTED;
  } else if ((status = get(&mask, &udata, &previous)) == CUDNN_STATUS_SUCCESS &&
             (status = set(CUDNN_SEV_INFO_EN | CUDNN_SEV_WARNING_EN | CUDNN_SEV_ERROR_EN, &text, &OnCudnnMessage)) ==
                 CUDNN_STATUS_SUCCESS) {
    run();
    status = set(mask, udata, previous);
  }
  ::dlclose(lib);
  if (status != CUDNN_STATUS_SUCCESS) {
    return Status(StatusCode::kInternal, std::string("cuDNN's log callback could not be set: ") +
                                             (set == nullptr || get == nullptr ? "cudnnSetCallback not found"
                                                                               : std::to_string(status)));
  }
  return text;
}
#endif

// The BLAS library PyTorch's native GEMM paths call (sgemm_, as libtorch's
// own references to it resolve: dlsym from this module, which libtorch's
// dependencies are in scope of), named by its file (OpenBLAS, the reference
// BLAS, MKL's runtime, BLIS); "none mapped" when sgemm_ is built into
// libtorch (a wheel's MKL) or absent. A BLAS that someone else opened with
// RTLD_LOCAL (the cblas engine) is not in that scope and is not named.
// probes/torch_backends.py's blas_of_torch names it the same way.
std::string FindLoadedBlas() {
  void* sgemm = ::dlsym(RTLD_DEFAULT, "sgemm_");
  Dl_info info{};
  if (sgemm == nullptr || ::dladdr(sgemm, &info) == 0 || info.dli_fname == nullptr) return "none mapped";
  char real[PATH_MAX];
  const std::string path = ::realpath(info.dli_fname, real) != nullptr ? real : info.dli_fname;
  const size_t slash = path.rfind('/');
  const std::string file = path.substr(slash + 1);
  for (const char* name : {"libopenblas", "libmkl_rt", "libblis", "libblas.so"}) {
    if (file.find(name) == std::string::npos) continue;
    // The alternatives' generic name says which BLAS by its directory
    // (Debian: openblas-pthread/libblas.so.3, blas/libblas.so.3).
    if (file.rfind("libblas.so", 0) != 0 || slash == 0 || slash == std::string::npos) return file;
    return path.substr(path.rfind('/', slash - 1) + 1);
  }
  return "none mapped";
}

// Read once: the BLAS is a dependency of libtorch, mapped with this module.
const std::string& LoadedBlas() {
  static const std::string kBlas = FindLoadedBlas();
  return kBlas;
}

// at::native::select_conv_backend: 1.13 takes IntArrayRefs; 2.x takes
// SymInts and a trailing bias_sizes_opt.
at::native::ConvBackend SelectConvBackend(const at::Tensor& x, const at::Tensor& w, const Conv2dProblem& c) {
  const std::vector<int64_t> stride{c.sh, c.sw}, padding{c.ph, c.pw}, dilation{c.dh, c.dw}, output_padding{0, 0};
#if TORCH_VERSION_MAJOR >= 2
  return at::native::select_conv_backend(x, w, std::nullopt, c10::fromIntArrayRefSlow(stride),
                                         c10::fromIntArrayRefSlow(padding), c10::fromIntArrayRefSlow(dilation),
                                         false, c10::fromIntArrayRefSlow(output_padding), c10::SymInt(c.g),
                                         std::nullopt);
#else
  return at::native::select_conv_backend(x, w, c10::nullopt, stride, padding, dilation, false, output_padding, c.g);
#endif
}

// The version of the oneDNN inside this libtorch, as at::show_config()
// names it ("Intel(R) MKL-DNN v3.13.3 (Git Hash ...)"); "" without one.
const std::string& TorchOnednnVersion() {
  static const std::string kVersion = [] {
    const std::string config = at::show_config();
    const size_t at = config.find("MKL-DNN v");
    if (at == std::string::npos) return std::string();
    const size_t start = at + std::string("MKL-DNN v").size();
    return config.substr(start, config.find_first_of(" \n", start) - start);
  }();
  return kVersion;
}

std::string Version() {
  return std::to_string(TORCH_VERSION_MAJOR) + "." + std::to_string(TORCH_VERSION_MINOR) + "." +
         std::to_string(TORCH_VERSION_PATCH);
}

// PyTorch's own error text, without the C++ stack trace.
std::string ErrorText(const c10::Error& e) { return e.what_without_backtrace(); }

Status FromTorch(const c10::Error& e, const char* what) {
  const std::string text = ErrorText(e);
  if (text.find("does not have a deterministic implementation") != std::string::npos) {
    return Status(StatusCode::kNotDeterministic, text);
  }
  return Status(StatusCode::kInternal, std::string(what) + ": " + text);
}

// "PyTorch 2.7.1 has no torch.backends.X: not evaluated".
[[maybe_unused]] Status NotInThisVersion(const std::string& what) {
  return Status(StatusCode::kUnimplemented, "PyTorch " + Version() + " has no torch.backends." + what +
                                                ": not evaluated");
}

// The fp32_precision settings of flags.def: (torch name, backend, op, the
// BackendFlags member), as torch.backends names them and at::Context keys them.
struct Fp32Setting {
  const char* name;
  const char* backend;
  const char* op;
  std::string BackendFlags::*member;
};
constexpr Fp32Setting kFp32Settings[] = {
    {"fp32_precision", "generic", "all", &BackendFlags::fp32_precision},
    {"cuda.matmul.fp32_precision", "cuda", "matmul", &BackendFlags::cuda_matmul_fp32_precision},
    {"cudnn.fp32_precision", "cuda", "all", &BackendFlags::cudnn_fp32_precision},
    {"cudnn.conv.fp32_precision", "cuda", "conv", &BackendFlags::cudnn_conv_fp32_precision},
    {"cudnn.rnn.fp32_precision", "cuda", "rnn", &BackendFlags::cudnn_rnn_fp32_precision},
    {"mkldnn.fp32_precision", "mkldnn", "all", &BackendFlags::mkldnn_fp32_precision},
    {"mkldnn.matmul.fp32_precision", "mkldnn", "matmul", &BackendFlags::mkldnn_matmul_fp32_precision},
    {"mkldnn.conv.fp32_precision", "mkldnn", "conv", &BackendFlags::mkldnn_conv_fp32_precision},
    {"mkldnn.rnn.fp32_precision", "mkldnn", "rnn", &BackendFlags::mkldnn_rnn_fp32_precision},
};

#if BC_TORCH_FP32_PRECISION_API == 2
using Fp32Value = at::Float32Precision;
Fp32Value GetFp32(const Fp32Setting& s) {
  return at::globalContext().float32Precision(at::str2backend(s.backend), at::str2op(s.op));
}
void SetFp32(const Fp32Setting& s, Fp32Value v) {
  at::globalContext().setFloat32Precision(at::str2backend(s.backend), at::str2op(s.op), v);
}
void SetFp32(const Fp32Setting& s, const std::string& word) { SetFp32(s, at::str2precision(word)); }
#elif BC_TORCH_FP32_PRECISION_API == 1
using Fp32Value = std::string;
Fp32Value GetFp32(const Fp32Setting& s) { return at::globalContext().float32Precision(s.backend, s.op); }
void SetFp32(const Fp32Setting& s, const std::string& word) {
  at::globalContext().setFloat32Precision(s.backend, s.op, word);
}
#endif

#if BC_TORCH_FP32_PRECISION_API
// The fp32_precision settings as this process started: read on the first
// call, which ApplyFlags makes before any setter of the first case runs.
const std::vector<Fp32Value>& InitialFp32() {
  static const std::vector<Fp32Value> kInitial = [] {
    std::vector<Fp32Value> initial;
    for (const Fp32Setting& s : kFp32Settings) initial.push_back(GetFp32(s));
    return initial;
  }();
  return kInitial;
}
#endif

// Every fp32_precision setting back to its value at the start of this
// process, before a case's flags are set: neither a case's own settings nor
// what the allow_tf32 setters wrote for it (with this API they write the
// op's precision) leaks into the next case.
void RestoreFp32Precision() {
#if BC_TORCH_FP32_PRECISION_API
  const std::vector<Fp32Value>& initial = InitialFp32();
  for (size_t i = 0; i < std::size(kFp32Settings); ++i) {
    if (GetFp32(kFp32Settings[i]) != initial[i]) SetFp32(kFp32Settings[i], initial[i]);
  }
#endif
}

#if BC_TORCH_FP32_PRECISION_API
// Whether oneDNN has fast bf16 kernels on this CPU, by PyTorch's own check
// (torch.ops.mkldnn._is_mkldnn_bf16_supported); false where this PyTorch
// lacks the operator.
bool Bf16KernelsHere() {
  static const bool kHere = [] {
    const auto op = c10::Dispatcher::singleton().findSchema({"mkldnn::_is_mkldnn_bf16_supported", ""});
    return op.has_value() && op->typed<bool()>().call();
  }();
  return kHere;
}
#endif

// The fp32_precision settings a case gives, set after its allow_tf32 flags
// (the newer API has the last word, as in a script that sets both); a
// setting left at its default keeps what the allow_tf32 setters wrote.
// Without the API, a case that asks for one is not evaluated.
Status ApplyFp32Precision(const BackendFlags& f) {
  static const BackendFlags defaults;
  for (const Fp32Setting& s : kFp32Settings) {
    if (f.*s.member == defaults.*s.member) continue;
#if BC_TORCH_FP32_PRECISION_API
    // bf16 on a CPU without fast bf16 kernels: PyTorch computes in fp32,
    // and the case could not show what the setting is for.
    if (std::string(s.backend) == "mkldnn" && f.*s.member == "bf16" && !Bf16KernelsHere()) {
      return Status(StatusCode::kUnimplemented,
                    "this CPU has no fast bf16 kernel (PyTorch " + Version() +
                        ": torch.ops.mkldnn._is_mkldnn_bf16_supported() is False), so torch.backends." + s.name +
                        " = 'bf16' cannot show its effect here: not evaluated; a CPU with avx512_bf16 or AMX would");
    }
    SetFp32(s, f.*s.member);
#else
    return NotInThisVersion(s.name);
#endif
  }
#if BC_TORCH_CUDNN_DEPTHWISE_KERNEL
  at::globalContext().setCuDNNDepthwiseKernel(at::str2cudnn_depthwise(f.cudnn_depthwise_kernel));
#else
  if (f.cudnn_depthwise_kernel != defaults.cudnn_depthwise_kernel) return NotInThisVersion("cudnn.depthwise_kernel");
#endif
  return Status::Ok();
}

// Sets PyTorch's process-wide flags as torch.backends does. The flags with
// no counterpart in this PyTorch make the case not evaluated, naming the
// version (mkldnn.deterministic arrived in 2.x, the fp32_precision settings
// in recent 2.x). mkldnn.allow_tf32 is read back: PyTorch applies it only in
// builds with Intel GPU support, and a flag PyTorch ignores is not one the
// case can be said to have run with.
Status ApplyFlags(const BackendFlags& f) {
  at::Context& ctx = at::globalContext();
  RestoreFp32Precision();  // first: the allow_tf32 setters below write on top of the start's values
#if TORCH_VERSION_MAJOR >= 2
  ctx.setDeterministicMkldnn(f.mkldnn_deterministic);
  // Touched only once a case sets it: PyTorch warns on every use elsewhere.
  static bool onednn_tf32_touched = false;
  if (f.mkldnn_allow_tf32 || onednn_tf32_touched) {
    onednn_tf32_touched = true;
    ctx.setAllowTF32OneDNN(f.mkldnn_allow_tf32);
    if (ctx.allowTF32OneDNN() != f.mkldnn_allow_tf32) {
      return Status(StatusCode::kUnimplemented, "PyTorch " + Version() +
                                                    " applies torch.backends.mkldnn.allow_tf32 only in builds with "
                                                    "Intel GPU support, and this one ignored it: not evaluated");
    }
  }
#else
  if (f.mkldnn_deterministic) return NotInThisVersion("mkldnn.deterministic");
  if (f.mkldnn_allow_tf32) return NotInThisVersion("mkldnn.allow_tf32");
#endif
  ctx.setUserEnabledCuDNN(f.cudnn_enabled);
  ctx.setBenchmarkCuDNN(f.cudnn_benchmark);
  ctx.setBenchmarkLimitCuDNN(f.cudnn_benchmark_limit);
  ctx.setDeterministicCuDNN(f.cudnn_deterministic);
  ctx.setAllowTF32CuDNN(f.cudnn_allow_tf32);
  ctx.setAllowTF32CuBLAS(f.cuda_matmul_allow_tf32);
  ctx.setUserEnabledMkldnn(f.mkldnn_enabled);
  ctx.setDeterministicAlgorithms(f.deterministic_algorithms, f.deterministic_algorithms_warn_only);
  return ApplyFp32Precision(f);
}

at::ScalarType TorchType(DataType t) { return t == DataType::kF16 ? at::kHalf : at::kFloat; }

// A host buffer as a tensor of `sizes` on `device`, in the problem's dtype
// and memory format (a copy: PyTorch owns its memory).
at::Tensor ToTensor(const std::vector<float>& host, at::IntArrayRef sizes, const at::Device& device, DataType dtype,
                    Layout layout = Layout::kNchw) {
  at::Tensor t = at::from_blob(const_cast<float*>(host.data()), sizes, at::kFloat).clone();
  t = t.to(device, TorchType(dtype));
  if (layout == Layout::kNhwc && t.dim() == 4) t = t.contiguous(at::MemoryFormat::ChannelsLast);
  return t;
}

void ToHost(const at::Tensor& t, std::vector<float>& host) {
  const at::Tensor c = t.to(at::kCPU, at::kFloat).contiguous();
  std::memcpy(host.data(), c.data_ptr<float>(), host.size() * sizeof(float));
}

class TorchPrepared final : public PreparedOp {
 public:
  TorchPrepared(const Problem& p, Algorithm a, Buffers& b, BackendFlags flags, at::Device device)
      : p_(p), algorithm_(std::move(a)), b_(b), flags_(flags), device_(device) {}

  Status Init() try {
    // The case's threads (RunCase's ThreadsGuard). PyTorch's lazy thread
    // initialisation (at::init_num_threads, run by its first parallel use
    // or at::get_num_threads) resets OpenMP's count to PyTorch's default,
    // the physical cores; at::set_num_threads makes the case's count its own.
    const int threads = omp_get_max_threads();
    BC_RETURN_IF_ERROR(ApplyFlags(flags_));
    at::set_num_threads(threads);
    if (const auto* c = std::get_if<Conv2dProblem>(&p_)) {
      x_ = ToTensor(b_["src"], {c->mb, c->ic, c->ih, c->iw}, device_, c->dtype, c->layout);
      w_ = ToTensor(b_["wei"], {c->oc, c->ic / c->g, c->kh, c->kw}, device_, c->dtype, c->layout);
      y_ = ToTensor(b_["dst"], {c->mb, c->oc, c->oh(), c->ow()}, device_, c->dtype, c->layout);
      backend_ = BackendName(SelectConvBackend(x_, w_, *c));
      if (backend_.rfind("Cudnn", 0) == 0) ReadCudnnLog(c->direction);
      if (backend_ == "Mkldnn") {
        // PyTorch's mkldnn path runs oneDNN: a run that names no oneDNN
        // kernel means the capture broke, and fails the case.
        BC_ASSIGN_OR_RETURN(onednn_, OnednnKernels([this] { (void)Execute(); }));
        if (onednn_.empty()) {
          return Status(StatusCode::kInternal,
                        "PyTorch " + Version() + " took its mkldnn path (ConvBackend::Mkldnn) but oneDNN's verbose "
                        "output named no kernel it executed");
        }
      }
    } else if (const auto* m = std::get_if<MatmulProblem>(&p_)) {
      x_ = ToTensor(b_["src"], {m->m, m->k}, device_, m->dtype);
      w_ = ToTensor(b_["wei"], {m->k, m->n}, device_, m->dtype);
    } else {
      const auto& s = std::get<ScatterAddProblem>(p_);
      x_ = ToTensor(b_["src"], {s.n}, device_, s.dtype);
      index_ = at::from_blob(b_.indices("index").data(), {s.n}, at::kInt).to(device_, at::kLong);
      y_ = at::zeros({s.d}, at::TensorOptions().device(device_).dtype(TorchType(s.dtype)));
    }
    return Status::Ok();
  } catch (const c10::Error& e) {
    return FromTorch(e, "preparing the PyTorch tensors");
  }

  // What cuDNN ran for PyTorch's call, from cuDNN's API log of one untimed
  // run: the last execution the log shows (a benchmark search's timed
  // candidates come before it). Where the log names nothing, the numerical
  // notes are unknown and say why: the tolerance check is then not evaluated.
  void ReadCudnnLog(Direction d) {
#if BC_PYTORCH_CUDNN_LOG
    const Result<std::string> log = CudnnApiLog([this] { (void)Execute(); });
    if (!log.ok()) {
      cudnn_unknown_ = log.status().message();
      return;
    }
    const std::vector<CudnnRan> runs = CudnnRunsIn(*log);
    for (auto r = runs.rbegin(); r != runs.rend(); ++r) {
      if (r->Name().empty()) continue;
      cudnn_ = r->Name();
      cudnn_notes_ = r->engine ? r->numerical_notes : cudnn::LegacyNotes(d, r->legacy_index);
      cudnn_choice_ = r->engine ? "engine " + std::to_string(*r->engine) : "algo " + std::to_string(r->legacy_index);
      if (r->engine && !r->notes_known) {
        // cuDNN 9.19's "numericalNotes: val=NULL_PTR": not "no notes".
        cudnn_ran_ = *r;
        cudnn_unknown_ = "cuDNN's log of PyTorch's call gives no notes for engine " + std::to_string(*r->engine);
      }
      return;
    }
    cudnn_unknown_ = "cuDNN's API log of PyTorch's call (" + std::to_string(log->size()) + " bytes, " +
                     std::to_string(runs.size()) + " execution(s)) named no engine config or algorithm";
#else
    (void)d;
    cudnn_unknown_ = "this build has no cuDNN headers to read cuDNN's API log with";
#endif
  }

  Status Execute() override try {
    BC_RETURN_IF_ERROR(ApplyFlags(flags_));
    if (const auto* c = std::get_if<Conv2dProblem>(&p_)) {
      const std::vector<int64_t> stride{c->sh, c->sw}, padding{c->ph, c->pw}, dilation{c->dh, c->dw};
      switch (c->direction) {
        case Direction::kForward:
          out_ = at::convolution(x_, w_, c10::nullopt, stride, padding, dilation, false, {0, 0}, c->g);
          break;
        case Direction::kBackwardData:
          out_ = std::get<0>(at::convolution_backward(y_, x_, w_, c10::nullopt, stride, padding, dilation, false,
                                                      {0, 0}, c->g, {true, false, false}));
          break;
        case Direction::kBackwardWeights:
          out_ = std::get<1>(at::convolution_backward(y_, x_, w_, c10::nullopt, stride, padding, dilation, false,
                                                      {0, 0}, c->g, {false, true, false}));
          break;
      }
    } else if (std::holds_alternative<MatmulProblem>(p_)) {
      out_ = at::mm(x_, w_);
    } else {
      out_ = y_.zero_();
      if (algorithm_.name == "put") {
        out_.put_(index_, x_, /*accumulate=*/false);
      } else {
        out_.index_put_({index_}, x_, /*accumulate=*/true);
      }
    }
    // On CUDA the host timer sees the launch; Fetch's copy to the host synchronises.
    if (device_.is_cuda()) out_ = out_.contiguous();
    return Status::Ok();
  } catch (const c10::Error& e) {
    return FromTorch(e, "PyTorch");
  }

  Status Fetch() override try {
    ToHost(out_, b_.Output(p_));
    return Status::Ok();
  } catch (const c10::Error& e) {
    return FromTorch(e, "copying PyTorch's result to the host");
  }

  std::string implementation() const override {
    std::string what = "PyTorch " + Version() + " ";
    if (const auto* c = std::get_if<Conv2dProblem>(&p_)) {
      what += std::string("at::") + (c->direction == Direction::kForward ? "convolution" : "convolution_backward") +
              " [ConvBackend::" + backend_ + "]";
      if (!onednn_.empty()) what += " [oneDNN " + TorchOnednnVersion() + ": " + onednn_ + "]";
      if (!cudnn_.empty()) what += " [cuDNN: " + cudnn_ + "]";
      if (backend_ == "Slow2d" || backend_ == "SlowDilated2d") what += " [BLAS: " + LoadedBlas() + "]";
    } else if (std::holds_alternative<MatmulProblem>(p_)) {
      what += "at::mm [BLAS: " + LoadedBlas() + "]";
    } else {
      what += algorithm_.name == "put" ? "Tensor::put_(accumulate=false)" : "Tensor::index_put_(accumulate=true)";
    }
    return what;
  }
  const Algorithm& algorithm() const override { return algorithm_; }
  // The ConvBackend PyTorch chose, as the model's roles name paths: mkldnn,
  // cudnn, or its native kernels (the BLAS GEMM of mm on the CPU too; cuBLAS's
  // on CUDA is blas); where oneDNN ran, the convolution kernel its verbose
  // output named and the oneDNN inside libtorch.
  KernelFacts kernel() const override {
    KernelFacts k{.kernel_class = "native"};
    if (std::holds_alternative<Conv2dProblem>(p_)) {
      if (backend_ == "Mkldnn") k.kernel_class = "mkldnn";
      if (backend_.rfind("Cudnn", 0) == 0) {
        k.kernel_class = "cudnn";
        k.numerical_notes = cudnn_notes_;
        k.cudnn_choice = cudnn_choice_;
        k.notes_unknown = cudnn_unknown_;
        k.cudnn_ran = cudnn_ran_;
      }
    } else if (std::holds_alternative<MatmulProblem>(p_) && device_.is_cuda()) {
      k.kernel_class = "blas";
    }
    if (!onednn_.empty()) {
      k.onednn_version = TorchOnednnVersion();
      if (const size_t at = onednn_.find("convolution "); at != std::string::npos) {
        const size_t start = at + std::string("convolution ").size();
        k.onednn_kernel = onednn_.substr(start, onednn_.find_first_of("],", start) - start);
      }
    }
    return k;
  }

 private:
  Problem p_;
  Algorithm algorithm_;
  Buffers& b_;
  BackendFlags flags_;
  at::Device device_;
  at::Tensor x_, w_, y_, index_, out_;
  std::string backend_;
  std::string onednn_;  // oneDNN's kernel names, where PyTorch's mkldnn path ran
  std::string cudnn_;   // what cuDNN ran, where PyTorch's cuDNN path ran (CudnnRan::Name)
  std::vector<std::string> cudnn_notes_;
  std::string cudnn_choice_;  // KernelFacts::cudnn_choice
  std::string cudnn_unknown_;  // why cuDNN's log named nothing, or gave no notes
  std::optional<CudnnRan> cudnn_ran_;  // KernelFacts::cudnn_ran
};

class PytorchEngine final : public Engine {
 public:
  PytorchEngine(std::string_view name, Device device) : Engine(name, device) {}

  Availability availability() const override {
    Availability a{.engine = std::string(name()), .built = true};
    a.library_version = Version();
    // No at::get_num_threads() here: its lazy initialisation would reset
    // OpenMP's thread count to PyTorch's default under the case.
    a.version = "PyTorch " + Version() + " (" + LoadedBlas() + ")";
    if (device() == Device::kCuda) {
      a.available = at::hasCUDA() && at::detail::getCUDAHooks().getNumGPUs() > 0;
      a.reason = !at::hasCUDA() ? "this libtorch (PyTorch " + Version() + ") was built without CUDA"
                 : a.available  ? "PyTorch " + Version() + " with CUDA, " +
                                     std::to_string(at::detail::getCUDAHooks().getNumGPUs()) + " device(s)"
                                : "PyTorch " + Version() + " with CUDA finds no CUDA device";
      return a;
    }
    a.available = true;
    a.reason = "libtorch " + Version() + ": mkldnn " + (at::hasMKLDNN() ? "built" : "not built") + ", OpenMP " +
               (at::hasOpenMP() ? "built" : "not built") + ", BLAS " + LoadedBlas();
    return a;
  }

  Result<std::vector<Algorithm>> Candidates(const Problem& p, const BackendFlags& flags) const override {
    if (std::holds_alternative<ScatterAddProblem>(p)) {
      return std::vector<Algorithm>{{"index_put_accumulate", Determinism::kDeterministic, 0},
                                    {"put", Determinism::kNondeterministic, 0}};
    }
    // What PyTorch promises: its CPU convolutions and GEMMs are deterministic;
    // on CUDA a convolution is when cudnn.deterministic (or
    // use_deterministic_algorithms) is on, and not otherwise.
    const bool promised = device() == Device::kCpu || !std::holds_alternative<Conv2dProblem>(p) ||
                          flags.CudnnDeterministicEffective();
    return std::vector<Algorithm>{
        {"aten", promised ? Determinism::kDeterministic : Determinism::kNondeterministic, 0}};
  }

  Result<std::unique_ptr<PreparedOp>> Prepare(const Problem& p, const Algorithm& algorithm, Buffers& buffers,
                                              const BackendFlags& flags) const override {
    const Availability a = availability();
    if (!a.available) return NotAvailable(a);
    const at::Device device = this->device() == Device::kCuda ? at::Device(at::kCUDA, 0) : at::Device(at::kCPU);
    auto prepared = std::make_unique<TorchPrepared>(p, algorithm, buffers, flags, device);
    BC_RETURN_IF_ERROR(prepared->Init());
    return std::unique_ptr<PreparedOp>(std::move(prepared));
  }
};

}  // namespace
}  // namespace bc

// The module's one entry point: the engine for the CPU (cuda = 0) or the
// first CUDA device (cuda = 1).
extern "C" __attribute__((visibility("default"))) const bc::Engine* bc_pytorch_engine(int cuda) {
  static const bc::PytorchEngine kCpu("pytorch", bc::Device::kCpu);
  static const bc::PytorchEngine kCuda("pytorch_cuda", bc::Device::kCuda);
  return cuda != 0 ? &kCuda : &kCpu;
}
