// ggml weight blocks (ABI 1.5) against int8 activations, as llama.cpp
// multiplies them: the activations quantized per 32 inputs, each block's
// integer dot products scaled by the block's scales. The types with such a
// kernel are listed by has_ggml_int_kernel(); the others are dequantized
// row by row with the ggml library and take the float kernels.
#pragma once

#include "tile_jobs.h"

#include <glmrt/plugin/weight_format.h>

#include <cstdint>
#include <span>

namespace glmrt::kernels_avx2 {

/// S rows of activations quantized for the ggml kernels: per row, I int8
/// values in input order, one f32 scale per 32 inputs and the sum of the
/// int8 values of each 16 (what the blocks' mins and offsets meet).
struct GgmlActivations {
  int8_t* values = nullptr;   // [S, I]
  float* scales = nullptr;    // [S, I / 32]
  int16_t* sums16 = nullptr;  // [S, I / 16]
};

/// Sizes in bytes of GgmlActivations for S rows of `cols` inputs (a multiple of 32).
struct GgmlActivationBytes {
  size_t values, scales, sums16;
};
GgmlActivationBytes ggml_activation_bytes(int64_t S, int64_t cols);

/// Quantizes x[S, cols] (rows `x_stride` floats apart) into `out`, which
/// holds S * passes rows: per input row its int8 rows, and with 2 passes
/// then the residual x - scale * q of the first, quantized likewise.
void quantize_ggml_activations(const float* x, int64_t S, int64_t x_stride, int64_t cols,
                               int passes, const GgmlActivations& out);

/// One product's activations to quantize (quantize_ggml_activations' arguments).
struct GgmlQuantizeJob {
  const float* x;
  int64_t S, x_stride, cols;
  int passes;
  GgmlActivations out;
};

/// Every job's quantize_ggml_activations, rows spread over at most
/// `n_threads` threads when there are enough of them (a prefill's; a decode
/// step's few rows stay on the calling thread). The same bits either way.
void quantize_ggml(std::span<const GgmlQuantizeJob> jobs, int n_threads);

struct GgmlMatmul {
  const glmrt_weight_view* weights = nullptr;
  GgmlActivations activations;
  int64_t S = 0;
  float* y = nullptr;
  int64_t y_stride = 0;  // floats between rows of y
  int passes = 1;        // activation rows per input row, summed into its output
  bool vnni = false;     // the AVX-VNNI kernels (the same bits; the CPU must have AVX-VNNI)
  /// With vnni: the lane kernels at 16 rows (the same bits; the CPU must
  /// have AVX-512 F, BW, VL and VNNI).
  bool wide_lanes = false;
};

/// True for the ggml element types with an int8-activation kernel.
bool has_ggml_int_kernel(uint32_t element_type);

/// The product as tiles of weight rows (tile_jobs.h). Each output is one
/// row's dot with one activation row, summed in block order: the same
/// whatever S, the tile or the grouping.
TileJob ggml_tiles(const GgmlMatmul& problem);

/// One activation row as a kernel reads it, from the row's first input.
struct GgmlColumn {
  const int8_t* values;
  const float* scales;
  const int16_t* sums16;
};

/// Activation rows one kernel call meets with each decoded weight block.
inline constexpr int kGgmlColumns = 4;

/// out[c] = one weight row of `blocks` ggml blocks . activation row x[c], for
/// the C rows of the kernel's width.
using GgmlRowDot = void (*)(const uint8_t* row, int64_t blocks, const GgmlColumn* x, float* out);

/// A type's kernel for 1, 2 and kGgmlColumns activation rows; each row's
/// result is the same bits at any width. Two rows are one token's two int8x2
/// passes, or a two-token verification: one decode of the weights for both.
struct GgmlKernel {
  GgmlRowDot one = nullptr;
  GgmlRowDot pair = nullptr;
  GgmlRowDot wide = nullptr;
};

/// The kernel of a type has_ggml_int_kernel() accepts: the AVX-VNNI build
/// when `vnni` (only on a CPU with AVX-VNNI), else the AVX2 one (ggml_dots.h).
GgmlKernel ggml_kernel(uint32_t element_type, bool vnni);

}  // namespace glmrt::kernels_avx2
