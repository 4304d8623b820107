#include "group_fit_lanes.h"

#include <glmrt/base/error.h>

#include <algorithm>
#include <cmath>

#if defined(__AVX512F__) || (defined(__AVX2__) && defined(__FMA__))
#include <immintrin.h>
#endif

namespace glmrt {
namespace {

constexpr size_t kFitLanes = 16;

// At most this many candidates per batch (the search asks for 10, then 4).
constexpr size_t kMaxFitBatch = 32;

// Each candidate's 16 lanes, then its fit: the lanes added in order 0..15
// starting from 0, the horizontal order every backend shares. The candidates
// are reduced side by side (the inner loop), so their chains of dependent
// additions overlap instead of running one after another.
struct FitLanes {
  alignas(64) float num[kMaxFitBatch][kFitLanes];
  alignas(64) float den[kMaxFitBatch][kFitLanes];

  void reduce(size_t count, GroupFit* fits) const {
    float n[kMaxFitBatch] = {}, d[kMaxFitBatch] = {};
    for (size_t j = 0; j < kFitLanes; ++j)
      for (size_t c = 0; c < count; ++c) {
        n[c] += num[c][j];
        d[c] += den[c][j];
      }
    for (size_t c = 0; c < count; ++c) fits[c] = {n[c], d[c]};
  }
};

float fit_code_of(float w, float inv, float qmin, float qmax) {
  float r = std::nearbyint(w * inv);
  r = r < qmin ? qmin : r;
  return r > qmax ? qmax : r;
}

// Values from `first` on (the tail past the full blocks) go into lane 0.
template <bool kWeighted>
void tail_into_lane0(std::span<const float> w, const float* a, size_t first, float inv, float qmin,
                     float qmax, float* num, float* den) {
  for (size_t i = first; i < w.size(); ++i) {
    const float r = fit_code_of(w[i], inv, qmin, qmax);
    if constexpr (kWeighted) {
      num[0] = std::fma(r, w[i] * a[i], num[0]);
      den[0] = std::fma(r, a[i] * r, den[0]);
    } else {
      num[0] = std::fma(w[i], r, num[0]);
      den[0] = std::fma(r, r, den[0]);
    }
  }
}

template <bool kWeighted>
void fit_batch_scalar(std::span<const float> w, const float* a, std::span<const float> invs,
                      float qmin, float qmax, GroupFit* fits) {
  const size_t full = w.size() / kFitLanes * kFitLanes;
  FitLanes lanes;
  for (size_t c = 0; c < invs.size(); ++c) {
    float* num = lanes.num[c];
    float* den = lanes.den[c];
    std::fill_n(num, kFitLanes, 0.f);
    std::fill_n(den, kFitLanes, 0.f);
    for (size_t i = 0; i < full; ++i) {
      const float r = fit_code_of(w[i], invs[c], qmin, qmax);
      const size_t j = i % kFitLanes;
      if constexpr (kWeighted) {
        num[j] = std::fma(r, w[i] * a[i], num[j]);
        den[j] = std::fma(r, a[i] * r, den[j]);
      } else {
        num[j] = std::fma(w[i], r, num[j]);
        den[j] = std::fma(r, r, den[j]);
      }
    }
    tail_into_lane0<kWeighted>(w, a, full, invs[c], qmin, qmax, num, den);
  }
  lanes.reduce(invs.size(), fits);
}

#if defined(__AVX512F__)
constexpr const char* kFitBackend = "avx512";
constexpr int kFitRound = _MM_FROUND_CUR_DIRECTION | _MM_FROUND_NO_EXC;  // = nearbyint

// GCC 12 flags the _mm512_undefined_ps() inside its own intrinsics as
// maybe-uninitialized (a false positive of the headers, not of this code).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
// One register holds the 16 lanes.
template <bool kWeighted>
void fit_batch_vector(std::span<const float> w, const float* a, std::span<const float> invs,
                      float qmin, float qmax, GroupFit* fits) {
  const size_t full = w.size() / kFitLanes * kFitLanes;
  const __m512 lo = _mm512_set1_ps(qmin), hi = _mm512_set1_ps(qmax);
  FitLanes lanes;
  for (size_t c = 0; c < invs.size(); ++c) {
    const __m512 inv = _mm512_set1_ps(invs[c]);
    __m512 n = _mm512_setzero_ps(), d = _mm512_setzero_ps();
    for (size_t i = 0; i < full; i += kFitLanes) {
      const __m512 x = _mm512_loadu_ps(w.data() + i);
      __m512 r = _mm512_roundscale_ps(_mm512_mul_ps(x, inv), kFitRound);
      r = _mm512_min_ps(_mm512_max_ps(r, lo), hi);
      if constexpr (kWeighted) {
        const __m512 wa = _mm512_loadu_ps(a + i);
        n = _mm512_fmadd_ps(r, _mm512_mul_ps(x, wa), n);
        d = _mm512_fmadd_ps(r, _mm512_mul_ps(wa, r), d);
      } else {
        n = _mm512_fmadd_ps(x, r, n);
        d = _mm512_fmadd_ps(r, r, d);
      }
    }
    _mm512_store_ps(lanes.num[c], n);
    _mm512_store_ps(lanes.den[c], d);
    tail_into_lane0<kWeighted>(w, a, full, invs[c], qmin, qmax, lanes.num[c], lanes.den[c]);
  }
  lanes.reduce(invs.size(), fits);
}
#pragma GCC diagnostic pop
#elif defined(__AVX2__) && defined(__FMA__)
constexpr const char* kFitBackend = "avx2";
constexpr int kFitRound = _MM_FROUND_CUR_DIRECTION | _MM_FROUND_NO_EXC;  // = nearbyint

// Lanes 0..7 and 8..15 as two registers: the same sums as 16 lanes.
template <bool kWeighted>
void fit_batch_vector(std::span<const float> w, const float* a, std::span<const float> invs,
                      float qmin, float qmax, GroupFit* fits) {
  const size_t full = w.size() / kFitLanes * kFitLanes;
  const __m256 lo = _mm256_set1_ps(qmin), hi = _mm256_set1_ps(qmax);
  FitLanes lanes;
  for (size_t c = 0; c < invs.size(); ++c) {
    const __m256 inv = _mm256_set1_ps(invs[c]);
    __m256 n[2] = {_mm256_setzero_ps(), _mm256_setzero_ps()};
    __m256 d[2] = {_mm256_setzero_ps(), _mm256_setzero_ps()};
    for (size_t i = 0; i < full; i += kFitLanes)
      for (int h = 0; h < 2; ++h) {
        const __m256 x = _mm256_loadu_ps(w.data() + i + 8 * h);
        __m256 r = _mm256_round_ps(_mm256_mul_ps(x, inv), kFitRound);
        r = _mm256_min_ps(_mm256_max_ps(r, lo), hi);
        if constexpr (kWeighted) {
          const __m256 wa = _mm256_loadu_ps(a + i + 8 * h);
          n[h] = _mm256_fmadd_ps(r, _mm256_mul_ps(x, wa), n[h]);
          d[h] = _mm256_fmadd_ps(r, _mm256_mul_ps(wa, r), d[h]);
        } else {
          n[h] = _mm256_fmadd_ps(x, r, n[h]);
          d[h] = _mm256_fmadd_ps(r, r, d[h]);
        }
      }
    float* num = lanes.num[c];
    float* den = lanes.den[c];
    _mm256_store_ps(num, n[0]);
    _mm256_store_ps(num + 8, n[1]);
    _mm256_store_ps(den, d[0]);
    _mm256_store_ps(den + 8, d[1]);
    tail_into_lane0<kWeighted>(w, a, full, invs[c], qmin, qmax, num, den);
  }
  lanes.reduce(invs.size(), fits);
}
#else
constexpr const char* kFitBackend = "scalar";
template <bool kWeighted>
void fit_batch_vector(std::span<const float> w, const float* a, std::span<const float> invs,
                      float qmin, float qmax, GroupFit* fits) {
  fit_batch_scalar<kWeighted>(w, a, invs, qmin, qmax, fits);
}
#endif

}  // namespace

const char* const kGroupFitBackend = kFitBackend;

void fit_group_lanes(std::span<const float> w, std::span<const float> a,
                     std::span<const float> invs, float qmin, float qmax, GroupFit* fits) {
  if (invs.size() > kMaxFitBatch)
    fail("fit_group_lanes: {} candidates, at most {}", invs.size(), kMaxFitBatch);
  if (a.empty())
    fit_batch_vector<false>(w, nullptr, invs, qmin, qmax, fits);
  else
    fit_batch_vector<true>(w, a.data(), invs, qmin, qmax, fits);
}

void fit_group_lanes_scalar(std::span<const float> w, std::span<const float> a,
                            std::span<const float> invs, float qmin, float qmax, GroupFit* fits) {
  if (invs.size() > kMaxFitBatch)
    fail("fit_group_lanes: {} candidates, at most {}", invs.size(), kMaxFitBatch);
  if (a.empty())
    fit_batch_scalar<false>(w, nullptr, invs, qmin, qmax, fits);
  else
    fit_batch_scalar<true>(w, a.data(), invs, qmin, qmax, fits);
}

}  // namespace glmrt
