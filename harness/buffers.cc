#include "harness/buffers.h"

#include <stdexcept>

#include "harness/tensor_data.h"

namespace bc {

namespace {

template <typename Map>
auto& Find(Map& map, std::string_view role) {
  auto it = map.find(role);
  if (it == map.end()) throw std::out_of_range("no tensor '" + std::string(role) + "' in this problem's buffers");
  return it->second;
}

}  // namespace

Buffers Buffers::For(const Problem& p) {
  Buffers b;
  for (const TensorDecl& t : TensorsOf(p)) {
    if (t.type == ElemType::kIndex) {
      b.index_[t.role].resize(static_cast<size_t>(t.elems()));
    } else {
      b.f32_[t.role].resize(static_cast<size_t>(t.elems()));
    }
  }
  return b;
}

int64_t Buffers::BytesFor(const Problem& p) {
  int64_t bytes = 0;
  for (const TensorDecl& t : TensorsOf(p)) {
    bytes += t.elems() * static_cast<int64_t>(t.type == ElemType::kIndex ? sizeof(int32_t) : sizeof(float));
  }
  return bytes;
}

std::vector<float>& Buffers::operator[](std::string_view role) { return Find(f32_, role); }
const std::vector<float>& Buffers::operator[](std::string_view role) const { return Find(f32_, role); }
std::vector<int32_t>& Buffers::indices(std::string_view role) { return Find(index_, role); }
const std::vector<int32_t>& Buffers::indices(std::string_view role) const { return Find(index_, role); }

std::vector<float>& Buffers::Output(const Problem& p) { return (*this)[OutputRole(p)]; }

std::pair<const std::vector<float>*, const std::vector<float>*> Buffers::Operands(const Problem& p) const {
  const auto [a, w] = OperandsOf(p);
  return {&(*this)[a], w.empty() ? nullptr : &(*this)[w]};
}

uint64_t ProblemSeed(const Problem& p) { return TensorSeed(0x62636b /* "bck" */, FormatProblem(p)); }

void FillInputs(const Problem& p, Buffers& b) {
  const uint64_t seed = ProblemSeed(p);
  for (const TensorDecl& t : TensorsOf(p)) {
    if (!t.input) continue;
    const uint64_t tensor_seed = TensorSeed(seed, t.seed.empty() ? t.role : t.seed);
    if (t.type == ElemType::kIndex) {
      FillIndices(tensor_seed, t.index_bound, b.indices(t.role));
      continue;
    }
    std::vector<float>& v = b[t.role];
    FillUniform(tensor_seed, v);
    // Inputs an fp16 engine can hold exactly, so the fp64 reference is its oracle.
    if (ProblemDataType(p) == DataType::kF16) {
      for (float& x : v) x = RoundToHalf(x);
    }
  }
}

}  // namespace bc
