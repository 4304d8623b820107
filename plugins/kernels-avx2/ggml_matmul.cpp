#include "ggml_matmul.h"

#include "activation_quantizer.h"
#include "simd.h"

#include <algorithm>
#include <cstring>

namespace glmrt::kernels_avx2 {
namespace {

constexpr int64_t kGroup = 32;  // inputs per activation scale

void run_tiles(const void* problem, int64_t first, int64_t end) {
  const GgmlMatmul& p = *static_cast<const GgmlMatmul*>(problem);
  const glmrt_weight_view& w = *p.weights;
  const GgmlKernel kernel = ggml_kernel(w.format.element_type);
  const plugin::GgmlTypeTraits traits =
      plugin::ggml_type_traits(plugin::ggml_type_of(w.format.element_type));
  const int64_t I = w.cols, blocks = I / traits.block_values;
  const int64_t rows = p.S * p.passes;  // activation rows
  const auto* data = static_cast<const uint8_t*>(w.data);
  const auto column = [&](int64_t r) {
    return GgmlColumn{p.activations.values + r * I, p.activations.scales + r * (I / kGroup),
                      p.activations.sums16 + r * (I / 16)};
  };
  // Activation row r adds to output row r / passes, its first pass stored,
  // the others added in pass order: the same bits whatever the kernel width.
  const auto put = [&](int64_t r, int64_t o, float value) {
    float& y = p.y[(r / p.passes) * p.y_stride + o];
    y = r % p.passes == 0 ? value : y + value;
  };
  GgmlColumn columns[kGgmlColumns];
  float out[kGgmlColumns];
  for (int64_t o = first; o < end; ++o) {
    const uint8_t* row = data + o * w.row_stride_bytes;
    int64_t r = 0;
    // Whole groups of rows through the wide kernel, then a pair, the rest one
    // at a time: each row's result is the same bits either way.
    for (; r + kGgmlColumns <= rows; r += kGgmlColumns) {
      for (int c = 0; c < kGgmlColumns; ++c) columns[c] = column(r + c);
      kernel.wide(row, blocks, columns, out);
      for (int c = 0; c < kGgmlColumns; ++c) put(r + c, o, out[c]);
    }
    if (r + 2 <= rows) {
      for (int c = 0; c < 2; ++c) columns[c] = column(r + c);
      kernel.pair(row, blocks, columns, out);
      for (int c = 0; c < 2; ++c) put(r + c, o, out[c]);
      r += 2;
    }
    for (; r < rows; ++r) {
      columns[0] = column(r);
      kernel.one(row, blocks, columns, out);
      put(r, o, out[0]);
    }
  }
}

}  // namespace

GgmlActivationBytes ggml_activation_bytes(int64_t S, int64_t cols) {
  return {static_cast<size_t>(S * cols), static_cast<size_t>(S * (cols / kGroup)) * sizeof(float),
          static_cast<size_t>(S * (cols / 16)) * sizeof(int16_t)};
}

void quantize_ggml_activations(const float* x, int64_t S, int64_t x_stride, int64_t cols,
                               int passes, const GgmlActivations& out) {
  alignas(32) float residual[kGroup];
  for (int64_t s = 0; s < S; ++s) {
    const float* row = x + s * x_stride;
    for (int64_t b = 0; b < cols / kGroup; ++b) {
      const float* block = row + b * kGroup;
      for (int pass = 0; pass < passes; ++pass) {
        const int64_t r = s * passes + pass;
        int8_t* q = out.values + r * cols + b * kGroup;
        const float scale = quantize_block32(block, q);
        out.scales[r * (cols / kGroup) + b] = scale;
        for (int half = 0; half < 2; ++half) {
          int sum = 0;
          for (int j = 0; j < 16; ++j) sum += q[16 * half + j];
          out.sums16[r * (cols / 16) + 2 * b + half] = static_cast<int16_t>(sum);
        }
        if (pass + 1 == passes) break;
        // What this pass's rounding left is the next pass's input.
        for (int j = 0; j < kGroup; ++j) residual[j] = block[j] - scale * static_cast<float>(q[j]);
        block = residual;
      }
    }
  }
}

TileJob ggml_tiles(const GgmlMatmul& problem) {
  const glmrt_weight_view& w = *problem.weights;
  return {&run_tiles, &problem, w.rows, w.rows * w.cols * problem.S * problem.passes};
}

}  // namespace glmrt::kernels_avx2
