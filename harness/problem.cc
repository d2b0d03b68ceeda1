#include "harness/problem.h"

#include <array>
#include <cctype>
#include <charconv>
#include <limits>
#include <optional>
#include <type_traits>

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

namespace {

// User-facing: the message alone, without the site BC_RETURN_IF_ERROR adds.
#define BC_RETURN_PLAIN(expr)       \
  do {                              \
    ::bc::Status bc_s_ = (expr);    \
    if (!bc_s_.ok()) return bc_s_;  \
  } while (0)

Status Invalid(std::string_view repro, const std::string& what) {
  return Status(StatusCode::kInvalidArgument, "problem '" + std::string(repro) + "': " + what);
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

template <typename Enum, size_t N>
Status ParseName(std::string_view repro, std::string_view what, std::string_view text,
                 const std::array<Enum, N>& values, const char* (*name)(Enum), Enum* out) {
  std::string known;
  for (Enum v : values) {
    if (text == name(v)) {
      *out = v;
      return Status::Ok();
    }
    known += (known.empty() ? "" : ", ") + std::string(name(v));
  }
  return Invalid(repro, "unknown " + std::string(what) + " '" + std::string(text) + "' (" + known + ")");
}

// Calls f with a default problem of the operation named `op` (its type
// carries the operation's traits); false when no operation has that name.
template <typename F>
bool WithOp(std::string_view op, F&& f) {
  return [&]<size_t... I>(std::index_sequence<I...>) {
    return ((op == std::variant_alternative_t<I, Problem>::kName
                 ? (f(std::variant_alternative_t<I, Problem>{}), true)
                 : false) ||
            ...);
  }(std::make_index_sequence<std::variant_size_v<Problem>>());
}

Status UnknownOp(std::string_view repro, std::string_view op) {
  std::string known;
  for (std::string_view name : OpNames()) known += (known.empty() ? "" : ", ") + std::string(name);
  return Invalid(repro, "unknown operation '" + std::string(op) + "' (" + known + ")");
}

template <typename P>
std::string FormatFields(const P& p) {
  std::string s;
  for (const Field<P>& f : P::Fields()) s += f.key + std::to_string(p.*f.member);
  return s;
}

template <typename P>
std::string FormatOne(const P& p) {
  std::string s(P::kName);
  if constexpr (P::kDirections) s += std::string(":") + DirectionName(p.direction);
  s += std::string(":") + DataTypeName(p.dtype) + ":";
  if constexpr (P::kLayouts) {
    if (p.layout != Layout::kNchw) s += std::string(LayoutName(p.layout)) + ":";
  }
  return s + FormatFields(p);
}

template <typename P>
Status ValidateOne(const P& p) {
  for (const Field<P>& f : P::Fields()) {
    const int64_t v = p.*f.member;
    if (v < 0 || (v == 0 && !f.may_be_zero)) {
      return Status(StatusCode::kInvalidArgument, std::string(f.key) + " must be " +
                                                      (f.may_be_zero ? "non-negative" : "positive") + ", got " +
                                                      std::to_string(v));
    }
    if (v > std::numeric_limits<int32_t>::max()) {
      return Status(StatusCode::kInvalidArgument, std::string(f.key) + " is too large: " + std::to_string(v));
    }
  }
  BC_RETURN_PLAIN(p.CheckShape());
  for (const TensorDecl& t : p.Tensors()) {
    int64_t n = 1;
    for (int64_t d : t.dims) {
      if (__builtin_mul_overflow(n, d, &n) || n > kMaxTensorElems) {
        return Status(StatusCode::kInvalidArgument,
                      "a tensor would exceed " + std::to_string(kMaxTensorElems) + " elements");
      }
    }
  }
  return Status::Ok();
}

// Reads "key<digits>..." into p's fields, then the defaults of those left out.
template <typename P>
Status ParseFields(std::string_view repro, std::string_view shape, P& p) {
  constexpr auto fields = P::Fields();
  std::array<bool, fields.size()> seen{};
  size_t i = 0;
  while (i < shape.size()) {
    size_t key_end = i;
    while (key_end < shape.size() && std::isalpha(static_cast<unsigned char>(shape[key_end]))) ++key_end;
    const std::string_view key = shape.substr(i, key_end - i);
    size_t field = fields.size();
    for (size_t f = 0; f < fields.size(); ++f) {
      if (key == fields[f].key) field = f;
    }
    if (field == fields.size()) return Invalid(repro, "unknown field '" + std::string(key) + "'");
    if (seen[field]) return Invalid(repro, "field '" + std::string(key) + "' given twice");
    seen[field] = true;
    auto [end, ec] = std::from_chars(shape.data() + key_end, shape.data() + shape.size(), p.*fields[field].member);
    if (ec != std::errc() || end == shape.data() + key_end) {
      return Invalid(repro, "field '" + std::string(key) + "' needs a number");
    }
    i = static_cast<size_t>(end - shape.data());
  }
  for (size_t f = 0; f < fields.size(); ++f) {
    if (seen[f]) continue;
    if (fields[f].required) return Invalid(repro, std::string("missing field '") + fields[f].key + "'");
    p.*fields[f].member = fields[f].square_of >= 0 ? p.*fields[fields[f].square_of].member : fields[f].fallback;
  }
  return Status::Ok();
}

// NAME[:DIRECTION]:DTYPE[:LAYOUT]:SHAPE, NAME already matched.
template <typename P>
Result<Problem> ParseOne(std::string_view repro) {
  std::vector<std::string_view> parts = Split(repro, ':');
  const size_t want = 3 + (P::kDirections ? 1 : 0);
  const std::string syntax = std::string(P::kName) + (P::kDirections ? ":DIRECTION" : "") + ":DTYPE" +
                             (P::kLayouts ? "[:LAYOUT]" : "") + ":SHAPE";
  if (parts.size() != want && !(P::kLayouts && parts.size() == want + 1)) return Invalid(repro, "expected " + syntax);
  P p;
  size_t at = 1;
  if constexpr (P::kDirections) {
    BC_RETURN_PLAIN(ParseName(repro, "direction", parts[at++], kAllDirections, DirectionName, &p.direction));
  }
  BC_RETURN_PLAIN(ParseName(repro, "data type", parts[at++], kAllDataTypes, DataTypeName, &p.dtype));
  if constexpr (P::kLayouts) {
    if (parts.size() == want + 1) BC_RETURN_PLAIN(ParseName(repro, "layout", parts[at++], kAllLayouts, LayoutName, &p.layout));
  }
  BC_RETURN_PLAIN(ParseFields(repro, parts[at], p));
  if (Status s = ValidateOne(p); !s.ok()) return Invalid(repro, s.message());
  return Problem(p);
}

template <typename P>
constexpr bool HasBoundLength = requires(const P& p) { p.bound_length(); };

template <size_t... I>
std::vector<std::string_view> Names(std::index_sequence<I...>) {
  return {std::variant_alternative_t<I, Problem>::kName...};
}

}  // namespace

std::string FormatProblem(const Problem& p) {
  return std::visit([](const auto& q) { return FormatOne(q); }, p);
}
std::string FormatShape(const Problem& p) {
  return std::visit([](const auto& q) { return FormatFields(q); }, p);
}
std::vector<std::string_view> OpNames() { return Names(std::make_index_sequence<std::variant_size_v<Problem>>()); }
const char* OpName(const Problem& p) {
  return std::visit([](const auto& q) { return std::decay_t<decltype(q)>::kName.data(); }, p);
}
Direction ProblemDirection(const Problem& p) {
  return std::visit(
      [](const auto& q) {
        if constexpr (std::decay_t<decltype(q)>::kDirections) return q.direction;
        return Direction::kForward;
      },
      p);
}
DataType ProblemDataType(const Problem& p) {
  return std::visit([](const auto& q) { return q.dtype; }, p);
}
Layout ProblemLayout(const Problem& p) {
  return std::visit(
      [](const auto& q) {
        if constexpr (std::decay_t<decltype(q)>::kLayouts) return q.layout;
        return Layout::kNchw;
      },
      p);
}
bool IsPlainF32(const Problem& p) {
  return ProblemDataType(p) == DataType::kF32 && ProblemLayout(p) == Layout::kNchw;
}
double ProblemGflop(const Problem& p) {
  return std::visit([](const auto& q) { return q.gflop(); }, p);
}
int64_t AccumulationLength(const Problem& p) {
  return std::visit([](const auto& q) { return q.accumulation_length(); }, p);
}
int64_t BoundLength(const Problem& p) {
  return std::visit(
      [](const auto& q) {
        if constexpr (HasBoundLength<std::decay_t<decltype(q)>>) return q.bound_length();
        return q.accumulation_length();
      },
      p);
}
std::vector<TensorDecl> TensorsOf(const Problem& p) {
  return std::visit([](const auto& q) { return q.Tensors(); }, p);
}
std::array<std::string_view, 2> OperandsOf(const Problem& p) {
  const std::array<const char*, 2> roles = std::visit([](const auto& q) { return q.Operands(); }, p);
  return {roles[0] != nullptr ? roles[0] : "", roles[1] != nullptr ? roles[1] : ""};
}
std::string OutputRole(const Problem& p) {
  for (const TensorDecl& t : TensorsOf(p)) {
    if (!t.input) return t.role;
  }
  return "";
}
void RunReference(const Problem& p, Buffers& b, bool racy) {
  std::visit([&](const auto& q) { q.Reference(b, racy); }, p);
}
Status ValidateProblem(const Problem& p) {
  return std::visit([](const auto& q) { return ValidateOne(q); }, p);
}

Result<Problem> ParseProblem(std::string_view repro) {
  const std::string_view op = repro.substr(0, repro.find(':'));
  std::optional<Result<Problem>> parsed;
  if (!WithOp(op, [&](auto q) { parsed = ParseOne<decltype(q)>(repro); })) return UnknownOp(repro, op);
  return *std::move(parsed);
}

Result<Problem> ProblemFromShape(std::string_view shape, std::string_view direction, std::string_view dtype,
                                 std::string_view layout) {
  // A bare shape is a convolution's: the specs' shorthand.
  const size_t colon = shape.find(':');
  const std::string_view op = colon == std::string_view::npos ? std::string_view(Conv2dProblem::kName)
                                                              : shape.substr(0, colon);
  const std::string_view fields = colon == std::string_view::npos ? shape : shape.substr(colon + 1);
  std::string repro(op);
  bool directions = false, layouts = false;
  if (!WithOp(op, [&](auto q) {
        directions = decltype(q)::kDirections;
        layouts = decltype(q)::kLayouts;
      })) {
    return UnknownOp(shape, op);
  }
  if (directions) {
    repro += ":" + std::string(direction);
  } else if (direction != "fwd") {
    return Status(StatusCode::kInvalidArgument, std::string(op) + " has no direction " + std::string(direction) + " (only fwd)");
  }
  repro += ":" + std::string(dtype);
  if (layouts) {
    if (layout != "nchw") repro += ":" + std::string(layout);
  } else if (layout != "nchw") {
    return Status(StatusCode::kInvalidArgument, std::string(op) + " has no layout " + std::string(layout));
  }
  return ParseProblem(repro + ":" + std::string(fields));
}

}  // namespace bc
