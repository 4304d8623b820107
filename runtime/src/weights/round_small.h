// Rounding of the small values a quantizer produces (|x| < 2^22) to the
// nearest integer, ties to even: std::nearbyint's result in the default
// rounding mode, except that a negative x rounding to zero gives +0 (no
// caller tells the zeros apart). std::nearbyint is one instruction only from
// SSE4.1 on; in a core built for baseline x86-64 it is a libm call per value,
// which halved the speed of per-row quantization. Two additions vectorize on
// any x86-64: adding 1.5 * 2^23 leaves no fraction bits, so the FPU rounds.
#pragma once

namespace glmrt {

inline float round_small(float x) {
  constexpr float kShift = 0x1.8p23f;
  return (x + kShift) - kShift;  // NaN stays NaN
}

}  // namespace glmrt
