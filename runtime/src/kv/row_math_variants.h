// The implementations behind kv/row_math.h, one per instruction set. The
// public functions pick one per process (row_math.cpp) and call it whole, so
// the per-key and per-element loops never branch on the CPU.
#pragma once

#include <glmrt/kv/row_math.h>

#include <cstdint>
#include <span>

namespace glmrt::row_math {

struct RowMathVariant {
  const char* name;
  void (*widen_bf16)(std::span<const uint16_t> in, std::span<float> out);
  float (*dot)(std::span<const float> a, const float* b);
  void (*axpy)(float a, std::span<const float> x, std::span<float> y);
  void (*scaled_dots)(RowBlock queries, RowBlock keys, int64_t width, float scale,
                      std::span<float> out, int64_t out_stride);
  void (*weighted_row_sum)(std::span<const float> weights, RowBlock rows, std::span<float> acc);
  void (*relu_weighted_sums)(std::span<const float> weights, const float* dots, int64_t stride,
                             std::span<float> out);
};

/// Baseline x86-64 (SSE2 lanes), for any CPU.
extern const RowMathVariant kPortableRowMath;

/// AVX2 + FMA: call only where cpu_features().avx2_fma. Every sum runs in one
/// prescribed order (row_math_avx2.cpp): the one the core ran when it was
/// compiled for the build machine's CPU, so results on AVX2 machines did not
/// move when it became portable.
extern const RowMathVariant kAvx2RowMath;

/// The variant this CPU runs, chosen on the first call.
const RowMathVariant& row_math_variant();

}  // namespace glmrt::row_math
