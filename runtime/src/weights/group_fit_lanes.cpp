#include "group_fit_lanes.h"

#include <algorithm>
#include <cmath>

#if defined(__AVX512F__) || (defined(__AVX2__) && defined(__FMA__))
#include <immintrin.h>
#endif

namespace glmrt {
namespace {

constexpr size_t kPartials = 4;  // value i goes into partial sum i % 4

// w * inv rounded to the nearest integer (ties to even) as one fused
// multiply-add and a subtraction: adding 1.5 * 2^23 leaves no fraction bits,
// so the single rounding of the fma is the rounding to an integer (exact for
// |w * inv| < 2^22; the candidates keep it under 10). Two operations where
// multiply-then-round takes three, in the loop the search spends its time in.
constexpr float kRoundBias = 12582912.0f;

float fit_code_of(float w, float inv, float qmin, float qmax) {
  float r = std::fma(w, inv, kRoundBias) - kRoundBias;
  r = r < qmin ? qmin : r;
  return r > qmax ? qmax : r;
}

// The pick every backend makes from its per-lane sums.
BestFit best_of(const float (&num)[kFitCandidates], const float (&den)[kFitCandidates]) {
  double gains[kFitCandidates];
  for (size_t c = 0; c < kFitCandidates; ++c) {
    const double n = num[c], d = den[c];
    gains[c] = d > 0 ? n * n / d : -1.0;
  }
  size_t best = 0;
  for (size_t c = 1; c < kFitCandidates; ++c)
    if (gains[c] > gains[best]) best = c;
  return {best, num[best], den[best]};
}

template <bool kWeighted>
BestFit fit_scalar(std::span<const float> w, const float* a, const float (&invs)[kFitCandidates],
                   float qmin, float qmax) {
  float sum_num[kFitCandidates], sum_den[kFitCandidates];
  for (size_t c = 0; c < kFitCandidates; ++c) {
    float num[kPartials] = {}, den[kPartials] = {};
    for (size_t i = 0; i < w.size(); ++i) {
      const float r = fit_code_of(w[i], invs[c], qmin, qmax);
      const size_t p = i % kPartials;
      if constexpr (kWeighted) {
        num[p] = std::fma(r, w[i] * a[i], num[p]);
        den[p] = std::fma(r * a[i], r, den[p]);
      } else {
        num[p] = std::fma(w[i], r, num[p]);
        den[p] = std::fma(r, r, den[p]);
      }
    }
    sum_num[c] = (num[0] + num[1]) + (num[2] + num[3]);
    sum_den[c] = (den[0] + den[1]) + (den[2] + den[3]);
  }
  return best_of(sum_num, sum_den);
}

void codes_scalar(std::span<const float> w, size_t first, float inv, float qmin, float qmax,
                  signed char* q) {
  for (size_t i = first; i < w.size(); ++i)
    q[i] = static_cast<signed char>(fit_code_of(w[i], inv, qmin, qmax));
}

float first_with_magnitude(std::span<const float> w, size_t first, float amax) {
  for (size_t i = first; i < w.size(); ++i)
    if (std::fabs(w[i]) == amax) return w[i];
  return amax;
}

[[maybe_unused]] float largest_magnitude_scalar(std::span<const float> w) {
  float amax = 0.f;
  for (float v : w) amax = std::max(amax, std::fabs(v));
  return first_with_magnitude(w, 0, amax);
}

#if defined(__AVX512F__) || (defined(__AVX2__) && defined(__FMA__))
#endif

#if defined(__AVX512F__)
constexpr const char* kFitBackend = "avx512";

// GCC 12 flags the _mm512_undefined_ps() inside its own intrinsics as
// (maybe-)uninitialized (a false positive of the headers, not of this code).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
// One register holds the 8 candidates twice: lanes 0-7 fit value i, lanes
// 8-15 value i + 1, so each operation does two values' work. Register pair
// `front` takes the values with i % 4 in {0, 1} (its halves are partials 0
// and 1), `back` those with i % 4 in {2, 3}: the halves' sums are the
// specification's partials, added at the end in its order. A short last
// block is padded with zeros, whose codes are 0 and add exactly nothing.
template <bool kWeighted>
BestFit fit_vector(std::span<const float> w, const float* a, const float (&invs)[kFitCandidates],
                   float qmin, float qmax) {
  const __m256 inv8 = _mm256_loadu_ps(invs);
  const __m512 inv = _mm512_castpd_ps(_mm512_insertf64x4(
      _mm512_castps_pd(_mm512_castps256_ps512(inv8)), _mm256_castps_pd(inv8), 1));
  const __m512 lo = _mm512_set1_ps(qmin), hi = _mm512_set1_ps(qmax);
  const __m512 bias = _mm512_set1_ps(kRoundBias);
  // Lanes 0-7 take element 0 of a 4-value block, lanes 8-15 element 1 (or 2, 3).
  const __m512i pick01 = _mm512_set_epi32(1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0);
  const __m512i pick23 = _mm512_set_epi32(3, 3, 3, 3, 3, 3, 3, 3, 2, 2, 2, 2, 2, 2, 2, 2);
  __m512 num[2] = {_mm512_setzero_ps(), _mm512_setzero_ps()};
  __m512 den[2] = {_mm512_setzero_ps(), _mm512_setzero_ps()};
  // Four values (and their weights) at a time.
  const auto block = [&](__m128 x4, __m128 a4) {
    const __m512 x_all = _mm512_castps128_ps512(x4);
    [[maybe_unused]] const __m512 a_all = _mm512_castps128_ps512(a4);
    [[maybe_unused]] const __m512 wa_all = _mm512_castps128_ps512(_mm_mul_ps(x4, a4));
    for (int half = 0; half < 2; ++half) {
      const __m512i pick = half == 0 ? pick01 : pick23;
      const __m512 x = _mm512_permutexvar_ps(pick, x_all);
      __m512 r = _mm512_sub_ps(_mm512_fmadd_ps(x, inv, bias), bias);
      r = _mm512_min_ps(_mm512_max_ps(r, lo), hi);
      if constexpr (kWeighted) {
        num[half] = _mm512_fmadd_ps(r, _mm512_permutexvar_ps(pick, wa_all), num[half]);
        den[half] =
            _mm512_fmadd_ps(_mm512_mul_ps(r, _mm512_permutexvar_ps(pick, a_all)), r, den[half]);
      } else {
        num[half] = _mm512_fmadd_ps(x, r, num[half]);
        den[half] = _mm512_fmadd_ps(r, r, den[half]);
      }
    }
  };
  size_t i = 0;
  const __m128 ones = _mm_set1_ps(1.f);
  for (; i + 4 <= w.size(); i += 4)
    block(_mm_loadu_ps(w.data() + i), kWeighted ? _mm_loadu_ps(a + i) : ones);
  if (i < w.size()) {
    alignas(16) float xs[4] = {}, as[4] = {};
    for (size_t k = 0; i + k < w.size(); ++k) {
      xs[k] = w[i + k];
      as[k] = kWeighted ? a[i + k] : 1.f;
    }
    block(_mm_load_ps(xs), _mm_load_ps(as));
  }
  // (p0 + p1) + (p2 + p3), each p the half of a register.
  const auto fold = [](__m512 v) {
    return _mm256_add_ps(_mm512_castps512_ps256(v),
                         _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1)));
  };
  const __m256 n = _mm256_add_ps(fold(num[0]), fold(num[1]));
  const __m256 d = _mm256_add_ps(fold(den[0]), fold(den[1]));
  // best_of in registers: the gains in double, their maximum, and the first
  // lane that holds it.
  const __m512d nd = _mm512_cvtps_pd(n), dd = _mm512_cvtps_pd(d);
  const __mmask8 fits = _mm512_cmp_pd_mask(dd, _mm512_setzero_pd(), _CMP_GT_OQ);
  const __m512d gains = _mm512_mask_div_pd(_mm512_set1_pd(-1.0), fits, _mm512_mul_pd(nd, nd), dd);
  __m512d top = _mm512_max_pd(gains, _mm512_shuffle_f64x2(gains, gains, 0x4e));
  top = _mm512_max_pd(top, _mm512_shuffle_f64x2(top, top, 0xb1));
  top = _mm512_max_pd(top, _mm512_permute_pd(top, 0x55));
  const unsigned hits = _mm512_cmp_pd_mask(gains, top, _CMP_EQ_OQ);
  // No hit only when a sum is not finite (weights are checked before this).
  const size_t best = hits ? static_cast<size_t>(__builtin_ctz(hits)) : 0;
  alignas(32) float nf[kFitCandidates], df[kFitCandidates];
  _mm256_store_ps(nf, n);
  _mm256_store_ps(df, d);
  return {best, nf[best], df[best]};
}

void codes_vector(std::span<const float> w, float inv, float qmin, float qmax, signed char* q) {
  const __m512 vinv = _mm512_set1_ps(inv);
  const __m512 lo = _mm512_set1_ps(qmin), hi = _mm512_set1_ps(qmax);
  const __m512 bias = _mm512_set1_ps(kRoundBias);
  size_t i = 0;
  for (; i + 16 <= w.size(); i += 16) {
    __m512 r = _mm512_sub_ps(_mm512_fmadd_ps(_mm512_loadu_ps(w.data() + i), vinv, bias), bias);
    r = _mm512_min_ps(_mm512_max_ps(r, lo), hi);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(q + i),
                     _mm512_cvtepi32_epi8(_mm512_cvtps_epi32(r)));
  }
  codes_scalar(w, i, inv, qmin, qmax, q);
}

float largest_magnitude_vector(std::span<const float> w) {
  __m512 vmax = _mm512_setzero_ps();
  size_t i = 0;
  for (; i + 16 <= w.size(); i += 16)
    vmax = _mm512_max_ps(vmax, _mm512_abs_ps(_mm512_loadu_ps(w.data() + i)));
  // Halves folded onto each other: four dependent steps instead of sixteen.
  __m256 v8 = _mm256_max_ps(_mm512_castps512_ps256(vmax),
                            _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(vmax), 1)));
  __m128 v4 = _mm_max_ps(_mm256_castps256_ps128(v8), _mm256_extractf128_ps(v8, 1));
  v4 = _mm_max_ps(v4, _mm_movehl_ps(v4, v4));
  v4 = _mm_max_ss(v4, _mm_movehdup_ps(v4));
  float amax = _mm_cvtss_f32(v4);
  for (size_t k = i; k < w.size(); ++k) amax = std::max(amax, std::fabs(w[k]));
  const __m512 target = _mm512_set1_ps(amax);
  for (i = 0; i + 16 <= w.size(); i += 16) {
    const __mmask16 hit =
        _mm512_cmp_ps_mask(_mm512_abs_ps(_mm512_loadu_ps(w.data() + i)), target, _CMP_EQ_OQ);
    if (hit) return w[i + static_cast<size_t>(__builtin_ctz(hit))];
  }
  return first_with_magnitude(w, i, amax);
}
#pragma GCC diagnostic pop
#elif defined(__AVX2__) && defined(__FMA__)
constexpr const char* kFitBackend = "avx2";

// One register holds the 8 candidates; each value is broadcast to all of them.
template <bool kWeighted>
BestFit fit_vector(std::span<const float> w, const float* a, const float (&invs)[kFitCandidates],
                   float qmin, float qmax) {
  const __m256 inv = _mm256_loadu_ps(invs);
  const __m256 lo = _mm256_set1_ps(qmin), hi = _mm256_set1_ps(qmax);
  const __m256 bias = _mm256_set1_ps(kRoundBias);
  __m256 num[kPartials], den[kPartials];
  for (size_t p = 0; p < kPartials; ++p) num[p] = den[p] = _mm256_setzero_ps();
  const auto step = [&](size_t i, size_t p) {
    const __m256 x = _mm256_set1_ps(w[i]);
    __m256 r = _mm256_sub_ps(_mm256_fmadd_ps(x, inv, bias), bias);
    r = _mm256_min_ps(_mm256_max_ps(r, lo), hi);
    if constexpr (kWeighted) {
      num[p] = _mm256_fmadd_ps(r, _mm256_set1_ps(w[i] * a[i]), num[p]);
      den[p] = _mm256_fmadd_ps(_mm256_mul_ps(r, _mm256_set1_ps(a[i])), r, den[p]);
    } else {
      num[p] = _mm256_fmadd_ps(x, r, num[p]);
      den[p] = _mm256_fmadd_ps(r, r, den[p]);
    }
  };
  size_t i = 0;
  for (; i + kPartials <= w.size(); i += kPartials)
    for (size_t p = 0; p < kPartials; ++p) step(i + p, p);
  for (size_t p = 0; i < w.size(); ++i, ++p) step(i, p);
  alignas(32) float n[kFitCandidates], d[kFitCandidates];
  _mm256_store_ps(n, _mm256_add_ps(_mm256_add_ps(num[0], num[1]), _mm256_add_ps(num[2], num[3])));
  _mm256_store_ps(d, _mm256_add_ps(_mm256_add_ps(den[0], den[1]), _mm256_add_ps(den[2], den[3])));
  return best_of(n, d);
}

void codes_vector(std::span<const float> w, float inv, float qmin, float qmax, signed char* q) {
  const __m256 vinv = _mm256_set1_ps(inv);
  const __m256 lo = _mm256_set1_ps(qmin), hi = _mm256_set1_ps(qmax);
  const __m256 bias = _mm256_set1_ps(kRoundBias);
  size_t i = 0;
  for (; i + 8 <= w.size(); i += 8) {
    __m256 r = _mm256_sub_ps(_mm256_fmadd_ps(_mm256_loadu_ps(w.data() + i), vinv, bias), bias);
    r = _mm256_min_ps(_mm256_max_ps(r, lo), hi);
    const __m256i v = _mm256_cvtps_epi32(r);
    const __m128i words =
        _mm_packs_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    _mm_storel_epi64(reinterpret_cast<__m128i*>(q + i), _mm_packs_epi16(words, words));
  }
  codes_scalar(w, i, inv, qmin, qmax, q);
}

float largest_magnitude_vector(std::span<const float> w) {
  const __m256 magnitude = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
  __m256 vmax = _mm256_setzero_ps();
  size_t i = 0;
  for (; i + 8 <= w.size(); i += 8)
    vmax = _mm256_max_ps(vmax, _mm256_and_ps(_mm256_loadu_ps(w.data() + i), magnitude));
  __m128 v4 = _mm_max_ps(_mm256_castps256_ps128(vmax), _mm256_extractf128_ps(vmax, 1));
  v4 = _mm_max_ps(v4, _mm_movehl_ps(v4, v4));
  v4 = _mm_max_ss(v4, _mm_movehdup_ps(v4));
  float amax = _mm_cvtss_f32(v4);
  for (size_t k = i; k < w.size(); ++k) amax = std::max(amax, std::fabs(w[k]));
  const __m256 target = _mm256_set1_ps(amax);
  for (i = 0; i + 8 <= w.size(); i += 8) {
    const int hit = _mm256_movemask_ps(
        _mm256_cmp_ps(_mm256_and_ps(_mm256_loadu_ps(w.data() + i), magnitude), target, _CMP_EQ_OQ));
    if (hit) return w[i + static_cast<size_t>(__builtin_ctz(static_cast<unsigned>(hit)))];
  }
  return first_with_magnitude(w, i, amax);
}
#else
constexpr const char* kFitBackend = "scalar";
template <bool kWeighted>
BestFit fit_vector(std::span<const float> w, const float* a, const float (&invs)[kFitCandidates],
                   float qmin, float qmax) {
  return fit_scalar<kWeighted>(w, a, invs, qmin, qmax);
}
void codes_vector(std::span<const float> w, float inv, float qmin, float qmax, signed char* q) {
  codes_scalar(w, 0, inv, qmin, qmax, q);
}
float largest_magnitude_vector(std::span<const float> w) {
  return largest_magnitude_scalar(w);
}
#endif

}  // namespace

const char* const kGroupFitBackend = kFitBackend;

BestFit fit_group_lanes(std::span<const float> w, std::span<const float> a,
                        const float (&invs)[kFitCandidates], float qmin, float qmax) {
  return a.empty() ? fit_vector<false>(w, nullptr, invs, qmin, qmax)
                   : fit_vector<true>(w, a.data(), invs, qmin, qmax);
}

BestFit fit_group_lanes_scalar(std::span<const float> w, std::span<const float> a,
                               const float (&invs)[kFitCandidates], float qmin, float qmax) {
  return a.empty() ? fit_scalar<false>(w, nullptr, invs, qmin, qmax)
                   : fit_scalar<true>(w, a.data(), invs, qmin, qmax);
}

float largest_magnitude(std::span<const float> w) {
  return largest_magnitude_vector(w);
}

void codes_for_step(std::span<const float> w, float inv, float qmin, float qmax, signed char* q) {
  codes_vector(w, inv, qmin, qmax, q);
}

void row_codes_for_steps(std::span<const float> w, size_t group, std::span<const float> invs,
                         float qmin, float qmax, signed char* q) {
  for (size_t first = 0, k = 0; first < w.size(); first += group, ++k)
    codes_vector(w.subspan(first, std::min(group, w.size() - first)), invs[k], qmin, qmax,
                 q + first);
}

void codes_for_step_scalar(std::span<const float> w, float inv, float qmin, float qmax,
                           signed char* q) {
  codes_scalar(w, 0, inv, qmin, qmax, q);
}

}  // namespace glmrt
