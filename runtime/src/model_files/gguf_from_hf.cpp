#include "gguf_tensor_names.h"

#include <glmrt/model_files/gguf_from_hf.h>

#include <fmt/format.h>

namespace glmrt::gguf {

using nlohmann::ordered_json;

std::vector<std::pair<std::string, Value>> metadata_of_hf_config(const ordered_json& c,
                                                                 std::string_view arch,
                                                                 std::string_view name) {
  std::vector<std::pair<std::string, Value>> out;
  const auto set = [&](std::string key, Value value) {
    out.emplace_back(std::move(key), std::move(value));
  };
  const auto key = [&](std::string_view k) { return fmt::format("{}.{}", arch, k); };
  const auto u32 = [](const ordered_json& v) { return Value::u32(v.get<uint32_t>()); };
  const auto f32 = [](const ordered_json& v) { return Value::f32(v.get<float>()); };
  const int kv_lora = c.at("kv_lora_rank"), rope = c.at("qk_rope_head_dim");
  const int nope = c.at("qk_nope_head_dim"), v = c.at("v_head_dim");
  const int nextn = c.value("num_nextn_predict_layers", 0);
  // GLM-5's config nests the rope base in rope_parameters.
  const ordered_json& theta =
      c.contains("rope_theta") ? c.at("rope_theta") : c.at("rope_parameters").at("rope_theta");
  set("general.architecture", Value::str(std::string(arch)));
  set("general.name", Value::str(std::string(name)));
  set(key("block_count"), Value::u32(c.at("num_hidden_layers").get<uint32_t>() + nextn));
  if (nextn > 0) set(key("nextn_predict_layers"), Value::u32(nextn));
  set(key("context_length"), u32(c.at("max_position_embeddings")));
  set(key("embedding_length"), u32(c.at("hidden_size")));
  set(key("feed_forward_length"), u32(c.at("intermediate_size")));
  set(key("attention.head_count"), u32(c.at("num_attention_heads")));
  set(key("attention.head_count_kv"), Value::u32(1));
  set(key("rope.freq_base"), f32(theta));
  set(key("attention.layer_norm_rms_epsilon"), f32(c.at("rms_norm_eps")));
  set(key("expert_count"), u32(c.at("n_routed_experts")));
  set(key("expert_used_count"), u32(c.at("num_experts_per_tok")));
  set(key("expert_group_count"), u32(c.at("n_group")));
  set(key("expert_group_used_count"), u32(c.at("topk_group")));
  set(key("expert_gating_func"), Value::u32(2));  // sigmoid
  set(key("leading_dense_block_count"), u32(c.at("first_k_dense_replace")));
  set(key("vocab_size"), u32(c.at("vocab_size")));
  set(key("attention.q_lora_rank"), u32(c.at("q_lora_rank")));
  set(key("attention.kv_lora_rank"), Value::u32(kv_lora));
  set(key("attention.key_length"), Value::u32(kv_lora + rope));
  set(key("attention.value_length"), Value::u32(kv_lora));
  set(key("attention.key_length_mla"), Value::u32(nope + rope));
  set(key("attention.value_length_mla"), Value::u32(v));
  set(key("expert_feed_forward_length"), u32(c.at("moe_intermediate_size")));
  set(key("expert_shared_count"), u32(c.at("n_shared_experts")));
  set(key("expert_weights_scale"), f32(c.at("routed_scaling_factor")));
  set(key("expert_weights_norm"), Value::boolean(c.at("norm_topk_prob").get<bool>()));
  set(key("rope.dimension_count"), Value::u32(rope));
  if (c.contains("rope_scaling") && c["rope_scaling"].value("type", "") == "yarn") {
    const ordered_json& y = c["rope_scaling"];
    set(key("rope.scaling.type"), Value::str("yarn"));
    set(key("rope.scaling.factor"), f32(y.at("factor")));
    set(key("rope.scaling.original_context_length"), u32(y.at("original_max_position_embeddings")));
    set(key("rope.scaling.yarn_beta_fast"), f32(y.at("beta_fast")));
    set(key("rope.scaling.yarn_beta_slow"), f32(y.at("beta_slow")));
    set(key("rope.scaling.yarn_log_multiplier"),
        Value::f32(0.1f * y.at("mscale_all_dim").get<float>()));
  }
  if (c.contains("index_topk")) {
    set(key("attention.indexer.head_count"), u32(c.at("index_n_heads")));
    set(key("attention.indexer.key_length"), u32(c.at("index_head_dim")));
    set(key("attention.indexer.top_k"), u32(c.at("index_topk")));
  }
  if (c.contains("bos_token_id") && c["bos_token_id"].is_number())
    set("tokenizer.ggml.bos_token_id", u32(c["bos_token_id"]));
  // llama.cpp writes one end-of-sequence id: the first of a list.
  const ordered_json& eos = c.at("eos_token_id");
  set("tokenizer.ggml.eos_token_id", u32(eos.is_array() ? eos.at(0) : eos));
  return out;
}

std::optional<std::string> gguf_name_of_hf_tensor(std::string_view hf_name) {
  return model_files::gguf_tensor_name(hf_name);
}

std::string experts_tensor_name(int layer, std::string_view kind) {
  return fmt::format("blk.{}.ffn_{}_exps.weight", layer, kind);
}

std::string key_b_tensor_name(int layer) {
  return fmt::format("blk.{}.attn_k_b.weight", layer);
}

std::string value_b_tensor_name(int layer) {
  return fmt::format("blk.{}.attn_v_b.weight", layer);
}

}  // namespace glmrt::gguf
