#include <glmrt/base/error.h>
#include <glmrt/model/rope.h>

#include <algorithm>
#include <cmath>
#include <numbers>

namespace glmrt {

namespace {

std::vector<double> plain_inv_freq(int rope_dim, double theta) {
  if (rope_dim <= 0 || rope_dim % 2)
    fail("rope dimension must be even and positive, got {}", rope_dim);
  std::vector<double> inv_freq(rope_dim / 2);
  for (int j = 0; j < rope_dim / 2; ++j)
    inv_freq[j] = std::pow(theta, -2.0 * j / static_cast<double>(rope_dim));
  return inv_freq;
}

// The dimension whose wavelength turns `rotations` times over the original context.
double yarn_correction_dim(double rotations, int dim, double theta, double original_context) {
  return dim * std::log(original_context / (rotations * 2 * std::numbers::pi)) /
         (2 * std::log(theta));
}

// Dimensions below the range keep their frequency (extrapolation), those above
// it are divided by the factor (interpolation), a linear ramp in between.
std::vector<double> yarn_inv_freq(int rope_dim, double theta, const YarnScaling& s) {
  std::vector<double> inv_freq = plain_inv_freq(rope_dim, theta);
  double low =
      yarn_correction_dim(s.beta_fast, rope_dim, theta, s.original_max_position_embeddings);
  double high =
      yarn_correction_dim(s.beta_slow, rope_dim, theta, s.original_max_position_embeddings);
  if (s.truncate) {
    low = std::floor(low);
    high = std::ceil(high);
  }
  low = std::max(low, 0.0);
  high = std::min(high, rope_dim - 1.0);
  if (low == high) high += 0.001;  // as transformers: no division by zero
  for (size_t j = 0; j < inv_freq.size(); ++j) {
    const double ramp = std::clamp((static_cast<double>(j) - low) / (high - low), 0.0, 1.0);
    const double extrapolation = 1.0 - ramp;
    inv_freq[j] = inv_freq[j] / s.factor * (1.0 - extrapolation) + inv_freq[j] * extrapolation;
  }
  return inv_freq;
}

}  // namespace

Rope::Rope(int rope_dim, double theta) : inv_freq_(plain_inv_freq(rope_dim, theta)) {}

Rope::Rope(int rope_dim, const RopeSettings& settings)
    : inv_freq_(settings.yarn ? yarn_inv_freq(rope_dim, settings.theta, settings.scaling)
                              : plain_inv_freq(rope_dim, settings.theta)),
      attention_factor_(settings.attention_factor) {}

void Rope::apply(std::span<float> x, long pos, RopePairing pairing) const {
  const size_t half = inv_freq_.size();
  for (size_t j = 0; j < half; ++j) {
    // The angle in double: positions reach 10^5 and f32 angles lose digits there.
    const double angle = static_cast<double>(pos) * inv_freq_[j];
    const float c = static_cast<float>(std::cos(angle) * attention_factor_);
    const float s = static_cast<float>(std::sin(angle) * attention_factor_);
    const size_t a = pairing == RopePairing::interleaved ? 2 * j : j;
    const size_t b = pairing == RopePairing::interleaved ? 2 * j + 1 : j + half;
    const float x1 = x[a], x2 = x[b];
    x[a] = x1 * c - x2 * s;
    x[b] = x2 * c + x1 * s;
  }
}

}  // namespace glmrt
