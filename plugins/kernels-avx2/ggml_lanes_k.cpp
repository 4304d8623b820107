// Packing for the lane kernels (ggml_lanes.h) of q2_k and q6_k, the types
// with a scale per 16 values, built with -mavxvnni (the layouts and meets:
// ggml_lane_meets.h; the block layouts: ggml_dots_k.cpp).
#include "ggml_lane_meets.h"

namespace glmrt::kernels_avx2::lanes {
namespace {

GLMRT_ALWAYS_INLINE void store(uint8_t* out, __m256i v) {
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(out), v);
}

}  // namespace

size_t packed_bytes_q2_k(int64_t blocks) {
  return static_cast<size_t>(blocks * kPackedQ2K);
}
size_t packed_bytes_q6_k(int64_t blocks) {
  return static_cast<size_t>(blocks * kPackedQ6K);
}

void pack_q2_k(const uint8_t* rows, int64_t row_stride, int64_t blocks, uint8_t* packed) {
  const __m256i two = _mm256_set1_epi8(0x03);
  for (int64_t sb = 0; sb < blocks; ++sb) {
    uint8_t* out = packed + kPackedQ2K * sb;
    auto* floats = reinterpret_cast<float*>(out + kCodesK + 32 * 32);
    const uint8_t* block[kLaneRows];
    alignas(16) uint8_t by_field[32][kLaneRows];  // 16 scales, then 16 mins
    for (int i = 0; i < kLaneRows; ++i) {
      block[i] = rows + i * row_stride + 84 * sb;
      for (int g = 0; g < 16; ++g) {
        by_field[g][i] = block[i][g] & 0x0F;
        by_field[16 + g][i] = block[i][g] >> 4;
      }
      floats[i] = f16(block[i] + 80);
      floats[kLaneRows + i] = f16(block[i] + 82);
    }
    store_fields(by_field, false, reinterpret_cast<int32_t*>(out + kCodesK));
    // Each 32-byte run holds four sub-blocks, two bits each: one transpose.
    for (int n = 0; n < 2; ++n) {
      __m256i run[kLaneRows];
      for (int i = 0; i < kLaneRows; ++i) run[i] = load32(block[i] + 16 + 32 * n);
      transpose(run);
      for (int j = 0; j < 4; ++j)
        for (int k = 0; k < 8; ++k)
          store(out + 8 * 32 * (4 * n + j) + 32 * k,
                _mm256_and_si256(_mm256_srli_epi16(run[k], 2 * j), two));
    }
  }
}

void pack_q6_k(const uint8_t* rows, int64_t row_stride, int64_t blocks, uint8_t* packed) {
  const __m256i low4 = _mm256_set1_epi8(0x0F), two = _mm256_set1_epi8(0x03);
  for (int64_t sb = 0; sb < blocks; ++sb) {
    uint8_t* out = packed + kPackedQ6K * sb;
    auto* d = reinterpret_cast<float*>(out + kCodesK + 16 * 32);
    const uint8_t* block[kLaneRows];
    alignas(16) uint8_t by_field[16][kLaneRows];  // the int8 scales
    for (int i = 0; i < kLaneRows; ++i) {
      block[i] = rows + i * row_stride + 210 * sb;
      for (int g = 0; g < 16; ++g) by_field[g][i] = block[i][192 + g];
      d[i] = f16(block[i] + 208);
    }
    store_fields(by_field, true, reinterpret_cast<int32_t*>(out + kCodesK));
    for (int n = 0; n < 2; ++n) {
      __m256i ql0[kLaneRows], ql1[kLaneRows], qh[kLaneRows];
      for (int i = 0; i < kLaneRows; ++i) {
        ql0[i] = load32(block[i] + 64 * n);
        ql1[i] = load32(block[i] + 64 * n + 32);
        qh[i] = load32(block[i] + 128 + 32 * n);
      }
      transpose(ql0);
      transpose(ql1);
      transpose(qh);
      for (int k = 0; k < 4; ++k)
        for (int m = 0; m < 8; ++m) {
          const __m256i nibbles = k % 2 == 0 ? ql0[m] : ql1[m];
          const __m256i low = k < 2 ? _mm256_and_si256(nibbles, low4)
                                    : _mm256_and_si256(_mm256_srli_epi16(nibbles, 4), low4);
          const __m256i high = _mm256_and_si256(_mm256_srli_epi16(qh[m], 2 * k), two);
          store(out + 8 * 32 * (4 * n + k) + 32 * m,
                _mm256_or_si256(low, _mm256_slli_epi16(high, 4)));
        }
    }
  }
}

}  // namespace glmrt::kernels_avx2::lanes
