// The fixed-point group search (group_fit_fixed.h) on AVX2: the candidate fit
// in vector lanes, the other pieces the specification's own loops compiled
// for AVX2 (rounding in one instruction instead of a libm call). Compiled
// into the baseline core through target attributes and run only where the
// CPU has AVX2 (group_fit_fixed_backend.cpp).
#include <glmrt/base/cpu_features.h>

#include <immintrin.h>

#include "group_fit_fixed_group.h"

namespace glmrt::fixed_kernels::avx2 {
namespace {

// A register holds the 8 candidates on pairs of 16-bit lanes, each pair two
// consecutive values (one 32-bit broadcast); vpmaddwd adds a pair's products.
struct FitLanes {
  __m256i targets, lo, hi;
};

GLMRT_TARGET_AVX2_FMA __m256i broadcast_pair(const int16_t* p) {
  int32_t v;
  __builtin_memcpy(&v, p, sizeof v);
  return _mm256_set1_epi32(v);
}

// The sums of values i and i + 1 into (num, den).
template <bool kWeighted>
GLMRT_TARGET_AVX2_FMA void add_pair(const FitLanes& f, const int16_t* x, const int16_t* a16,
                                    const int16_t* ax, size_t i, __m256i& num, __m256i& den) {
  const __m256i xv = broadcast_pair(x + i);
  __m256i q = _mm256_mulhrs_epi16(xv, f.targets);
  q = _mm256_min_epi16(_mm256_max_epi16(q, f.lo), f.hi);
  if constexpr (kWeighted) {
    num = _mm256_add_epi32(num, _mm256_madd_epi16(q, broadcast_pair(ax + i)));
    den =
        _mm256_add_epi32(den, _mm256_madd_epi16(_mm256_mullo_epi16(q, q), broadcast_pair(a16 + i)));
  } else {
    num = _mm256_add_epi32(num, _mm256_madd_epi16(q, xv));
    den = _mm256_add_epi32(den, _mm256_madd_epi16(q, q));
  }
}

template <bool kWeighted>
GLMRT_TARGET_AVX2_FMA FixedFit fit_lanes(const int16_t* x, const int16_t* a16, const int16_t* ax,
                                         size_t n, const int16_t (&t)[kFixedCandidates], int qmin,
                                         int qmax) {
  alignas(32) int16_t lanes[16];
  for (int l = 0; l < 16; ++l) lanes[l] = t[l / 2];
  const FitLanes f{_mm256_load_si256(reinterpret_cast<const __m256i*>(lanes)),
                   _mm256_set1_epi16(static_cast<int16_t>(qmin)),
                   _mm256_set1_epi16(static_cast<int16_t>(qmax))};
  int64_t nums[kFixedCandidates] = {}, dens[kFixedCandidates] = {};
  for (size_t start = 0; start < n; start += kFixedFlushValues) {
    const size_t end = std::min(n, start + kFixedFlushValues);
    __m256i num0 = _mm256_setzero_si256(), num1 = num0, den0 = num0, den1 = num0;
    size_t i = start;
    for (; i + 4 <= end; i += 4) {
      add_pair<kWeighted>(f, x, a16, ax, i, num0, den0);
      add_pair<kWeighted>(f, x, a16, ax, i + 2, num1, den1);
    }
    for (; i < end; i += 2)  // x is zero-padded past n
      add_pair<kWeighted>(f, x, a16, ax, i, num0, den0);
    alignas(32) int32_t ns[8], ds[8];
    _mm256_store_si256(reinterpret_cast<__m256i*>(ns), _mm256_add_epi32(num0, num1));
    _mm256_store_si256(reinterpret_cast<__m256i*>(ds), _mm256_add_epi32(den0, den1));
    for (size_t c = 0; c < kFixedCandidates; ++c) {
      nums[c] += ns[c];
      dens[c] += ds[c];
    }
  }
  return best_fixed_fit(nums, dens);
}

GLMRT_TARGET_AVX2_FMA FixedFit fit(const int16_t* x, const int16_t* a16, const int16_t* ax,
                                   size_t n, const int16_t (&t)[kFixedCandidates], int qmin,
                                   int qmax) {
  return a16 ? fit_lanes<true>(x, a16, ax, n, t, qmin, qmax)
             : fit_lanes<false>(x, nullptr, nullptr, n, t, qmin, qmax);
}

GLMRT_TARGET_AVX2_FMA float signed_extreme(std::span<const float> w) {
  return signed_extreme_of_values(w);
}

GLMRT_TARGET_AVX2_FMA void to_fixed(std::span<const float> w, float scale, int16_t* x,
                                    size_t capacity) {
  to_fixed_scalar(w, scale, x, capacity);
}

GLMRT_TARGET_AVX2_FMA void weights_to_fixed(std::span<const float> a, const int16_t* x,
                                            int16_t* a16, int16_t* ax, size_t capacity) {
  weights_to_fixed_scalar(a, x, a16, ax, capacity);
}

GLMRT_TARGET_AVX2_FMA void codes(const int16_t* x, size_t n, int16_t t, int qmin, int qmax,
                                 signed char* q) {
  codes_fixed_scalar(x, n, t, qmin, qmax, q);
}

GLMRT_TARGET_AVX2_FMA float quantize(std::span<const float> w, std::span<const float> a,
                                     const int16_t (&t)[kFixedCandidates], int qmin, int qmax,
                                     signed char* q) {
  return quantize_group<signed_extreme, to_fixed, weights_to_fixed, fit, codes>(w, a, t, qmin, qmax,
                                                                                q);
}

}  // namespace
}  // namespace glmrt::fixed_kernels::avx2

namespace glmrt::fixed_kernels {

const FixedBackend kAvx2FixedBackend = {"avx2", avx2::signed_extreme, avx2::quantize};

}  // namespace glmrt::fixed_kernels
