// y[S, O] = x[S, I] . W^T for integer weights against int8 activations.
#pragma once

#include "activation_quantizer.h"

#include <glmrt/plugin/weight_format.h>

#include <cstdint>

namespace glmrt::kernels_avx2 {

struct IntMatmul {
  const glmrt_weight_view* weights = nullptr;
  QuantizedActivations activations;
  /// Per-group formats: group of each activation block ([steps * blocks per step]).
  const int32_t* block_group = nullptr;
  int64_t S = 0;
  float* y = nullptr;
  int n_threads = 1;
};

/// Fills the block -> group table for group_size (a multiple of 32) and I.
void fill_block_groups(int64_t cols, int64_t group_size, int64_t n_blocks, int32_t* block_group);

/// Runs the product; `Format` is Int8Format, Int4Format or Int2Format.
template <class Format>
void int_matmul(const IntMatmul& problem);

}  // namespace glmrt::kernels_avx2
