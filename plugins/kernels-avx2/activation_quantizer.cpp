#include "activation_quantizer.h"

#include "int_formats.h"
#include "simd.h"

#include <algorithm>
#include <cstring>
#include <limits>

namespace glmrt::kernels_avx2 {
namespace {

/// Quantizes `n` (<= 32) inputs to 32 int8 values (zero padded), returning the
/// block's scale (0 for an all-zero block) and the sum of its int8 values.
struct QuantizedBlock {
  float scale;
  int32_t sum;
};

QuantizedBlock quantize_block(const float* x, int64_t n, int8_t* out) {
  alignas(32) float padded[kBlockSize];
  if (n < kBlockSize) {
    std::memset(padded, 0, sizeof(padded));
    if (n > 0) std::memcpy(padded, x, static_cast<size_t>(n) * sizeof(float));
    x = padded;
  }
  __m256 v[4];
  const __m256 sign_bit = _mm256_set1_ps(-0.0f);
  __m256 max_abs = _mm256_setzero_ps();
  for (int i = 0; i < 4; ++i) {
    v[i] = _mm256_loadu_ps(x + 8 * i);
    max_abs = _mm256_max_ps(max_abs, _mm256_andnot_ps(sign_bit, v[i]));
  }
  // A NaN or an infinity makes the block's scale NaN (its codes 0): every
  // output it reaches is NaN, as in a float product, instead of the finite
  // value of an int8 code that was never the input's.
  __m256 unordered = _mm256_setzero_ps();
  for (int i = 0; i < 4; ++i)
    unordered = _mm256_or_ps(unordered, _mm256_cmp_ps(v[i], v[i], _CMP_UNORD_Q));
  const float amax = horizontal_max(max_abs);
  if (_mm256_movemask_ps(unordered) != 0 || amax == std::numeric_limits<float>::infinity()) {
    std::memset(out, 0, kBlockSize);
    return {std::numeric_limits<float>::quiet_NaN(), 0};
  }
  if (!(amax > 0.0f)) {
    std::memset(out, 0, kBlockSize);
    return {0.0f, 0};
  }
  // q = round(x * 127 / amax) lies in [-127, 127]: the rounding error is at
  // most half a step (scale / 2), the bound the conformance suite checks.
  const __m256 inverse = _mm256_set1_ps(127.0f / amax);
  __m256i q[4];
  for (int i = 0; i < 4; ++i) q[i] = _mm256_cvtps_epi32(_mm256_mul_ps(v[i], inverse));
  const int32_t sum =
      horizontal_sum(_mm256_add_epi32(_mm256_add_epi32(q[0], q[1]), _mm256_add_epi32(q[2], q[3])));
  // packs work per 128-bit lane; the final permute restores element order.
  const __m256i words01 = _mm256_packs_epi32(q[0], q[1]);
  const __m256i words23 = _mm256_packs_epi32(q[2], q[3]);
  const __m256i bytes = _mm256_packs_epi16(words01, words23);
  _mm256_storeu_si256(
      reinterpret_cast<__m256i*>(out),
      _mm256_permutevar8x32_epi32(bytes, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7)));
  return {amax / 127.0f, sum};
}

}  // namespace

float quantize_block32(const float* x, int8_t* out) {
  return quantize_block(x, kBlockSize, out).scale;
}

template <class Format>
ActivationLayout activation_layout(int64_t cols, int64_t group_size) {
  ActivationLayout layout;
  layout.steps = (cols + Format::kElementsPerStep - 1) / Format::kElementsPerStep;
  layout.row_bytes = layout.steps * Format::kElementsPerStep;
  layout.scales_per_row = layout.steps * Format::kScalesPerStep;
  layout.groups = group_size > 0 ? (cols + group_size - 1) / group_size : 1;
  return layout;
}

template <class Format>
void quantize_activations(const float* x, int64_t S, int64_t x_stride, int64_t cols,
                          int64_t group_size, const QuantizedActivations& out) {
  const ActivationLayout& layout = out.layout;
  const int64_t blocks_per_group = group_size > 0 ? group_size / kBlockSize : 0;
  for (int64_t s = 0; s < S; ++s) {
    const float* row = x + s * x_stride;
    int8_t* values = out.values + s * layout.row_bytes;
    float* lane_scales = out.lane_scales + s * layout.scales_per_row;
    float* group_sums = out.group_sums + s * layout.groups;
    std::fill(group_sums, group_sums + layout.groups, 0.0f);
    for (int64_t step = 0; step < layout.steps; ++step) {
      alignas(32) int8_t natural[Format::kElementsPerStep];
      float block_scale[Format::kBlocksPerStep];
      for (int b = 0; b < Format::kBlocksPerStep; ++b) {
        const int64_t first = step * Format::kElementsPerStep + b * kBlockSize;
        const int64_t n = std::clamp<int64_t>(cols - first, 0, kBlockSize);
        const QuantizedBlock block =
            quantize_block(row + std::min(first, cols), n, natural + b * kBlockSize);
        block_scale[b] = block.scale;
        if (n > 0) {
          const int64_t group = blocks_per_group > 0 ? (first / kBlockSize) / blocks_per_group : 0;
          group_sums[group] += block.scale * static_cast<float>(block.sum);
        }
      }
      Format::arrange(natural, values + step * Format::kElementsPerStep);
      float* scales = lane_scales + step * Format::kScalesPerStep;
      for (int lane = 0; lane < Format::kScalesPerStep; ++lane)
        scales[lane] = block_scale[lane * Format::kBlocksPerStep / Format::kScalesPerStep];
    }
  }
}

#define GLMRT_INSTANTIATE_QUANTIZER(Format)                                                    \
  template ActivationLayout activation_layout<Format>(int64_t, int64_t);                       \
  template void quantize_activations<Format>(const float*, int64_t, int64_t, int64_t, int64_t, \
                                             const QuantizedActivations&);
GLMRT_INSTANTIATE_QUANTIZER(Int8Format)
GLMRT_INSTANTIATE_QUANTIZER(Int4Format)
GLMRT_INSTANTIATE_QUANTIZER(Int2Format)
GLMRT_INSTANTIATE_QUANTIZER(Int3Format)
#undef GLMRT_INSTANTIATE_QUANTIZER

}  // namespace glmrt::kernels_avx2
