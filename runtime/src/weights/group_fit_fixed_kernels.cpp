#include "group_fit_fixed_kernels.h"

#if defined(__AVX2__)
#include <immintrin.h>
#endif

// GCC 12 flags the _mm512_undefined_*() inside its own intrinsics as
// (maybe-)uninitialized: a false positive of the headers, not of this code.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"

namespace glmrt::fixed_kernels {
namespace {

#if defined(__AVX512BW__) && defined(__AVX512VNNI__) && defined(__AVX512DQ__)
constexpr const char* kBackend = "avx512-vnni";

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

template <bool kWeighted>
FixedFit fit_lanes(const int16_t* x, const int16_t* a16, const int16_t* ax, size_t n,
                   const int16_t (&t)[kFixedCandidates], int qmin, int qmax) {
  const __m512i targets = _mm512_permutexvar_epi16(
      _mm512_load_si512(kSpread.candidate),
      _mm512_castsi128_si512(_mm_loadu_si128(reinterpret_cast<const __m128i*>(t))));
  const __m512i spread = _mm512_load_si512(kSpread.value_bytes);
  const __m512i lo = _mm512_set1_epi16(static_cast<int16_t>(qmin));
  const __m512i hi = _mm512_set1_epi16(static_cast<int16_t>(qmax));
  const auto block = [&](const int16_t* p) {
    int64_t v;
    __builtin_memcpy(&v, p, sizeof v);
    return _mm512_shuffle_epi8(_mm512_set1_epi64(v), spread);
  };
  // The sums of one block of four values into (num, den).
  const auto add_block = [&](size_t i, __m512i& num, __m512i& den) {
    const __m512i xv = block(x + i);
    __m512i q = _mm512_mulhrs_epi16(xv, targets);
    q = _mm512_min_epi16(_mm512_max_epi16(q, lo), hi);
    if constexpr (kWeighted) {
      num = _mm512_dpwssd_epi32(num, q, block(ax + i));
      den = _mm512_dpwssd_epi32(den, _mm512_mullo_epi16(q, q), block(a16 + i));
    } else {
      num = _mm512_dpwssd_epi32(num, q, xv);
      den = _mm512_dpwssd_epi32(den, q, q);
    }
  };
  const auto widen = [](__m512i v) {
    const __m256i per_candidate =
        _mm256_add_epi32(_mm512_castsi512_si256(v), _mm512_extracti64x4_epi64(v, 1));
    return _mm512_cvtepi32_epi64(per_candidate);
  };
  __m512i num_total = _mm512_setzero_si512(), den_total = _mm512_setzero_si512();
  for (size_t start = 0; start < n; start += kFixedFlushValues) {
    const size_t end = std::min(n, start + kFixedFlushValues);
    // Two chains each, so a block does not wait on the previous one's sums.
    __m512i num0 = _mm512_setzero_si512(), num1 = num0, den0 = num0, den1 = num0;
    size_t i = start;
    for (; i + 8 <= end; i += 8) {
      add_block(i, num0, den0);
      add_block(i + 4, num1, den1);
    }
    for (; i < end; i += 4) add_block(i, num0, den0);  // x is zero-padded past n
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

// The first min(left, 16) lanes.
__mmask16 tail_mask(size_t left) {
  return static_cast<__mmask16>(left >= 16 ? 0xffffu : (1u << left) - 1);
}

float signed_extreme_lanes(std::span<const float> w) {
  __m512 hi = _mm512_setzero_ps(), lo = hi;
  for (size_t i = 0; i < w.size(); i += 16) {
    const __m512 v =
        _mm512_maskz_loadu_ps(tail_mask(w.size() - i), w.data() + i);  // zeros past the end
    hi = _mm512_max_ps(hi, v);
    lo = _mm512_min_ps(lo, v);
  }
  return signed_extreme_of(_mm512_reduce_max_ps(hi), _mm512_reduce_min_ps(lo));
}

void to_fixed_lanes(std::span<const float> w, float scale, int16_t* x, size_t capacity) {
  const __m512 s = _mm512_set1_ps(scale);
  size_t i = 0;
  for (; i < w.size(); i += 16) {
    const __m512i v = _mm512_cvtps_epi32(
        _mm512_mul_ps(_mm512_maskz_loadu_ps(tail_mask(w.size() - i), w.data() + i), s));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(x + i), _mm512_cvtepi32_epi16(v));
  }
  std::fill(x + i, x + capacity, int16_t{0});
}

void weights_to_fixed_lanes(std::span<const float> a, const int16_t* x, int16_t* a16, int16_t* ax,
                            size_t capacity) {
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

void codes_lanes(const int16_t* x, size_t n, int16_t t, int qmin, int qmax, signed char* q) {
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
#elif defined(__AVX2__)
constexpr const char* kBackend = "avx2";

// A register holds the 8 candidates on pairs of 16-bit lanes, each pair two
// consecutive values (one 32-bit broadcast); vpmaddwd adds a pair's products.
template <bool kWeighted>
FixedFit fit_lanes(const int16_t* x, const int16_t* a16, const int16_t* ax, size_t n,
                   const int16_t (&t)[kFixedCandidates], int qmin, int qmax) {
  alignas(32) int16_t lanes[16];
  for (int l = 0; l < 16; ++l) lanes[l] = t[l / 2];
  const __m256i targets = _mm256_load_si256(reinterpret_cast<const __m256i*>(lanes));
  const __m256i lo = _mm256_set1_epi16(static_cast<int16_t>(qmin));
  const __m256i hi = _mm256_set1_epi16(static_cast<int16_t>(qmax));
  const auto pair = [](const int16_t* p) {
    int32_t v;
    __builtin_memcpy(&v, p, sizeof v);
    return _mm256_set1_epi32(v);
  };
  int64_t nums[kFixedCandidates] = {}, dens[kFixedCandidates] = {};
  for (size_t start = 0; start < n; start += kFixedFlushValues) {
    const size_t end = std::min(n, start + kFixedFlushValues);
    const auto add_pair = [&](size_t i, __m256i& num, __m256i& den) {
      const __m256i xv = pair(x + i);
      __m256i q = _mm256_mulhrs_epi16(xv, targets);
      q = _mm256_min_epi16(_mm256_max_epi16(q, lo), hi);
      if constexpr (kWeighted) {
        num = _mm256_add_epi32(num, _mm256_madd_epi16(q, pair(ax + i)));
        den = _mm256_add_epi32(den, _mm256_madd_epi16(_mm256_mullo_epi16(q, q), pair(a16 + i)));
      } else {
        num = _mm256_add_epi32(num, _mm256_madd_epi16(q, xv));
        den = _mm256_add_epi32(den, _mm256_madd_epi16(q, q));
      }
    };
    __m256i num0 = _mm256_setzero_si256(), num1 = num0, den0 = num0, den1 = num0;
    size_t i = start;
    for (; i + 4 <= end; i += 4) {
      add_pair(i, num0, den0);
      add_pair(i + 2, num1, den1);
    }
    for (; i < end; i += 2) add_pair(i, num0, den0);  // x is zero-padded past n
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

#else
constexpr const char* kBackend = "scalar";
template <bool kWeighted>
FixedFit fit_lanes(const int16_t* x, const int16_t* a16, const int16_t* ax, size_t n,
                   const int16_t (&t)[kFixedCandidates], int qmin, int qmax) {
  return fit_fixed_scalar<kWeighted>(x, a16, ax, n, t, qmin, qmax);
}
#endif

#if !defined(__AVX512BW__) || !defined(__AVX512VNNI__) || !defined(__AVX512DQ__)
// Without AVX-512 only the fit is vectorized (AVX2) or nothing is: the rest is
// the specification itself.
float signed_extreme_lanes(std::span<const float> w) {
  return signed_extreme_scalar(w);
}
void to_fixed_lanes(std::span<const float> w, float scale, int16_t* x, size_t capacity) {
  to_fixed_scalar(w, scale, x, capacity);
}
void codes_lanes(const int16_t* x, size_t n, int16_t t, int qmin, int qmax, signed char* q) {
  codes_fixed_scalar(x, n, t, qmin, qmax, q);
}
void weights_to_fixed_lanes(std::span<const float> a, const int16_t* x, int16_t* a16, int16_t* ax,
                            size_t capacity) {
  weights_to_fixed(a, x, a16, ax, capacity);
}
#endif

}  // namespace

const char* const kVectorBackend = kBackend;

void to_fixed_vector(std::span<const float> w, float scale, int16_t* x, size_t capacity) {
  to_fixed_lanes(w, scale, x, capacity);
}

void weights_to_fixed_vector(std::span<const float> a, const int16_t* x, int16_t* a16, int16_t* ax,
                             size_t capacity) {
  weights_to_fixed_lanes(a, x, a16, ax, capacity);
}

FixedFit fit_fixed_vector(const int16_t* x, const int16_t* a16, const int16_t* ax, size_t n,
                          const int16_t (&t)[kFixedCandidates], int qmin, int qmax) {
  return a16 ? fit_lanes<true>(x, a16, ax, n, t, qmin, qmax)
             : fit_lanes<false>(x, nullptr, nullptr, n, t, qmin, qmax);
}

void codes_fixed_vector(const int16_t* x, size_t n, int16_t t, int qmin, int qmax, signed char* q) {
  codes_lanes(x, n, t, qmin, qmax, q);
}

}  // namespace glmrt::fixed_kernels

namespace glmrt {

float signed_extreme(std::span<const float> w) {
  return fixed_kernels::signed_extreme_lanes(w);
}

}  // namespace glmrt

#pragma GCC diagnostic pop
