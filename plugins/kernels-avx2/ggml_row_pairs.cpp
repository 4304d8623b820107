// Two weight rows per zmm (ggml_row_pairs.h): q4_k, q2_k and iq4_xs, each
// the AVX2 row kernel of ggml_dots_k.cpp or ggml_dots_iq.cpp with row h in
// the 256-bit half h of every vector. Integer sums are exact, so they may be
// reduced in any order; the float steps are the row kernel's, lane for lane.
//
// GCC 12's avx512fintrin.h builds its conversions and extractions on
// _mm*_undefined_*(), which -W(maybe-)uninitialized reports (a false positive).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#include "ggml_row_pairs.h"

// The block readers of the AVX-VNNI row kernels; all of them always inlined,
// so nothing compiled here with AVX-512 is shared with the AVX2 builds.
#define GLMRT_GGML_DOTS_VNNI 1
#include "ggml_dot_kernels.h"

#include <ggml/ggml_grids.h>

namespace glmrt::kernels_avx2 {
namespace {

namespace ggml = plugin_support::ggml;
using ggml_dots_vnni::f16;
using ggml_dots_vnni::load32;
using ggml_dots_vnni::prefetch_block;
using ggml_dots_vnni::q4_k_scales_mins;

/// Row 0's 32 bytes at offset `at` in the low half, row 1's in the high one.
GLMRT_ALWAYS_INLINE __m512i load_pair(const uint8_t* const (&rows)[2], int64_t at) {
  return _mm512_inserti64x4(_mm512_castsi256_si512(load32(rows[0] + at)), load32(rows[1] + at), 1);
}

GLMRT_ALWAYS_INLINE __m512i both_halves(__m256i v) {
  return _mm512_broadcast_i64x4(v);
}

GLMRT_ALWAYS_INLINE __m512 both_halves(__m256 v) {
  return _mm512_castsi512_ps(_mm512_broadcast_i64x4(_mm256_castps_si256(v)));
}

/// [a x 8 | b x 8].
GLMRT_ALWAYS_INLINE __m512 halves_of(float a, float b) {
  return _mm512_castsi512_ps(
      _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_castps_si256(_mm256_set1_ps(a))),
                         _mm256_castps_si256(_mm256_set1_ps(b)), 1));
}

/// Per 128-bit lane, the totals of that lane of p[0..3]: [p0, p1, p2, p3].
GLMRT_ALWAYS_INLINE __m512i lane_totals(__m512i p0, __m512i p1, __m512i p2, __m512i p3) {
  const __m512i a = _mm512_add_epi32(_mm512_unpacklo_epi32(p0, p1), _mm512_unpackhi_epi32(p0, p1));
  const __m512i b = _mm512_add_epi32(_mm512_unpacklo_epi32(p2, p3), _mm512_unpackhi_epi32(p2, p3));
  return _mm512_add_epi32(_mm512_unpacklo_epi64(a, b), _mm512_unpackhi_epi64(a, b));
}

/// Lane b of half h: the total of half h of p[b] (totals() of each half).
/// With `scales` (int32, in lane_totals' order: per 128-bit lane L, p[4k..4k+3]
/// of L in vector k), each 16-value quarter is weighted first.
template <bool kScaled>
GLMRT_ALWAYS_INLINE __m512i pair_totals(const __m512i (&p)[8],
                                        [[maybe_unused]] const __m512i* scales = nullptr) {
  __m512i low = lane_totals(p[0], p[1], p[2], p[3]), high = lane_totals(p[4], p[5], p[6], p[7]);
  if constexpr (kScaled) {
    low = _mm512_mullo_epi32(low, scales[0]);
    high = _mm512_mullo_epi32(high, scales[1]);
  }
  // 128-bit lanes: low = [A0 A1 B0 B1] of sub-blocks 0-3, high the same of 4-7.
  const __m512i first = _mm512_set_epi64(13, 12, 5, 4, 9, 8, 1, 0);
  const __m512i second = _mm512_set_epi64(15, 14, 7, 6, 11, 10, 3, 2);
  return _mm512_add_epi32(_mm512_permutex2var_epi64(low, first, high),
                          _mm512_permutex2var_epi64(low, second, high));
}

GLMRT_ALWAYS_INLINE __m512i dot(__m512i codes, __m512i x) {
  return _mm512_dpbusd_epi32(_mm512_setzero_si512(), codes, x);
}

template <int C>
GLMRT_ALWAYS_INLINE void finish(const __m512 (&acc)[C], float* out) {
  for (int c = 0; c < C; ++c) {
    out[2 * c] = horizontal_sum(_mm512_castps512_ps256(acc[c]));
    out[2 * c + 1] = horizontal_sum(
        _mm256_castsi256_ps(_mm512_extracti64x4_epi64(_mm512_castps_si512(acc[c]), 1)));
  }
}

// Q4_K (ggml_dots_k.cpp's dot_q4_k).
template <int C>
void pair_q4_k(const uint8_t* const (&rows)[2], int64_t blocks, const GgmlColumn* x, float* out) {
  __m512 acc[C];
  for (int c = 0; c < C; ++c) acc[c] = _mm512_setzero_ps();
  const __m512i low4 = _mm512_set1_epi8(0x0F);
  for (int64_t sb = 0; sb < blocks; ++sb) {
    const uint8_t* const block[2] = {rows[0] + 144 * sb, rows[1] + 144 * sb};
    prefetch_block(block[0], 144);
    prefetch_block(block[1], 144);
    uint8_t scales_mins[2][16];
    q4_k_scales_mins(block[0], scales_mins[0]);
    q4_k_scales_mins(block[1], scales_mins[1]);
    const __m128i sc_m0 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(scales_mins[0]));
    const __m128i sc_m1 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(scales_mins[1]));
    const __m512 scales =
        _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(_mm_unpacklo_epi64(sc_m0, sc_m1)));
    const __m512 mins = _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(_mm_unpackhi_epi64(sc_m0, sc_m1)));
    const __m512 d = halves_of(f16(block[0]), f16(block[1]));
    const __m512 dmin = halves_of(f16(block[0] + 2), f16(block[1] + 2));
    const uint8_t* const codes[2] = {block[0] + 16, block[1] + 16};
    __m512i q[8];
#pragma GCC unroll 4
    for (int j = 0; j < 4; ++j) {
      const __m512i bytes = load_pair(codes, 32 * j);
      q[2 * j] = _mm512_and_si512(bytes, low4);
      q[2 * j + 1] = _mm512_and_si512(_mm512_srli_epi16(bytes, 4), low4);
    }
    for (int c = 0; c < C; ++c) {
      const int8_t* xs = x[c].values + 256 * sb;
      __m512i p[8];
#pragma GCC unroll 8
      for (int b = 0; b < 8; ++b) p[b] = dot(q[b], both_halves(load32(xs + 32 * b)));
      const __m512 dxs = both_halves(_mm256_loadu_ps(x[c].scales + 8 * sb));
      const __m512 x_sums = _mm512_mul_ps(
          _mm512_cvtepi32_ps(both_halves(ggml_dots_vnni::sums32(x[c].sums16 + 16 * sb))), dxs);
      const __m512 sums = _mm512_mul_ps(_mm512_cvtepi32_ps(pair_totals<false>(p)), dxs);
      acc[c] = _mm512_fmadd_ps(_mm512_mul_ps(sums, scales), d, acc[c]);
      acc[c] = _mm512_fnmadd_ps(_mm512_mul_ps(x_sums, mins), dmin, acc[c]);
    }
  }
  finish<C>(acc, out);
}

// Q2_K (ggml_dots_k.cpp's dot_q2_k).
template <int C>
void pair_q2_k(const uint8_t* const (&rows)[2], int64_t blocks, const GgmlColumn* x, float* out) {
  __m512 acc[C];
  for (int c = 0; c < C; ++c) acc[c] = _mm512_setzero_ps();
  const __m512i two = _mm512_set1_epi8(0x03);
  const __m128i low4 = _mm_set1_epi8(0x0F);
  // lane_totals leaves, per 128-bit lane (row 0's first and second 16-value
  // quarters, then row 1's), sub-blocks 4k..4k+3 in vector k: the scale of
  // 16-group g = 2 sub-block + quarter.
  const __m128i even = _mm_setr_epi8(0, 2, 4, 6, 1, 3, 5, 7, 8, 10, 12, 14, 9, 11, 13, 15);
  for (int64_t sb = 0; sb < blocks; ++sb) {
    const uint8_t* const block[2] = {rows[0] + 84 * sb, rows[1] + 84 * sb};
    prefetch_block(block[0], 84);
    prefetch_block(block[1], 84);
    __m128i ordered[2];
    __m256i mins[2];
    for (int h = 0; h < 2; ++h) {
      const __m128i packed = _mm_loadu_si128(reinterpret_cast<const __m128i*>(block[h]));
      ordered[h] = _mm_shuffle_epi8(_mm_and_si128(packed, low4), even);
      mins[h] = _mm256_cvtepu8_epi16(_mm_and_si128(_mm_srli_epi16(packed, 4), low4));
    }
    // ordered[h]: sub-blocks 0-3 first quarters, 0-3 second, 4-7 first, 4-7 second.
    const __m512i scales[2] = {_mm512_cvtepu8_epi32(_mm_unpacklo_epi64(ordered[0], ordered[1])),
                               _mm512_cvtepu8_epi32(_mm_unpackhi_epi64(ordered[0], ordered[1]))};
    const __m512 d = halves_of(f16(block[0] + 80), f16(block[1] + 80));
    const __m512 dmin = halves_of(f16(block[0] + 82), f16(block[1] + 82));
    const uint8_t* const codes[2] = {block[0] + 16, block[1] + 16};
    __m512i q[8];
#pragma GCC unroll 2
    for (int n = 0; n < 2; ++n) {
      const __m512i bytes = load_pair(codes, 32 * n);
#pragma GCC unroll 4
      for (int j = 0; j < 4; ++j)
        q[4 * n + j] = _mm512_and_si512(_mm512_srli_epi16(bytes, 2 * j), two);
    }
    for (int c = 0; c < C; ++c) {
      const int8_t* xs = x[c].values + 256 * sb;
      __m512i p[8];
#pragma GCC unroll 8
      for (int b = 0; b < 8; ++b) p[b] = dot(q[b], both_halves(load32(xs + 32 * b)));
      const __m512i sums = pair_totals<true>(p, scales);
      const __m256i x16 = load32(x[c].sums16 + 16 * sb);
      const __m512i min_sums =
          _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_madd_epi16(mins[0], x16)),
                             _mm256_madd_epi16(mins[1], x16), 1);
      const __m512 dxs = both_halves(_mm256_loadu_ps(x[c].scales + 8 * sb));
      acc[c] = _mm512_fmadd_ps(_mm512_mul_ps(_mm512_cvtepi32_ps(sums), dxs), d, acc[c]);
      acc[c] = _mm512_fnmadd_ps(_mm512_mul_ps(_mm512_cvtepi32_ps(min_sums), dxs), dmin, acc[c]);
    }
  }
  finish<C>(acc, out);
}

// IQ4_XS (ggml_dots_iq.cpp's dot_iq4_xs). AVX-512 has no vpsignb: the
// magnitudes are the absolute grid values (none is -128) and x is negated
// where the value is negative, the same products.
template <int C>
void pair_iq4_xs(const uint8_t* const (&rows)[2], int64_t blocks, const GgmlColumn* x, float* out) {
  __m512 acc[C];
  for (int c = 0; c < C; ++c) acc[c] = _mm512_setzero_ps();
  const __m512i table = _mm512_broadcast_i32x4(
      _mm_loadu_si128(reinterpret_cast<const __m128i*>(ggml::kValuesIq4nl.data())));
  const __m512i low4 = _mm512_set1_epi8(0x0F);
  const __m256i shift4 = _mm256_setr_epi32(0, 4, 8, 12, 16, 20, 24, 28);
  const __m256i shift2 = _mm256_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14);
  // Per 128-bit lane: row 0's low nibbles, its high ones, row 1's low, high.
  const __m512i high_lane4 = _mm512_setr_epi32(0, 0, 0, 0, 4, 4, 4, 4, 0, 0, 0, 0, 4, 4, 4, 4);
  for (int64_t sb = 0; sb < blocks; ++sb) {
    const uint8_t* const block[2] = {rows[0] + 136 * sb, rows[1] + 136 * sb};
    prefetch_block(block[0], 136);
    prefetch_block(block[1], 136);
    __m256 row_scales[2];
    for (int h = 0; h < 2; ++h) {
      uint32_t low_bits;
      std::memcpy(&low_bits, block[h] + 4, sizeof(low_bits));
      const __m256i low_ls = _mm256_and_si256(
          _mm256_srlv_epi32(_mm256_set1_epi32(static_cast<int32_t>(low_bits)), shift4),
          _mm256_set1_epi32(0xF));
      const __m256i high_ls = _mm256_and_si256(
          _mm256_srlv_epi32(_mm256_set1_epi32(block[h][2] | (block[h][3] << 8)), shift2),
          _mm256_set1_epi32(0x3));
      row_scales[h] = _mm256_cvtepi32_ps(_mm256_sub_epi32(
          _mm256_or_si256(low_ls, _mm256_slli_epi32(high_ls, 4)), _mm256_set1_epi32(32)));
    }
    const __m512 scales = _mm512_castsi512_ps(
        _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_castps_si256(row_scales[0])),
                           _mm256_castps_si256(row_scales[1]), 1));
    const __m512 d = halves_of(f16(block[0]), f16(block[1]));
    __m512i magnitude[8];
    __mmask64 negative[8];
#pragma GCC unroll 8
    for (int b = 0; b < 8; ++b) {
      const auto sixteen = [&](int h) {
        return _mm256_broadcastsi128_si256(
            _mm_loadu_si128(reinterpret_cast<const __m128i*>(block[h] + 8 + 16 * b)));
      };
      const __m512i bytes = _mm512_inserti64x4(_mm512_castsi256_si512(sixteen(0)), sixteen(1), 1);
      const __m512i w =
          _mm512_shuffle_epi8(table, _mm512_and_si512(_mm512_srlv_epi32(bytes, high_lane4), low4));
      magnitude[b] = _mm512_abs_epi8(w);
      negative[b] = _mm512_movepi8_mask(w);
    }
    for (int c = 0; c < C; ++c) {
      const int8_t* xs = x[c].values + 256 * sb;
      __m512i p[8];
#pragma GCC unroll 8
      for (int b = 0; b < 8; ++b) {
        const __m512i xb = both_halves(load32(xs + 32 * b));
        p[b] = dot(magnitude[b], _mm512_mask_sub_epi8(xb, negative[b], _mm512_setzero_si512(), xb));
      }
      const __m512 dxs = both_halves(_mm256_loadu_ps(x[c].scales + 8 * sb));
      acc[c] = _mm512_fmadd_ps(
          _mm512_mul_ps(_mm512_mul_ps(_mm512_cvtepi32_ps(pair_totals<false>(p)), dxs), scales), d,
          acc[c]);
    }
  }
  finish<C>(acc, out);
}

#define GLMRT_ROW_PAIR_KERNEL(name)         \
  GgmlRowPairKernel {                       \
    &name<1>, &name<2>, &name<kGgmlColumns> \
  }

}  // namespace

GgmlRowPairKernel ggml_row_pair_kernel(uint32_t ggml_type) {
  switch (ggml_type) {
    case GLMRT_GGML_Q4_K:
      return GLMRT_ROW_PAIR_KERNEL(pair_q4_k);
    case GLMRT_GGML_Q2_K:
      return GLMRT_ROW_PAIR_KERNEL(pair_q2_k);
    case GLMRT_GGML_IQ4_XS:
      return GLMRT_ROW_PAIR_KERNEL(pair_iq4_xs);
    default:
      return {};
  }
}

}  // namespace glmrt::kernels_avx2
