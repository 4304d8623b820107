#include <glmrt/model_files/model_kind.h>

#include <array>

namespace glmrt {

namespace {

// Read from transformers' modeling files: glm_moe_dsa (JaredforReal @ ca17edf),
// deepseek_v3 (bf017e36; Kimi-K2's configs name `kimi_k2` and map to the
// DeepSeek-V3 classes) and deepseek_v32 (its attention always calls the
// interleaved RoPE, its indexer always the split-half one).
constexpr std::array kKinds = {
    ModelKind{.model_type = "glm_moe_dsa",
              .family = "GLM-5",
              .indexer = IndexerLayout::glm_shared,
              .rope_pairing = PairingSource::config_default_interleaved,
              .indexer_rope_pairing = PairingSource::config_default_split_half,
              .lora_norm_eps = 1e-6,
              .q_lora_optional = false},
    ModelKind{.model_type = "deepseek_v3",
              .family = "DeepSeek-V3 / R1",
              .indexer = IndexerLayout::none,
              .rope_pairing = PairingSource::config_default_interleaved,
              .indexer_rope_pairing = PairingSource::always_split_half,
              .lora_norm_eps = 1e-6,
              .q_lora_optional = true},
    ModelKind{.model_type = "kimi_k2",
              .family = "Kimi-K2 (DeepSeek-V3 architecture)",
              .indexer = IndexerLayout::none,
              .rope_pairing = PairingSource::config_default_interleaved,
              .indexer_rope_pairing = PairingSource::always_split_half,
              .lora_norm_eps = 1e-6,
              .q_lora_optional = true},
    ModelKind{.model_type = "deepseek_v32",
              .family = "DeepSeek-V3.2",
              .indexer = IndexerLayout::every_layer,
              .rope_pairing = PairingSource::always_interleaved,
              .indexer_rope_pairing = PairingSource::always_split_half,
              .lora_norm_eps = 1e-6,
              .q_lora_optional = false},
};

}  // namespace

std::span<const ModelKind> model_kinds() {
  return kKinds;
}

const ModelKind* find_model_kind(std::string_view model_type) {
  for (const ModelKind& kind : kKinds)
    if (kind.model_type == model_type) return &kind;
  return nullptr;
}

std::string supported_model_types() {
  std::string list;
  for (const ModelKind& kind : kKinds) {
    if (!list.empty()) list += ", ";
    list += kind.model_type;
  }
  return list;
}

}  // namespace glmrt
