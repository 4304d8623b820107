// Rotary position embedding on a head's rope slice. Two pairings exist and a
// config chooses: interleaved (GPT-J: (0,1),(2,3),...) or split-half (NeoX:
// (i, i + d/2)). Pair j rotates by pos · theta^(-2j/d) in both.
#pragma once

#include <span>
#include <vector>

namespace glmrt {

enum class RopePairing { interleaved, split_half };

class Rope {
 public:
  Rope(int rope_dim, double theta);
  int dim() const { return static_cast<int>(inv_freq_.size()) * 2; }
  /// Rotates x (dim() values) in place for position `pos`.
  void apply(std::span<float> x, long pos, RopePairing pairing) const;

 private:
  std::vector<double> inv_freq_;
};

}  // namespace glmrt
