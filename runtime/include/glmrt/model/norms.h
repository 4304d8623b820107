// Normalisations, always computed in f32 whatever the weights' precision.
#pragma once

#include <span>

namespace glmrt {

/// out = x / sqrt(mean(x²) + eps) * weight. out may alias x.
void rms_norm(std::span<const float> x, std::span<const float> weight, float eps,
              std::span<float> out);
/// Row-wise rms_norm over [rows, weight.size()].
void rms_norm_rows(std::span<const float> x, std::span<const float> weight, float eps,
                   std::span<float> out);
/// out = (x - mean) / sqrt(var + eps) * weight + bias. out may alias x.
void layer_norm(std::span<const float> x, std::span<const float> weight,
                std::span<const float> bias, float eps, std::span<float> out);

inline float silu(float x) {
  return x / (1.f + __builtin_expf(-x));
}
inline float sigmoid(float x) {
  return 1.f / (1.f + __builtin_expf(-x));
}

}  // namespace glmrt
