// The inner loop of the per-group scale search (group_quantizer.cpp): for 8
// candidate steps at once, the least-squares sums of each candidate's codes.
//
// One lane per candidate, so one pass over the group fits all of them and no
// horizontal reduction is needed (the earlier layout, one candidate per pass
// with its values spread over 16 lanes, spent most of its time adding lanes).
// The sums are defined in one fixed order so that every backend, and every
// machine, picks the same scales bit for bit: value i goes into partial sum
// i % 4 with a fused multiply-add, and the partials are added as
// (p0 + p1) + (p2 + p3).
#pragma once

#include <cstddef>
#include <span>

namespace glmrt {

/// Candidates fitted per call (one AVX2 register; AVX-512 fits two values at
/// once with them).
inline constexpr size_t kFitCandidates = 8;

/// The candidate that removes the most error. For fixed codes the error is
/// E = sum a w^2 - num^2 / den, so the largest num^2 / den (in double; ties
/// keep the earlier lane) is the smallest error, and no second pass is needed.
struct BestFit {
  size_t lane = 0;
  double num = 0, den = 0;  // its sum a w q and sum a q^2 (den 0: nothing fits)
};

/// For each invs[c]: q = clamp(round(w * invs[c]), qmin, qmax) and the sums
/// of the fit, weighted by `a` (empty: all 1); returns the best candidate.
/// Vector backend chosen at compile time (the core is built with -march=native).
BestFit fit_group_lanes(std::span<const float> w, std::span<const float> a,
                        const float (&invs)[kFitCandidates], float qmin, float qmax);
/// The same, one candidate at a time: the specification the vector backend
/// matches.
BestFit fit_group_lanes_scalar(std::span<const float> w, std::span<const float> a,
                               const float (&invs)[kFitCandidates], float qmin, float qmax);

/// The first value of largest magnitude, with its sign (0 for an empty or
/// all-zero group), vectorised.
float largest_magnitude(std::span<const float> w);

/// q[i] = clamp(round(w[i] * inv), qmin, qmax), rounded as the fits round, vectorised.
void codes_for_step(std::span<const float> w, float inv, float qmin, float qmax, signed char* q);
/// The codes of a whole row quantized per group: values of group k (those in
/// [k * group, (k + 1) * group)) rounded with invs[k], as codes_for_step
/// would, in one call (a call per group paid a mispredicted loop exit each).
void row_codes_for_steps(std::span<const float> w, size_t group, std::span<const float> invs,
                         float qmin, float qmax, signed char* q);
/// codes_for_step one value at a time (the specification).
void codes_for_step_scalar(std::span<const float> w, float inv, float qmin, float qmax,
                           signed char* q);

/// "avx512", "avx2" or "scalar": what fit_group_lanes runs on.
extern const char* const kGroupFitBackend;

}  // namespace glmrt
