#include <glmrt/base/cpu_features.h>
#include <glmrt/kv/row_math.h>

#include "row_math_variants.h"

namespace glmrt {
namespace row_math {

const RowMathVariant& row_math_variant() {
  static const RowMathVariant& chosen = cpu_features().avx2_fma ? kAvx2RowMath : kPortableRowMath;
  return chosen;
}

}  // namespace row_math

void widen_bf16(std::span<const uint16_t> in, std::span<float> out) {
  row_math::row_math_variant().widen_bf16(in, out);
}

float dot(std::span<const float> a, const float* b) {
  return row_math::row_math_variant().dot(a, b);
}

void axpy(float a, std::span<const float> x, std::span<float> y) {
  row_math::row_math_variant().axpy(a, x, y);
}

void scaled_dots(RowBlock queries, RowBlock keys, int64_t width, float scale, std::span<float> out,
                 int64_t out_stride) {
  row_math::row_math_variant().scaled_dots(queries, keys, width, scale, out, out_stride);
}

void weighted_row_sum(std::span<const float> weights, RowBlock rows, std::span<float> acc) {
  row_math::row_math_variant().weighted_row_sum(weights, rows, acc);
}

}  // namespace glmrt
