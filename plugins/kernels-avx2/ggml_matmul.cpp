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
  const auto* data = static_cast<const uint8_t*>(w.data);
  GgmlColumn columns[kGgmlColumns];
  float out[kGgmlColumns];
  for (int64_t o = first; o < end; ++o) {
    const uint8_t* row = data + o * w.row_stride_bytes;
    int64_t s = 0;
    // Whole groups of rows through the wide kernel, the rest one at a time:
    // each row's result is the same bits either way.
    for (; s < p.S; s += kGgmlColumns) {
      const int width = s + kGgmlColumns <= p.S ? kGgmlColumns : 1;
      for (int c = 0; c < width; ++c)
        columns[c] = {p.activations.values + (s + c) * I,
                      p.activations.scales + (s + c) * (I / kGroup),
                      p.activations.sums16 + (s + c) * (I / 16)};
      if (width == 1) break;
      kernel.wide(row, blocks, columns, out);
      for (int c = 0; c < kGgmlColumns; ++c) p.y[(s + c) * p.y_stride + o] = out[c];
    }
    for (; s < p.S; ++s) {
      columns[0] = {p.activations.values + s * I, p.activations.scales + s * (I / kGroup),
                    p.activations.sums16 + s * (I / 16)};
      kernel.one(row, blocks, columns, out);
      p.y[s * p.y_stride + o] = out[0];
    }
  }
}

}  // namespace

GgmlActivationBytes ggml_activation_bytes(int64_t S, int64_t cols) {
  return {static_cast<size_t>(S * cols), static_cast<size_t>(S * (cols / kGroup)) * sizeof(float),
          static_cast<size_t>(S * (cols / 16)) * sizeof(int16_t)};
}

void quantize_ggml_activations(const float* x, int64_t S, int64_t x_stride, int64_t cols,
                               const GgmlActivations& out) {
  for (int64_t s = 0; s < S; ++s) {
    const float* row = x + s * x_stride;
    int8_t* values = out.values + s * cols;
    for (int64_t b = 0; b < cols / kGroup; ++b) {
      int8_t* q = values + b * kGroup;
      out.scales[s * (cols / kGroup) + b] = quantize_block32(row + b * kGroup, q);
      for (int half = 0; half < 2; ++half) {
        int sum = 0;
        for (int j = 0; j < 16; ++j) sum += q[16 * half + j];
        out.sums16[s * (cols / 16) + 2 * b + half] = static_cast<int16_t>(sum);
      }
    }
  }
}

TileJob ggml_tiles(const GgmlMatmul& problem) {
  const glmrt_weight_view& w = *problem.weights;
  return {&run_tiles, &problem, w.rows, w.rows * w.cols * problem.S};
}

}  // namespace glmrt::kernels_avx2
