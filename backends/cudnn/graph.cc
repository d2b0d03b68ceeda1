#include "backends/cudnn/graph.h"

#include <array>
#include <algorithm>

#include "backends/cudnn/calls.h"

namespace bc::cudnn {
namespace {

Result<Descriptor> Make(cudnnBackendDescriptorType_t type) {
  cudnnBackendDescriptor_t d = nullptr;
  BC_CUDNN(cudnnBackendCreateDescriptor(type, &d));
  return Descriptor(d, [](void* p) { cudnnBackendDestroyDescriptor(p); });
}

Status Set(const Descriptor& d, cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type, int64_t count,
           const void* values) {
  BC_CUDNN(cudnnBackendSetAttribute(d.get(), name, type, count, values));
  return Status::Ok();
}

Status SetDesc(const Descriptor& d, cudnnBackendAttributeName_t name, const Descriptor& value) {
  void* raw = value.get();
  return Set(d, name, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &raw);
}

Status Finalize(const Descriptor& d) {
  BC_CUDNN(cudnnBackendFinalize(d.get()));
  return Status::Ok();
}

Result<Descriptor> Tensor(int64_t uid, DataType dtype, Layout layout, int64_t n, int64_t c, int64_t h, int64_t w) {
  Result<Descriptor> t = Make(CUDNN_BACKEND_TENSOR_DESCRIPTOR);
  if (!t.ok()) return t.status();
  const cudnnDataType_t dt = dtype == DataType::kF16 ? CUDNN_DATA_HALF : CUDNN_DATA_FLOAT;
  const std::array<int64_t, 4> dims = {n, c, h, w};
  const std::array<int64_t, 4> strides = layout == Layout::kNchw ? std::array<int64_t, 4>{c * h * w, h * w, w, 1}
                                                                 : std::array<int64_t, 4>{h * w * c, 1, w * c, c};
  // The model's tensors each start a cudaMalloc allocation (DeviceTensors), so
  // Conv_v8's getAlignment gives them 32 bytes, as it does PyTorch's.
  const int64_t alignment = TensorByteAlignment(kDeviceAllocationAlignment);
  BC_RETURN_IF_ERROR(Set(*t, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &dt));
  BC_RETURN_IF_ERROR(Set(*t, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, 4, dims.data()));
  BC_RETURN_IF_ERROR(Set(*t, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, 4, strides.data()));
  BC_RETURN_IF_ERROR(Set(*t, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &uid));
  BC_RETURN_IF_ERROR(Set(*t, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, &alignment));
  BC_RETURN_IF_ERROR(Finalize(*t));
  return t;
}

Result<Descriptor> Convolution(const Conv2dProblem& p) {
  Result<Descriptor> c = Make(CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR);
  if (!c.ok()) return c.status();
  const cudnnDataType_t compute = CUDNN_DATA_FLOAT;  // fp16 computes in fp32, as PyTorch sets it
  const cudnnConvolutionMode_t mode = CUDNN_CROSS_CORRELATION;
  const int64_t dims = 2;
  const std::array<int64_t, 2> dilation = {p.dh, p.dw}, stride = {p.sh, p.sw}, pad = {p.ph, p.pw};
  BC_RETURN_IF_ERROR(Set(*c, CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &compute));
  BC_RETURN_IF_ERROR(Set(*c, CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_TYPE_CONVOLUTION_MODE, 1, &mode));
  BC_RETURN_IF_ERROR(Set(*c, CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, CUDNN_TYPE_INT64, 1, &dims));
  BC_RETURN_IF_ERROR(Set(*c, CUDNN_ATTR_CONVOLUTION_DILATIONS, CUDNN_TYPE_INT64, 2, dilation.data()));
  BC_RETURN_IF_ERROR(Set(*c, CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, CUDNN_TYPE_INT64, 2, stride.data()));
  BC_RETURN_IF_ERROR(Set(*c, CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, CUDNN_TYPE_INT64, 2, pad.data()));
  BC_RETURN_IF_ERROR(Set(*c, CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, CUDNN_TYPE_INT64, 2, pad.data()));
  BC_RETURN_IF_ERROR(Finalize(*c));
  return c;
}

Result<Descriptor> Operation(const Conv2dProblem& p, const Descriptor& x, const Descriptor& w, const Descriptor& y,
                             const Descriptor& conv) {
  const float alpha = 1, beta = 0;
  Result<Descriptor> op = Make(p.direction == Direction::kForward        ? CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR
                               : p.direction == Direction::kBackwardData ? CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR
                                                                         : CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR);
  if (!op.ok()) return op.status();
  switch (p.direction) {
    case Direction::kForward:
      BC_RETURN_IF_ERROR(SetDesc(*op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, x));
      BC_RETURN_IF_ERROR(SetDesc(*op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W, w));
      BC_RETURN_IF_ERROR(SetDesc(*op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y, y));
      BC_RETURN_IF_ERROR(SetDesc(*op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC, conv));
      BC_RETURN_IF_ERROR(Set(*op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA, CUDNN_TYPE_FLOAT, 1, &alpha));
      BC_RETURN_IF_ERROR(Set(*op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA, CUDNN_TYPE_FLOAT, 1, &beta));
      break;
    case Direction::kBackwardData:
      BC_RETURN_IF_ERROR(SetDesc(*op, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DX, x));
      BC_RETURN_IF_ERROR(SetDesc(*op, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_W, w));
      BC_RETURN_IF_ERROR(SetDesc(*op, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DY, y));
      BC_RETURN_IF_ERROR(SetDesc(*op, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_CONV_DESC, conv));
      BC_RETURN_IF_ERROR(Set(*op, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_ALPHA, CUDNN_TYPE_FLOAT, 1, &alpha));
      BC_RETURN_IF_ERROR(Set(*op, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_BETA, CUDNN_TYPE_FLOAT, 1, &beta));
      break;
    case Direction::kBackwardWeights:
      BC_RETURN_IF_ERROR(SetDesc(*op, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_X, x));
      BC_RETURN_IF_ERROR(SetDesc(*op, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DW, w));
      BC_RETURN_IF_ERROR(SetDesc(*op, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DY, y));
      BC_RETURN_IF_ERROR(SetDesc(*op, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_CONV_DESC, conv));
      BC_RETURN_IF_ERROR(Set(*op, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_ALPHA, CUDNN_TYPE_FLOAT, 1, &alpha));
      BC_RETURN_IF_ERROR(Set(*op, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_BETA, CUDNN_TYPE_FLOAT, 1, &beta));
      break;
  }
  BC_RETURN_IF_ERROR(Finalize(*op));
  return op;
}

NumericalNote ToNote(cudnnBackendNumericalNote_t n, bool* known) {
  *known = true;
  switch (n) {
    case CUDNN_NUMERICAL_NOTE_TENSOR_CORE: return NumericalNote::kTensorCore;
    case CUDNN_NUMERICAL_NOTE_DOWN_CONVERT_INPUTS: return NumericalNote::kDownConvertInputs;
    case CUDNN_NUMERICAL_NOTE_REDUCED_PRECISION_REDUCTION: return NumericalNote::kReducedPrecisionReduction;
    case CUDNN_NUMERICAL_NOTE_FFT: return NumericalNote::kFft;
    case CUDNN_NUMERICAL_NOTE_NONDETERMINISTIC: return NumericalNote::kNondeterministic;
    case CUDNN_NUMERICAL_NOTE_WINOGRAD: return NumericalNote::kWinograd;
    case CUDNN_NUMERICAL_NOTE_STRICT_NAN_PROP: return NumericalNote::kStrictNanPropagation;
    default: break;
  }
  *known = false;
  return NumericalNote::kFft;
}

// The engine configs of `graph` that heuristics in `mode` return.
Result<std::vector<Descriptor>> EngineConfigs(const Descriptor& graph, cudnnBackendHeurMode_t mode,
                                              std::vector<Descriptor>* keep_alive) {
  Result<Descriptor> heur = Make(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR);
  if (!heur.ok()) return heur.status();
  BC_RETURN_IF_ERROR(SetDesc(*heur, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, graph));
  BC_RETURN_IF_ERROR(Set(*heur, CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &mode));
  BC_RETURN_IF_ERROR(Finalize(*heur));
  keep_alive->push_back(*heur);
  int64_t count = 0;
  BC_CUDNN(cudnnBackendGetAttribute(heur->get(), CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 0,
                                    &count, nullptr));
  std::vector<Descriptor> configs;
  std::vector<cudnnBackendDescriptor_t> raw;
  for (int64_t k = 0; k < count; ++k) {
    Result<Descriptor> cfg = Make(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR);
    if (!cfg.ok()) return cfg.status();
    configs.push_back(*cfg);
    raw.push_back(cfg->get());
  }
  int64_t returned = 0;
  BC_CUDNN(cudnnBackendGetAttribute(heur->get(), CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, count,
                                    &returned, raw.data()));
  configs.resize(static_cast<size_t>(std::min(returned, count)));
  return configs;
}

// A config's knob choices (type, value), in its order, as cudnn-frontend
// reads them for the plan's tag.
Result<std::vector<std::pair<int64_t, int64_t>>> KnobChoices(const Descriptor& cfg) {
  std::vector<Descriptor> knobs;
  std::vector<cudnnBackendDescriptor_t> raw;
  for (int i = 0; i < CUDNN_KNOB_TYPE_COUNTS; ++i) {
    BC_ASSIGN_OR_RETURN(Descriptor k, Make(CUDNN_BACKEND_KNOB_CHOICE_DESCRIPTOR));
    raw.push_back(k.get());
    knobs.push_back(std::move(k));
  }
  int64_t count = 0;
  BC_CUDNN(cudnnBackendGetAttribute(cfg.get(), CUDNN_ATTR_ENGINECFG_KNOB_CHOICES, CUDNN_TYPE_BACKEND_DESCRIPTOR,
                                    CUDNN_KNOB_TYPE_COUNTS, &count, raw.data()));
  std::vector<std::pair<int64_t, int64_t>> out;
  for (int64_t i = 0; i < std::min<int64_t>(count, CUDNN_KNOB_TYPE_COUNTS); ++i) {
    cudnnBackendKnobType_t type = CUDNN_KNOB_TYPE_COUNTS;
    int64_t value = -2;
    BC_CUDNN(cudnnBackendGetAttribute(raw[i], CUDNN_ATTR_KNOB_CHOICE_KNOB_TYPE, CUDNN_TYPE_KNOB_TYPE, 1, nullptr, &type));
    BC_CUDNN(cudnnBackendGetAttribute(raw[i], CUDNN_ATTR_KNOB_CHOICE_KNOB_VALUE, CUDNN_TYPE_INT64, 1, nullptr, &value));
    out.emplace_back(static_cast<int64_t>(type), value);
  }
  return out;
}

// A config's engine index and numerical notes.
Status Describe(const Descriptor& cfg, int64_t* engine_index, std::set<NumericalNote>* notes) {
  Result<Descriptor> engine = Make(CUDNN_BACKEND_ENGINE_DESCRIPTOR);
  if (!engine.ok()) return engine.status();
  cudnnBackendDescriptor_t engine_raw = engine->get();
  int64_t n = 0;
  BC_CUDNN(cudnnBackendGetAttribute(cfg.get(), CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &n,
                                    &engine_raw));
  BC_CUDNN(cudnnBackendGetAttribute(engine_raw, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, 1, &n, engine_index));
  std::array<cudnnBackendNumericalNote_t, CUDNN_NUMERICAL_NOTE_TYPE_COUNT> raw_notes{};
  int64_t note_count = 0;
  BC_CUDNN(cudnnBackendGetAttribute(engine_raw, CUDNN_ATTR_ENGINE_NUMERICAL_NOTE, CUDNN_TYPE_NUMERICAL_NOTE,
                                    raw_notes.size(), &note_count, raw_notes.data()));
  for (int64_t i = 0; i < note_count; ++i) {
    bool known = false;
    const NumericalNote note = ToNote(raw_notes[i], &known);
    if (known) notes->insert(note);
  }
  return Status::Ok();
}

}  // namespace

Result<GraphConfigs> ListConfigs(cudnnHandle_t handle, const Conv2dProblem& p, bool deterministic, bool allow_tf32,
                                 HeurMode mode, const std::vector<ErrataRule>& errata) {
  GraphConfigs out;
  Result<Descriptor> x = Tensor(kUidX, p.dtype, p.layout, p.mb, p.ic, p.ih, p.iw);
  Result<Descriptor> w = Tensor(kUidW, p.dtype, p.layout, p.oc, p.ic / p.g, p.kh, p.kw);
  Result<Descriptor> y = Tensor(kUidY, p.dtype, p.layout, p.mb, p.oc, p.oh(), p.ow());
  if (!x.ok() || !w.ok() || !y.ok()) return !x.ok() ? x.status() : !w.ok() ? w.status() : y.status();
  Result<Descriptor> conv = Convolution(p);
  if (!conv.ok()) return conv.status();
  Result<Descriptor> op = Operation(p, *x, *w, *y, *conv);
  if (!op.ok()) return op.status();
  Result<Descriptor> graph = Make(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
  if (!graph.ok()) return graph.status();
  BC_RETURN_IF_ERROR(SetDesc(*graph, CUDNN_ATTR_OPERATIONGRAPH_OPS, *op));
  BC_RETURN_IF_ERROR(Set(*graph, CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1, &handle));
  BC_RETURN_IF_ERROR(Finalize(*graph));
  out.keep_alive = {*x, *w, *y, *conv, *op, *graph};

  const cudnnBackendHeurMode_t heur_mode = mode == HeurMode::kB ? CUDNN_HEUR_MODE_B : CUDNN_HEUR_MODE_INSTANT;
  std::vector<RawConfig> raw;
  std::vector<Descriptor> descriptors;
  for (const cudnnBackendHeurMode_t source : {heur_mode, CUDNN_HEUR_MODE_FALLBACK}) {
    BC_ASSIGN_OR_RETURN(const std::vector<Descriptor> configs, EngineConfigs(*graph, source, &out.keep_alive));
    for (size_t k = 0; k < configs.size(); ++k) {
      RawConfig c{.fallback = source == CUDNN_HEUR_MODE_FALLBACK, .rank = static_cast<int64_t>(k)};
      BC_RETURN_IF_ERROR(Describe(configs[k], &c.engine, &c.notes));
      BC_ASSIGN_OR_RETURN(const auto knobs, KnobChoices(configs[k]));
      c.tag = PlanTag(p.direction, c.engine, knobs);
      raw.push_back(std::move(c));
      descriptors.push_back(configs[k]);
    }
  }
  // The errata's versions are compared with the cuDNN compiled against, as
  // cudnn-frontend's check_rule compares CUDNN_VERSION.
  KeptConfigs kept = KeepConfigs(raw, deterministic, allow_tf32, p.dtype, errata, CUDNN_VERSION);
  out.dropped = std::move(kept.dropped);
  for (size_t i : kept.kept) out.configs.push_back({ConfigName(raw[i]), raw[i].notes, descriptors[i], raw[i].engine});
  return out;
}

Result<Plan> BuildPlan(cudnnHandle_t handle, const Config& config) {
  Result<Descriptor> exec = Make(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);
  if (!exec.ok()) return exec.status();
  BC_RETURN_IF_ERROR(Set(*exec, CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1, &handle));
  BC_RETURN_IF_ERROR(SetDesc(*exec, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, config.config));
  BC_RETURN_IF_ERROR(Finalize(*exec));
  Plan plan{config.name, config.notes, *exec, 0, config.engine};
  int64_t n = 0;
  BC_CUDNN(cudnnBackendGetAttribute(exec->get(), CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_TYPE_INT64, 1, &n,
                                    &plan.workspace_bytes));
  return plan;
}

Result<Descriptor> VariantPack(void* x, void* w, void* y, void* workspace) {
  Result<Descriptor> pack = Make(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR);
  if (!pack.ok()) return pack.status();
  const std::array<int64_t, 3> uids = {kUidX, kUidW, kUidY};
  std::array<void*, 3> pointers = {x, w, y};
  BC_RETURN_IF_ERROR(Set(*pack, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, 3, uids.data()));
  BC_RETURN_IF_ERROR(Set(*pack, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, 3, pointers.data()));
  BC_RETURN_IF_ERROR(Set(*pack, CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &workspace));
  BC_RETURN_IF_ERROR(Finalize(*pack));
  return pack;
}

Status ExecutePlan(cudnnHandle_t handle, const Plan& plan, const Descriptor& pack) {
  BC_CUDNN(cudnnBackendExecute(handle, plan.plan.get(), pack.get()));
  return Status::Ok();
}

}  // namespace bc::cudnn
