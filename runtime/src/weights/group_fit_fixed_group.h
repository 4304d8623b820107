// One whole group of the fixed-point search (group_fit_fixed.h's
// quantize_fixed) from one backend's pieces: a template each backend's file
// inlines into one function compiled for its instruction set, so the pieces
// inline too and the process makes one indirect call per group
// (FixedBackend::quantize). An indirect call per piece, from baseline code,
// cost ~10% of an unweighted int4 group of 64.
#pragma once

#include <algorithm>
#include <cmath>
#include <span>
#include <vector>

#include "group_fit_fixed_kernels.h"

namespace glmrt::fixed_kernels {

// x, a16 and ax of one group: on the stack for groups up to kLocal values,
// else per thread (groups may be as large as a profile allows).
class FixedScratch {
 public:
  explicit FixedScratch(size_t n) : capacity_(fixed_capacity(n)) {
    if (capacity_ <= kLocal) {
      for (int k = 0; k < 3; ++k) buffers_[k] = local_[k];
      return;
    }
    thread_local std::vector<int16_t> spill[3];
    for (int k = 0; k < 3; ++k) {
      spill[k].resize(capacity_);
      buffers_[k] = spill[k].data();
    }
  }
  FixedScratch(const FixedScratch&) = delete;  // buffers_ may point into local_
  FixedScratch& operator=(const FixedScratch&) = delete;
  size_t capacity() const { return capacity_; }
  int16_t* x() { return buffers_[0]; }
  int16_t* a16() { return buffers_[1]; }
  int16_t* ax() { return buffers_[2]; }

 private:
  static constexpr size_t kLocal = 256;
  size_t capacity_;
  int16_t* buffers_[3];
  alignas(64) int16_t local_[3][kLocal];
};

// Every backend shares each decision of the specification, only the pieces
// differ.
template <auto SignedExtreme, auto ToFixed, auto WeightsToFixed, auto Fit, auto Codes>
[[gnu::always_inline]] inline float quantize_group(std::span<const float> w,
                                                   std::span<const float> a,
                                                   const int16_t (&t)[kFixedCandidates], int qmin,
                                                   int qmax, signed char* q) {
  const float m = SignedExtreme(w);
  // All zero (or not finite: the loader refuses those before this point).
  if (!(std::fabs(m) > 0.f) || !std::isfinite(m)) {
    std::fill_n(q, w.size(), static_cast<signed char>(0));
    return 1e-8f;
  }
  if (!a.empty() && std::all_of(a.begin(), a.end(), [](float v) { return v == 0.f; })) a = {};
  const float scale = static_cast<float>(kFixedOne) / m;
  FixedScratch scratch(w.size());
  int16_t* x = scratch.x();
  ToFixed(w, scale, x, scratch.capacity());
  const bool weighted = !a.empty();
  if (weighted) WeightsToFixed(a, x, scratch.a16(), scratch.ax(), scratch.capacity());
  const FixedFit best = weighted ? Fit(x, scratch.a16(), scratch.ax(), w.size(), t, qmin, qmax)
                                 : Fit(x, nullptr, nullptr, w.size(), t, qmin, qmax);
  if (best.den <= 0) {
    std::fill_n(q, w.size(), static_cast<signed char>(0));
    return 1e-8f;
  }
  Codes(x, w.size(), t[best.lane], qmin, qmax, q);
  // num / den is in units of x = w * kFixedOne / m; weighted, ax carries a16 / 2^15.
  const double unit = static_cast<double>(m) / kFixedOne * (weighted ? 32768.0 : 1.0);
  const auto s =
      static_cast<float>(unit * static_cast<double>(best.num) / static_cast<double>(best.den));
  return s != 0.f ? s : 1e-8f;
}

}  // namespace glmrt::fixed_kernels
