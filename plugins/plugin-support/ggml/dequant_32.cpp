// Dequantization of the unquantized types and the 32-value block types, as
// ggml/src/ggml-quants.c's dequantize_row_q4_0, _q4_1, _q5_0, _q5_1, _q8_0,
// _iq4_nl and _mxfp4 (and ggml.c's fp16/bf16 row conversions) compute it.
// Each float is formed by the same operations in the same order as ggml's
// (e.g. q * d + m, never fused: the library builds with -ffp-contract=off), so
// the results are equal bit for bit.
#include "ggml/ggml_blocks.h"
#include "ggml/ggml_grids.h"
#include "ggml/ggml_scalars.h"

#include <bit>
#include <cstddef>

namespace glmrt::plugin_support::ggml {

void dequantize_blocks(std::span<const BlockF32> blocks, std::span<float> out) {
  for (size_t i = 0; i < blocks.size(); ++i) {
    out[i] = std::bit_cast<float>(load_le32(blocks[i].bits));
  }
}

void dequantize_blocks(std::span<const BlockF16> blocks, std::span<float> out) {
  for (size_t i = 0; i < blocks.size(); ++i) out[i] = fp16_to_f32(load_le16(blocks[i].bits));
}

void dequantize_blocks(std::span<const BlockBF16> blocks, std::span<float> out) {
  for (size_t i = 0; i < blocks.size(); ++i) out[i] = bf16_to_f32(load_le16(blocks[i].bits));
}

void dequantize_blocks(std::span<const BlockQ4_0> blocks, std::span<float> out) {
  float* y = out.data();
  for (const BlockQ4_0& block : blocks) {
    const float d = fp16_to_f32(load_le16(block.d));
    for (int j = 0; j < 16; ++j) {
      y[j] = static_cast<float>((block.qs[j] & 0x0f) - 8) * d;
      y[j + 16] = static_cast<float>((block.qs[j] >> 4) - 8) * d;
    }
    y += BlockQ4_0::kValues;
  }
}

void dequantize_blocks(std::span<const BlockQ4_1> blocks, std::span<float> out) {
  float* y = out.data();
  for (const BlockQ4_1& block : blocks) {
    const float d = fp16_to_f32(load_le16(block.d));
    const float m = fp16_to_f32(load_le16(block.m));
    for (int j = 0; j < 16; ++j) {
      y[j] = static_cast<float>(block.qs[j] & 0x0f) * d + m;
      y[j + 16] = static_cast<float>(block.qs[j] >> 4) * d + m;
    }
    y += BlockQ4_1::kValues;
  }
}

namespace {

/// Value j's fifth bit (j < 16) and value j + 16's, each in place 0x10.
constexpr int fifth_bit_low(uint32_t qh, int j) {
  return static_cast<int>(((qh >> j) << 4) & 0x10u);
}
constexpr int fifth_bit_high(uint32_t qh, int j) {
  return static_cast<int>((qh >> (j + 12)) & 0x10u);
}

}  // namespace

void dequantize_blocks(std::span<const BlockQ5_0> blocks, std::span<float> out) {
  float* y = out.data();
  for (const BlockQ5_0& block : blocks) {
    const float d = fp16_to_f32(load_le16(block.d));
    const uint32_t qh = load_le32(block.qh);
    for (int j = 0; j < 16; ++j) {
      const int low = ((block.qs[j] & 0x0f) | fifth_bit_low(qh, j)) - 16;
      const int high = ((block.qs[j] >> 4) | fifth_bit_high(qh, j)) - 16;
      y[j] = static_cast<float>(low) * d;
      y[j + 16] = static_cast<float>(high) * d;
    }
    y += BlockQ5_0::kValues;
  }
}

void dequantize_blocks(std::span<const BlockQ5_1> blocks, std::span<float> out) {
  float* y = out.data();
  for (const BlockQ5_1& block : blocks) {
    const float d = fp16_to_f32(load_le16(block.d));
    const float m = fp16_to_f32(load_le16(block.m));
    const uint32_t qh = load_le32(block.qh);
    for (int j = 0; j < 16; ++j) {
      const int low = (block.qs[j] & 0x0f) | fifth_bit_low(qh, j);
      const int high = (block.qs[j] >> 4) | fifth_bit_high(qh, j);
      y[j] = static_cast<float>(low) * d + m;
      y[j + 16] = static_cast<float>(high) * d + m;
    }
    y += BlockQ5_1::kValues;
  }
}

void dequantize_blocks(std::span<const BlockQ8_0> blocks, std::span<float> out) {
  float* y = out.data();
  for (const BlockQ8_0& block : blocks) {
    const float d = fp16_to_f32(load_le16(block.d));
    for (int j = 0; j < 32; ++j) y[j] = static_cast<float>(block.qs[j]) * d;
    y += BlockQ8_0::kValues;
  }
}

void dequantize_blocks(std::span<const BlockIq4Nl> blocks, std::span<float> out) {
  float* y = out.data();
  for (const BlockIq4Nl& block : blocks) {
    const float d = fp16_to_f32(load_le16(block.d));
    for (int j = 0; j < 16; ++j) {
      y[j] = d * static_cast<float>(kValuesIq4nl[block.qs[j] & 0x0f]);
      y[j + 16] = d * static_cast<float>(kValuesIq4nl[block.qs[j] >> 4]);
    }
    y += BlockIq4Nl::kValues;
  }
}

void dequantize_blocks(std::span<const BlockMxfp4> blocks, std::span<float> out) {
  float* y = out.data();
  for (const BlockMxfp4& block : blocks) {
    const float d = e8m0_to_f32_half(block.e);
    for (int j = 0; j < 16; ++j) {
      y[j] = static_cast<float>(kValuesMxfp4[block.qs[j] & 0x0f]) * d;
      y[j + 16] = static_cast<float>(kValuesMxfp4[block.qs[j] >> 4]) * d;
    }
    y += BlockMxfp4::kValues;
  }
}

}  // namespace glmrt::plugin_support::ggml
