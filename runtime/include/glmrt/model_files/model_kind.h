// What sets one model family apart from another on the same forward pass:
// the `model_type` values glmrt runs and, for each, the defaults and choices
// transformers' modeling file for it makes. load_model_config resolves these
// into ModelConfig fields (indexer kinds, RoPE pairing, norm eps, q LoRA), so
// the forward reads the config, never the model_type.
#pragma once

#include <span>
#include <string>
#include <string_view>

namespace glmrt {

/// Where a family's DSA indexer lives.
enum class IndexerLayout {
  none,         // no sparse attention: every query attends to every key (DeepSeek-V3, Kimi-K2)
  every_layer,  // each layer scores keys with its own indexer (DeepSeek-V3.2)
  glm_shared,   // full layers and "shared" ones reusing the previous selection (GLM-5)
};

/// How the main attention's (or the indexer's) RoPE pairs dimensions.
enum class PairingSource {
  config_default_interleaved,  // the config key, interleaved when absent
  config_default_split_half,   // the config key, split-half when absent
  always_interleaved,          // the modeling file ignores any key: interleaved
  always_split_half,           // the modeling file ignores any key: split-half
};

struct ModelKind {
  std::string_view model_type;  // config.json's `model_type`
  std::string_view family;      // for messages and docs
  IndexerLayout indexer = IndexerLayout::none;
  PairingSource rope_pairing = PairingSource::config_default_interleaved;  // `rope_interleave`
  PairingSource indexer_rope_pairing =
      PairingSource::config_default_split_half;  // `indexer_rope_interleave`
  /// eps of q_a_layernorm and kv_a_layernorm: the modeling files build them
  /// with the RMSNorm default, not rms_norm_eps.
  double lora_norm_eps = 1e-6;
  /// `q_lora_rank: null` means a plain q_proj (DeepSeek-V3 allows it; the
  /// indexer of V3.2 and GLM-5 reads q_a's output, so they need the LoRA).
  bool q_lora_optional = false;
};

/// Every kind glmrt runs, in the order messages list them.
std::span<const ModelKind> model_kinds();

/// The kind for `model_type`, or nullptr.
const ModelKind* find_model_kind(std::string_view model_type);

/// "glm_moe_dsa, deepseek_v3, ...": for the error refusing another type.
std::string supported_model_types();

}  // namespace glmrt
