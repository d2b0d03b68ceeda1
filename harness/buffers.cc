#include "harness/buffers.h"

#include "harness/tensor_data.h"

namespace bc {

namespace {

struct Elems {
  int64_t src = 0, wei = 0, dst = 0, index = 0;
};

Elems ElemsOf(const Problem& p) {
  if (const auto* c = std::get_if<Conv2dProblem>(&p)) return {c->src_elems(), c->wei_elems(), c->dst_elems(), 0};
  if (const auto* m = std::get_if<MatmulProblem>(&p)) return {m->m * m->k, m->k * m->n, m->m * m->n, 0};
  if (const auto* s = std::get_if<ScatterAddProblem>(&p)) return {s->n, 0, s->d, s->n};
  return {};
}

}  // namespace

Buffers Buffers::For(const Problem& p) {
  const Elems e = ElemsOf(p);
  Buffers b;
  b.src.resize(static_cast<size_t>(e.src));
  b.wei.resize(static_cast<size_t>(e.wei));
  b.dst.resize(static_cast<size_t>(e.dst));
  b.index.resize(static_cast<size_t>(e.index));
  return b;
}

int64_t Buffers::BytesFor(const Problem& p) {
  const Elems e = ElemsOf(p);
  return (e.src + e.wei + e.dst) * static_cast<int64_t>(sizeof(float)) + e.index * static_cast<int64_t>(sizeof(int32_t));
}

std::vector<float>& Buffers::Output(const Problem& p) {
  switch (ProblemDirection(p)) {
    case Direction::kBackwardData: return src;
    case Direction::kBackwardWeights: return wei;
    case Direction::kForward: break;
  }
  return dst;
}

std::pair<const std::vector<float>*, const std::vector<float>*> Buffers::Operands(const Problem& p) const {
  if (std::holds_alternative<ScatterAddProblem>(p)) return {&src, nullptr};
  switch (ProblemDirection(p)) {
    case Direction::kForward: return {&src, &wei};
    case Direction::kBackwardData: return {&wei, &dst};
    case Direction::kBackwardWeights: return {&src, &dst};
  }
  return {&src, &wei};
}

uint64_t ProblemSeed(const Problem& p) { return TensorSeed(0x62636b /* "bck" */, FormatProblem(p)); }

void FillInputs(const Problem& p, Buffers& b) {
  const uint64_t seed = ProblemSeed(p);
  switch (ProblemDirection(p)) {
    case Direction::kForward:
      FillUniform(TensorSeed(seed, "src"), b.src);
      FillUniform(TensorSeed(seed, "wei"), b.wei);
      break;
    case Direction::kBackwardData:
      FillUniform(TensorSeed(seed, "wei"), b.wei);
      FillUniform(TensorSeed(seed, "diff_dst"), b.dst);
      break;
    case Direction::kBackwardWeights:
      FillUniform(TensorSeed(seed, "src"), b.src);
      FillUniform(TensorSeed(seed, "diff_dst"), b.dst);
      break;
  }
  if (ProblemDataType(p) == DataType::kF16) {
    // Inputs an fp16 engine can hold exactly, so the fp64 reference is its oracle.
    for (std::vector<float>* v : {&b.src, &b.wei, &b.dst}) {
      for (float& x : *v) x = RoundToHalf(x);
    }
  }
  if (!b.index.empty()) {
    const auto* s = std::get_if<ScatterAddProblem>(&p);
    FillIndices(TensorSeed(seed, "index"), s->d, b.index);
  }
}

}  // namespace bc
