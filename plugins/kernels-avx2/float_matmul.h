// y[S, O] = x[S, I] . W^T with f32 arithmetic: f32 and bf16 weights directly,
// integer weights dequantized row by row into per-thread scratch (the
// `activations: f32` setting, and group sizes that are not a multiple of 32).
#pragma once

#include <glmrt/plugin/weight_format.h>

#include <cstdint>

namespace glmrt::kernels_avx2 {

struct FloatMatmul {
  const glmrt_weight_view* weights = nullptr;
  const float* x = nullptr;
  int64_t S = 0;
  float* y = nullptr;
  int n_threads = 1;
  /// Integer formats only: dequant_scratch_floats(I, n_threads) floats.
  float* dequant_scratch = nullptr;
};

/// Floats of scratch float_matmul needs to dequantize integer rows.
int64_t dequant_scratch_floats(int64_t cols, int n_threads);

void float_matmul(const FloatMatmul& problem);

}  // namespace glmrt::kernels_avx2
