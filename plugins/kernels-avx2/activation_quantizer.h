// Activations x[S, I] quantized on the fly to int8 — one f32 scale per block
// of 32 consecutive inputs, round to nearest — once per matmul call, laid out
// for one integer weight format (see int_formats.h).
#pragma once

#include <cstddef>
#include <cstdint>

namespace glmrt::kernels_avx2 {

/// Sizes of the quantized activations of S rows of I inputs for a format
/// whose steps hold `elements_per_step` inputs and `scales_per_step` lane scales.
struct ActivationLayout {
  int64_t steps = 0;           // ceil(I / elements_per_step); the tail is zero padded
  int64_t row_bytes = 0;       // steps * elements_per_step
  int64_t scales_per_row = 0;  // steps * scales_per_step
  int64_t groups = 0;          // weight scale groups per row (1 for per-row scales)
};

/// Views of one call's quantized activations.
struct QuantizedActivations {
  ActivationLayout layout;
  int8_t* values = nullptr;      // [S, row_bytes]
  float* lane_scales = nullptr;  // [S, scales_per_row]
  /// [S, groups]: per weight group, sum over its blocks of scale * sum(q);
  /// what the unsigned decoding of int4/int2 subtracts (times the offset).
  float* group_sums = nullptr;
};

template <class Format>
ActivationLayout activation_layout(int64_t cols, int64_t group_size);

/// 32 inputs to int8 in input order, round to nearest; returns their scale.
float quantize_block32(const float* x, int8_t* out);

/// Fills `out` (its pointers sized by activation_layout) from x[S, I], whose
/// rows start `x_stride` floats apart. `group_size` is 0 or a multiple of 32.
template <class Format>
void quantize_activations(const float* x, int64_t S, int64_t x_stride, int64_t cols,
                          int64_t group_size, const QuantizedActivations& out);

}  // namespace glmrt::kernels_avx2
