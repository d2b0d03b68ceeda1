#include "harness/tensor_data.h"

#include <xxh_x86dispatch.h>
#include <xxhash.h>

#include <cstdio>

namespace bc {
namespace {

// SplitMix64 (Steele, Lea, Flood 2014): a counter-based generator, so element
// i's value needs no state from elements before it.
uint64_t SplitMix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

}  // namespace

void FillUniform(uint64_t seed, std::span<float> data) {
  const uint64_t base = SplitMix64(seed);
  for (size_t i = 0; i < data.size(); ++i) {
    // 24 random bits -> [0, 1) exactly representable in float, then [-1, 1).
    const uint64_t bits = SplitMix64(base + i) >> 40;
    data[i] = static_cast<float>(bits) * (2.0f / 16777216.0f) - 1.0f;
  }
}

void FillIndices(uint64_t seed, int64_t bound, std::span<int32_t> data) {
  const uint64_t base = SplitMix64(seed);
  for (size_t i = 0; i < data.size(); ++i) {
    data[i] = static_cast<int32_t>(SplitMix64(base + i) % static_cast<uint64_t>(bound));
  }
}

// The dispatching entry point picks SSE2, AVX2 or AVX-512 at run time; the
// hash is the same XXH3-64 on every path.
uint64_t Digest(std::span<const float> data) { return XXH3_64bits_dispatch(data.data(), data.size_bytes()); }

std::string DigestHex(uint64_t digest) {
  char buf[17];
  std::snprintf(buf, sizeof(buf), "%016llx", static_cast<unsigned long long>(digest));
  return buf;
}

uint64_t TensorSeed(uint64_t case_seed, std::string_view tensor) {
  return XXH3_64bits_withSeed(tensor.data(), tensor.size(), case_seed);
}

}  // namespace bc
