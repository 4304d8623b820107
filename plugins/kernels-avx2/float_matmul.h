// y[S, O] = x[S, I] . W^T with f32 arithmetic: f32 and bf16 weights directly,
// integer weights dequantized row by row into per-thread scratch (the
// `activations: f32` setting, and group sizes that are not a multiple of 32).
#pragma once

#include "tile_jobs.h"

#include <glmrt/plugin/weight_format.h>

#include <cstdint>

namespace glmrt::kernels_avx2 {

struct FloatMatmul {
  const glmrt_weight_view* weights = nullptr;
  const float* x = nullptr;
  int64_t S = 0;
  int64_t x_stride = 0;  // floats between rows of x
  float* y = nullptr;
  int64_t y_stride = 0;  // floats between rows of y
  /// Integer formats only: dequant_scratch_floats(I, n_threads) floats, a
  /// slice per OpenMP thread of the region the tiles run in.
  float* dequant_scratch = nullptr;
  int64_t dequant_cols = 0;  // floats per scratch row (the widest product's I)
};

/// Floats of scratch float_matmul needs to dequantize integer rows.
int64_t dequant_scratch_floats(int64_t cols, int n_threads);

/// The product as tiles of weight rows (tile_jobs.h); the tile shape follows S alone.
TileJob float_tiles(const FloatMatmul& problem);

}  // namespace glmrt::kernels_avx2
