// What the lane kernels (ggml_lanes.h) share, in the sources built with
// -mavxvnni only: the 8 x 8 transpose that packs rows into lanes, the
// integer sums of packed codes against broadcast inputs, the final sum in
// the row kernels' order, and the dispatch on the number of activation rows.
// The kernels: ggml_lanes.cpp (q8_0, q4_0, q4_k), ggml_lanes_k.cpp (q2_k, q6_k).
#pragma once

#include "ggml_lane_vectors.h"
#include "ggml_lanes.h"

#include <type_traits>

// The helpers of the VNNI build of the row-at-a-time kernels.
#define GLMRT_GGML_DOTS_VNNI 1
#include "ggml_dot_kernels.h"

namespace glmrt::kernels_avx2::lanes {

using ggml_dots_vnni::f16;
using ggml_dots_vnni::load32;
using ggml_dots_vnni::q4_0_codes;
using ggml_dots_vnni::q4_k_scales_mins;

/// rows[i] holds 8 chunks of 4 bytes of row i; afterwards rows[k] holds
/// chunk k of every row, row i in lane i (an 8 x 8 transpose of 32-bit lanes).
GLMRT_ALWAYS_INLINE void transpose(__m256i (&r)[8]) {
  __m256i t[8], u[8];
  for (int p = 0; p < 4; ++p) {
    t[2 * p] = _mm256_unpacklo_epi32(r[2 * p], r[2 * p + 1]);
    t[2 * p + 1] = _mm256_unpackhi_epi32(r[2 * p], r[2 * p + 1]);
  }
  for (int h = 0; h < 2; ++h) {
    const __m256i *lo = t + 4 * h, *hi = t + 4 * h + 2;
    u[4 * h + 0] = _mm256_unpacklo_epi64(lo[0], hi[0]);
    u[4 * h + 1] = _mm256_unpackhi_epi64(lo[0], hi[0]);
    u[4 * h + 2] = _mm256_unpacklo_epi64(lo[1], hi[1]);
    u[4 * h + 3] = _mm256_unpackhi_epi64(lo[1], hi[1]);
  }
  for (int k = 0; k < 4; ++k) {
    r[k] = _mm256_permute2x128_si256(u[k], u[4 + k], 0x20);
    r[4 + k] = _mm256_permute2x128_si256(u[k], u[4 + k], 0x31);
  }
}

/// Stores 32 unsigned codes of each packed row (codes[i], row i) as 8 chunks
/// of 32 bytes, chunk k holding codes 4k..4k+3 of every row.
GLMRT_ALWAYS_INLINE void store_chunks(__m256i (&codes)[8], uint8_t* out) {
  transpose(codes);
  for (int k = 0; k < 8; ++k)
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + 32 * k), codes[k]);
}

/// Each row's exact sum of its 32 codes times x[0..31] (codes as store_chunks lays them).
template <class V = Lanes8>
GLMRT_ALWAYS_INLINE typename V::I chunk_sums(const uint8_t* chunks, const int8_t* x) {
  constexpr int kUnit = 32 * V::kWiden;
  typename V::I even = V::izero(), odd = V::izero();
#pragma GCC unroll 4
  for (int k = 0; k < 8; k += 2) {
    even = V::dot(even, V::load(chunks + kUnit * k), x + 4 * k);
    odd = V::dot(odd, V::load(chunks + kUnit * (k + 1)), x + 4 * k + 4);
  }
  return V::add(even, odd);
}

/// Each row's exact sum of its 32 codes times x[0..31], the codes as 8
/// chunks in registers (chunk k: inputs 4k..4k+3, row i in lane i).
template <class V = Lanes8>
GLMRT_ALWAYS_INLINE typename V::I codes_sums(const typename V::I (&codes)[8], const int8_t* x) {
  typename V::I even = V::izero(), odd = V::izero();
  for (int k = 0; k < 8; k += 2) {
    even = V::dot(even, codes[k], x + 4 * k);
    odd = V::dot(odd, codes[k + 1], x + 4 * k + 4);
  }
  return V::add(even, odd);
}

/// q4_k's float step for sub-block (activation group) g of the rows, as its
/// row kernel takes it: acc + codes * dxs * scale * d - x_sums * min * dmin.
template <class V = Lanes8, class F = typename V::F>
GLMRT_ALWAYS_INLINE F q4_k_lane_step(F acc, typename V::I sums, const GgmlColumn& x, int64_t g,
                                     F scale, F min, F d, F dmin) {
  const float dxs = x.scales[g];
  const float x_sums = static_cast<float>(x.sums16[2 * g] + x.sums16[2 * g + 1]) * dxs;
  const F codes = V::fmul(V::to_float(sums), V::fset(dxs));
  acc = V::fmadd(V::fmul(codes, scale), d, acc);
  return V::fnmadd(V::fmul(V::fset(x_sums), min), dmin, acc);
}

/// Per lane, horizontal_sum's tree over the 8 partial sums a row-at-a-time
/// kernel keeps in its lanes: ((f0 + f4) + (f2 + f6)) + ((f1 + f5) + (f3 + f7)).
template <class V = Lanes8, class F = typename V::F>
GLMRT_ALWAYS_INLINE F lane_totals(const F (&f)[8]) {
  return V::fadd(V::fadd(V::fadd(f[0], f[4]), V::fadd(f[2], f[6])),
                 V::fadd(V::fadd(f[1], f[5]), V::fadd(f[3], f[7])));
}

/// Each row's exact sums of its codes times x over inputs 0-15 and 16-31
/// (the types with a scale per 16 values).
template <class V>
GLMRT_ALWAYS_INLINE void half_sums(const uint8_t* chunks, const int8_t* x, typename V::I& first,
                                   typename V::I& second) {
  constexpr int kUnit = 32 * V::kWiden;
  first = V::izero();
  second = V::izero();
#pragma GCC unroll 4
  for (int k = 0; k < 4; ++k) {
    first = V::dot(first, V::load(chunks + kUnit * k), x + 4 * k);
    second = V::dot(second, V::load(chunks + kUnit * (k + 4)), x + 16 + 4 * k);
  }
}

/// The lanes of 8 rows' one-byte fields (by_field[f][row]) as int32 vectors.
template <int kFields>
GLMRT_ALWAYS_INLINE void store_fields(const uint8_t (&by_field)[kFields][kLaneRows], bool is_signed,
                                      int32_t* out) {
  for (int f = 0; f < kFields; ++f) {
    const __m128i bytes = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(by_field[f]));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + f * kLaneRows),
                        is_signed ? _mm256_cvtepi8_epi32(bytes) : _mm256_cvtepu8_epi32(bytes));
  }
}

/// The loop every lane kernel runs: for each of the 8 partial sums a row
/// kernel keeps in its lanes (j: blocks j, j + 8, ... of a row), C
/// accumulators start at zero and `step(j, k, acc)` adds the k-th of the
/// `per_lane` blocks that partial sum takes, in row order; then each
/// activation row's 8 partial sums are added in horizontal_sum's order.
template <class V, int C, class Step>
GLMRT_ALWAYS_INLINE void meet_lanes(int64_t per_lane, float* out, Step step) {
  typename V::F f[C][8];
  for (int j = 0; j < 8; ++j) {
    typename V::F acc[C];
    for (int c = 0; c < C; ++c) acc[c] = V::fzero();
    for (int64_t k = 0; k < per_lane; ++k) step(j, k, acc);
    for (int c = 0; c < C; ++c) f[c][j] = acc[c];
  }
  for (int c = 0; c < C; ++c) V::store(out + V::kRows * c, lane_totals<V>(f[c]));
}

/// run(std::integral_constant<int, C>{}) for C = columns, 1 to kGgmlColumns:
/// the kernels are templates on their number of activation rows.
template <class Run>
GLMRT_ALWAYS_INLINE void with_columns(int columns, Run run) {
  switch (columns) {
    case 1:
      return run(std::integral_constant<int, 1>{});
    case 2:
      return run(std::integral_constant<int, 2>{});
    case 3:
      return run(std::integral_constant<int, 3>{});
    default:
      return run(std::integral_constant<int, 4>{});
  }
}
static_assert(kGgmlColumns == 4, "with_columns covers 1 to 4 activation rows");

/// A Meet<V, C>::run for 1 to kGgmlColumns activation rows.
template <class V, template <class, int> class Meet>
void meet_columns(const uint8_t* packed, int64_t blocks, const GgmlColumn* x, int columns,
                  float* out) {
  with_columns(columns, [&](auto c) { Meet<V, c()>::run(packed, blocks, x, out); });
}

/// Packing of the K-quants with a scale per 16 values (ggml_lanes_k.cpp).
size_t packed_bytes_q2_k(int64_t blocks);
void pack_q2_k(const uint8_t* rows, int64_t row_stride, int64_t blocks, uint8_t* packed);
size_t packed_bytes_q6_k(int64_t blocks);
void pack_q6_k(const uint8_t* rows, int64_t row_stride, int64_t blocks, uint8_t* packed);

}  // namespace glmrt::kernels_avx2::lanes
