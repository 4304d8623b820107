// Decoding one weight row of any glmrt weight format to f32 (portable code).
#pragma once

#include <glmrt/plugin/weight_format.h>

#include <cstdint>

namespace avx512_example {

/// Writes W[row, 0..cols) as floats (code x scale for integer formats).
void decode_row(const glmrt_weight_view& w, int64_t row, float* out);

}  // namespace avx512_example
