// Activations quantized to int8 for the VNNI kernels: 32 inputs per block with
// one f32 scale each (so one outlier costs precision only in its block), laid
// out per 64-byte weight step in the order VPDPBUSD consumes them:
//
//   int8 weights, 64 inputs per step: x stored unsigned (q + 128), natural
//     order, because VPDPBUSD multiplies unsigned by signed bytes. Lane l of
//     the product sums inputs 4l..4l+3: lanes 0-7 are block 0, 8-15 block 1.
//   int4 weights, 128 inputs per step: x stored signed, the 64 even inputs
//     then the 64 odd ones (the low and the high nibbles of the 64 weight
//     bytes). Lane l sums inputs 8l..8l+7, so lanes 4b..4b+3 are block b.
//     Weights are stored v + 8, so each lane starts from -8 x (its inputs' sum).
#pragma once

#include <glmrt/plugin/host_services.h>

#include <cstdint>

namespace avx512_example {

constexpr int kBlockInputs = 32;
constexpr int kStepBytes = 64;  // weight bytes per step: one 512-bit register
constexpr int kLanes = 16;

enum class IntWeights { kInt8, kInt4 };

constexpr int inputs_per_step(IntWeights type) {
  return type == IntWeights::kInt8 ? 64 : 128;
}

struct IntActivations {
  IntWeights type;
  int64_t steps;         // per activation row: ceil(cols / inputs_per_step)
  uint8_t* values;       // [S][steps][inputs_per_step]
  float* lane_scales;    // [S][steps][16]: the scale of each lane's block
  int32_t* lane_starts;  // [S][steps][16]: int4 only, -8 x the lane's input sum
};

/// Quantizes row `s` of x[S, cols] into `out` (inputs past cols are zero).
void quantize_activation_row(const float* x, int64_t cols, int64_t s, const IntActivations& out);

}  // namespace avx512_example
