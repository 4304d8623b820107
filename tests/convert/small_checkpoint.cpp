#include "small_checkpoint.h"

#include "checkpoint_generator.h"

namespace glmrt::test {

nlohmann::json small_config(int64_t hidden, int64_t q_lora) {
  return {{"model_type", "glm_moe_dsa"},
          {"vocab_size", 64},
          {"hidden_size", hidden},
          {"intermediate_size", 32},
          {"moe_intermediate_size", 16},
          {"num_hidden_layers", 2},
          {"num_attention_heads", 2},
          {"n_shared_experts", 1},
          {"n_routed_experts", 2},
          {"routed_scaling_factor", 1.0},
          {"kv_lora_rank", 16},
          {"q_lora_rank", q_lora},
          {"qk_rope_head_dim", 8},
          {"qk_nope_head_dim", 8},
          {"v_head_dim", 8},
          {"n_group", 1},
          {"topk_group", 1},
          {"num_experts_per_tok", 1},
          {"norm_topk_prob", true},
          {"mlp_layer_types", {"dense", "sparse"}},
          {"hidden_act", "silu"},
          {"max_position_embeddings", 256},
          {"rms_norm_eps", 1e-5},
          {"rope_parameters", {{"rope_type", "default"}, {"rope_theta", 10000.0}}},
          {"index_topk", 4},
          {"index_head_dim", 8},
          {"index_n_heads", 1},
          {"indexer_types", {"full", "full"}},
          {"num_nextn_predict_layers", 0},
          {"tie_word_embeddings", false}};
}

TensorList small_checkpoint_tensors(const nlohmann::json& config) {
  CheckpointSpec spec;
  spec.config = config;
  spec.dtype = StoredDType::bf16;
  return make_checkpoint_tensors(spec);
}

void replace_tensor(TensorList& tensors, HostTensor replacement) {
  if (HostTensor* t = find_tensor(tensors, replacement.name))
    *t = std::move(replacement);
  else
    tensors.push_back(std::move(replacement));
}

void write_small_checkpoint(const std::filesystem::path& dir, const nlohmann::json& config,
                            const TensorList& tensors) {
  write_checkpoint(dir, config, tensors, 1);
}

}  // namespace glmrt::test
