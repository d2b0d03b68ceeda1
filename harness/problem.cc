#include "harness/problem.h"

#include <array>
#include <cctype>
#include <charconv>
#include <limits>
#include <vector>

namespace bc {

const char* DirectionName(Direction d) {
  switch (d) {
    case Direction::kForward: return "fwd";
    case Direction::kBackwardData: return "bwd_data";
    case Direction::kBackwardWeights: return "bwd_weights";
  }
  return "?";
}

const char* DataTypeName(DataType t) {
  switch (t) {
    case DataType::kF32: return "f32";
    case DataType::kF16: return "f16";
  }
  return "?";
}

const char* LayoutName(Layout l) { return l == Layout::kNchw ? "nchw" : "nhwc"; }

int64_t Conv2dProblem::accumulation_length() const {
  switch (direction) {
    case Direction::kForward: return (ic / g) * kh * kw;
    case Direction::kBackwardData: return (oc / g) * kh * kw;
    case Direction::kBackwardWeights: return mb * oh() * ow();
  }
  return 1;
}

namespace {

// A shape is a run of lowercase keys, each followed by a number.
struct Field {
  const char* key;
  bool may_be_zero;
};

Status Invalid(std::string_view repro, const std::string& what) {
  return Status(StatusCode::kInvalidArgument, "problem '" + std::string(repro) + "': " + what);
}

// Reads "key<digits>..." into values (indexed like fields); seen marks the keys given.
template <size_t N>
Status ParseFields(std::string_view repro, std::string_view shape, const std::array<Field, N>& fields,
                   std::array<int64_t, N>& values, std::array<bool, N>& seen) {
  size_t i = 0;
  while (i < shape.size()) {
    size_t key_end = i;
    while (key_end < shape.size() && std::isalpha(static_cast<unsigned char>(shape[key_end]))) ++key_end;
    const std::string_view key = shape.substr(i, key_end - i);
    size_t field = N;
    for (size_t f = 0; f < N; ++f) {
      if (key == fields[f].key) field = f;
    }
    if (field == N) return Invalid(repro, "unknown field '" + std::string(key) + "'");
    if (seen[field]) return Invalid(repro, "field '" + std::string(key) + "' given twice");
    seen[field] = true;
    auto [end, ec] = std::from_chars(shape.data() + key_end, shape.data() + shape.size(), values[field]);
    if (ec != std::errc() || end == shape.data() + key_end) {
      return Invalid(repro, "field '" + std::string(key) + "' needs a number");
    }
    i = static_cast<size_t>(end - shape.data());
  }
  return Status::Ok();
}

template <size_t N>
Status CheckRange(const std::array<Field, N>& fields, const std::array<int64_t, N>& values) {
  for (size_t f = 0; f < N; ++f) {
    const int64_t v = values[f];
    if (v < 0 || (v == 0 && !fields[f].may_be_zero)) {
      return Status(StatusCode::kInvalidArgument, std::string(fields[f].key) + " must be " +
                                                      (fields[f].may_be_zero ? "non-negative" : "positive") +
                                                      ", got " + std::to_string(v));
    }
    if (v > std::numeric_limits<int32_t>::max()) {
      return Status(StatusCode::kInvalidArgument, std::string(fields[f].key) + " is too large: " + std::to_string(v));
    }
  }
  return Status::Ok();
}

Status CheckElems(std::initializer_list<std::initializer_list<int64_t>> tensors) {
  for (const auto& dims : tensors) {
    int64_t n = 1;
    for (int64_t d : dims) {
      if (__builtin_mul_overflow(n, d, &n) || n > kMaxTensorElems) {
        return Status(StatusCode::kInvalidArgument,
                      "a tensor would exceed " + std::to_string(kMaxTensorElems) + " elements");
      }
    }
  }
  return Status::Ok();
}

std::vector<std::string_view> Split(std::string_view s, char sep) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (true) {
    const size_t at = s.find(sep, start);
    parts.push_back(s.substr(start, at == std::string_view::npos ? at : at - start));
    if (at == std::string_view::npos) return parts;
    start = at + 1;
  }
}

constexpr std::array<Field, 14> kConvFields = {{{"mb", false}, {"ic", false}, {"ih", false}, {"iw", false},
                                                 {"oc", false}, {"kh", false}, {"kw", false}, {"sh", false},
                                                 {"sw", false}, {"ph", true},  {"pw", true},  {"dh", false},
                                                 {"dw", false}, {"g", false}}};
constexpr std::array<Field, 3> kMatmulFields = {{{"m", false}, {"n", false}, {"k", false}}};
constexpr std::array<Field, 2> kScatterFields = {{{"n", false}, {"d", false}}};

std::array<int64_t, 14> ConvValues(const Conv2dProblem& p) {
  return {p.mb, p.ic, p.ih, p.iw, p.oc, p.kh, p.kw, p.sh, p.sw, p.ph, p.pw, p.dh, p.dw, p.g};
}

template <size_t N>
std::string FormatFields(const std::array<Field, N>& fields, const std::array<int64_t, N>& values) {
  std::string s;
  for (size_t f = 0; f < N; ++f) s += fields[f].key + std::to_string(values[f]);
  return s;
}

Status ParseDtype(std::string_view repro, std::string_view text, DataType* out) {
  if (text == "f32") {
    *out = DataType::kF32;
  } else if (text == "f16") {
    *out = DataType::kF16;
  } else {
    return Invalid(repro, "unknown data type '" + std::string(text) + "' (f32, f16)");
  }
  return Status::Ok();
}

}  // namespace

std::string Conv2dProblem::FormatShape() const { return FormatFields(kConvFields, ConvValues(*this)); }
std::string Conv2dProblem::Format() const {
  return std::string("conv2d:") + DirectionName(direction) + ":" + DataTypeName(dtype) + ":" +
         (layout == Layout::kNchw ? "" : std::string(LayoutName(layout)) + ":") + FormatShape();
}

Status Conv2dProblem::Validate() const {
  BC_RETURN_IF_ERROR(CheckRange(kConvFields, ConvValues(*this)));
  if (ic % g != 0 || oc % g != 0) {
    return Status(StatusCode::kInvalidArgument, "groups g" + std::to_string(g) + " must divide ic" +
                                                    std::to_string(ic) + " and oc" + std::to_string(oc));
  }
  if (oh() < 1 || ow() < 1) return Status(StatusCode::kInvalidArgument, "kernel does not fit the padded input");
  return CheckElems({{mb, ic, ih, iw}, {oc, ic / g, kh, kw}, {mb, oc, oh(), ow()}});
}

std::string MatmulProblem::FormatShape() const { return FormatFields(kMatmulFields, {m, n, k}); }
std::string MatmulProblem::Format() const { return std::string("matmul:") + DataTypeName(dtype) + ":" + FormatShape(); }
Status MatmulProblem::Validate() const {
  BC_RETURN_IF_ERROR(CheckRange(kMatmulFields, {m, n, k}));
  return CheckElems({{m, k}, {k, n}, {m, n}});
}

std::string ScatterAddProblem::FormatShape() const { return FormatFields(kScatterFields, {n, d}); }
std::string ScatterAddProblem::Format() const {
  return std::string("scatter_add:") + DataTypeName(dtype) + ":" + FormatShape();
}
Status ScatterAddProblem::Validate() const {
  BC_RETURN_IF_ERROR(CheckRange(kScatterFields, {n, d}));
  return CheckElems({{n}, {d}});
}

std::string FormatProblem(const Problem& p) {
  return std::visit([](const auto& q) { return q.Format(); }, p);
}
std::string FormatShape(const Problem& p) {
  return std::visit([](const auto& q) { return q.FormatShape(); }, p);
}
double ProblemGflop(const Problem& p) {
  return std::visit([](const auto& q) { return q.gflop(); }, p);
}
int64_t AccumulationLength(const Problem& p) {
  return std::visit([](const auto& q) { return q.accumulation_length(); }, p);
}
const char* OpName(const Problem& p) {
  static constexpr const char* kNames[] = {"conv2d", "matmul", "scatter_add"};
  return kNames[p.index()];
}
Direction ProblemDirection(const Problem& p) {
  const auto* conv = std::get_if<Conv2dProblem>(&p);
  return conv != nullptr ? conv->direction : Direction::kForward;
}
DataType ProblemDataType(const Problem& p) {
  return std::visit([](const auto& q) { return q.dtype; }, p);
}
bool IsPlainF32(const Problem& p) {
  const auto* conv = std::get_if<Conv2dProblem>(&p);
  return ProblemDataType(p) == DataType::kF32 && (conv == nullptr || conv->layout == Layout::kNchw);
}

Result<Conv2dProblem> ParseConv2dProblem(std::string_view repro) {
  std::vector<std::string_view> parts = Split(repro, ':');
  if ((parts.size() != 4 && parts.size() != 5) || parts[0] != "conv2d") {
    return Invalid(repro, "expected conv2d:DIRECTION:DTYPE[:LAYOUT]:SHAPE");
  }
  Conv2dProblem p;
  if (parts.size() == 5) {
    if (parts[3] == "nhwc") {
      p.layout = Layout::kNhwc;
    } else if (parts[3] != "nchw") {
      return Invalid(repro, "unknown layout '" + std::string(parts[3]) + "' (nchw, nhwc)");
    }
    parts.erase(parts.begin() + 3);
  }
  if (parts[1] == "fwd") {
    p.direction = Direction::kForward;
  } else if (parts[1] == "bwd_data") {
    p.direction = Direction::kBackwardData;
  } else if (parts[1] == "bwd_weights") {
    p.direction = Direction::kBackwardWeights;
  } else {
    return Invalid(repro, "unknown direction '" + std::string(parts[1]) + "' (fwd, bwd_data, bwd_weights)");
  }
  BC_RETURN_IF_ERROR(ParseDtype(repro, parts[2], &p.dtype));
  std::array<int64_t, 14> v = ConvValues(p);
  std::array<bool, 14> seen{};
  BC_RETURN_IF_ERROR(ParseFields(repro, parts[3], kConvFields, v, seen));
  for (size_t f : {0, 1, 2, 4, 5}) {
    if (!seen[f]) return Invalid(repro, std::string("missing field '") + kConvFields[f].key + "'");
  }
  // Square defaults, as benchdnn and PyTorch's int arguments do.
  for (auto [wide, tall] : {std::pair{3, 2}, {6, 5}, {8, 7}, {10, 9}, {12, 11}}) {
    if (!seen[wide]) v[wide] = v[tall];
  }
  p.mb = v[0], p.ic = v[1], p.ih = v[2], p.iw = v[3], p.oc = v[4], p.kh = v[5], p.kw = v[6];
  p.sh = v[7], p.sw = v[8], p.ph = v[9], p.pw = v[10], p.dh = v[11], p.dw = v[12], p.g = v[13];
  if (Status s = p.Validate(); !s.ok()) return Invalid(repro, s.message());
  return p;
}

namespace {

template <typename P, size_t N>
Result<Problem> ParseSimple(std::string_view repro, std::string_view op, const std::array<Field, N>& fields,
                            void (*assign)(P&, const std::array<int64_t, N>&)) {
  const std::vector<std::string_view> parts = Split(repro, ':');
  if (parts.size() != 3 || parts[0] != op) return Invalid(repro, "expected " + std::string(op) + ":DTYPE:SHAPE");
  DataType dtype = DataType::kF32;
  BC_RETURN_IF_ERROR(ParseDtype(repro, parts[1], &dtype));
  std::array<int64_t, N> v{};
  std::array<bool, N> seen{};
  BC_RETURN_IF_ERROR(ParseFields(repro, parts[2], fields, v, seen));
  for (size_t f = 0; f < N; ++f) {
    if (!seen[f]) return Invalid(repro, std::string("missing field '") + fields[f].key + "'");
  }
  P p;
  p.dtype = dtype;
  assign(p, v);
  if (Status s = p.Validate(); !s.ok()) return Invalid(repro, s.message());
  return Problem(p);
}

}  // namespace

Result<Problem> ParseProblem(std::string_view repro) {
  const std::string_view op = repro.substr(0, repro.find(':'));
  if (op == "conv2d") {
    Result<Conv2dProblem> conv = ParseConv2dProblem(repro);
    if (!conv.ok()) return conv.status();
    return Problem(conv.value());
  }
  if (op == "matmul") {
    return ParseSimple<MatmulProblem, 3>(repro, op, kMatmulFields, [](MatmulProblem& p, const std::array<int64_t, 3>& v) {
      p.m = v[0], p.n = v[1], p.k = v[2];
    });
  }
  if (op == "scatter_add") {
    return ParseSimple<ScatterAddProblem, 2>(repro, op, kScatterFields,
                                             [](ScatterAddProblem& p, const std::array<int64_t, 2>& v) {
                                               p.n = v[0], p.d = v[1];
                                             });
  }
  return Invalid(repro, "unknown operation '" + std::string(op) + "' (conv2d, matmul, scatter_add)");
}

}  // namespace bc
