// One integer weight row to f32 (value = code * scale).
#pragma once

#include <glmrt/plugin/weight_format.h>

#include <cstdint>

namespace glmrt::kernels_avx2 {

/// Writes the I values of row `row` of an int8/int4/int2 view into `out`.
void dequantize_row(const glmrt_weight_view& w, int64_t row, float* out);

}  // namespace glmrt::kernels_avx2
