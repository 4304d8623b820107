#include <glmrt/base/error.h>
#include <glmrt/model/rope.h>

#include <cmath>

namespace glmrt {

Rope::Rope(int rope_dim, double theta) {
  if (rope_dim <= 0 || rope_dim % 2)
    fail("rope dimension must be even and positive, got {}", rope_dim);
  inv_freq_.resize(rope_dim / 2);
  for (int j = 0; j < rope_dim / 2; ++j)
    inv_freq_[j] = std::pow(theta, -2.0 * j / static_cast<double>(rope_dim));
}

void Rope::apply(std::span<float> x, long pos, RopePairing pairing) const {
  const size_t half = inv_freq_.size();
  for (size_t j = 0; j < half; ++j) {
    // The angle in double: positions reach 10^5 and f32 angles lose digits there.
    const double angle = static_cast<double>(pos) * inv_freq_[j];
    const float c = static_cast<float>(std::cos(angle)), s = static_cast<float>(std::sin(angle));
    const size_t a = pairing == RopePairing::interleaved ? 2 * j : j;
    const size_t b = pairing == RopePairing::interleaved ? 2 * j + 1 : j + half;
    const float x1 = x[a], x2 = x[b];
    x[a] = x1 * c - x2 * s;
    x[b] = x2 * c + x1 * s;
  }
}

}  // namespace glmrt
