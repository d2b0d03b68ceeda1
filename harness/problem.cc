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
    case Direction::kBackwardWeights: return "bwd_weights";
  }
  return "?";
}

const char* DataTypeName(DataType t) {
  switch (t) {
    case DataType::kF32: return "f32";
  }
  return "?";
}

int64_t Conv2dProblem::accumulation_length() const {
  return direction == Direction::kForward ? (ic / g) * kh * kw : mb * oh() * ow();
}

namespace {

struct Field {
  const char* key;
  int64_t Conv2dProblem::*member;
};
// Canonical order. Longer keys that share a prefix with shorter ones do not
// occur, so a greedy scan of letters then digits is unambiguous.
constexpr std::array<Field, 14> kFields = {{
    {"mb", &Conv2dProblem::mb}, {"ic", &Conv2dProblem::ic}, {"ih", &Conv2dProblem::ih},
    {"iw", &Conv2dProblem::iw}, {"oc", &Conv2dProblem::oc}, {"kh", &Conv2dProblem::kh},
    {"kw", &Conv2dProblem::kw}, {"sh", &Conv2dProblem::sh}, {"sw", &Conv2dProblem::sw},
    {"ph", &Conv2dProblem::ph}, {"pw", &Conv2dProblem::pw}, {"dh", &Conv2dProblem::dh},
    {"dw", &Conv2dProblem::dw}, {"g", &Conv2dProblem::g},
}};

Status Invalid(std::string_view repro, const std::string& what) {
  return Status(StatusCode::kInvalidArgument,
                "problem '" + std::string(repro) + "': " + what);
}

bool MulOverflows(int64_t a, int64_t b, int64_t* out) {
  return __builtin_mul_overflow(a, b, out);
}

}  // namespace

std::string Conv2dProblem::FormatShape() const {
  std::string s;
  for (const Field& f : kFields) s += f.key + std::to_string(this->*f.member);
  return s;
}

std::string Conv2dProblem::Format() const {
  return std::string("conv2d:") + DirectionName(direction) + ":" + DataTypeName(dtype) + ":" +
         FormatShape();
}

Status Conv2dProblem::Validate() const {
  for (const Field& f : kFields) {
    const int64_t v = this->*f.member;
    const bool may_be_zero = f.member == &Conv2dProblem::ph || f.member == &Conv2dProblem::pw;
    if (v < 0 || (v == 0 && !may_be_zero)) {
      return Status(StatusCode::kInvalidArgument,
                    std::string(f.key) + " must be " + (may_be_zero ? "non-negative" : "positive") +
                        ", got " + std::to_string(v));
    }
    if (v > std::numeric_limits<int32_t>::max()) {
      return Status(StatusCode::kInvalidArgument, std::string(f.key) + " is too large: " + std::to_string(v));
    }
  }
  if (ic % g != 0 || oc % g != 0) {
    return Status(StatusCode::kInvalidArgument, "groups g" + std::to_string(g) +
                                                    " must divide ic" + std::to_string(ic) +
                                                    " and oc" + std::to_string(oc));
  }
  if (oh() < 1 || ow() < 1) {
    return Status(StatusCode::kInvalidArgument, "kernel does not fit the padded input");
  }
  const std::array<std::array<int64_t, 4>, 3> tensors = {{
      {mb, ic, ih, iw}, {oc, ic / g, kh, kw}, {mb, oc, oh(), ow()}}};
  for (const auto& dims : tensors) {
    int64_t n = 1;
    for (int64_t d : dims) {
      if (MulOverflows(n, d, &n) || n > kMaxTensorElems) {
        return Status(StatusCode::kInvalidArgument,
                      "a tensor would exceed " + std::to_string(kMaxTensorElems) + " elements");
      }
    }
  }
  return Status::Ok();
}

Result<Conv2dProblem> ParseConv2dProblem(std::string_view repro) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (true) {
    const size_t colon = repro.find(':', start);
    parts.push_back(repro.substr(start, colon == std::string_view::npos ? colon : colon - start));
    if (colon == std::string_view::npos) break;
    start = colon + 1;
  }
  if (parts.size() != 4 || parts[0] != "conv2d") {
    return Invalid(repro, "expected conv2d:DIRECTION:DTYPE:SHAPE");
  }
  Conv2dProblem p;
  if (parts[1] == "fwd") {
    p.direction = Direction::kForward;
  } else if (parts[1] == "bwd_weights") {
    p.direction = Direction::kBackwardWeights;
  } else {
    return Invalid(repro, "unknown direction '" + std::string(parts[1]) + "' (fwd, bwd_weights)");
  }
  if (parts[2] != "f32") return Invalid(repro, "unknown data type '" + std::string(parts[2]) + "' (f32)");

  std::array<bool, kFields.size()> seen{};
  std::string_view shape = parts[3];
  size_t i = 0;
  while (i < shape.size()) {
    size_t key_end = i;
    while (key_end < shape.size() && std::isalpha(static_cast<unsigned char>(shape[key_end]))) ++key_end;
    const std::string_view key = shape.substr(i, key_end - i);
    size_t field = kFields.size();
    for (size_t f = 0; f < kFields.size(); ++f) {
      if (key == kFields[f].key) field = f;
    }
    if (field == kFields.size()) return Invalid(repro, "unknown field '" + std::string(key) + "'");
    if (seen[field]) return Invalid(repro, "field '" + std::string(key) + "' given twice");
    seen[field] = true;
    int64_t value = 0;
    auto [end, ec] = std::from_chars(shape.data() + key_end, shape.data() + shape.size(), value);
    if (ec != std::errc() || end == shape.data() + key_end) {
      return Invalid(repro, "field '" + std::string(key) + "' needs a number");
    }
    p.*kFields[field].member = value;
    i = static_cast<size_t>(end - shape.data());
  }
  for (const char* required : {"mb", "ic", "ih", "oc", "kh"}) {
    bool found = false;
    for (size_t f = 0; f < kFields.size(); ++f) {
      if (std::string_view(kFields[f].key) == required) found = seen[f];
    }
    if (!found) return Invalid(repro, std::string("missing field '") + required + "'");
  }
  // Square defaults, as benchdnn and PyTorch's int arguments do.
  if (!seen[3]) p.iw = p.ih;
  if (!seen[6]) p.kw = p.kh;
  if (!seen[8]) p.sw = p.sh;
  if (!seen[10]) p.pw = p.ph;
  if (!seen[12]) p.dw = p.dh;
  if (Status s = p.Validate(); !s.ok()) return Invalid(repro, s.message());
  return p;
}

}  // namespace bc
