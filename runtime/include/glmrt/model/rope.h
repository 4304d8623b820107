// Rotary position embedding on a head's rope slice. Two pairings exist and a
// config chooses: interleaved (GPT-J: (0,1),(2,3),...) or split-half (NeoX:
// (i, i + d/2)). Pair j rotates by pos · inv_freq[j]: theta^(-2j/d) for the
// plain RoPE, YaRN's blend of those and theta^(-2j/d) / factor otherwise (as
// transformers' _compute_yarn_parameters), and cos and sin are multiplied by
// the settings' attention factor.
#pragma once

#include <glmrt/model_files/rope_settings.h>

#include <span>
#include <vector>

namespace glmrt {

enum class RopePairing { interleaved, split_half };

class Rope {
 public:
  Rope(int rope_dim, double theta);
  Rope(int rope_dim, const RopeSettings& settings);
  int dim() const { return static_cast<int>(inv_freq_.size()) * 2; }
  std::span<const double> inv_freq() const { return inv_freq_; }
  /// Rotates x (dim() values) in place for position `pos`.
  void apply(std::span<float> x, long pos, RopePairing pairing) const;

 private:
  std::vector<double> inv_freq_;
  double attention_factor_ = 1.0;
};

}  // namespace glmrt
