// The pieces of the fixed-point group search (group_fit_fixed.h) that the
// specification and the vector backends share, and the backends themselves:
// the scalar specification, AVX2 and AVX-512 (group_fit_fixed_avx2.cpp,
// group_fit_fixed_avx512.cpp), one chosen per process by the CPU's features
// (group_fit_fixed_backend.cpp).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>

#include "group_fit_fixed.h"

namespace glmrt::fixed_kernels {

struct FixedFit {
  size_t lane = 0;
  int64_t num = 0, den = 0;  // den 0: no candidate fits anything
};

inline int16_t fixed_value_of(float w, float scale) {
  return static_cast<int16_t>(std::nearbyint(w * scale));
}

// vpmulhrsw's rounding: (x * t + 2^14) >> 15, an arithmetic shift.
inline int rounding_multiply(int x, int t) {
  return (x * t + (1 << 14)) >> 15;
}

inline int fixed_code_of(int x, int t, int qmin, int qmax) {
  return std::clamp(rounding_multiply(x, t), qmin, qmax);
}

// Scratch buffers are zero-padded to a multiple of this: kernels read whole
// registers, and a zero value's code is 0 and adds exactly nothing.
constexpr size_t kFixedPad = 32;

inline size_t fixed_capacity(size_t n) {
  return (n + kFixedPad - 1) / kFixedPad * kFixedPad;
}

// The pick from exact sums: the largest num^2 / den in double (the same IEEE
// operations in every backend), ties to the earlier candidate.
inline FixedFit best_fixed_fit(const int64_t (&num)[kFixedCandidates],
                               const int64_t (&den)[kFixedCandidates]) {
  size_t best = 0;
  double best_gain = -1.0;
  for (size_t c = 0; c < kFixedCandidates; ++c) {
    const auto n = static_cast<double>(num[c]);
    const double gain = den[c] > 0 ? n * n / static_cast<double>(den[c]) : -1.0;
    if (gain > best_gain) {
      best_gain = gain;
      best = c;
    }
  }
  return {best, num[best], den[best]};
}

inline float signed_extreme_of(float hi, float lo) {
  return hi >= -lo ? hi : lo;
}

/// signed_extreme() (the specification).
inline float signed_extreme_of_values(std::span<const float> w) {
  float hi = 0.f, lo = 0.f;
  for (float v : w) {
    hi = std::max(hi, v);
    lo = std::min(lo, v);
  }
  return signed_extreme_of(hi, lo);
}

// Partial int32 sums move into int64 totals every kFixedFlushValues values,
// so no lane overflows on any row length: a weighted den grows by at most
// 32767 * 8^2 a value, under 2^30 in 256 values.
constexpr size_t kFixedFlushValues = 256;

template <bool kWeighted>
FixedFit fit_fixed_scalar(const int16_t* x, const int16_t* a16, const int16_t* ax, size_t n,
                          const int16_t (&t)[kFixedCandidates], int qmin, int qmax) {
  int64_t num[kFixedCandidates], den[kFixedCandidates];
  for (size_t c = 0; c < kFixedCandidates; ++c) {
    num[c] = den[c] = 0;
    for (size_t i = 0; i < n; ++i) {
      const int64_t q = fixed_code_of(x[i], t[c], qmin, qmax);
      num[c] += (kWeighted ? ax[i] : x[i]) * q;
      den[c] += (kWeighted ? a16[i] : 1) * q * q;
    }
  }
  return best_fixed_fit(num, den);
}

/// x[0, capacity) = round(w * scale), zero past w.size() (the specification).
inline void to_fixed_scalar(std::span<const float> w, float scale, int16_t* x, size_t capacity) {
  for (size_t i = 0; i < w.size(); ++i) x[i] = fixed_value_of(w[i], scale);
  std::fill(x + w.size(), x + capacity, int16_t{0});
}

/// q[i] = fixed_code_of(x[i], t, qmin, qmax) for i < n (the specification).
inline void codes_fixed_scalar(const int16_t* x, size_t n, int16_t t, int qmin, int qmax,
                               signed char* q) {
  for (size_t i = 0; i < n; ++i)
    q[i] = static_cast<signed char>(fixed_code_of(x[i], t, qmin, qmax));
}

/// a16 = round(a * kWeightOne / max a), ax = (a16 * x + 2^14) >> 15, zero
/// from a.size() to capacity (the specification).
inline void weights_to_fixed_scalar(std::span<const float> a, const int16_t* x, int16_t* a16,
                                    int16_t* ax, size_t capacity) {
  const float k = static_cast<float>(kWeightOne) / *std::max_element(a.begin(), a.end());
  for (size_t i = 0; i < a.size(); ++i) {
    a16[i] = static_cast<int16_t>(std::nearbyint(a[i] * k));
    ax[i] = static_cast<int16_t>(rounding_multiply(a16[i], x[i]));
  }
  std::fill(a16 + a.size(), a16 + capacity, int16_t{0});
  std::fill(ax + a.size(), ax + capacity, int16_t{0});
}

/// One backend: the pieces above vectorized (or not), each returning exactly
/// what the specification does (the *_scalar functions and fit_fixed_scalar).
struct FixedBackend {
  const char* name;  // "avx512-vnni", "avx2" or "scalar"
  float (*signed_extreme)(std::span<const float> w);
  /// group_fit_fixed.h's quantize_fixed (group_fit_fixed_group.h).
  float (*quantize)(std::span<const float> w, std::span<const float> a,
                    const int16_t (&t)[kFixedCandidates], int qmin, int qmax, signed char* q);
};

extern const FixedBackend kScalarFixedBackend;
/// Only where cpu_features().avx2_fma.
extern const FixedBackend kAvx2FixedBackend;
/// Only where cpu_features().avx512.
extern const FixedBackend kAvx512FixedBackend;

/// The backends this CPU runs, fastest first (the scalar one last).
std::span<const FixedBackend* const> runnable_fixed_backends();
/// The fastest of them, chosen on the first call.
const FixedBackend& fixed_backend();

}  // namespace glmrt::fixed_kernels
