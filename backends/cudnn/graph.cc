#include "backends/cudnn/graph.h"

#include <algorithm>
#include <array>
#include <iterator>
#include <optional>
#include <string_view>
#include <utility>

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

Result<Descriptor> TensorOf(int64_t uid, cudnnDataType_t dt, const std::vector<int64_t>& dims,
                            const std::vector<int64_t>& strides, int64_t alignment) {
  Result<Descriptor> t = Make(CUDNN_BACKEND_TENSOR_DESCRIPTOR);
  if (!t.ok()) return t.status();
  const auto rank = static_cast<int64_t>(dims.size());
  BC_RETURN_IF_ERROR(Set(*t, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &dt));
  BC_RETURN_IF_ERROR(Set(*t, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, rank, dims.data()));
  BC_RETURN_IF_ERROR(Set(*t, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, rank, strides.data()));
  BC_RETURN_IF_ERROR(Set(*t, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &uid));
  BC_RETURN_IF_ERROR(Set(*t, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, &alignment));
  BC_RETURN_IF_ERROR(Finalize(*t));
  return t;
}

Result<Descriptor> Tensor(int64_t uid, DataType dtype, Layout layout, int64_t n, int64_t c, int64_t h, int64_t w) {
  const cudnnDataType_t dt = dtype == DataType::kF16 ? CUDNN_DATA_HALF : CUDNN_DATA_FLOAT;
  const std::vector<int64_t> strides = layout == Layout::kNchw ? std::vector<int64_t>{c * h * w, h * w, w, 1}
                                                               : std::vector<int64_t>{h * w * c, 1, w * c, c};
  // The model's tensors each start a cudaMalloc allocation (DeviceTensors), so
  // Conv_v8's getAlignment gives them 32 bytes, as it does PyTorch's.
  return TensorOf(uid, dt, {n, c, h, w}, strides, TensorByteAlignment(kDeviceAllocationAlignment));
}

Result<Descriptor> ConvolutionOf(cudnnDataType_t compute, cudnnConvolutionMode_t mode, const std::vector<int64_t>& pre,
                                 const std::vector<int64_t>& post, const std::vector<int64_t>& stride,
                                 const std::vector<int64_t>& dilation) {
  Result<Descriptor> c = Make(CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR);
  if (!c.ok()) return c.status();
  const auto dims = static_cast<int64_t>(stride.size());
  BC_RETURN_IF_ERROR(Set(*c, CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &compute));
  BC_RETURN_IF_ERROR(Set(*c, CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_TYPE_CONVOLUTION_MODE, 1, &mode));
  BC_RETURN_IF_ERROR(Set(*c, CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, CUDNN_TYPE_INT64, 1, &dims));
  BC_RETURN_IF_ERROR(Set(*c, CUDNN_ATTR_CONVOLUTION_DILATIONS, CUDNN_TYPE_INT64, dims, dilation.data()));
  BC_RETURN_IF_ERROR(Set(*c, CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, CUDNN_TYPE_INT64, dims, stride.data()));
  BC_RETURN_IF_ERROR(Set(*c, CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, CUDNN_TYPE_INT64, dims, pre.data()));
  BC_RETURN_IF_ERROR(Set(*c, CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, CUDNN_TYPE_INT64, dims, post.data()));
  BC_RETURN_IF_ERROR(Finalize(*c));
  return c;
}

Result<Descriptor> Convolution(const Conv2dProblem& p) {
  // fp16 computes in fp32, as PyTorch sets it.
  return ConvolutionOf(CUDNN_DATA_FLOAT, CUDNN_CROSS_CORRELATION, {p.ph, p.pw}, {p.ph, p.pw}, {p.sh, p.sw},
                       {p.dh, p.dw});
}

// The convolution operation of direction `d` on x, w, y (dx, dw, dy where
// the direction computes them); alpha and beta as `scalar` (CUDNN_TYPE_FLOAT,
// or CUDNN_TYPE_DOUBLE for fp64 data).
Result<Descriptor> Operation(Direction d, const Descriptor& x, const Descriptor& w, const Descriptor& y,
                             const Descriptor& conv, double alpha = 1, double beta = 0,
                             cudnnBackendAttributeType_t scalar = CUDNN_TYPE_FLOAT) {
  const float alpha_f = static_cast<float>(alpha), beta_f = static_cast<float>(beta);
  const void* a = scalar == CUDNN_TYPE_DOUBLE ? static_cast<const void*>(&alpha) : &alpha_f;
  const void* b = scalar == CUDNN_TYPE_DOUBLE ? static_cast<const void*>(&beta) : &beta_f;
  Result<Descriptor> op = Make(d == Direction::kForward        ? CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR
                               : d == Direction::kBackwardData ? CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR
                                                               : CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR);
  if (!op.ok()) return op.status();
  switch (d) {
    case Direction::kForward:
      BC_RETURN_IF_ERROR(SetDesc(*op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, x));
      BC_RETURN_IF_ERROR(SetDesc(*op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W, w));
      BC_RETURN_IF_ERROR(SetDesc(*op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y, y));
      BC_RETURN_IF_ERROR(SetDesc(*op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC, conv));
      BC_RETURN_IF_ERROR(Set(*op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA, scalar, 1, a));
      BC_RETURN_IF_ERROR(Set(*op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA, scalar, 1, b));
      break;
    case Direction::kBackwardData:
      BC_RETURN_IF_ERROR(SetDesc(*op, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DX, x));
      BC_RETURN_IF_ERROR(SetDesc(*op, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_W, w));
      BC_RETURN_IF_ERROR(SetDesc(*op, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DY, y));
      BC_RETURN_IF_ERROR(SetDesc(*op, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_CONV_DESC, conv));
      BC_RETURN_IF_ERROR(Set(*op, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_ALPHA, scalar, 1, a));
      BC_RETURN_IF_ERROR(Set(*op, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_BETA, scalar, 1, b));
      break;
    case Direction::kBackwardWeights:
      BC_RETURN_IF_ERROR(SetDesc(*op, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_X, x));
      BC_RETURN_IF_ERROR(SetDesc(*op, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DW, w));
      BC_RETURN_IF_ERROR(SetDesc(*op, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DY, y));
      BC_RETURN_IF_ERROR(SetDesc(*op, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_CONV_DESC, conv));
      BC_RETURN_IF_ERROR(Set(*op, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_ALPHA, scalar, 1, a));
      BC_RETURN_IF_ERROR(Set(*op, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_BETA, scalar, 1, b));
      break;
  }
  BC_RETURN_IF_ERROR(Finalize(*op));
  return op;
}

// The operation graph of one operation.
Result<Descriptor> Graph(cudnnHandle_t handle, const Descriptor& op) {
  Result<Descriptor> graph = Make(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
  if (!graph.ok()) return graph.status();
  BC_RETURN_IF_ERROR(SetDesc(*graph, CUDNN_ATTR_OPERATIONGRAPH_OPS, op));
  BC_RETURN_IF_ERROR(Set(*graph, CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1, &handle));
  BC_RETURN_IF_ERROR(Finalize(*graph));
  return graph;
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

// A config's engine, as cudnn-frontend's filters read it
// (CUDNN_ATTR_ENGINECFG_ENGINE into an engine descriptor of their own).
Result<Descriptor> EngineOf(const Descriptor& cfg) {
  Result<Descriptor> engine = Make(CUDNN_BACKEND_ENGINE_DESCRIPTOR);
  if (!engine.ok()) return engine.status();
  cudnnBackendDescriptor_t engine_raw = engine->get();
  int64_t n = 0;
  BC_CUDNN(cudnnBackendGetAttribute(cfg.get(), CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &n,
                                    &engine_raw));
  return engine;
}

// An engine's numerical notes (CUDNN_ATTR_ENGINE_NUMERICAL_NOTE), as cuDNN lists them.
Result<std::vector<cudnnBackendNumericalNote_t>> NumericalNotes(const Descriptor& engine) {
  std::array<cudnnBackendNumericalNote_t, CUDNN_NUMERICAL_NOTE_TYPE_COUNT> raw{};
  int64_t count = 0;
  BC_CUDNN(cudnnBackendGetAttribute(engine.get(), CUDNN_ATTR_ENGINE_NUMERICAL_NOTE, CUDNN_TYPE_NUMERICAL_NOTE,
                                    raw.size(), &count, raw.data()));
  return std::vector<cudnnBackendNumericalNote_t>(raw.begin(), raw.begin() + std::clamp<int64_t>(count, 0, raw.size()));
}

// A config's engine index and numerical notes.
Status Describe(const Descriptor& cfg, int64_t* engine_index, std::set<NumericalNote>* notes) {
  BC_ASSIGN_OR_RETURN(const Descriptor engine, EngineOf(cfg));
  int64_t n = 0;
  BC_CUDNN(cudnnBackendGetAttribute(engine.get(), CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, 1, &n,
                                    engine_index));
  BC_ASSIGN_OR_RETURN(const std::vector<cudnnBackendNumericalNote_t> raw, NumericalNotes(engine));
  for (const cudnnBackendNumericalNote_t r : raw) {
    bool known = false;
    const NumericalNote note = ToNote(r, &known);
    if (known) notes->insert(note);
  }
  return Status::Ok();
}

// The names cuDNN's log gives what it describes, without their prefixes,
// as this header defines them. Knob types by value (CUDNN_KNOB_TYPE_ left
// out): several are deprecated in 9.x, whose enumerators would warn, so the
// values are pinned to the header by its current ones.
constexpr std::string_view kKnobNames[] = {
    "SPLIT_K", "SWIZZLE", "TILE_SIZE", "USE_TEX", "EDGE", "KBLOCK", "LDGA", "LDGB", "CHUNK_K", "SPLIT_H",
    "WINO_TILE", "MULTIPLY", "SPLIT_K_BUF", "TILEK", "STAGES", "REDUCTION_MODE", "CTA_SPLIT_K_MODE", "SPLIT_K_SLC",
    "IDX_MODE", "SLICED", "SPLIT_RS", "SINGLEBUFFER", "LDGC", "SPECFILT", "KERNEL_CFG", "WORKSPACE", "TILE_CGA",
    "TILE_CGA_M", "TILE_CGA_N", "BLOCK_SIZE", "OCCUPANCY", "ARRAY_SIZE_PER_THREAD", "NUM_C_PER_BLOCK", "SPLIT_COLS",
    "TILE_ROWS", "TILE_COLS", "LOAD_SIZE", "CTA_COUNT", "STREAM_K", "SPLIT_P_SLC", "TILE_M", "TILE_N",
    "WARP_SPEC_CFG", "SWAP_AB"};
static_assert(std::size(kKnobNames) <= CUDNN_KNOB_TYPE_COUNTS);
static_assert(CUDNN_KNOB_TYPE_SWIZZLE == 1 && CUDNN_KNOB_TYPE_TILE_SIZE == 2 && CUDNN_KNOB_TYPE_EDGE == 4 &&
              CUDNN_KNOB_TYPE_MULTIPLY == 11 && CUDNN_KNOB_TYPE_SPLIT_K_SLC == 17 &&
              CUDNN_KNOB_TYPE_KERNEL_CFG == 24 && CUDNN_KNOB_TYPE_TILE_CGA_M == 27 && CUDNN_KNOB_TYPE_SWAP_AB == 43);

std::optional<cudnnBackendKnobType_t> KnobType(std::string_view name) {
  for (size_t i = 0; i < std::size(kKnobNames); ++i) {
    if (kKnobNames[i] == name) return static_cast<cudnnBackendKnobType_t>(i);
  }
  return std::nullopt;
}

std::optional<cudnnDataType_t> DataTypeNamed(std::string_view name) {
  static constexpr std::pair<std::string_view, cudnnDataType_t> kTypes[] = {
      {"CUDNN_DATA_FLOAT", CUDNN_DATA_FLOAT},       {"CUDNN_DATA_DOUBLE", CUDNN_DATA_DOUBLE},
      {"CUDNN_DATA_HALF", CUDNN_DATA_HALF},         {"CUDNN_DATA_BFLOAT16", CUDNN_DATA_BFLOAT16},
      {"CUDNN_DATA_INT8", CUDNN_DATA_INT8},         {"CUDNN_DATA_INT32", CUDNN_DATA_INT32},
      {"CUDNN_DATA_UINT8", CUDNN_DATA_UINT8},       {"CUDNN_DATA_INT64", CUDNN_DATA_INT64},
      {"CUDNN_DATA_FP8_E4M3", CUDNN_DATA_FP8_E4M3}, {"CUDNN_DATA_FP8_E5M2", CUDNN_DATA_FP8_E5M2}};
  for (const auto& [n, t] : kTypes) {
    if (n == name) return t;
  }
  return std::nullopt;
}

std::string NumericalNoteName(cudnnBackendNumericalNote_t n) {
  bool known = false;
  const NumericalNote note = ToNote(n, &known);
  if (known) return NoteName(note);
  switch (n) {
    case CUDNN_NUMERICAL_NOTE_WINOGRAD_TILE_4x4: return "WINOGRAD_TILE_4x4";
    case CUDNN_NUMERICAL_NOTE_WINOGRAD_TILE_6x6: return "WINOGRAD_TILE_6x6";
    case CUDNN_NUMERICAL_NOTE_WINOGRAD_TILE_13x13: return "WINOGRAD_TILE_13x13";
    default: return "NUMERICAL_NOTE_" + std::to_string(static_cast<int>(n));
  }
}

std::string BehaviorNoteName(cudnnBackendBehaviorNote_t n) {
  switch (n) {
    case CUDNN_BEHAVIOR_NOTE_RUNTIME_COMPILATION: return "RUNTIME_COMPILATION";
    case CUDNN_BEHAVIOR_NOTE_REQUIRES_FILTER_INT8x32_REORDER: return "REQUIRES_FILTER_INT8x32_REORDER";
    case CUDNN_BEHAVIOR_NOTE_REQUIRES_BIAS_INT8x32_REORDER: return "REQUIRES_BIAS_INT8x32_REORDER";
    case CUDNN_BEHAVIOR_NOTE_SUPPORTS_CUDA_GRAPH_NATIVE_API: return "SUPPORTS_CUDA_GRAPH_NATIVE_API";
    case CUDNN_BEHAVIOR_NOTE_CUBLASLT_DEPENDENCY: return "CUBLASLT_DEPENDENCY";
    default: return "BEHAVIOR_NOTE_" + std::to_string(static_cast<int>(n));
  }
}

// What the log describes that this build cannot ask cuDNN about.
Status NotRebuilt(const CudnnLogConvolution& c, const std::string& what) {
  return Status(StatusCode::kUnimplemented, "the convolution the log describes (" + c.Describe() + ") has " + what +
                                                ", which this build does not rebuild");
}

// The log's convolution as an operation graph again: its tensors (types,
// dimensions, strides, ids, alignment), its convolution descriptor and its
// scalars, as PyTorch's Conv_v8.cpp set them.
Result<Descriptor> LoggedGraph(cudnnHandle_t handle, const CudnnLogConvolution& c, std::vector<Descriptor>* keep) {
  constexpr std::string_view kOp = "CUDNN_BACKEND_OPERATION_CONVOLUTION_";
  const std::string op = c.operation.rfind(kOp, 0) == 0 ? c.operation.substr(kOp.size()) : c.operation;
  Direction d = Direction::kForward;
  if (op == "BACKWARD_DATA_DESCRIPTOR") {
    d = Direction::kBackwardData;
  } else if (op == "BACKWARD_FILTER_DESCRIPTOR") {
    d = Direction::kBackwardWeights;
  } else if (op != "FORWARD_DESCRIPTOR") {
    return NotRebuilt(c, "the operation " + c.operation);
  }
  std::vector<Descriptor> tensors;
  for (const CudnnLogTensor* t : {&c.x, &c.w, &c.y}) {
    const std::optional<cudnnDataType_t> dt = DataTypeNamed(t->data_type);
    if (!dt) return NotRebuilt(c, "the data type " + t->data_type);
    BC_ASSIGN_OR_RETURN(Descriptor tensor, TensorOf(t->uid, *dt, t->dims, t->strides, t->alignment));
    tensors.push_back(std::move(tensor));
  }
  const std::optional<cudnnDataType_t> compute = DataTypeNamed(c.compute_type);
  if (!compute) return NotRebuilt(c, "the compute type " + c.compute_type);
  if (c.mode != "CUDNN_CROSS_CORRELATION" && c.mode != "CUDNN_CONVOLUTION") return NotRebuilt(c, "the mode " + c.mode);
  const cudnnConvolutionMode_t mode = c.mode == "CUDNN_CONVOLUTION" ? CUDNN_CONVOLUTION : CUDNN_CROSS_CORRELATION;
  BC_ASSIGN_OR_RETURN(Descriptor conv, ConvolutionOf(*compute, mode, c.pre_paddings, c.post_paddings, c.strides,
                                                     c.dilations));
  // cuDNN takes the scalars in double for fp64 data, in float otherwise.
  const cudnnBackendAttributeType_t scalar = c.x.data_type == "CUDNN_DATA_DOUBLE" ? CUDNN_TYPE_DOUBLE : CUDNN_TYPE_FLOAT;
  BC_ASSIGN_OR_RETURN(Descriptor operation,
                      Operation(d, tensors[0], tensors[1], tensors[2], conv, c.alpha, c.beta, scalar));
  BC_ASSIGN_OR_RETURN(Descriptor graph, Graph(handle, operation));
  *keep = {tensors[0], tensors[1], tensors[2], conv, operation};
  return graph;
}

// The engine of global index `engine` for `graph`, as cudnn-frontend's
// EngineBuilder_v8 builds it.
Result<Descriptor> EngineFor(const Descriptor& graph, int64_t engine) {
  BC_ASSIGN_OR_RETURN(Descriptor e, Make(CUDNN_BACKEND_ENGINE_DESCRIPTOR));
  BC_RETURN_IF_ERROR(SetDesc(e, CUDNN_ATTR_ENGINE_OPERATION_GRAPH, graph));
  BC_RETURN_IF_ERROR(Set(e, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, 1, &engine));
  BC_RETURN_IF_ERROR(Finalize(e));
  return e;
}

// The config of `engine` with the knob choices `knobs` (finalised knob
// choice descriptors), as cudnn-frontend's EngineConfigBuilder_v8 builds it.
Result<Descriptor> ConfigOf(const Descriptor& engine, std::vector<cudnnBackendDescriptor_t>& knobs) {
  BC_ASSIGN_OR_RETURN(Descriptor cfg, Make(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR));
  BC_RETURN_IF_ERROR(SetDesc(cfg, CUDNN_ATTR_ENGINECFG_ENGINE, engine));
  if (!knobs.empty()) {
    BC_RETURN_IF_ERROR(Set(cfg, CUDNN_ATTR_ENGINECFG_KNOB_CHOICES, CUDNN_TYPE_BACKEND_DESCRIPTOR,
                           static_cast<int64_t>(knobs.size()), knobs.data()));
  }
  BC_RETURN_IF_ERROR(Finalize(cfg));
  return cfg;
}

// The numerical and behaviour notes of a config's engine.
Result<EngineNotes> NotesOf(const Descriptor& cfg) {
  BC_ASSIGN_OR_RETURN(const Descriptor engine, EngineOf(cfg));
  EngineNotes out;
  BC_ASSIGN_OR_RETURN(const std::vector<cudnnBackendNumericalNote_t> numerical, NumericalNotes(engine));
  for (const cudnnBackendNumericalNote_t n : numerical) out.numerical.push_back(NumericalNoteName(n));
  std::array<cudnnBackendBehaviorNote_t, CUDNN_BEHAVIOR_NOTE_TYPE_COUNT> behavior{};
  int64_t count = 0;
  BC_CUDNN(cudnnBackendGetAttribute(engine.get(), CUDNN_ATTR_ENGINE_BEHAVIOR_NOTE, CUDNN_TYPE_BEHAVIOR_NOTE,
                                    behavior.size(), &count, behavior.data()));
  for (int64_t i = 0; i < std::clamp<int64_t>(count, 0, behavior.size()); ++i) {
    out.behavior.push_back(BehaviorNoteName(behavior[i]));
  }
  return out;
}

}  // namespace

Result<EngineNotes> AskEngineNotes(cudnnHandle_t handle, const CudnnLogConvolution& convolution, int64_t engine,
                                   const std::vector<std::pair<std::string, int64_t>>& knobs) {
  const std::string what = "engine " + std::to_string(engine) + " for " + convolution.Describe();
  std::vector<Descriptor> keep;
  Result<Descriptor> graph = LoggedGraph(handle, convolution, &keep);
  if (!graph.ok()) {
    return graph.status().code() == StatusCode::kUnimplemented
               ? graph.status()
               : graph.status().Prefixed("building the graph of " + convolution.Describe() + " again: ");
  }
  // The engine and its config with the knob choices the log shows, as
  // cudnn-frontend's EngineConfigBuilder_v8 builds it.
  // PyTorch ran this engine on this graph: cuDNN refusing it, or its knobs,
  // says the graph built again is not the one PyTorch ran.
  const auto refused = [&](const Status& s, const std::string& words) {
    return Status(StatusCode::kInternal, words + what + ": " + s.message(), s.source());
  };
  Result<Descriptor> e = EngineFor(*graph, engine);
  if (!e.ok()) return refused(e.status(), "cuDNN refused ");
  std::vector<Descriptor> choices;
  std::vector<cudnnBackendDescriptor_t> raw;
  for (const auto& [name, value] : knobs) {
    const std::optional<cudnnBackendKnobType_t> type = KnobType(name);
    if (!type) {
      return Status(StatusCode::kUnimplemented, "the log's knob " + name + " of engine " + std::to_string(engine) +
                                                    " is not one this build's cuDNN headers name");
    }
    BC_ASSIGN_OR_RETURN(Descriptor k, Make(CUDNN_BACKEND_KNOB_CHOICE_DESCRIPTOR));
    BC_RETURN_IF_ERROR(Set(k, CUDNN_ATTR_KNOB_CHOICE_KNOB_TYPE, CUDNN_TYPE_KNOB_TYPE, 1, &*type));
    BC_RETURN_IF_ERROR(Set(k, CUDNN_ATTR_KNOB_CHOICE_KNOB_VALUE, CUDNN_TYPE_INT64, 1, &value));
    BC_RETURN_IF_ERROR(Finalize(k));
    raw.push_back(k.get());
    choices.push_back(std::move(k));
  }
  Result<Descriptor> cfg = ConfigOf(*e, raw);
  if (!cfg.ok()) return refused(cfg.status(), "cuDNN refused the knob choices the log shows for ");
  // The notes of the config's engine, read as PyTorch's filter reads them.
  Result<EngineNotes> notes = NotesOf(*cfg);
  if (!notes.ok()) return notes.status().Prefixed("reading the notes of " + what + ": ");
  return notes;
}

Result<GraphConfigs> ListConfigs(cudnnHandle_t handle, const Conv2dProblem& p, bool deterministic, bool allow_tf32,
                                 HeurMode mode, const std::vector<ErrataRule>& errata) {
  GraphConfigs out;
  Result<Descriptor> x = Tensor(kUidX, p.dtype, p.layout, p.mb, p.ic, p.ih, p.iw);
  Result<Descriptor> w = Tensor(kUidW, p.dtype, p.layout, p.oc, p.ic / p.g, p.kh, p.kw);
  Result<Descriptor> y = Tensor(kUidY, p.dtype, p.layout, p.mb, p.oc, p.oh(), p.ow());
  if (!x.ok() || !w.ok() || !y.ok()) return !x.ok() ? x.status() : !w.ok() ? w.status() : y.status();
  Result<Descriptor> conv = Convolution(p);
  if (!conv.ok()) return conv.status();
  Result<Descriptor> op = Operation(p.direction, *x, *w, *y, *conv);
  if (!op.ok()) return op.status();
  Result<Descriptor> graph = Graph(handle, *op);
  if (!graph.ok()) return graph.status();
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
