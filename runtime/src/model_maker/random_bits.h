// The random source of make-model's weights: splitmix64, fast and good
// enough for random weights, keyed so any row can be drawn on its own.
#pragma once

#include <cmath>
#include <cstdint>
#include <string_view>

namespace glmrt {

inline uint64_t mix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/// Word i of a stream keyed `key`: a function of (key, i) alone, so loops
/// over words pipeline and vectorize.
inline uint64_t random_word(uint64_t key, uint64_t i) {
  return mix(key + (i + 1) * 0x9e3779b97f4a7c15ull);
}

/// A randomness key (a tensor's name) and the seed as one number.
inline uint64_t key_hash(std::string_view key, uint64_t seed) {
  uint64_t h = 1469598103934665603ull ^ mix(seed);
  for (unsigned char c : key) h = (h ^ c) * 1099511628211ull;
  return mix(h);
}

class Random {
 public:
  explicit Random(uint64_t state) : state_(state) {}
  uint64_t next() { return mix(state_ += 0x9e3779b97f4a7c15ull); }
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  double normal() {  // Box-Muller, one value per call (the pair's other half is dropped)
    const double u = 1.0 - uniform(), v = uniform();
    return std::sqrt(-2.0 * std::log(u)) * std::cos(2.0 * M_PI * v);
  }

 private:
  uint64_t state_;
};

}  // namespace glmrt
