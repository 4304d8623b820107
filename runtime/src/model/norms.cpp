#include <glmrt/model/norms.h>

#include <cmath>

namespace glmrt {

void rms_norm(std::span<const float> x, std::span<const float> weight, float eps,
              std::span<float> out) {
  double sum = 0;
  for (float v : x) sum += static_cast<double>(v) * v;
  const float inv = 1.f / std::sqrt(static_cast<float>(sum / x.size()) + eps);
  for (size_t i = 0; i < x.size(); ++i) out[i] = weight[i] * (x[i] * inv);
}

void rms_norm_rows(std::span<const float> x, std::span<const float> weight, float eps,
                   std::span<float> out) {
  const size_t d = weight.size();
  for (size_t r = 0; r < x.size() / d; ++r)
    rms_norm(x.subspan(r * d, d), weight, eps, out.subspan(r * d, d));
}

void layer_norm(std::span<const float> x, std::span<const float> weight,
                std::span<const float> bias, float eps, std::span<float> out) {
  double mean = 0;
  for (float v : x) mean += v;
  mean /= x.size();
  double var = 0;
  for (float v : x) var += (v - mean) * (v - mean);
  var /= x.size();
  const double inv = 1.0 / std::sqrt(var + eps);
  for (size_t i = 0; i < x.size(); ++i)
    out[i] = static_cast<float>((x[i] - mean) * inv) * weight[i] + bias[i];
}

}  // namespace glmrt
