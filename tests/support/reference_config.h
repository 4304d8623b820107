// The subset of a glm_moe_dsa config.json the test reference and the
// checkpoint generator need, parsed on its own (not through the runtime) so
// a misreading in the runtime cannot hide in both.
#pragma once

#include <nlohmann/json.hpp>

#include <vector>

namespace glmrt::test {

struct ReferenceConfig {
  int vocab = 0, hidden = 0, intermediate = 0, moe_intermediate = 0;
  int layers = 0, heads = 0;
  int q_lora = 0, kv_lora = 0, qk_nope = 0, qk_rope = 0, v_head = 0;
  int experts = 0, shared_experts = 0, top_k = 0, n_group = 1, topk_group = 1;
  bool norm_topk_prob = true;
  double routed_scaling = 1.0;
  double rms_eps = 1e-6, rope_theta = 10000.0;
  bool rope_interleave = true, indexer_rope_interleave = false;
  int index_topk = 0, index_head_dim = 0, index_heads = 0;
  int mtp_layers = 0;
  bool tie_word_embeddings = false;
  std::vector<bool> dense_mlp;       // per main layer
  std::vector<bool> shared_indexer;  // per main layer

  int qk_head() const { return qk_nope + qk_rope; }
  static ReferenceConfig from_json(const nlohmann::json& config);
};

}  // namespace glmrt::test
