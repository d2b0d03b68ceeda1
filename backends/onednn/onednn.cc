#include "backends/onednn/onednn.h"
#include "backends/registry.h"

#include <oneapi/dnnl/dnnl.hpp>
#include <oneapi/dnnl/dnnl_version.h>

#include <sstream>
#include <unordered_map>

namespace bc {
namespace {

using dnnl::memory;
using tag = dnnl::memory::format_tag;

// In heuristic order, so that engine=auto (the first candidate) makes
// PyTorch's choice: "direct" first. PyTorch never passes convolution_auto:
// aten/src/ATen/native/mkldnn/Conv.cpp (v1.13) calls
// ideep::convolution_{forward::compute_v3, backward_data::compute_v2,
// backward_weights::compute_v2} without an algorithm (mkldnn_convolution,
// mkldnn_convolution_backward_input, mkldnn_convolution_backward_weights),
// and ideep defaults it to convolution_direct in every direction
// (include/ideep/operators/conv.hpp at 77d662b, Debian's libideep-dev that its
// 1.13.1 builds with: lines 238, 264 forward, 1073 backward data, 1192 and
// 1210 backward weights; still so on ideep's ideep_pytorch branch); ONEDNN_VERBOSE
// of Debian's torch 1.13 prints alg:convolution_direct for all three. With
// convolution_auto, oneDNN before 3.2 may take Winograd instead: its
// jit_avx512_core_f32_wino_conv_4x3 accepts auto where
// is_winograd_faster_than_direct says so (src/cpu/x64/
// jit_avx512_core_f32_wino_conv_4x3_kernel.cpp at v2.6.3, lines 65-95, 1154 and
// 2507), an empirical rule over batch, channels, threads and the cores per
// socket that xbyak reads (0 on AMD CPUs, whose topology it does not read), so
// ResNet-50's 256-channel 3x3 backward-weights ran jit_wino_4x3 in the model
// and jit:avx512_core in PyTorch, with other bits.
constexpr const char* kConvAlgorithms[] = {"direct", "auto", "gemm", "winograd"};

Status FromDnnl(const dnnl::error& e, const std::string& what) {
  return Status(e.status == dnnl_unimplemented ? StatusCode::kUnimplemented : StatusCode::kInternal,
                "oneDNN " + what + " failed: " + e.what() + " (dnnl_status " +
                    std::to_string(static_cast<int>(e.status)) + ")");
}

dnnl::engine& CpuEngine() {
  static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

dnnl::primitive_attr UserScratchpad() {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attr;
}

// A primitive descriptor with the memory descriptors it wants, per role.
struct Built {
  dnnl::primitive primitive;
  std::string impl;
  memory::desc src, wei, dst, scratchpad;
};

Built BuildConv(const Conv2dProblem& p, const std::string& name, bool make_primitive) {
  const memory::dims src_dims = {p.mb, p.ic, p.ih, p.iw};
  const memory::dims dst_dims = {p.mb, p.oc, p.oh(), p.ow()};
  const memory::dims wei_dims = p.g == 1 ? memory::dims{p.oc, p.ic, p.kh, p.kw}
                                         : memory::dims{p.g, p.oc / p.g, p.ic / p.g, p.kh, p.kw};
  const bool plain = name == "gemm";
  const auto dt = memory::data_type::f32;
  const memory::desc src(src_dims, dt, plain ? tag::nchw : tag::any);
  const memory::desc dst(dst_dims, dt, plain ? tag::nchw : tag::any);
  const memory::desc wei(wei_dims, dt, plain ? (p.g == 1 ? tag::oihw : tag::goihw) : tag::any);
  const dnnl::algorithm algo = name == "auto"       ? dnnl::algorithm::convolution_auto
                               : name == "winograd" ? dnnl::algorithm::convolution_winograd
                                                    : dnnl::algorithm::convolution_direct;
  const memory::dims strides = {p.sh, p.sw};
  const memory::dims dilates = {p.dh - 1, p.dw - 1};  // oneDNN counts dilation from 0
  const memory::dims pad = {p.ph, p.pw};
  // Right padding that reproduces the floor in oh()/ow().
  const memory::dims pad_r = {(p.oh() - 1) * p.sh + (p.kh - 1) * p.dh + 1 - p.ih - p.ph,
                              (p.ow() - 1) * p.sw + (p.kw - 1) * p.dw + 1 - p.iw - p.pw};
  const dnnl::primitive_attr attr = UserScratchpad();
  // oneDNN 3.0 removed the op descriptors: a primitive descriptor takes the
  // engine and the operation's parameters directly.
#if DNNL_VERSION_MAJOR >= 3
  const dnnl::convolution_forward::primitive_desc fwd_pd(CpuEngine(), dnnl::prop_kind::forward_training, algo, src,
                                                         wei, dst, strides, dilates, pad, pad_r, attr);
#else
  const dnnl::convolution_forward::primitive_desc fwd_pd(
      dnnl::convolution_forward::desc(dnnl::prop_kind::forward_training, algo, src, wei, dst, strides, dilates,
                                      pad, pad_r),
      attr, CpuEngine());
#endif
  Built b;
  switch (p.direction) {
    case Direction::kForward:
      b = {{}, fwd_pd.impl_info_str(), fwd_pd.src_desc(), fwd_pd.weights_desc(), fwd_pd.dst_desc(),
           fwd_pd.scratchpad_desc()};
      if (make_primitive) b.primitive = dnnl::convolution_forward(fwd_pd);
      break;
    case Direction::kBackwardData: {
#if DNNL_VERSION_MAJOR >= 3
      const dnnl::convolution_backward_data::primitive_desc pd(CpuEngine(), algo, src, wei, dst, strides, dilates,
                                                               pad, pad_r, fwd_pd, attr);
#else
      const dnnl::convolution_backward_data::primitive_desc pd(
          dnnl::convolution_backward_data::desc(algo, src, wei, dst, strides, dilates, pad, pad_r), attr,
          CpuEngine(), fwd_pd);
#endif
      b = {{}, pd.impl_info_str(), pd.diff_src_desc(), pd.weights_desc(), pd.diff_dst_desc(), pd.scratchpad_desc()};
      if (make_primitive) b.primitive = dnnl::convolution_backward_data(pd);
      break;
    }
    case Direction::kBackwardWeights: {
#if DNNL_VERSION_MAJOR >= 3
      const dnnl::convolution_backward_weights::primitive_desc pd(CpuEngine(), algo, src, wei, dst, strides,
                                                                  dilates, pad, pad_r, fwd_pd, attr);
#else
      const dnnl::convolution_backward_weights::primitive_desc pd(
          dnnl::convolution_backward_weights::desc(algo, src, wei, dst, strides, dilates, pad, pad_r), attr,
          CpuEngine(), fwd_pd);
#endif
      b = {{}, pd.impl_info_str(), pd.src_desc(), pd.diff_weights_desc(), pd.diff_dst_desc(), pd.scratchpad_desc()};
      if (make_primitive) b.primitive = dnnl::convolution_backward_weights(pd);
      break;
    }
  }
  return b;
}

Built BuildMatmul(const MatmulProblem& p, bool make_primitive) {
  const auto dt = memory::data_type::f32;
  const memory::desc a({p.m, p.k}, dt, tag::ab), w({p.k, p.n}, dt, tag::ab), c({p.m, p.n}, dt, tag::ab);
#if DNNL_VERSION_MAJOR >= 3
  const dnnl::matmul::primitive_desc pd(CpuEngine(), a, w, c, UserScratchpad());
#else
  const dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(a, w, c), UserScratchpad(), CpuEngine());
#endif
  Built b{{}, pd.impl_info_str(), pd.src_desc(), pd.weights_desc(), pd.dst_desc(), pd.scratchpad_desc()};
  if (make_primitive) b.primitive = dnnl::matmul(pd);
  return b;
}

Built Build(const Problem& p, const std::string& name, bool make_primitive) {
  if (const auto* m = std::get_if<MatmulProblem>(&p)) return BuildMatmul(*m, make_primitive);
  return BuildConv(std::get<Conv2dProblem>(p), name, make_primitive);
}

// The loaded oneDNN's version number: "3.5.3".
std::string LibraryVersion() {
  const dnnl_version_t* v = dnnl_version();
  return std::to_string(v->major) + "." + std::to_string(v->minor) + "." + std::to_string(v->patch);
}

class OnednnPrepared final : public PreparedOp {
 public:
  OnednnPrepared(const Problem& p, Algorithm algorithm, Buffers& b)
      : p_(p), algorithm_(std::move(algorithm)), b_(b), stream_(CpuEngine()) {}

  Status Init() try {
    Built built = Build(p_, algorithm_.name, /*make_primitive=*/true);
    impl_ = built.impl;
    primitive_ = built.primitive;
    const auto dt = memory::data_type::f32;
    // The user's tensors in PyTorch's plain layouts.
    memory user_src, user_wei, user_dst;
    if (const auto* c = std::get_if<Conv2dProblem>(&p_)) {
      const memory::dims wei_dims = c->g == 1 ? memory::dims{c->oc, c->ic, c->kh, c->kw}
                                              : memory::dims{c->g, c->oc / c->g, c->ic / c->g, c->kh, c->kw};
      user_src = memory({{c->mb, c->ic, c->ih, c->iw}, dt, tag::nchw}, CpuEngine(), b_["src"].data());
      user_wei = memory({wei_dims, dt, c->g == 1 ? tag::oihw : tag::goihw}, CpuEngine(), b_["wei"].data());
      user_dst = memory({{c->mb, c->oc, c->oh(), c->ow()}, dt, tag::nchw}, CpuEngine(), b_["dst"].data());
    } else {
      const auto& m = std::get<MatmulProblem>(p_);
      user_src = memory({{m.m, m.k}, dt, tag::ab}, CpuEngine(), b_["src"].data());
      user_wei = memory({{m.k, m.n}, dt, tag::ab}, CpuEngine(), b_["wei"].data());
      user_dst = memory({{m.m, m.n}, dt, tag::ab}, CpuEngine(), b_["dst"].data());
    }
    scratchpad_ = memory(built.scratchpad, CpuEngine());
    args_[DNNL_ARG_SCRATCHPAD] = scratchpad_;
    switch (ProblemDirection(p_)) {
      case Direction::kForward:
        args_[DNNL_ARG_SRC] = ToPrimitive(user_src, built.src);
        args_[DNNL_ARG_WEIGHTS] = ToPrimitive(user_wei, built.wei);
        SetOutput(DNNL_ARG_DST, user_dst, built.dst);
        break;
      case Direction::kBackwardData:
        args_[DNNL_ARG_WEIGHTS] = ToPrimitive(user_wei, built.wei);
        args_[DNNL_ARG_DIFF_DST] = ToPrimitive(user_dst, built.dst);
        SetOutput(DNNL_ARG_DIFF_SRC, user_src, built.src);
        break;
      case Direction::kBackwardWeights:
        args_[DNNL_ARG_SRC] = ToPrimitive(user_src, built.src);
        args_[DNNL_ARG_DIFF_DST] = ToPrimitive(user_dst, built.dst);
        SetOutput(DNNL_ARG_DIFF_WEIGHTS, user_wei, built.wei);
        break;
    }
    return Status::Ok();
  } catch (const dnnl::error& e) {
    return FromDnnl(e, "primitive creation for " + FormatProblem(p_));
  }

  Status Execute() override try {
    primitive_.execute(stream_, args_);
    stream_.wait();
    return Status::Ok();
  } catch (const dnnl::error& e) {
    return FromDnnl(e, "execute");
  }

  Status Fetch() override try {
    if (out_prim_.get_data_handle() != out_user_.get_data_handle()) {
      dnnl::reorder(out_prim_, out_user_).execute(stream_, out_prim_, out_user_);
      stream_.wait();
    }
    return Status::Ok();
  } catch (const dnnl::error& e) {
    return FromDnnl(e, "reorder of the output");
  }

  std::string implementation() const override { return impl_; }
  const Algorithm& algorithm() const override { return algorithm_; }
  KernelFacts kernel() const override { return {.onednn_kernel = impl_, .onednn_version = LibraryVersion()}; }

 private:
  // The user's plain memory, or a reordered copy in the primitive's layout.
  memory ToPrimitive(memory user, const memory::desc& wanted) {
    if (user.get_desc() == wanted) return user;
    memory m(wanted, CpuEngine());
    dnnl::reorder(user, m).execute(stream_, user, m);
    stream_.wait();
    return m;
  }
  // The user's buffer when the primitive writes the plain layout, else a new
  // buffer in the primitive's layout that Fetch reorders from.
  void SetOutput(int arg, const memory& user, const memory::desc& wanted) {
    out_user_ = user;
    out_prim_ = user.get_desc() == wanted ? user : memory(wanted, CpuEngine());
    args_[arg] = out_prim_;
  }

  Problem p_;
  Algorithm algorithm_;
  Buffers& b_;
  dnnl::stream stream_;
  memory out_user_, out_prim_, scratchpad_;
  dnnl::primitive primitive_;
  std::unordered_map<int, memory> args_;
  std::string impl_;
};

// The name oneDNN's own header gives the ISA (backends/onednn/isa.def, for
// the major version built against); "isa_0x..." for a value the table does
// not know yet.
std::string IsaName(dnnl::cpu_isa isa) {
  struct Named {
    int major;
    unsigned value;
    const char* name;
  };
  static constexpr Named kIsas[] = {
#define BC_ONEDNN_ISA(major, value, name) {major, value, name},
#include "backends/onednn/isa.def"
#undef BC_ONEDNN_ISA
  };
  const auto value = static_cast<unsigned>(isa);
  for (const Named& n : kIsas) {
    if (n.major == DNNL_VERSION_MAJOR && n.value == value) return n.name;
  }
  std::ostringstream hex;
  hex << "isa_0x" << std::hex << value;
  return hex.str();
}

// "avx512_core", "avx2", ...: the ISA oneDNN dispatches to on this CPU.
std::string EffectiveIsa() { return IsaName(dnnl::get_effective_cpu_isa()); }

}  // namespace

class OnednnEngine final : public Engine {
 public:
  OnednnEngine() : Engine("onednn", Device::kCpu) {}
  Availability availability() const override;
  std::map<std::string, std::string> platform() const override { return {{"onednn_isa", EffectiveIsa()}}; }
  Result<std::vector<Algorithm>> Candidates(const Problem& p, const BackendFlags& flags) const override;
  // "gemm", the GEMM-based analogue of PyTorch's pinned cuDNN defaults.
  std::optional<std::string> PinnedDeterministic(const Problem& p) const override;
  Result<std::unique_ptr<PreparedOp>> Prepare(const Problem& p, const Algorithm& algorithm, Buffers& buffers,
                                              const BackendFlags& flags) const override;
};

const Engine& OnednnEngineInstance() {
  static const OnednnEngine kEngine;
  return kEngine;
}

Availability OnednnEngine::availability() const {
  Availability a;
  a.engine = "onednn";
  a.built = true;
  a.library_version = LibraryVersion();
  a.version = a.library_version + " (" + dnnl_version()->hash + ")";
  try {
    (void)CpuEngine();
    a.available = true;
    a.reason = "built with oneDNN " + a.version + ", CPU engine created, ISA " + EffectiveIsa();
  } catch (const dnnl::error& e) {
    a.reason = std::string("oneDNN CPU engine creation failed: ") + e.what();
  }
  return a;
}

Result<std::vector<Algorithm>> OnednnEngine::Candidates(const Problem& p, const BackendFlags&) const {
  std::vector<Algorithm> out;
  if (!IsPlainF32(p)) return out;
  const auto add = [&](const std::string& name) {
    try {
      const Built b = Build(p, name, /*make_primitive=*/false);
      out.push_back({name, Determinism::kDeterministic, static_cast<int64_t>(b.scratchpad.get_size())});
    } catch (const dnnl::error&) {
      // Not implemented for this problem on this CPU: not a candidate.
    }
  };
  if (std::holds_alternative<MatmulProblem>(p)) {
    add("auto");
  } else if (std::holds_alternative<Conv2dProblem>(p)) {
    for (const char* name : kConvAlgorithms) add(name);
  }
  return out;
}

std::optional<std::string> OnednnEngine::PinnedDeterministic(const Problem& p) const {
  if (!std::holds_alternative<Conv2dProblem>(p)) return std::nullopt;
  return "gemm";
}

Result<std::unique_ptr<PreparedOp>> OnednnEngine::Prepare(const Problem& p, const Algorithm& algorithm, Buffers& buffers,
                                                          const BackendFlags&) const {
  if (!IsPlainF32(p) || std::holds_alternative<ScatterAddProblem>(p)) {
    return Status(StatusCode::kUnimplemented, "onednn has no implementation of " + FormatProblem(p));
  }
  auto prepared = std::make_unique<OnednnPrepared>(p, algorithm, buffers);
  BC_RETURN_IF_ERROR(prepared->Init());
  return std::unique_ptr<PreparedOp>(std::move(prepared));
}

}  // namespace bc
