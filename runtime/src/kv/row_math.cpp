#include <glmrt/base/cpu_features.h>
#include <glmrt/kv/row_math.h>

#include "row_math_variants.h"

namespace glmrt {
namespace row_math {
namespace {

const RowMathVariant& choose() {
  return cpu_features().avx2_fma ? kAvx2RowMath : kPortableRowMath;
}

constinit ChosenVariant<RowMathVariant> chosen{&choose};

}  // namespace

const RowMathVariant& row_math_variant() {
  return chosen.get();
}

}  // namespace row_math

void widen_bf16(std::span<const uint16_t> in, std::span<float> out) {
  row_math::chosen.get().widen_bf16(in, out);
}

float dot(std::span<const float> a, const float* b) {
  return row_math::chosen.get().dot(a, b);
}

void axpy(float a, std::span<const float> x, std::span<float> y) {
  row_math::chosen.get().axpy(a, x, y);
}

void scaled_dots(RowBlock queries, RowBlock keys, int64_t width, float scale, std::span<float> out,
                 int64_t out_stride) {
  row_math::chosen.get().scaled_dots(queries, keys, width, scale, out, out_stride);
}

void weighted_row_sum(std::span<const float> weights, RowBlock rows, std::span<float> acc) {
  row_math::chosen.get().weighted_row_sum(weights, rows, acc);
}

void relu_weighted_sums(std::span<const float> weights, const float* dots, int64_t stride,
                        std::span<float> out) {
  row_math::chosen.get().relu_weighted_sums(weights, dots, stride, out);
}

}  // namespace glmrt
