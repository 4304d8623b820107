#include "reference_config.h"

#include <stdexcept>
#include <string>

namespace glmrt::test {
namespace {

std::vector<bool> dense_layers(const nlohmann::json& j, int layers) {
  std::vector<bool> dense(layers);
  if (j.contains("mlp_layer_types")) {
    const auto& kinds = j.at("mlp_layer_types");
    if (static_cast<int>(kinds.size()) != layers)
      throw std::invalid_argument("mlp_layer_types: one entry per layer expected");
    for (int i = 0; i < layers; ++i) dense[i] = kinds[i].get<std::string>() == "dense";
    return dense;
  }
  const int first_dense = j.value("first_k_dense_replace", 0);
  for (int i = 0; i < layers; ++i) dense[i] = i < first_dense;
  return dense;
}

std::vector<bool> shared_indexer_layers(const nlohmann::json& j, int layers) {
  std::vector<bool> shared(layers, false);
  if (j.contains("indexer_types")) {
    for (int i = 0; i < layers; ++i) shared[i] = j.at("indexer_types").at(i) == "shared";
  } else if (j.contains("index_topk_pattern")) {
    const std::string pattern = j.at("index_topk_pattern");
    if (static_cast<int>(pattern.size()) != layers)
      throw std::invalid_argument("index_topk_pattern: one letter per layer expected");
    for (int i = 0; i < layers; ++i) shared[i] = pattern[i] == 'S';
  } else if (j.value("index_topk_freq", 1) != 1) {
    throw std::invalid_argument("the reference reads indexer_types or index_topk_pattern only");
  }
  return shared;
}

}  // namespace

ReferenceConfig ReferenceConfig::from_json(const nlohmann::json& j) {
  ReferenceConfig c;
  c.vocab = j.at("vocab_size");
  c.hidden = j.at("hidden_size");
  c.intermediate = j.at("intermediate_size");
  c.moe_intermediate = j.at("moe_intermediate_size");
  c.layers = j.at("num_hidden_layers");
  c.heads = j.at("num_attention_heads");
  c.q_lora = j.at("q_lora_rank");
  c.kv_lora = j.at("kv_lora_rank");
  c.qk_nope = j.at("qk_nope_head_dim");
  c.qk_rope = j.at("qk_rope_head_dim");
  c.v_head = j.at("v_head_dim");
  c.experts = j.at("n_routed_experts");
  c.shared_experts = j.at("n_shared_experts");
  c.top_k = j.at("num_experts_per_tok");
  c.n_group = j.value("n_group", 1);
  c.topk_group = j.value("topk_group", 1);
  c.norm_topk_prob = j.value("norm_topk_prob", true);
  c.routed_scaling = j.at("routed_scaling_factor");
  c.rms_eps = j.at("rms_norm_eps");
  if (j.contains("rope_parameters"))
    c.rope_theta = j.at("rope_parameters").at("rope_theta");
  else
    c.rope_theta = j.value("rope_theta", 10000.0);
  c.rope_interleave = j.value("rope_interleave", true);
  c.indexer_rope_interleave = j.value("indexer_rope_interleave", false);
  c.index_topk = j.at("index_topk");
  c.index_head_dim = j.at("index_head_dim");
  c.index_heads = j.at("index_n_heads");
  c.mtp_layers = j.value("num_nextn_predict_layers", 0);
  c.tie_word_embeddings = j.value("tie_word_embeddings", false);
  c.dense_mlp = dense_layers(j, c.layers);
  c.shared_indexer = shared_indexer_layers(j, c.layers);
  return c;
}

}  // namespace glmrt::test
