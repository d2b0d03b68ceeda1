#include "harness/buffers.h"

#include "harness/tensor_data.h"

namespace bc {

Buffers Buffers::For(const Problem& p) {
  Buffers b;
  if (const auto* c = std::get_if<Conv2dProblem>(&p)) {
    b.src.resize(static_cast<size_t>(c->src_elems()));
    b.wei.resize(static_cast<size_t>(c->wei_elems()));
    b.dst.resize(static_cast<size_t>(c->dst_elems()));
  } else if (const auto* m = std::get_if<MatmulProblem>(&p)) {
    b.src.resize(static_cast<size_t>(m->m * m->k));
    b.wei.resize(static_cast<size_t>(m->k * m->n));
    b.dst.resize(static_cast<size_t>(m->m * m->n));
  } else if (const auto* s = std::get_if<ScatterAddProblem>(&p)) {
    b.src.resize(static_cast<size_t>(s->n));
    b.index.resize(static_cast<size_t>(s->n));
    b.dst.resize(static_cast<size_t>(s->d));
  }
  return b;
}

std::vector<float>& Buffers::Output(const Problem& p) {
  switch (ProblemDirection(p)) {
    case Direction::kBackwardData: return src;
    case Direction::kBackwardWeights: return wei;
    case Direction::kForward: break;
  }
  return dst;
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
