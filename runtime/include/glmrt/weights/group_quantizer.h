// Scales for per-group quantization, chosen by a clipping search that
// minimises the (importance-)weighted squared error of the group:
//   E(s, q) = sum_i a_i (w_i - s q_i)^2,  q_i = clamp(round(w_i / d), qmin, qmax)
// over a small set of candidate step sizes d around max|w| / qmax (both signs,
// so the extra negative level of two's complement is used; int4 and int2 in
// fixed point, weights/group_fit_fixed.h), each followed by
// the least-squares scale for its codes, s = sum a w q / sum a q^2 (the refit
// llama.cpp's make_qx_quants does). The candidate d = max|w| / qmax is always
// among them and its refit can only lower the error, so the result is never
// worse than the symmetric max-abs rule. See docs/convert.md.
#pragma once

#include <cstdint>
#include <span>

namespace glmrt {

/// Quantizes `w` (one group) to codes in [qmin, qmax] of element type `type`
/// (GLMRT_I8/I4/I2) into `q` (w.size() codes) and returns the scale: w ~ q * s.
/// `importance` is empty (all 1) or one non-negative weight per value.
float quantize_group_searched(std::span<const float> w, std::span<const float> importance,
                              uint32_t type, int8_t* q);

/// The same search one value and one candidate at a time: the reference the
/// vectorized quantize_group_searched matches bit for bit (tests).
float quantize_group_searched_scalar(std::span<const float> w, std::span<const float> importance,
                                     uint32_t type, int8_t* q);
/// The instruction set the search's inner loop was compiled for
/// ("avx512-vnni", "avx2" or "scalar").
const char* group_fit_backend();

/// Codes of a packed type: [-(qmax + 1), qmax].
int packed_qmax(uint32_t type);

}  // namespace glmrt
