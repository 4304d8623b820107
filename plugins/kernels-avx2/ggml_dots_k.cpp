// q8_0 and the K-quants (q2_k, q4_k, q6_k) against int8 activations.
#include "ggml_dot_kernels.h"

namespace glmrt::kernels_avx2::ggml_dots {

// Q8_0: per 32 values an f16 d and 32 int8.
template <int C>
void dot_q8_0(const uint8_t* row, int64_t blocks, const GgmlColumn* x, float* out) {
  Accumulators<C> acc = zeros<C>();
  for (int64_t b = 0; b < blocks; ++b) {
    const uint8_t* block = row + 34 * b;
    if (b % 2 == 0) prefetch_ahead(block);
    const __m256i w = load32(block + 2), magnitude = _mm256_sign_epi8(w, w);
    const float d = f16(block);
    for (int c = 0; c < C; ++c) {
      const __m256i p = dot_unsigned(magnitude, _mm256_sign_epi8(load32(x[c].values + 32 * b), w));
      acc[c] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(p), _mm256_set1_ps(d * x[c].scales[b]), acc[c]);
    }
  }
  finish<C>(acc, out);
}

// Q4_K: d, dmin, 12 bytes of eight 6-bit scales and mins, 128 bytes of
// nibbles: sub-block 2j is the low nibbles of bytes 32j..32j+31, 2j+1 the high.
// value = d * sc * q - dmin * m.
template <int C>
void dot_q4_k(const uint8_t* row, int64_t blocks, const GgmlColumn* x, float* out) {
  Accumulators<C> acc = zeros<C>();
  const __m256i low4 = _mm256_set1_epi8(0x0F);
  for (int64_t sb = 0; sb < blocks; ++sb) {
    const uint8_t* block = row + 144 * sb;
    prefetch_block(block, 144);
    // The 6-bit packing of ggml's get_scale_min_k4: bytes 0-7 scales, 8-15 mins.
    uint32_t packed[3], unpacked[4];
    std::memcpy(packed, block + 4, 12);
    unpacked[0] = packed[0] & 0x3f3f3f3f;
    unpacked[1] = (packed[2] & 0x0f0f0f0f) | (((packed[0] >> 6) & 0x03030303) << 4);
    unpacked[2] = packed[1] & 0x3f3f3f3f;
    unpacked[3] = ((packed[2] >> 4) & 0x0f0f0f0f) | (((packed[1] >> 6) & 0x03030303) << 4);
    const __m128i sc_m = _mm_loadu_si128(reinterpret_cast<const __m128i*>(unpacked));
    const __m256 scales = _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(sc_m));
    const __m256 mins = _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_srli_si128(sc_m, 8)));
    const float d = f16(block), dmin = f16(block + 2);
    __m256i q[8];
#pragma GCC unroll 4
    for (int j = 0; j < 4; ++j) {
      const __m256i bytes = load32(block + 16 + 32 * j);
      q[2 * j] = _mm256_and_si256(bytes, low4);
      q[2 * j + 1] = _mm256_and_si256(_mm256_srli_epi16(bytes, 4), low4);
    }
    for (int c = 0; c < C; ++c) {
      const int8_t* xs = x[c].values + 256 * sb;
      __m256i p[8];
#pragma GCC unroll 8
      for (int b = 0; b < 8; ++b) p[b] = dot_unsigned(q[b], load32(xs + 32 * b));
      const __m256 dxs = _mm256_loadu_ps(x[c].scales + 8 * sb);
      const __m256 x_sums = _mm256_mul_ps(_mm256_cvtepi32_ps(sums32(x[c].sums16 + 16 * sb)), dxs);
      const __m256 codes = _mm256_mul_ps(_mm256_cvtepi32_ps(totals(p)), dxs);
      acc[c] = _mm256_fmadd_ps(_mm256_mul_ps(codes, scales), _mm256_set1_ps(d), acc[c]);
      acc[c] = _mm256_fnmadd_ps(_mm256_mul_ps(x_sums, mins), _mm256_set1_ps(dmin), acc[c]);
    }
  }
  finish<C>(acc, out);
}

// Q6_K: 128 bytes of low nibbles, 64 of high bit pairs, 16 int8 scales (one
// per 16 values), f16 d. value = d * sc * (q - 32). Half n of 128 values:
// sub-block 4n+k takes the low (k < 2) or high nibbles of ql[64n + 32(k%2)..]
// and bits 2k..2k+1 of qh[32n..32n+31].
template <int C>
void dot_q6_k(const uint8_t* row, int64_t blocks, const GgmlColumn* x, float* out) {
  Accumulators<C> acc = zeros<C>();
  const __m256i low4 = _mm256_set1_epi8(0x0F), two = _mm256_set1_epi8(0x03);
  for (int64_t sb = 0; sb < blocks; ++sb) {
    const uint8_t* block = row + 210 * sb;
    prefetch_block(block, 210);
    const __m128i scales16 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(block + 192));
    const __m256i scales = _mm256_cvtepi8_epi16(scales16);
    const float d = f16(block + 208);
    __m256i q[8], pair[8];
#pragma GCC unroll 2
    for (int n = 0; n < 2; ++n) {
      const __m256i ql0 = load32(block + 64 * n), ql1 = load32(block + 64 * n + 32);
      const __m256i qh = load32(block + 128 + 32 * n);
      const __m256i low[4] = {_mm256_and_si256(ql0, low4), _mm256_and_si256(ql1, low4),
                              _mm256_and_si256(_mm256_srli_epi16(ql0, 4), low4),
                              _mm256_and_si256(_mm256_srli_epi16(ql1, 4), low4)};
#pragma GCC unroll 4
      for (int k = 0; k < 4; ++k) {
        const __m256i high = _mm256_and_si256(_mm256_srli_epi16(qh, 2 * k), two);
        q[4 * n + k] = _mm256_or_si256(low[k], _mm256_slli_epi16(high, 4));
        pair[4 * n + k] = pair_scales(scales16, 4 * n + k);
      }
    }
    for (int c = 0; c < C; ++c) {
      const int8_t* xs = x[c].values + 256 * sb;
      __m256i p[8];
#pragma GCC unroll 8
      for (int b = 0; b < 8; ++b)
        p[b] = _mm256_madd_epi16(_mm256_maddubs_epi16(q[b], load32(xs + 32 * b)), pair[b]);
      // The -32 offset: 32 x sum over 16-groups of scale x sum(x).
      const __m256i offsets = _mm256_madd_epi16(scales, load32(x[c].sums16 + 16 * sb));
      const __m256i net = _mm256_sub_epi32(totals(p), _mm256_slli_epi32(offsets, 5));
      acc[c] = _mm256_fmadd_ps(
          _mm256_mul_ps(_mm256_cvtepi32_ps(net), _mm256_loadu_ps(x[c].scales + 8 * sb)),
          _mm256_set1_ps(d), acc[c]);
    }
  }
  finish<C>(acc, out);
}

// Q2_K: 16 scale bytes (low nibble scale, high nibble min, per 16 values), 64
// bytes of 2-bit codes, f16 d, f16 dmin. Sub-block 4n+j is bits 2j..2j+1 of
// bytes 32n..32n+31. value = d * sc * q - dmin * m.
template <int C>
void dot_q2_k(const uint8_t* row, int64_t blocks, const GgmlColumn* x, float* out) {
  Accumulators<C> acc = zeros<C>();
  const __m256i two = _mm256_set1_epi8(0x03);
  const __m128i low4 = _mm_set1_epi8(0x0F);
  // The 16 scales in the order of the per-16 sums partial_totals gives: even
  // then odd groups of sub-blocks 0-3, then of sub-blocks 4-7.
  const __m128i by_group_sums = _mm_setr_epi8(0, 2, 4, 6, 1, 3, 5, 7, 8, 10, 12, 14, 9, 11, 13, 15);
  for (int64_t sb = 0; sb < blocks; ++sb) {
    const uint8_t* block = row + 84 * sb;
    prefetch_block(block, 84);
    const __m128i packed = _mm_loadu_si128(reinterpret_cast<const __m128i*>(block));
    const __m128i ordered = _mm_shuffle_epi8(_mm_and_si128(packed, low4), by_group_sums);
    const __m256i scales[2] = {_mm256_cvtepu8_epi32(ordered),
                               _mm256_cvtepu8_epi32(_mm_srli_si128(ordered, 8))};
    const __m256i mins = _mm256_cvtepu8_epi16(_mm_and_si128(_mm_srli_epi16(packed, 4), low4));
    const float d = f16(block + 80), dmin = f16(block + 82);
    __m256i q[8];
#pragma GCC unroll 2
    for (int n = 0; n < 2; ++n) {
      const __m256i codes = load32(block + 16 + 32 * n);
#pragma GCC unroll 4
      for (int j = 0; j < 4; ++j)
        q[4 * n + j] = _mm256_and_si256(_mm256_srli_epi16(codes, 2 * j), two);
    }
    for (int c = 0; c < C; ++c) {
      const int8_t* xs = x[c].values + 256 * sb;
      __m256i p[8];
#pragma GCC unroll 8
      for (int b = 0; b < 8; ++b) p[b] = dot_unsigned(q[b], load32(xs + 32 * b));
      // Each 16-group's scale applied to its exact int32 sum: the same
      // integers as scaling every pair before the sum, fewer shuffles.
      const __m256i codes = scaled_totals(p, scales);
      const __m256i min_sums = _mm256_madd_epi16(mins, load32(x[c].sums16 + 16 * sb));
      const __m256 dxs = _mm256_loadu_ps(x[c].scales + 8 * sb);
      acc[c] =
          _mm256_fmadd_ps(_mm256_mul_ps(_mm256_cvtepi32_ps(codes), dxs), _mm256_set1_ps(d), acc[c]);
      acc[c] = _mm256_fnmadd_ps(_mm256_mul_ps(_mm256_cvtepi32_ps(min_sums), dxs),
                                _mm256_set1_ps(dmin), acc[c]);
    }
  }
  finish<C>(acc, out);
}

template void dot_q8_0<1>(const uint8_t*, int64_t, const GgmlColumn*, float*);
template void dot_q8_0<kGgmlColumns>(const uint8_t*, int64_t, const GgmlColumn*, float*);
template void dot_q4_k<1>(const uint8_t*, int64_t, const GgmlColumn*, float*);
template void dot_q4_k<kGgmlColumns>(const uint8_t*, int64_t, const GgmlColumn*, float*);
template void dot_q6_k<1>(const uint8_t*, int64_t, const GgmlColumn*, float*);
template void dot_q6_k<kGgmlColumns>(const uint8_t*, int64_t, const GgmlColumn*, float*);
template void dot_q2_k<1>(const uint8_t*, int64_t, const GgmlColumn*, float*);
template void dot_q2_k<kGgmlColumns>(const uint8_t*, int64_t, const GgmlColumn*, float*);

}  // namespace glmrt::kernels_avx2::ggml_dots
