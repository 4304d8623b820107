// The int4/int2 scale search of group_quantizer.cpp in fixed point: a
// group's values as 16-bit integers relative to its signed extreme m,
// x = round(w * kFixedOne / m), and each candidate's codes by one rounding
// multiply, q = clamp((x * t + 2^14) >> 15, qmin, qmax): round(w / m * t / 8)
// for the candidate target t / 8 (in steps of m).
//
// Why integers: 16-bit lanes hold twice the candidates per register that
// float lanes do, a multiply-add instruction (vpdpwssd) sums two values' terms
// at once, and the sums are exact, so every backend (and every machine) picks
// the same candidate without a prescribed summation order. x keeps 12 bits
// below m: at most m / 8192 off, a thousandth of an int4 step (BF16
// checkpoints carry 8 significant bits).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace glmrt {

/// x = round(w * kFixedOne / m): |x| <= kFixedOne.
inline constexpr int kFixedOne = 4096;
/// A candidate t is the target t / kTargetDenominator.
inline constexpr int kTargetDenominator = 8;
/// Importances as 16-bit integers: a16 = round(a * kWeightOne / max a).
inline constexpr int kWeightOne = 32767;
/// Candidates fitted per group.
inline constexpr size_t kFixedCandidates = 8;

/// The value of largest magnitude, with its sign: max w if max w >= -min w,
/// else min w (0 for an empty or all-zero group). One pass, no search for the
/// first occurrence: either sign serves, the candidates span both.
float signed_extreme(std::span<const float> w);
float signed_extreme_scalar(std::span<const float> w);

/// Quantizes one group (int4/int2: codes in [qmin, qmax]) into q and returns
/// its scale, w ~ q * scale. Over candidates t[c] it fits, with
/// a16 = round(a * kWeightOne / max a) and ax = (a16 * x + 2^14) >> 15
/// (unweighted: a16 = 1, ax = x), num = sum ax q and den = sum a16 q^2, keeps
/// the largest num^2 / den (in double; ties keep the earlier candidate), and
/// returns the least-squares scale of those codes, m / kFixedOne * num / den
/// (weighted: times 2^15, the unit ax carries). `a` empty: unweighted; an
/// all-zero `a` (no calibration token reached the group) counts as empty.
float quantize_fixed(std::span<const float> w, std::span<const float> a,
                     const int16_t (&t)[kFixedCandidates], int qmin, int qmax, signed char* q);
/// The same, one value and one candidate at a time: the specification every
/// vector backend matches bit for bit.
float quantize_fixed_scalar(std::span<const float> w, std::span<const float> a,
                            const int16_t (&t)[kFixedCandidates], int qmin, int qmax,
                            signed char* q);

/// "avx512-vnni", "avx2" or "scalar": what quantize_fixed runs on (this CPU's
/// best).
const char* fixed_fit_backend();

}  // namespace glmrt
