// The fixed-point group search (group_fit_fixed.h) on AVX-512 BW/DQ/VL/VNNI:
// every piece vectorized. Compiled into the baseline core through target
// attributes and run only where the CPU has them (group_fit_fixed_backend.cpp).
#include <glmrt/base/cpu_features.h>

#include <immintrin.h>

#include "group_fit_fixed_group.h"

// GCC 12 flags the _mm512_undefined_*() inside its own intrinsics as
// (maybe-)uninitialized: a false positive of the headers, not of this code.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"

namespace glmrt::fixed_kernels::avx512 {
namespace {

// A register holds 32 16-bit lanes: 8 candidates x 2 values x 2 value pairs.
// 128-bit chunk k holds the candidates 4 (k % 2) .. 4 (k % 2) + 3, each on a
// pair of lanes, for values 2 (k / 2) and 2 (k / 2) + 1 of a block of four:
// vpdpwssd adds a pair's two products into one 32-bit lane, so lane j sums
// candidate j % 8 over its half of the values and the two 256-bit halves add
// up to one sum per candidate.
// Lane l's candidate and value (of the broadcast block of four), as tables.
struct SpreadTables {
  alignas(64) int16_t candidate[32];
  alignas(64) int8_t value_bytes[64];
};
constexpr SpreadTables kSpread = [] {
  SpreadTables tables{};
  for (int l = 0; l < 32; ++l) {
    const int chunk = l / 8, in_chunk = l % 8, value = 2 * (chunk / 2) + in_chunk % 2;
    tables.candidate[l] = static_cast<int16_t>(4 * (chunk % 2) + in_chunk / 2);
    tables.value_bytes[2 * l] = static_cast<int8_t>(2 * value);
    tables.value_bytes[2 * l + 1] = static_cast<int8_t>(2 * value + 1);
  }
  return tables;
}();

// The registers one fit shares across its blocks.
struct FitLanes {
  __m512i targets, spread, lo, hi;
};

// Four values from p, spread over the lanes as kSpread says.
GLMRT_TARGET_AVX512 __m512i spread_block(const FitLanes& f, const int16_t* p) {
  int64_t v;
  __builtin_memcpy(&v, p, sizeof v);
  return _mm512_shuffle_epi8(_mm512_set1_epi64(v), f.spread);
}

// The sums of one block of four values into (num, den).
template <bool kWeighted>
GLMRT_TARGET_AVX512 void add_block(const FitLanes& f, const int16_t* x, const int16_t* a16,
                                   const int16_t* ax, size_t i, __m512i& num, __m512i& den) {
  const __m512i xv = spread_block(f, x + i);
  __m512i q = _mm512_mulhrs_epi16(xv, f.targets);
  q = _mm512_min_epi16(_mm512_max_epi16(q, f.lo), f.hi);
  if constexpr (kWeighted) {
    num = _mm512_dpwssd_epi32(num, q, spread_block(f, ax + i));
    den = _mm512_dpwssd_epi32(den, _mm512_mullo_epi16(q, q), spread_block(f, a16 + i));
  } else {
    num = _mm512_dpwssd_epi32(num, q, xv);
    den = _mm512_dpwssd_epi32(den, q, q);
  }
}

// One 64-bit sum per candidate from the two halves' 32-bit lanes.
GLMRT_TARGET_AVX512 __m512i widen(__m512i v) {
  const __m256i per_candidate =
      _mm256_add_epi32(_mm512_castsi512_si256(v), _mm512_extracti64x4_epi64(v, 1));
  return _mm512_cvtepi32_epi64(per_candidate);
}

template <bool kWeighted>
GLMRT_TARGET_AVX512 FixedFit fit_lanes(const int16_t* x, const int16_t* a16, const int16_t* ax,
                                       size_t n, const int16_t (&t)[kFixedCandidates], int qmin,
                                       int qmax) {
  const FitLanes f{
      _mm512_permutexvar_epi16(
          _mm512_load_si512(kSpread.candidate),
          _mm512_castsi128_si512(_mm_loadu_si128(reinterpret_cast<const __m128i*>(t)))),
      _mm512_load_si512(kSpread.value_bytes), _mm512_set1_epi16(static_cast<int16_t>(qmin)),
      _mm512_set1_epi16(static_cast<int16_t>(qmax))};
  __m512i num_total = _mm512_setzero_si512(), den_total = _mm512_setzero_si512();
  for (size_t start = 0; start < n; start += kFixedFlushValues) {
    const size_t end = std::min(n, start + kFixedFlushValues);
    // Two chains each, so a block does not wait on the previous one's sums.
    __m512i num0 = _mm512_setzero_si512(), num1 = num0, den0 = num0, den1 = num0;
    size_t i = start;
    for (; i + 8 <= end; i += 8) {
      add_block<kWeighted>(f, x, a16, ax, i, num0, den0);
      add_block<kWeighted>(f, x, a16, ax, i + 4, num1, den1);
    }
    for (; i < end; i += 4)  // x is zero-padded past n
      add_block<kWeighted>(f, x, a16, ax, i, num0, den0);
    num_total = _mm512_add_epi64(num_total, widen(_mm512_add_epi32(num0, num1)));
    den_total = _mm512_add_epi64(den_total, widen(_mm512_add_epi32(den0, den1)));
  }
  // best_fixed_fit in registers: the same IEEE operations on all 8 at once.
  const __m512d num_d = _mm512_cvtepi64_pd(num_total), den_d = _mm512_cvtepi64_pd(den_total);
  const __mmask8 fits = _mm512_cmp_pd_mask(den_d, _mm512_setzero_pd(), _CMP_GT_OQ);
  const __m512d gains =
      _mm512_mask_div_pd(_mm512_set1_pd(-1.0), fits, _mm512_mul_pd(num_d, num_d), den_d);
  const unsigned hits =
      _mm512_cmp_pd_mask(gains, _mm512_set1_pd(_mm512_reduce_max_pd(gains)), _CMP_EQ_OQ);
  const size_t best = static_cast<size_t>(__builtin_ctz(hits | 0x100u));
  alignas(64) int64_t nums[kFixedCandidates], dens[kFixedCandidates];
  _mm512_store_si512(nums, num_total);
  _mm512_store_si512(dens, den_total);
  return best < kFixedCandidates ? FixedFit{best, nums[best], dens[best]}
                                 : FixedFit{0, nums[0], dens[0]};
}

GLMRT_TARGET_AVX512 FixedFit fit(const int16_t* x, const int16_t* a16, const int16_t* ax, size_t n,
                                 const int16_t (&t)[kFixedCandidates], int qmin, int qmax) {
  return a16 ? fit_lanes<true>(x, a16, ax, n, t, qmin, qmax)
             : fit_lanes<false>(x, nullptr, nullptr, n, t, qmin, qmax);
}

// The first min(left, 16) lanes.
__mmask16 tail_mask(size_t left) {
  return static_cast<__mmask16>(left >= 16 ? 0xffffu : (1u << left) - 1);
}

GLMRT_TARGET_AVX512 float signed_extreme(std::span<const float> w) {
  __m512 hi = _mm512_setzero_ps(), lo = hi;
  for (size_t i = 0; i < w.size(); i += 16) {
    const __m512 v =
        _mm512_maskz_loadu_ps(tail_mask(w.size() - i), w.data() + i);  // zeros past the end
    hi = _mm512_max_ps(hi, v);
    lo = _mm512_min_ps(lo, v);
  }
  return signed_extreme_of(_mm512_reduce_max_ps(hi), _mm512_reduce_min_ps(lo));
}

GLMRT_TARGET_AVX512 void to_fixed(std::span<const float> w, float scale, int16_t* x,
                                  size_t capacity) {
  const __m512 s = _mm512_set1_ps(scale);
  size_t i = 0;
  for (; i < w.size(); i += 16) {
    const __m512i v = _mm512_cvtps_epi32(
        _mm512_mul_ps(_mm512_maskz_loadu_ps(tail_mask(w.size() - i), w.data() + i), s));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(x + i), _mm512_cvtepi32_epi16(v));
  }
  std::fill(x + i, x + capacity, int16_t{0});
}

GLMRT_TARGET_AVX512 void weights_to_fixed(std::span<const float> a, const int16_t* x, int16_t* a16,
                                          int16_t* ax, size_t capacity) {
  __m512 top = _mm512_setzero_ps();
  for (size_t i = 0; i < a.size(); i += 16)
    top = _mm512_max_ps(top, _mm512_maskz_loadu_ps(tail_mask(a.size() - i), a.data() + i));
  const __m512 k = _mm512_set1_ps(static_cast<float>(kWeightOne) / _mm512_reduce_max_ps(top));
  size_t i = 0;
  for (; i < a.size(); i += 16) {
    const __m512 v = _mm512_maskz_loadu_ps(tail_mask(a.size() - i), a.data() + i);
    const __m256i w16 = _mm512_cvtepi32_epi16(_mm512_cvtps_epi32(_mm512_mul_ps(v, k)));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(a16 + i), w16);
    const __m256i xv = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + i));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(ax + i), _mm256_mulhrs_epi16(w16, xv));
  }
  std::fill(a16 + i, a16 + capacity, int16_t{0});
  std::fill(ax + i, ax + capacity, int16_t{0});
}

GLMRT_TARGET_AVX512 void codes(const int16_t* x, size_t n, int16_t t, int qmin, int qmax,
                               signed char* q) {
  const __m512i tv = _mm512_set1_epi16(t);
  const __m512i lo = _mm512_set1_epi16(static_cast<int16_t>(qmin));
  const __m512i hi = _mm512_set1_epi16(static_cast<int16_t>(qmax));
  for (size_t i = 0; i < n; i += 32) {
    __m512i c = _mm512_mulhrs_epi16(_mm512_loadu_si512(x + i), tv);
    c = _mm512_min_epi16(_mm512_max_epi16(c, lo), hi);
    const size_t left = n - i;
    const __mmask32 mask = left >= 32 ? ~__mmask32{0} : (__mmask32{1} << left) - 1;
    _mm512_mask_cvtepi16_storeu_epi8(q + i, mask, c);
  }
}

GLMRT_TARGET_AVX512 float quantize(std::span<const float> w, std::span<const float> a,
                                   const int16_t (&t)[kFixedCandidates], int qmin, int qmax,
                                   signed char* q) {
  return quantize_group<signed_extreme, to_fixed, weights_to_fixed, fit, codes>(w, a, t, qmin, qmax,
                                                                                q);
}

}  // namespace
}  // namespace glmrt::fixed_kernels::avx512

namespace glmrt::fixed_kernels {

const FixedBackend kAvx512FixedBackend = {"avx512-vnni", avx512::signed_extreme, avx512::quantize};

}  // namespace glmrt::fixed_kernels

#pragma GCC diagnostic pop
