#include "gguf_tensor_names.h"

#include <fmt/format.h>

#include <array>
#include <charconv>

namespace glmrt::model_files {
namespace {

struct Entry {
  std::string_view gguf;  // after "blk.L."
  std::string_view hf;    // after "model.layers.L."
  GgufTensorRole role = GgufTensorRole::plain;
};

constexpr std::array kLayerTensors = {
    Entry{"attn_norm.weight", "input_layernorm.weight"},
    Entry{"attn_q_a.weight", "self_attn.q_a_proj.weight"},
    Entry{"attn_q_a_norm.weight", "self_attn.q_a_layernorm.weight"},
    Entry{"attn_q_b.weight", "self_attn.q_b_proj.weight"},
    Entry{"attn_q.weight", "self_attn.q_proj.weight"},
    Entry{"attn_kv_a_mqa.weight", "self_attn.kv_a_proj_with_mqa.weight"},
    Entry{"attn_kv_a_norm.weight", "self_attn.kv_a_layernorm.weight"},
    // Files converted before llama.cpp split it store kv_b_proj whole.
    Entry{"attn_kv_b.weight", "self_attn.kv_b_proj.weight"},
    Entry{"attn_k_b.weight", "self_attn.kv_b_proj.key_absorb", GgufTensorRole::key_absorb},
    Entry{"attn_v_b.weight", "self_attn.kv_b_proj.value", GgufTensorRole::value},
    Entry{"attn_output.weight", "self_attn.o_proj.weight"},
    Entry{"ffn_norm.weight", "post_attention_layernorm.weight"},
    Entry{"ffn_gate.weight", "mlp.gate_proj.weight"},
    Entry{"ffn_up.weight", "mlp.up_proj.weight"},
    Entry{"ffn_down.weight", "mlp.down_proj.weight"},
    Entry{"ffn_gate_inp.weight", "mlp.gate.weight"},
    Entry{"exp_probs_b.bias", "mlp.gate.e_score_correction_bias"},
    Entry{"ffn_gate_exps.weight", "mlp.experts.{}.gate_proj.weight", GgufTensorRole::experts},
    Entry{"ffn_up_exps.weight", "mlp.experts.{}.up_proj.weight", GgufTensorRole::experts},
    Entry{"ffn_down_exps.weight", "mlp.experts.{}.down_proj.weight", GgufTensorRole::experts},
    Entry{"ffn_gate_shexp.weight", "mlp.shared_experts.gate_proj.weight"},
    Entry{"ffn_up_shexp.weight", "mlp.shared_experts.up_proj.weight"},
    Entry{"ffn_down_shexp.weight", "mlp.shared_experts.down_proj.weight"},
    Entry{"indexer.attn_q_b.weight", "self_attn.indexer.wq_b.weight"},
    Entry{"indexer.attn_k.weight", "self_attn.indexer.wk.weight"},
    Entry{"indexer.k_norm.weight", "self_attn.indexer.k_norm.weight"},
    Entry{"indexer.k_norm.bias", "self_attn.indexer.k_norm.bias"},
    Entry{"indexer.proj.weight", "self_attn.indexer.weights_proj.weight"},
    // The MTP block (glm-dsa: block num_hidden_layers).
    Entry{"nextn.eh_proj.weight", "eh_proj.weight"},
    Entry{"nextn.enorm.weight", "enorm.weight"},
    Entry{"nextn.hnorm.weight", "hnorm.weight"},
    Entry{"nextn.shared_head_norm.weight", "shared_head.norm.weight"},
    Entry{"nextn.embed_tokens.weight", "embed_tokens.weight"},
    Entry{"nextn.shared_head_head.weight", "shared_head.head.weight"},
};

constexpr std::array kModelTensors = {
    Entry{"token_embd.weight", "model.embed_tokens.weight"},
    Entry{"output_norm.weight", "model.norm.weight"},
    Entry{"output.weight", "lm_head.weight"},
};

}  // namespace

std::optional<GgufTensorName> hf_tensor_name(std::string_view gguf_name) {
  for (const Entry& e : kModelTensors)
    if (e.gguf == gguf_name) return GgufTensorName{std::string(e.hf), e.role};
  constexpr std::string_view kBlock = "blk.";
  if (!gguf_name.starts_with(kBlock)) return std::nullopt;
  const std::string_view rest = gguf_name.substr(kBlock.size());
  int layer = -1;
  const auto [end, error] = std::from_chars(rest.data(), rest.data() + rest.size(), layer);
  if (error != std::errc() || end == rest.data() || *end != '.' || layer < 0 ||
      (rest[0] == '0' && end - rest.data() > 1))
    return std::nullopt;
  const std::string_view suffix = rest.substr(static_cast<size_t>(end - rest.data()) + 1);
  for (const Entry& e : kLayerTensors)
    if (e.gguf == suffix)
      return GgufTensorName{fmt::format("model.layers.{}.{}", layer, e.hf), e.role};
  return std::nullopt;
}

std::optional<std::string> gguf_tensor_name(std::string_view hf_name) {
  for (const Entry& e : kModelTensors)
    if (e.hf == hf_name) return std::string(e.gguf);
  constexpr std::string_view kLayers = "model.layers.";
  if (!hf_name.starts_with(kLayers)) return std::nullopt;
  const std::string_view rest = hf_name.substr(kLayers.size());
  int layer = -1;
  const auto [end, error] = std::from_chars(rest.data(), rest.data() + rest.size(), layer);
  if (error != std::errc() || end == rest.data() || end == rest.data() + rest.size() ||
      *end != '.' || layer < 0)
    return std::nullopt;
  const std::string_view suffix = rest.substr(static_cast<size_t>(end - rest.data()) + 1);
  // llama.cpp writes kv_b_proj split (attn_k_b, attn_v_b), never whole.
  if (suffix == "self_attn.kv_b_proj.weight") return std::nullopt;
  for (const Entry& e : kLayerTensors)
    if (e.role == GgufTensorRole::plain && e.hf == suffix)
      return fmt::format("blk.{}.{}", layer, e.gguf);
  return std::nullopt;
}

std::string key_absorb_name(int layer) {
  return fmt::format("model.layers.{}.self_attn.kv_b_proj.key_absorb", layer);
}

std::string value_name(int layer) {
  return fmt::format("model.layers.{}.self_attn.kv_b_proj.value", layer);
}

}  // namespace glmrt::model_files
