// Seeded input data and output digests.
//
// FillUniform writes values in [-1, 1) that depend only on (seed, index), so a
// buffer is the same on every machine and thread count, and random enough that
// a change of accumulation order changes the result's bits. Digest is XXH3-64
// of the raw bytes: two outputs are bitwise identical exactly when (up to
// hash collisions) their digests are.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace bc {

void FillUniform(uint64_t seed, std::span<float> data);
// Indices uniform in [0, bound), from the same generator.
void FillIndices(uint64_t seed, int64_t bound, std::span<int32_t> data);

uint64_t Digest(std::span<const float> data);
// 16 lowercase hex digits.
std::string DigestHex(uint64_t digest);

// A seed for one named tensor of one case, so inputs differ between tensors.
uint64_t TensorSeed(uint64_t case_seed, std::string_view tensor);

}  // namespace bc
