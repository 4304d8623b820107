// Dequantization of the K-quants and IQ4_XS (256-value super-blocks with
// per-sub-block scales), as ggml/src/ggml-quants.c's dequantize_row_q2_K,
// _q3_K, _q4_K, _q5_K, _q6_K and _iq4_xs compute it: the same operations in
// the same order, so the floats are equal bit for bit.
#include "ggml/ggml_blocks.h"
#include "ggml/ggml_grids.h"
#include "ggml/ggml_scalars.h"

namespace glmrt::plugin_support::ggml {

void dequantize_blocks(std::span<const BlockQ2_K> blocks, std::span<float> out) {
  float* y = out.data();
  for (const BlockQ2_K& block : blocks) {
    const float d = fp16_to_f32(load_le16(block.d));
    const float dmin = fp16_to_f32(load_le16(block.dmin));
    // Two halves of 128 values, each from 32 bytes of qs: four 2-bit planes,
    // each plane two runs of 16 values with a scale and a min of their own.
    const uint8_t* scales = block.scales;
    for (int half = 0; half < 2; ++half) {
      const uint8_t* q = block.qs + 32 * half;
      for (int shift = 0; shift < 8; shift += 2) {
        for (int run = 0; run < 2; ++run) {
          const uint8_t sc = *scales++;
          const float dl = d * static_cast<float>(sc & 0x0f);
          const float ml = dmin * static_cast<float>(sc >> 4);
          for (int l = 0; l < 16; ++l) {
            *y++ = dl * static_cast<float>((q[16 * run + l] >> shift) & 3) - ml;
          }
        }
      }
    }
  }
}

namespace {

/// Q3_K's sub-block scale i (0-15), 6 bits from `packed` (12 bytes): the low
/// nibble from bytes 0-7, the top two bits from bytes 8-11.
int q3_k_scale(const uint8_t* packed, int i) {
  const int low = i < 8 ? packed[i] & 0x0f : packed[i - 8] >> 4;
  const int high = (packed[8 + i % 4] >> (2 * (i / 4))) & 3;
  return low | (high << 4);
}

/// Q4_K's and Q5_K's scale and min of sub-block j (0-7), 6 bits each, from
/// `packed` (12 bytes): ggml's get_scale_min_k4.
void scale_min_k4(const uint8_t* packed, int j, int& scale, int& min) {
  if (j < 4) {
    scale = packed[j] & 63;
    min = packed[j + 4] & 63;
  } else {
    scale = (packed[j + 4] & 0x0f) | ((packed[j - 4] >> 6) << 4);
    min = (packed[j + 4] >> 4) | ((packed[j] >> 6) << 4);
  }
}

}  // namespace

void dequantize_blocks(std::span<const BlockQ3_K> blocks, std::span<float> out) {
  float* y = out.data();
  for (const BlockQ3_K& block : blocks) {
    const float d_all = fp16_to_f32(load_le16(block.d));
    int scale_index = 0;
    int high_bit = 0;  // bit of hmask holding the third bit of this plane
    for (int half = 0; half < 2; ++half) {
      const uint8_t* q = block.qs + 32 * half;
      for (int shift = 0; shift < 8; shift += 2, ++high_bit) {
        for (int run = 0; run < 2; ++run) {
          const float dl = d_all * static_cast<float>(q3_k_scale(block.scales, scale_index++) - 32);
          for (int l = 0; l < 16; ++l) {
            const int low = (q[16 * run + l] >> shift) & 3;
            const int minus = ((block.hmask[16 * run + l] >> high_bit) & 1) != 0 ? 0 : 4;
            *y++ = dl * static_cast<float>(low - minus);
          }
        }
      }
    }
  }
}

void dequantize_blocks(std::span<const BlockQ4_K> blocks, std::span<float> out) {
  float* y = out.data();
  for (const BlockQ4_K& block : blocks) {
    const float d = fp16_to_f32(load_le16(block.d));
    const float dmin = fp16_to_f32(load_le16(block.dmin));
    // Four runs of 64 values from 32 bytes: low nibbles, then high nibbles.
    for (int run = 0; run < 4; ++run) {
      const uint8_t* q = block.qs + 32 * run;
      int scale = 0;
      int min = 0;
      scale_min_k4(block.scales, 2 * run, scale, min);
      const float d1 = d * static_cast<float>(scale);
      const float m1 = dmin * static_cast<float>(min);
      scale_min_k4(block.scales, 2 * run + 1, scale, min);
      const float d2 = d * static_cast<float>(scale);
      const float m2 = dmin * static_cast<float>(min);
      for (int l = 0; l < 32; ++l) *y++ = d1 * static_cast<float>(q[l] & 0x0f) - m1;
      for (int l = 0; l < 32; ++l) *y++ = d2 * static_cast<float>(q[l] >> 4) - m2;
    }
  }
}

void dequantize_blocks(std::span<const BlockQ5_K> blocks, std::span<float> out) {
  float* y = out.data();
  for (const BlockQ5_K& block : blocks) {
    const float d = fp16_to_f32(load_le16(block.d));
    const float dmin = fp16_to_f32(load_le16(block.dmin));
    for (int run = 0; run < 4; ++run) {
      const uint8_t* q = block.qs + 32 * run;
      const int low_plane = 2 * run;  // bit of qh holding the fifth bit
      int scale = 0;
      int min = 0;
      scale_min_k4(block.scales, 2 * run, scale, min);
      const float d1 = d * static_cast<float>(scale);
      const float m1 = dmin * static_cast<float>(min);
      scale_min_k4(block.scales, 2 * run + 1, scale, min);
      const float d2 = d * static_cast<float>(scale);
      const float m2 = dmin * static_cast<float>(min);
      for (int l = 0; l < 32; ++l) {
        const int fifth = ((block.qh[l] >> low_plane) & 1) << 4;
        *y++ = d1 * static_cast<float>((q[l] & 0x0f) + fifth) - m1;
      }
      for (int l = 0; l < 32; ++l) {
        const int fifth = ((block.qh[l] >> (low_plane + 1)) & 1) << 4;
        *y++ = d2 * static_cast<float>((q[l] >> 4) + fifth) - m2;
      }
    }
  }
}

void dequantize_blocks(std::span<const BlockQ6_K> blocks, std::span<float> out) {
  float* y = out.data();
  for (const BlockQ6_K& block : blocks) {
    const float d = fp16_to_f32(load_le16(block.d));
    // Two halves of 128 values, each from 64 bytes of ql (nibbles) and 32 of
    // qh (four 2-bit planes); 16 values per int8 scale.
    for (int half = 0; half < 2; ++half) {
      const uint8_t* ql = block.ql + 64 * half;
      const uint8_t* qh = block.qh + 32 * half;
      const int8_t* sc = block.scales + 8 * half;
      for (int l = 0; l < 32; ++l) {
        const int is = l / 16;
        const int q1 = ((ql[l] & 0x0f) | (((qh[l] >> 0) & 3) << 4)) - 32;
        const int q2 = ((ql[l + 32] & 0x0f) | (((qh[l] >> 2) & 3) << 4)) - 32;
        const int q3 = ((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32;
        const int q4 = ((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32;
        y[l] = d * static_cast<float>(sc[is]) * static_cast<float>(q1);
        y[l + 32] = d * static_cast<float>(sc[is + 2]) * static_cast<float>(q2);
        y[l + 64] = d * static_cast<float>(sc[is + 4]) * static_cast<float>(q3);
        y[l + 96] = d * static_cast<float>(sc[is + 6]) * static_cast<float>(q4);
      }
      y += 128;
    }
  }
}

void dequantize_blocks(std::span<const BlockIq4Xs> blocks, std::span<float> out) {
  float* y = out.data();
  for (const BlockIq4Xs& block : blocks) {
    const float d = fp16_to_f32(load_le16(block.d));
    const uint16_t scales_h = load_le16(block.scales_h);
    for (int ib = 0; ib < 8; ++ib) {
      const int low = (block.scales_l[ib / 2] >> (4 * (ib % 2))) & 0x0f;
      const int high = (scales_h >> (2 * ib)) & 3;
      const float dl = d * static_cast<float>((low | (high << 4)) - 32);
      const uint8_t* qs = block.qs + 16 * ib;
      for (int j = 0; j < 16; ++j) {
        y[j] = dl * static_cast<float>(kValuesIq4nl[qs[j] & 0x0f]);
        y[j + 16] = dl * static_cast<float>(kValuesIq4nl[qs[j] >> 4]);
      }
      y += 32;
    }
  }
}

}  // namespace glmrt::plugin_support::ggml
