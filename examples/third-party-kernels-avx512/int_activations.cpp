#include "int_activations.h"

#include "simd.h"

#include <algorithm>
#include <cstring>

namespace avx512_example {
namespace {

/// Quantizes `n` (<= 32) inputs to 32 int8 values, zero padded; returns the
/// block's scale (0 for an all-zero block). q = round(x * 127 / max|x|) is at
/// most half a step from x / scale.
float quantize_block(const float* x, int64_t n, int8_t* out) {
  alignas(64) float padded[kBlockInputs];
  if (n < kBlockInputs) {  // the last block of a row: never read past its end
    std::fill(padded, padded + kBlockInputs, 0.0f);
    std::memcpy(padded, x, static_cast<size_t>(std::max<int64_t>(n, 0)) * sizeof(float));
    x = padded;
  }
  const simde__m512 low = simde_mm512_loadu_ps(x);
  const simde__m512 high = simde_mm512_loadu_ps(x + 16);
  const float amax =
      max_lanes(simde_mm512_max_ps(simde_mm512_abs_ps(low), simde_mm512_abs_ps(high)));
  if (!(amax > 0.0f)) {
    std::memset(out, 0, kBlockInputs);
    return 0.0f;
  }
  const simde__m512 inverse = simde_mm512_set1_ps(127.0f / amax);
  simde_mm_storeu_si128(
      out, simde_mm512_cvtsepi32_epi8(to_int_nearest(simde_mm512_mul_ps(low, inverse))));
  simde_mm_storeu_si128(
      out + 16, simde_mm512_cvtsepi32_epi8(to_int_nearest(simde_mm512_mul_ps(high, inverse))));
  return amax / 127.0f;
}

}  // namespace

void quantize_activation_row(const float* x, int64_t cols, int64_t s, const IntActivations& out) {
  const int per_step = inputs_per_step(out.type);
  const int blocks = per_step / kBlockInputs;
  const float* row = x + s * cols;
  for (int64_t step = 0; step < out.steps; ++step) {
    const int64_t at = s * out.steps + step;
    alignas(64) int8_t q[128];
    float block_scale[4];
    for (int b = 0; b < blocks; ++b) {
      const int64_t first = step * per_step + int64_t{b} * kBlockInputs;
      const int64_t n = std::clamp<int64_t>(cols - first, 0, kBlockInputs);
      block_scale[b] = quantize_block(row + std::min(first, cols), n, q + b * kBlockInputs);
    }
    float* scales = out.lane_scales + at * kLanes;
    for (int lane = 0; lane < kLanes; ++lane) scales[lane] = block_scale[lane * blocks / kLanes];
    uint8_t* values = out.values + at * per_step;
    if (out.type == IntWeights::kInt8) {
      for (int i = 0; i < per_step; ++i) values[i] = static_cast<uint8_t>(q[i] + 128);
    } else {
      int32_t* starts = out.lane_starts + at * kLanes;
      for (int j = 0; j < 64; ++j) {
        values[j] = static_cast<uint8_t>(q[2 * j]);
        values[64 + j] = static_cast<uint8_t>(q[2 * j + 1]);
      }
      for (int lane = 0; lane < kLanes; ++lane) {
        int32_t sum = 0;
        for (int i = 8 * lane; i < 8 * lane + 8; ++i) sum += q[i];
        starts[lane] = -8 * sum;
      }
    }
  }
}

}  // namespace avx512_example
