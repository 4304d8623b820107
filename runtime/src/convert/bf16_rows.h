// A checkpoint's BF16 row widened to f32, the exponent test on the way (one
// pass, no early exit): the converter's read of every BF16 value.
#pragma once

#include <cstddef>
#include <span>

namespace glmrt {

/// out[c] = the BF16 value c of `row` (2 * out.size() bytes, any alignment);
/// false if any is Inf or NaN.
bool widen_bf16_row(std::span<const std::byte> row, std::span<float> out);

}  // namespace glmrt
