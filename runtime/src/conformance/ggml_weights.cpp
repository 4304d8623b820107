// Random ggml blocks for the matmul cases: random bytes (every grid index,
// sign and sub-scale a block can hold), with the f16 / E8M0 scales set to
// finite values of a sensible size, so a case's weights are neither NaN nor
// 1e30. The reference weights are the library's dequantization of them.
#include "matmul_problem.h"

#include <ggml/ggml_blocks.h>

#include <fmt/format.h>

#include <cmath>
#include <stdexcept>
#include <vector>

namespace glmrt::conformance {
namespace {

/// A binary16 of either sign with magnitude in [2^-7, 2^-4): the size of a
/// real block scale for these codes.
uint16_t random_scale_f16(std::mt19937_64& random) {
  std::uniform_int_distribution<int> exponent(8, 10), mantissa(0, 1023), sign(0, 1);
  return static_cast<uint16_t>((sign(random) << 15) | (exponent(random) << 10) | mantissa(random));
}

void put_le16(uint8_t* at, uint16_t value) {
  at[0] = static_cast<uint8_t>(value);
  at[1] = static_cast<uint8_t>(value >> 8);
}

/// Offsets of the f16 scales in one block of `ggml_type` (ggml-common.h).
std::vector<int> f16_scale_offsets(uint32_t ggml_type) {
  switch (ggml_type) {
    case GLMRT_GGML_Q4_1:
    case GLMRT_GGML_Q5_1:
    case GLMRT_GGML_Q4_K:
    case GLMRT_GGML_Q5_K:
      return {0, 2};  // d, then m / dmin
    case GLMRT_GGML_Q2_K:
      return {80, 82};
    case GLMRT_GGML_Q3_K:
      return {108};
    case GLMRT_GGML_Q6_K:
      return {208};
    case GLMRT_GGML_IQ1_M:
    case GLMRT_GGML_MXFP4:
      return {};  // scale bits set below
    default:
      return {0};
  }
}

/// Makes the block at `block` (random bytes) hold finite, moderate scales.
void settle_scales(uint32_t ggml_type, uint8_t* block, std::mt19937_64& random) {
  for (const int offset : f16_scale_offsets(ggml_type))
    put_le16(block + offset, random_scale_f16(random));
  if (ggml_type == GLMRT_GGML_MXFP4) {
    std::uniform_int_distribution<int> exponent(120, 124);  // 2^-7 .. 2^-3
    block[0] = static_cast<uint8_t>(exponent(random));
  } else if (ggml_type == GLMRT_GGML_IQ1_M) {
    // The f16 scale is the top nibbles of the four le16 scale words (bytes 48-55).
    const uint16_t scale = random_scale_f16(random);
    for (int k = 0; k < 4; ++k) {
      uint8_t& high = block[48 + 2 * k + 1];
      high = static_cast<uint8_t>((high & 0x0F) | (((scale >> (4 * k)) & 0xF) << 4));
    }
  }
}

}  // namespace

void MatmulProblem::fill_ggml_blocks(std::mt19937_64& random) {
  const uint32_t ggml_type = plugin::ggml_type_of(spec_.format.element_type);
  const plugin::GgmlTypeTraits traits = plugin::ggml_type_traits(ggml_type);
  const int64_t I = spec_.I, blocks = I / traits.block_values;
  if (I % traits.block_values != 0)
    throw std::invalid_argument(fmt::format("{}: I = {} is not whole {}-value blocks", spec_.name(),
                                            I, traits.block_values));
  ggml_values_.resize(static_cast<size_t>(spec_.O * I));
  ggml_block_max_.resize(ggml_values_.size());
  for (int64_t o = 0; o < spec_.O; ++o) {
    auto* row = reinterpret_cast<uint8_t*>(data_.data() + o * row_stride_);
    if (ggml_type == GLMRT_GGML_F16) {
      for (int64_t i = 0; i < I; ++i) {
        // Magnitudes 2^-3 .. 2: weights of a float layer.
        std::uniform_int_distribution<int> exponent(12, 15), mantissa(0, 1023), sign(0, 1);
        put_le16(row + 2 * i, static_cast<uint16_t>((sign(random) << 15) |
                                                    (exponent(random) << 10) | mantissa(random)));
      }
    } else {
      for (int64_t b = 0; b < blocks; ++b)
        settle_scales(ggml_type, row + b * traits.block_bytes, random);
    }
    float* values = ggml_values_.data() + o * I;
    if (!plugin_support::ggml::dequantize_row(ggml_type, row, I, values))
      throw std::logic_error(fmt::format("{}: the ggml library refused the row", spec_.name()));
    for (int64_t first = 0; first < I; first += traits.block_values) {
      float block_max = 0;
      for (int64_t i = first; i < first + traits.block_values; ++i)
        block_max = std::max(block_max, std::abs(values[i]));
      std::fill(ggml_block_max_.begin() + o * I + first,
                ggml_block_max_.begin() + o * I + first + traits.block_values, block_max);
    }
  }
}

}  // namespace glmrt::conformance
