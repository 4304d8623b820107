// The inner loop of the per-group scale search (group_quantizer.cpp): for a
// batch of candidate steps, the least-squares sums of each candidate's codes.
//
// The sums are defined in one fixed order so that every backend, and every
// machine, picks the same scales bit for bit: 16 float lanes, lane j
// accumulating values j, j + 16, j + 32, ... with fused multiply-adds, the
// values past the last full block of 16 into lane 0, then the lanes added in
// order 0..15 starting from 0. (It is the order the earlier auto-vectorized
// loop had with AVX-512, so containers converted before are reproduced.)
#pragma once

#include <cstddef>
#include <span>

namespace glmrt {

struct GroupFit {
  double num = 0, den = 0;  // sum a w q, sum a q^2
  /// The error the fit removes: E = sum a w^2 - num^2 / den, so the largest
  /// gain is the smallest error (the closed form that needs no second pass).
  double gain() const { return den > 0 ? num * num / den : -1.0; }
};

/// For each invs[c]: q = clamp(nearbyint(w * invs[c]), qmin, qmax) and the
/// sums of `fits[c]`, weighted by `a` (empty: all 1). Vector backend chosen
/// at compile time (the core is built with -march=native).
void fit_group_lanes(std::span<const float> w, std::span<const float> a,
                     std::span<const float> invs, float qmin, float qmax, GroupFit* fits);
/// The same, one lane at a time: the specification the vector backend matches.
void fit_group_lanes_scalar(std::span<const float> w, std::span<const float> a,
                            std::span<const float> invs, float qmin, float qmax, GroupFit* fits);

/// "avx512", "avx2" or "scalar": what fit_group_lanes runs on.
extern const char* const kGroupFitBackend;

}  // namespace glmrt
