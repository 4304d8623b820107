// The RoPE a config asks for, as transformers' modeling_rope_utils resolves it:
// the plain one, or YaRN (`rope_type` "yarn"), whose blended frequencies the
// model computes from these fields and whose two scale factors are resolved here.
#pragma once

namespace glmrt {

struct YarnScaling {
  double factor = 1.0;
  double original_max_position_embeddings = 0;
  double beta_fast = 32, beta_slow = 1;
  bool truncate = true;  // floor/ceil the correction range, as transformers does by default
};

struct RopeSettings {
  double theta = 10000.0;
  bool yarn = false;
  YarnScaling scaling;  // when yarn
  /// Multiplies cos and sin (transformers' `attention_scaling`): the
  /// config's attention_factor, else mscale(f, mscale) / mscale(f, mscale_all_dim)
  /// when both are set, else mscale(f, 1); 1 without YaRN.
  double attention_factor = 1.0;
  /// Multiplies the main attention's softmax scale 1/sqrt(qk_head_dim):
  /// mscale(f, mscale_all_dim)² when mscale_all_dim is set and non-zero, else 1.
  double softmax_multiplier = 1.0;
};

/// YaRN's magnitude correction: 0.1 · m · ln f + 1, or 1 when f <= 1.
double yarn_mscale(double factor, double m);

}  // namespace glmrt
