// The model's config.json (Hugging Face), for the model kinds of model_kind.h
// (glm_moe_dsa, deepseek_v3, kimi_k2, deepseek_v32), with each kind's choices
// resolved into fields the forward reads.
#pragma once

#include <glmrt/model_files/model_kind.h>
#include <glmrt/model_files/rope_settings.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace glmrt {

enum class MlpKind { dense, sparse };
/// A layer's DSA indexer: its own (full), the previous layer's selection
/// (shared, GLM-5), or none (DeepSeek-V3: every key is attended to).
enum class IndexerKind { full, shared, none };

struct ModelConfig {
  std::filesystem::path file;
  std::string model_type;
  const ModelKind* kind = nullptr;  // the model_type's description; never null once loaded

  int vocab_size = 0;
  int hidden_size = 0;
  int intermediate_size = 0;      // dense MLP width
  int moe_intermediate_size = 0;  // one routed expert's width
  int num_hidden_layers = 0;
  int num_attention_heads = 0;

  int q_lora_rank = 0;  // 0: `q_lora_rank: null`, a plain q_proj (DeepSeek-V3)
  bool has_q_lora() const { return q_lora_rank > 0; }
  int kv_lora_rank = 0;
  int qk_nope_head_dim = 0;
  int qk_rope_head_dim = 0;
  int v_head_dim = 0;
  int qk_head_dim() const { return qk_nope_head_dim + qk_rope_head_dim; }

  int n_routed_experts = 0;
  int n_shared_experts = 0;
  int num_experts_per_tok = 0;
  int n_group = 1;
  int topk_group = 1;
  bool norm_topk_prob = true;
  double routed_scaling_factor = 1.0;

  double rms_norm_eps = 1e-6;
  RopeSettings rope;                     // theta, YaRN and its scale factors
  bool rope_interleave = true;           // main attention: GPT-J pairs (0,1),(2,3),...
  bool indexer_rope_interleave = false;  // indexer: split-half unless true
  double lora_norm_eps = 1e-6;           // q_a_layernorm and kv_a_layernorm

  int index_topk = 0;  // 0 with the indexer of every layer IndexerKind::none
  int index_head_dim = 0;
  int index_n_heads = 0;

  int num_nextn_predict_layers = 0;
  int max_position_embeddings = 0;
  bool tie_word_embeddings = false;
  std::vector<int> eos_token_ids;
  int bos_token_id = -1;
  int pad_token_id = -1;

  std::vector<MlpKind> mlp_layer_types;    // one per main layer
  std::vector<IndexerKind> indexer_types;  // one per main layer

  /// Layer kinds of layer i; the MTP layers (i >= num_hidden_layers) are
  /// sparse, with a full indexer when the kind has indexers.
  MlpKind mlp_kind(int layer) const;
  IndexerKind indexer_kind(int layer) const;
};

class TensorDirectory;

/// Parses DIR/config.json. Errors (glmrt::Error) name the file and the key:
/// a missing or mistyped key, another model_type (listing the supported ones),
/// an unsupported feature (rope_type other than default and yarn, FP8 quantization_config,
/// hidden_act other than silu, scoring_func other than sigmoid, topk_method
/// other than noaux_tc). Reads the config alone: nothing is checked against
/// tensors (for tools that only need the config).
ModelConfig load_model_config(const std::filesystem::path& model_dir);

/// The same, and num_hidden_layers must match the checkpoint's decoder layers
/// (checked before per-layer state is built; see checkpoint_layers.h).
ModelConfig load_model_config(const std::filesystem::path& model_dir,
                              const TensorDirectory& checkpoint);

/// What load_model_config makes of a `quantization_config`: loading refuses
/// it (glmrt quantizes F32/BF16/F16 weights itself); `glmrt convert` reads
/// FP8 block-scaled checkpoints and checks the key itself.
enum class QuantizationConfig { refused, accepted };

ModelConfig load_model_config(const std::filesystem::path& model_dir,
                              const TensorDirectory& checkpoint, QuantizationConfig quantization);

}  // namespace glmrt
