// One integer or ggml-blocks weight row to f32 (value = code * scale, or
// ggml's reference dequantization).
#pragma once

#include <glmrt/plugin/weight_format.h>

#include <cstdint>

namespace glmrt::kernels_avx2 {

/// Writes the I values of row `row` of an integer view into `out`.
/// `group_scales` (two-level formats) holds one float per sub-group of a row.
void dequantize_row(const glmrt_weight_view& w, int64_t row, float* out, float* group_scales);

}  // namespace glmrt::kernels_avx2
