// y[S, O] = x[S, I] . W^T for integer weights against int8 activations.
#pragma once

#include "activation_quantizer.h"
#include "tile_jobs.h"

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
  int64_t y_stride = 0;  // floats between rows of y
  bool vnni = false;     // the AVX-VNNI dots (the same bits; the CPU must have AVX-VNNI)
};

/// The group size the int kernels see: a two-level format's sub-group (its
/// group scales are decoded per row tile), else the format's group_size.
inline int64_t kernel_group_size(const glmrt_weight_format& format) {
  return plugin::is_two_level(format.element_type) ? plugin::two_level_group(format.element_type)
                                                   : format.group_size;
}

/// Fills the block -> group table for group_size (a multiple of 32) and I.
void fill_block_groups(int64_t cols, int64_t group_size, int64_t n_blocks, int32_t* block_group);

/// The product as tiles of weight rows that run in any order, on any thread
/// (tile_jobs.h); `Format` is Int8Format, Int4Format, Int3Format or Int2Format. The tile
/// shape follows S alone, so a row's result does not depend on how the
/// product is scheduled or grouped. problem.vnni picks the vpdpbusd build.
template <class Format>
TileJob int_tiles(const IntMatmul& problem);

// The two builds int_tiles() chooses from (int_formats.h): AVX2's maddubs +
// madd, and AVX-VNNI's vpdpbusd (only on a CPU with AVX-VNNI).
namespace int_dots {
template <class Format>
TileJob int_tiles(const IntMatmul& problem);
}  // namespace int_dots
namespace int_dots_vnni {
template <class Format>
TileJob int_tiles(const IntMatmul& problem);
}  // namespace int_dots_vnni

}  // namespace glmrt::kernels_avx2
