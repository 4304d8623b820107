// first_non_finite: whether ggml blocks dequantize to finite values, without
// dequantizing them. Every type here scales small integers or lattice points
// (at most a few thousand in magnitude) by f16 fields, so a block's values
// are finite exactly when its f16 fields are (65504 times them stays far
// below FLT_MAX); only MXFP4's power-of-two scale can overflow with finite
// bits. A block that fails that test is dequantized to find the value.
#include "ggml/ggml_blocks.h"
#include "ggml/ggml_scalars.h"

#include <array>
#include <cmath>

namespace glmrt::plugin_support::ggml {

namespace {

constexpr bool finite_f16(const uint8_t* bytes) {
  return (load_le16(bytes) & 0x7c00) != 0x7c00;
}

// True when every value of `b` is surely finite.
bool scales_finite(const BlockQ4_0& b) {
  return finite_f16(b.d);
}
bool scales_finite(const BlockQ4_1& b) {
  return finite_f16(b.d) && finite_f16(b.m);
}
bool scales_finite(const BlockQ5_0& b) {
  return finite_f16(b.d);
}
bool scales_finite(const BlockQ5_1& b) {
  return finite_f16(b.d) && finite_f16(b.m);
}
bool scales_finite(const BlockQ8_0& b) {
  return finite_f16(b.d);
}
bool scales_finite(const BlockIq4Nl& b) {
  return finite_f16(b.d);
}
// Half of 2^(e-127) times at most 12 (kValuesMxfp4) stays finite up to e = 252.
bool scales_finite(const BlockMxfp4& b) {
  return b.e <= 252;
}
bool scales_finite(const BlockQ2_K& b) {
  return finite_f16(b.d) && finite_f16(b.dmin);
}
bool scales_finite(const BlockQ3_K& b) {
  return finite_f16(b.d);
}
bool scales_finite(const BlockQ4_K& b) {
  return finite_f16(b.d) && finite_f16(b.dmin);
}
bool scales_finite(const BlockQ5_K& b) {
  return finite_f16(b.d) && finite_f16(b.dmin);
}
bool scales_finite(const BlockQ6_K& b) {
  return finite_f16(b.d);
}
bool scales_finite(const BlockIq4Xs& b) {
  return finite_f16(b.d);
}
bool scales_finite(const BlockIq2Xxs& b) {
  return finite_f16(b.d);
}
bool scales_finite(const BlockIq2Xs& b) {
  return finite_f16(b.d);
}
bool scales_finite(const BlockIq2S& b) {
  return finite_f16(b.d);
}
bool scales_finite(const BlockIq3Xxs& b) {
  return finite_f16(b.d);
}
bool scales_finite(const BlockIq3S& b) {
  return finite_f16(b.d);
}
bool scales_finite(const BlockIq1S& b) {
  return finite_f16(b.d);
}
bool scales_finite(const BlockIq1M& b) {
  // The f16 scale is the top nibbles of the four le16 sub-block scale words.
  uint16_t top = 0;
  for (int k = 0; k < 4; ++k)
    top |= static_cast<uint16_t>((load_le16(b.scales + 2 * k) >> 12) << (4 * k));
  return (top & 0x7c00) != 0x7c00;
}

template <class Block>
int64_t scan(const void* data, int64_t n_blocks) {
  const auto* blocks = static_cast<const Block*>(data);
  for (int64_t i = 0; i < n_blocks; ++i) {
    if (scales_finite(blocks[i])) continue;
    std::array<float, Block::kValues> values{};
    dequantize_blocks(std::span<const Block>(blocks + i, 1), values);
    for (int j = 0; j < Block::kValues; ++j)
      if (!std::isfinite(values[static_cast<size_t>(j)])) return i * Block::kValues + j;
  }
  return -1;
}

int64_t scan_f32(const void* data, int64_t n) {
  const auto* bytes = static_cast<const uint8_t*>(data);
  for (int64_t i = 0; i < n; ++i)
    if ((load_le32(bytes + 4 * i) & 0x7f800000u) == 0x7f800000u) return i;
  return -1;
}

template <uint16_t kExponent>
int64_t scan_16(const void* data, int64_t n) {
  const auto* bytes = static_cast<const uint8_t*>(data);
  for (int64_t i = 0; i < n; ++i)
    if ((load_le16(bytes + 2 * i) & kExponent) == kExponent) return i;
  return -1;
}

}  // namespace

int64_t first_non_finite(uint32_t ggml_type, const void* blocks, int64_t values) {
  const int64_t n = values / plugin::ggml_type_traits(ggml_type).block_values;
  switch (ggml_type) {
    case GLMRT_GGML_F32:
      return scan_f32(blocks, n);
    case GLMRT_GGML_F16:
      return scan_16<0x7c00>(blocks, n);
    case GLMRT_GGML_BF16:
      return scan_16<0x7f80>(blocks, n);
    case GLMRT_GGML_Q4_0:
      return scan<BlockQ4_0>(blocks, n);
    case GLMRT_GGML_Q4_1:
      return scan<BlockQ4_1>(blocks, n);
    case GLMRT_GGML_Q5_0:
      return scan<BlockQ5_0>(blocks, n);
    case GLMRT_GGML_Q5_1:
      return scan<BlockQ5_1>(blocks, n);
    case GLMRT_GGML_Q8_0:
      return scan<BlockQ8_0>(blocks, n);
    case GLMRT_GGML_IQ4_NL:
      return scan<BlockIq4Nl>(blocks, n);
    case GLMRT_GGML_MXFP4:
      return scan<BlockMxfp4>(blocks, n);
    case GLMRT_GGML_Q2_K:
      return scan<BlockQ2_K>(blocks, n);
    case GLMRT_GGML_Q3_K:
      return scan<BlockQ3_K>(blocks, n);
    case GLMRT_GGML_Q4_K:
      return scan<BlockQ4_K>(blocks, n);
    case GLMRT_GGML_Q5_K:
      return scan<BlockQ5_K>(blocks, n);
    case GLMRT_GGML_Q6_K:
      return scan<BlockQ6_K>(blocks, n);
    case GLMRT_GGML_IQ4_XS:
      return scan<BlockIq4Xs>(blocks, n);
    case GLMRT_GGML_IQ2_XXS:
      return scan<BlockIq2Xxs>(blocks, n);
    case GLMRT_GGML_IQ2_XS:
      return scan<BlockIq2Xs>(blocks, n);
    case GLMRT_GGML_IQ2_S:
      return scan<BlockIq2S>(blocks, n);
    case GLMRT_GGML_IQ3_XXS:
      return scan<BlockIq3Xxs>(blocks, n);
    case GLMRT_GGML_IQ3_S:
      return scan<BlockIq3S>(blocks, n);
    case GLMRT_GGML_IQ1_S:
      return scan<BlockIq1S>(blocks, n);
    case GLMRT_GGML_IQ1_M:
      return scan<BlockIq1M>(blocks, n);
    default:
      return -2;
  }
}

}  // namespace glmrt::plugin_support::ggml
