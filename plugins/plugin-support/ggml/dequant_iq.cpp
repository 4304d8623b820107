// Dequantization of the lattice i-quants (IQ1_S, IQ1_M, IQ2_XXS, IQ2_XS,
// IQ2_S, IQ3_XXS, IQ3_S): each group of 8 or 4 values is an entry of a grid of
// ggml_grids.h, signed and scaled, as ggml/src/ggml-quants.c's
// dequantize_row_iq* compute it, in the same order of float operations, so
// the floats are equal bit for bit.
#include "ggml/ggml_blocks.h"
#include "ggml/ggml_grids.h"
#include "ggml/ggml_scalars.h"

namespace glmrt::plugin_support::ggml {

namespace {

constexpr float kIq1Delta = 0.125f;  // ggml's IQ1S_DELTA and IQ1M_DELTA

float sign_of(uint8_t signs, int j) {
  return (signs & kMaskIq2xs[j]) != 0 ? -1.f : 1.f;
}

/// Eight values: grid entry `entry` times `scale`, value j negated where bit j
/// of `signs` is set.
void signed_group(uint64_t entry, uint8_t signs, float scale, float* y) {
  for (int j = 0; j < 8; ++j) {
    y[j] = scale * static_cast<float>(grid_byte(entry, j)) * sign_of(signs, j);
  }
}

/// Eight values from two 4-value IQ3 grid entries.
void signed_pair(uint32_t first, uint32_t second, uint8_t signs, float scale, float* y) {
  for (int j = 0; j < 4; ++j) {
    y[j] = scale * static_cast<float>(grid_byte(first, j)) * sign_of(signs, j);
    y[j + 4] = scale * static_cast<float>(grid_byte(second, j)) * sign_of(signs, j + 4);
  }
}

/// Eight IQ1 values: (int8 grid value + delta) times `scale`.
void shifted_group(uint64_t entry, float delta, float scale, float* y) {
  for (int j = 0; j < 8; ++j) {
    const auto value = static_cast<int8_t>(grid_byte(entry, j));
    y[j] = scale * (static_cast<float>(value) + delta);
  }
}

}  // namespace

void dequantize_blocks(std::span<const BlockIq2Xxs> blocks, std::span<float> out) {
  float* y = out.data();
  for (const BlockIq2Xxs& block : blocks) {
    const float d = fp16_to_f32(load_le16(block.d));
    for (int ib32 = 0; ib32 < 8; ++ib32) {
      const uint8_t* indices = block.qs + 8 * ib32;
      const uint32_t signs_and_scale = load_le32(indices + 4);
      const float db = d * (0.5f + static_cast<float>(signs_and_scale >> 28)) * 0.25f;
      for (int l = 0; l < 4; ++l) {
        const uint8_t signs = kSignsIq2xs[(signs_and_scale >> (7 * l)) & 127];
        signed_group(kIq2xxsGrid[indices[l]], signs, db, y);
        y += 8;
      }
    }
  }
}

void dequantize_blocks(std::span<const BlockIq2Xs> blocks, std::span<float> out) {
  float* y = out.data();
  for (const BlockIq2Xs& block : blocks) {
    const float d = fp16_to_f32(load_le16(block.d));
    for (int ib32 = 0; ib32 < 8; ++ib32) {
      const float db[2] = {d * (0.5f + static_cast<float>(block.scales[ib32] & 0x0f)) * 0.25f,
                           d * (0.5f + static_cast<float>(block.scales[ib32] >> 4)) * 0.25f};
      for (int l = 0; l < 4; ++l) {
        const uint16_t q = load_le16(block.qs + 2 * (4 * ib32 + l));
        signed_group(kIq2xsGrid[q & 511], kSignsIq2xs[q >> 9], db[l / 2], y);
        y += 8;
      }
    }
  }
}

void dequantize_blocks(std::span<const BlockIq2S> blocks, std::span<float> out) {
  float* y = out.data();
  for (const BlockIq2S& block : blocks) {
    const float d = fp16_to_f32(load_le16(block.d));
    const uint8_t* low_indices = block.qs;
    const uint8_t* signs = block.qs + 32;
    for (int ib32 = 0; ib32 < 8; ++ib32) {
      const float db[2] = {d * (0.5f + static_cast<float>(block.scales[ib32] & 0x0f)) * 0.25f,
                           d * (0.5f + static_cast<float>(block.scales[ib32] >> 4)) * 0.25f};
      for (int l = 0; l < 4; ++l) {
        const int index = low_indices[4 * ib32 + l] | ((block.qh[ib32] << (8 - 2 * l)) & 0x300);
        signed_group(kIq2sGrid[index], signs[4 * ib32 + l], db[l / 2], y);
        y += 8;
      }
    }
  }
}

void dequantize_blocks(std::span<const BlockIq3Xxs> blocks, std::span<float> out) {
  float* y = out.data();
  for (const BlockIq3Xxs& block : blocks) {
    const float d = fp16_to_f32(load_le16(block.d));
    const uint8_t* scales_and_signs = block.qs + 64;
    for (int ib32 = 0; ib32 < 8; ++ib32) {
      const uint8_t* indices = block.qs + 8 * ib32;
      const uint32_t packed = load_le32(scales_and_signs + 4 * ib32);
      const float db = d * (0.5f + static_cast<float>(packed >> 28)) * 0.5f;
      for (int l = 0; l < 4; ++l) {
        const uint8_t signs = kSignsIq2xs[(packed >> (7 * l)) & 127];
        signed_pair(kIq3xxsGrid[indices[2 * l]], kIq3xxsGrid[indices[2 * l + 1]], signs, db, y);
        y += 8;
      }
    }
  }
}

void dequantize_blocks(std::span<const BlockIq3S> blocks, std::span<float> out) {
  float* y = out.data();
  for (const BlockIq3S& block : blocks) {
    const float d = fp16_to_f32(load_le16(block.d));
    for (int ib32 = 0; ib32 < 8; ++ib32) {
      const int nibble = (block.scales[ib32 / 2] >> (4 * (ib32 % 2))) & 0x0f;
      const float db = d * static_cast<float>(1 + 2 * nibble);
      const uint8_t* indices = block.qs + 8 * ib32;
      const int high = block.qh[ib32];  // bit 2l and 2l + 1: ninth bits of group l's indices
      for (int l = 0; l < 4; ++l) {
        const int first = indices[2 * l] | ((high << (8 - 2 * l)) & 256);
        const int second = indices[2 * l + 1] | ((high << (7 - 2 * l)) & 256);
        signed_pair(kIq3sGrid[first], kIq3sGrid[second], block.signs[4 * ib32 + l], db, y);
        y += 8;
      }
    }
  }
}

void dequantize_blocks(std::span<const BlockIq1S> blocks, std::span<float> out) {
  float* y = out.data();
  for (const BlockIq1S& block : blocks) {
    const float d = fp16_to_f32(load_le16(block.d));
    for (int ib = 0; ib < 8; ++ib) {
      const uint16_t qh = load_le16(block.qh + 2 * ib);
      const float dl = d * static_cast<float>(2 * ((qh >> 12) & 7) + 1);
      const float delta = (qh & 0x8000) != 0 ? -kIq1Delta : kIq1Delta;
      for (int l = 0; l < 4; ++l) {
        const int index = block.qs[4 * ib + l] | (((qh >> (3 * l)) & 7) << 8);
        shifted_group(kIq1sGrid[index], delta, dl, y);
        y += 8;
      }
    }
  }
}

void dequantize_blocks(std::span<const BlockIq1M> blocks, std::span<float> out) {
  float* y = out.data();
  for (const BlockIq1M& block : blocks) {
    uint16_t sc[4];
    for (int k = 0; k < 4; ++k) sc[k] = load_le16(block.scales + 2 * k);
    // The f16 super-block scale is spread over the top nibbles of sc[0..3].
    const auto scale_bits = static_cast<uint16_t>((sc[0] >> 12) | ((sc[1] >> 8) & 0x00f0) |
                                                  ((sc[2] >> 4) & 0x0f00) | (sc[3] & 0xf000));
    const float d = fp16_to_f32(scale_bits);
    for (int ib = 0; ib < 8; ++ib) {
      const int shift = 6 * (ib % 2);
      const float dl1 = d * static_cast<float>(2 * ((sc[ib / 2] >> shift) & 7) + 1);
      const float dl2 = d * static_cast<float>(2 * ((sc[ib / 2] >> (shift + 3)) & 7) + 1);
      const uint8_t* qs = block.qs + 4 * ib;
      const uint8_t* qh = block.qh + 2 * ib;
      const int index[4] = {qs[0] | ((qh[0] << 8) & 0x700), qs[1] | ((qh[0] << 4) & 0x700),
                            qs[2] | ((qh[1] << 8) & 0x700), qs[3] | ((qh[1] << 4) & 0x700)};
      const float delta[4] = {(qh[0] & 0x08) != 0 ? -kIq1Delta : kIq1Delta,
                              (qh[0] & 0x80) != 0 ? -kIq1Delta : kIq1Delta,
                              (qh[1] & 0x08) != 0 ? -kIq1Delta : kIq1Delta,
                              (qh[1] & 0x80) != 0 ? -kIq1Delta : kIq1Delta};
      for (int l = 0; l < 4; ++l) {
        shifted_group(kIq1sGrid[index[l]], delta[l], l < 2 ? dl1 : dl2, y);
        y += 8;
      }
    }
  }
}

}  // namespace glmrt::plugin_support::ggml
