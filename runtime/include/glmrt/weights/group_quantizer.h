// Scales for per-group quantization, chosen by a clipping search that
// minimises the (importance-)weighted squared error of the group:
//   E(s, q) = sum_i a_i (w_i - s q_i)^2,  q_i = clamp(round(w_i / d), qmin, qmax)
// over a small set of candidate step sizes d around max|w| / qmax (both signs,
// so the extra negative level of two's complement is used), each followed by
// the least-squares scale for its codes, s = sum a w q / sum a q^2 (the refit
// llama.cpp's make_qx_quants does). The candidate d = max|w| / qmax is always
// among them and its refit can only lower the error, so the result is never
// worse than the symmetric max-abs rule. See docs/convert.md.
#pragma once

#include <cstdint>
#include <span>

namespace glmrt {

/// A group's quantization: codes q_i = clamp(round(w_i * inv), qmin, qmax),
/// values w_i ~ q_i * scale (inv 0: every code 0).
struct GroupStep {
  float inv = 0.f;
  float scale = 1e-8f;
};

/// The search alone: the step and scale `w` (one group) is quantized with.
/// quantize_groups searches a row's groups first and rounds them after, so
/// the end of one search overlaps the next instead of waiting on its result.
GroupStep search_group_step(std::span<const float> w, std::span<const float> importance,
                            uint32_t type);
/// The codes of `w` for `step`: exactly the codes its search fitted.
void group_codes(std::span<const float> w, GroupStep step, uint32_t type, int8_t* q);

/// group_codes for a whole row: group k of `w` with steps[k].
void row_group_codes(std::span<const float> w, size_t group, std::span<const GroupStep> steps,
                     uint32_t type, int8_t* q);

/// Quantizes `w` (one group) to codes in [qmin, qmax] of element type `type`
/// (GLMRT_I8/I4/I2) into `q` (w.size() codes) and returns the scale: w ~ q * s.
/// `importance` is empty (all 1) or one non-negative weight per value.
float quantize_group_searched(std::span<const float> w, std::span<const float> importance,
                              uint32_t type, int8_t* q);

/// The same search with the candidates' sums taken one lane at a time: the
/// reference the vectorized quantize_group_searched matches bit for bit (tests).
float quantize_group_searched_scalar(std::span<const float> w, std::span<const float> importance,
                                     uint32_t type, int8_t* q);
/// The instruction set the search's inner loop was compiled for ("avx512",
/// "avx2" or "scalar").
const char* group_fit_backend();

/// Codes of a packed type: [-(qmax + 1), qmax].
int packed_qmax(uint32_t type);

}  // namespace glmrt
