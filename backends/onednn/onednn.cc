#include "backends/onednn/onednn.h"

#include <oneapi/dnnl/dnnl.hpp>

#include <unordered_map>

namespace bc {
namespace {

using dnnl::memory;
using tag = dnnl::memory::format_tag;

Status FromDnnl(const dnnl::error& e, const std::string& what) {
  return Status(StatusCode::kInternal, "oneDNN " + what + " failed: " + e.what() + " (dnnl_status " +
                                           std::to_string(static_cast<int>(e.status)) + ")");
}

dnnl::engine& CpuEngine() {
  static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

class OnednnPrepared final : public PreparedConv {
 public:
  OnednnPrepared(const Conv2dProblem& p, Algorithm algorithm, ConvBuffers& b)
      : p_(p), algorithm_(std::move(algorithm)), b_(b), stream_(CpuEngine()) {}

  Status Init() try {
    dnnl::engine& eng = CpuEngine();
    const memory::dims src_dims = {p_.mb, p_.ic, p_.ih, p_.iw};
    const memory::dims dst_dims = {p_.mb, p_.oc, p_.oh(), p_.ow()};
    const memory::dims wei_dims = p_.g == 1 ? memory::dims{p_.oc, p_.ic, p_.kh, p_.kw}
                                            : memory::dims{p_.g, p_.oc / p_.g, p_.ic / p_.g, p_.kh, p_.kw};
    const tag wei_tag = p_.g == 1 ? tag::oihw : tag::goihw;
    const memory::dims strides = {p_.sh, p_.sw};
    const memory::dims dilates = {p_.dh - 1, p_.dw - 1};  // oneDNN counts dilation from 0
    const memory::dims pad = {p_.ph, p_.pw};
    // Right padding that reproduces the floor in oh()/ow().
    const memory::dims pad_r = {(p_.oh() - 1) * p_.sh + (p_.kh - 1) * p_.dh + 1 - p_.ih - p_.ph,
                                (p_.ow() - 1) * p_.sw + (p_.kw - 1) * p_.dw + 1 - p_.iw - p_.pw};
    const auto dt = memory::data_type::f32;
    const memory::desc src_any(src_dims, dt, tag::any), dst_any(dst_dims, dt, tag::any),
        wei_any(wei_dims, dt, tag::any);
    user_src_ = memory({src_dims, dt, tag::nchw}, eng, b_.src.data());
    user_dst_ = memory({dst_dims, dt, tag::nchw}, eng, b_.dst.data());
    user_wei_ = memory({wei_dims, dt, wei_tag}, eng, b_.wei.data());

    const dnnl::convolution_forward::desc fwd_desc(dnnl::prop_kind::forward_training,
                                                   dnnl::algorithm::convolution_auto, src_any, wei_any,
                                                   dst_any, strides, dilates, pad, pad_r);
    const dnnl::convolution_forward::primitive_desc fwd_pd(fwd_desc, eng);
    if (p_.direction == Direction::kForward) {
      impl_ = fwd_pd.impl_info_str();
      src_ = ToPrimitive(user_src_, fwd_pd.src_desc());
      wei_ = ToPrimitive(user_wei_, fwd_pd.weights_desc());
      dst_ = OutputMemory(user_dst_, fwd_pd.dst_desc());
      out_user_ = user_dst_;
      out_prim_ = dst_;
      primitive_ = dnnl::convolution_forward(fwd_pd);
      args_ = {{DNNL_ARG_SRC, src_}, {DNNL_ARG_WEIGHTS, wei_}, {DNNL_ARG_DST, dst_}};
    } else {
      const dnnl::convolution_backward_weights::desc bwd_desc(dnnl::algorithm::convolution_auto, src_any,
                                                              wei_any, dst_any, strides, dilates, pad, pad_r);
      const dnnl::convolution_backward_weights::primitive_desc bwd_pd(bwd_desc, eng, fwd_pd);
      impl_ = bwd_pd.impl_info_str();
      src_ = ToPrimitive(user_src_, bwd_pd.src_desc());
      dst_ = ToPrimitive(user_dst_, bwd_pd.diff_dst_desc());
      wei_ = OutputMemory(user_wei_, bwd_pd.diff_weights_desc());
      out_user_ = user_wei_;
      out_prim_ = wei_;
      primitive_ = dnnl::convolution_backward_weights(bwd_pd);
      args_ = {{DNNL_ARG_SRC, src_}, {DNNL_ARG_DIFF_DST, dst_}, {DNNL_ARG_DIFF_WEIGHTS, wei_}};
    }
    return Status::Ok();
  } catch (const dnnl::error& e) {
    return FromDnnl(e, "primitive creation for " + p_.Format());
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
  static memory OutputMemory(const memory& user, const memory::desc& wanted) {
    return user.get_desc() == wanted ? user : memory(wanted, CpuEngine());
  }

  Conv2dProblem p_;
  Algorithm algorithm_;
  ConvBuffers& b_;
  dnnl::stream stream_;
  memory user_src_, user_dst_, user_wei_, src_, dst_, wei_, out_user_, out_prim_;
  dnnl::primitive primitive_;
  std::unordered_map<int, memory> args_;
  std::string impl_;
};

std::string IsaName(dnnl::cpu_isa isa) {
  switch (isa) {
    case dnnl::cpu_isa::sse41: return "sse41";
    case dnnl::cpu_isa::avx: return "avx";
    case dnnl::cpu_isa::avx2: return "avx2";
    case dnnl::cpu_isa::avx512_core: return "avx512_core";
    case dnnl::cpu_isa::avx512_core_vnni: return "avx512_core_vnni";
    case dnnl::cpu_isa::avx512_core_bf16: return "avx512_core_bf16";
    case dnnl::cpu_isa::avx512_core_amx: return "avx512_core_amx";
    case dnnl::cpu_isa::avx2_vnni: return "avx2_vnni";
    default: return "isa_" + std::to_string(static_cast<int>(isa));
  }
}

}  // namespace

std::string OnednnEffectiveIsa() { return IsaName(dnnl::get_effective_cpu_isa()); }

const OnednnEngine& OnednnEngine::Instance() {
  static const OnednnEngine kEngine;
  return kEngine;
}

Availability OnednnEngine::availability() const {
  Availability a;
  a.engine = "onednn";
  a.built = true;
  const dnnl_version_t* v = dnnl_version();
  a.version = std::to_string(v->major) + "." + std::to_string(v->minor) + "." + std::to_string(v->patch) +
              " (" + v->hash + ")";
  try {
    (void)CpuEngine();
    a.available = true;
    a.reason = "built with oneDNN " + a.version + ", CPU engine created, ISA " + OnednnEffectiveIsa();
  } catch (const dnnl::error& e) {
    a.reason = std::string("oneDNN CPU engine creation failed: ") + e.what();
  }
  return a;
}

std::vector<Algorithm> OnednnEngine::algorithms(const Conv2dProblem&) const {
  return {{"auto", Determinism::kDeterministic, 0}};
}

Result<std::unique_ptr<PreparedConv>> OnednnEngine::Prepare(const Conv2dProblem& p, const std::string& algorithm,
                                                            ConvBuffers& buffers) const {
  Result<Algorithm> found = FindAlgorithm(*this, p, algorithm.empty() ? "auto" : algorithm);
  if (!found.ok()) return found.status();
  auto prepared = std::make_unique<OnednnPrepared>(p, found.value(), buffers);
  BC_RETURN_IF_ERROR(prepared->Init());
  return std::unique_ptr<PreparedConv>(std::move(prepared));
}

}  // namespace bc
