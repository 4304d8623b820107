// q8_0, q4_0 and the K-quants (q2_k, q4_k, q6_k) against int8 activations.
#include "ggml_dot_kernels.h"

namespace glmrt::kernels_avx2::GLMRT_GGML_DOTS {

// The 32-value types with one f16 d per block (q8_0, q4_0): eight blocks at
// a time, so the float step (d times the activations' scale) runs once per
// 256 values on eight lanes. `codes_of` gives a block's 32 codes: signed
// (kOffset 0), or unsigned with the value code - kOffset, whose offset is
// taken off through the activations' sums, as one integer per block.
template <int C, int kBlockBytes, int kOffset, class Codes>
GLMRT_ALWAYS_INLINE void dot_32(const uint8_t* row, int64_t blocks, const GgmlColumn* x, float* out,
                                Codes codes_of) {
  // Lanes whose total is sum(value code * x) over one block's 32 inputs.
  const auto block_dot = [](__m256i codes, __m256i xs) {
    if constexpr (kOffset == 0) return dot_signed(codes, xs);
    return dot_unsigned(codes, xs);
  };
  Accumulators<C> acc = zeros<C>();
  int64_t b = 0;
  for (; b + 8 <= blocks; b += 8) {
    const uint8_t* group = row + kBlockBytes * b;
    prefetch_block(group, 8 * kBlockBytes);
    __m256i codes[8];
    alignas(16) uint16_t halves[8];
#pragma GCC unroll 8
    for (int k = 0; k < 8; ++k) {
      codes[k] = codes_of(group + kBlockBytes * k);
      std::memcpy(&halves[k], group + kBlockBytes * k, 2);
    }
    const __m256 d = _mm256_cvtph_ps(_mm_load_si128(reinterpret_cast<const __m128i*>(halves)));
    for (int c = 0; c < C; ++c) {
      __m256i p[8];
#pragma GCC unroll 8
      for (int k = 0; k < 8; ++k) p[k] = block_dot(codes[k], load32(x[c].values + 32 * (b + k)));
      __m256i sums = totals(p);
      if constexpr (kOffset != 0)
        sums = _mm256_sub_epi32(
            sums, _mm256_mullo_epi32(sums32(x[c].sums16 + 2 * b), _mm256_set1_epi32(kOffset)));
      const __m256 scale = _mm256_mul_ps(d, _mm256_loadu_ps(x[c].scales + b));
      acc[c] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(sums), scale, acc[c]);
    }
  }
  for (; b < blocks; ++b) {  // the last blocks of a row that is not whole groups of 8
    const uint8_t* block = row + kBlockBytes * b;
    const __m256i codes = codes_of(block);
    const float d = f16(block);
    for (int c = 0; c < C; ++c) {
      int32_t sum = horizontal_sum(block_dot(codes, load32(x[c].values + 32 * b)));
      if constexpr (kOffset != 0) sum -= kOffset * (x[c].sums16[2 * b] + x[c].sums16[2 * b + 1]);
      acc[c] = _mm256_fmadd_ps(_mm256_setr_ps(static_cast<float>(sum), 0, 0, 0, 0, 0, 0, 0),
                               _mm256_set1_ps(d * x[c].scales[b]), acc[c]);
    }
  }
  finish<C>(acc, out);
}

// Q8_0: per 32 values an f16 d and 32 int8.
template <int C>
void dot_q8_0(const uint8_t* row, int64_t blocks, const GgmlColumn* x, float* out) {
  dot_32<C, 34, 0>(row, blocks, x, out, [](const uint8_t* block) { return load32(block + 2); });
}

// Q4_0: per 32 values an f16 d and 16 bytes of nibbles, value j the low
// nibble of byte j and value j + 16 its high one. value = d * (q - 8).
template <int C>
void dot_q4_0(const uint8_t* row, int64_t blocks, const GgmlColumn* x, float* out) {
  dot_32<C, 18, 8>(row, blocks, x, out, &q4_0_codes);
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
    uint8_t scales_mins[16];
    q4_k_scales_mins(block, scales_mins);
    const __m128i sc_m = _mm_loadu_si128(reinterpret_cast<const __m128i*>(scales_mins));
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
        pair[4 * n + k] = dot_scales(scales16, 4 * n + k);
      }
    }
    for (int c = 0; c < C; ++c) {
      const int8_t* xs = x[c].values + 256 * sb;
      __m256i p[8];
#pragma GCC unroll 8
      for (int b = 0; b < 8; ++b) p[b] = scaled_dot(q[b], load32(xs + 32 * b), pair[b]);
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
template void dot_q8_0<2>(const uint8_t*, int64_t, const GgmlColumn*, float*);
template void dot_q8_0<kGgmlColumns>(const uint8_t*, int64_t, const GgmlColumn*, float*);
template void dot_q4_0<1>(const uint8_t*, int64_t, const GgmlColumn*, float*);
template void dot_q4_0<2>(const uint8_t*, int64_t, const GgmlColumn*, float*);
template void dot_q4_0<kGgmlColumns>(const uint8_t*, int64_t, const GgmlColumn*, float*);
template void dot_q4_k<1>(const uint8_t*, int64_t, const GgmlColumn*, float*);
template void dot_q4_k<2>(const uint8_t*, int64_t, const GgmlColumn*, float*);
template void dot_q4_k<kGgmlColumns>(const uint8_t*, int64_t, const GgmlColumn*, float*);
template void dot_q6_k<1>(const uint8_t*, int64_t, const GgmlColumn*, float*);
template void dot_q6_k<2>(const uint8_t*, int64_t, const GgmlColumn*, float*);
template void dot_q6_k<kGgmlColumns>(const uint8_t*, int64_t, const GgmlColumn*, float*);
template void dot_q2_k<1>(const uint8_t*, int64_t, const GgmlColumn*, float*);
template void dot_q2_k<2>(const uint8_t*, int64_t, const GgmlColumn*, float*);
template void dot_q2_k<kGgmlColumns>(const uint8_t*, int64_t, const GgmlColumn*, float*);

}  // namespace glmrt::kernels_avx2::GLMRT_GGML_DOTS
