// Lane kernels (ggml_lanes.h) at 8 rows, built with -mavxvnni: packing
// q8_0, q4_0 and q4_k (ggml_lanes_k.cpp packs q2_k and q6_k); the meets are
// ggml_lane_meets.h's. The block layouts are ggml-common.h's.
#include "ggml_lane_meets.h"

namespace glmrt::kernels_avx2 {
namespace {

using namespace lanes;

size_t packed_bytes_32(int64_t blocks) {
  // Their kernels keep a lane per block of 8: whole groups only.
  return blocks % 8 == 0 ? static_cast<size_t>(blocks * kPacked32) : 0;
}

/// codes_of: a block's 32 codes, unsigned (its kernel takes the offset off).
template <int kBlockBytes, class Codes>
void pack_32(const uint8_t* rows, int64_t row_stride, int64_t blocks, uint8_t* packed,
             Codes codes_of) {
  for (int64_t b = 0; b < blocks; ++b) {
    uint8_t* out = packed + kPacked32 * b;
    __m256i codes[8];
    float d[kLaneRows];
    for (int i = 0; i < kLaneRows; ++i) {
      const uint8_t* block = rows + i * row_stride + kBlockBytes * b;
      codes[i] = codes_of(block);
      d[i] = f16(block);
    }
    store_chunks(codes, out);
    std::memcpy(out + 8 * 32, d, sizeof(d));
  }
}

size_t packed_bytes_q4_k(int64_t blocks) {
  return static_cast<size_t>(blocks * kPackedQ4K);
}

void pack_q4_k(const uint8_t* rows, int64_t row_stride, int64_t blocks, uint8_t* packed) {
  const __m256i low4 = _mm256_set1_epi8(0x0F);
  for (int64_t sb = 0; sb < blocks; ++sb) {
    uint8_t* out = packed + kPackedQ4K * sb;
    auto* scales_mins = reinterpret_cast<float*>(out + kCodesK);  // [16][8 rows]
    float* d = scales_mins + 16 * kLaneRows;
    float* dmin = d + kLaneRows;
    const uint8_t* block[kLaneRows];
    alignas(16) uint8_t by_field[16][kLaneRows];  // 8 scales then 8 mins, per row
    for (int i = 0; i < kLaneRows; ++i) {
      block[i] = rows + i * row_stride + 144 * sb;
      uint8_t six_bit[16];
      q4_k_scales_mins(block[i], six_bit);
      for (int f = 0; f < 16; ++f) by_field[f][i] = six_bit[f];
      d[i] = f16(block[i]);
      dmin[i] = f16(block[i] + 2);
    }
    for (int f = 0; f < 16; ++f)
      _mm256_storeu_ps(scales_mins + f * kLaneRows,
                       _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(
                           _mm_loadl_epi64(reinterpret_cast<const __m128i*>(by_field[f])))));
    // A 32-byte run of nibbles is two sub-blocks (low, high) of 32 values:
    // one transpose of the bytes serves both.
    for (int q = 0; q < 4; ++q) {
      __m256i chunks[kLaneRows];
      for (int i = 0; i < kLaneRows; ++i) chunks[i] = load32(block[i] + 16 + 32 * q);
      transpose(chunks);
      for (int k = 0; k < 8; ++k) {
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + 8 * 32 * (2 * q) + 32 * k),
                            _mm256_and_si256(chunks[k], low4));
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + 8 * 32 * (2 * q + 1) + 32 * k),
                            _mm256_and_si256(_mm256_srli_epi16(chunks[k], 4), low4));
      }
    }
  }
}

}  // namespace

GgmlLaneKernel ggml_lane_kernel(uint32_t ggml_type) {
  switch (ggml_type) {
    case GLMRT_GGML_Q8_0:
      return {&packed_bytes_32,
              [](const uint8_t* rows, int64_t stride, int64_t blocks, uint8_t* packed) {
                // Signed codes + 128: the unsigned side of vpdpbusd.
                pack_32<34>(rows, stride, blocks, packed, [](const uint8_t* block) {
                  return _mm256_xor_si256(load32(block + 2), _mm256_set1_epi8(-128));
                });
              },
              meet_of<Lanes8>(ggml_type)};
    case GLMRT_GGML_Q4_0:
      return {&packed_bytes_32,
              [](const uint8_t* rows, int64_t stride, int64_t blocks, uint8_t* packed) {
                pack_32<18>(rows, stride, blocks, packed, &q4_0_codes);
              },
              meet_of<Lanes8>(ggml_type)};
    case GLMRT_GGML_Q4_K:
      return {&packed_bytes_q4_k, &pack_q4_k, meet_of<Lanes8>(ggml_type)};
    case GLMRT_GGML_Q2_K:
      return {&packed_bytes_q2_k, &pack_q2_k, meet_of<Lanes8>(ggml_type)};
    case GLMRT_GGML_Q6_K:
      return {&packed_bytes_q6_k, &pack_q6_k, meet_of<Lanes8>(ggml_type)};
    default:
      return {};
  }
}

}  // namespace glmrt::kernels_avx2
