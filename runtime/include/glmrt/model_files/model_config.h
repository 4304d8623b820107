// The model's config.json (Hugging Face), for model_type glm_moe_dsa.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace glmrt {

enum class MlpKind { dense, sparse };
enum class IndexerKind { full, shared };

struct ModelConfig {
  std::filesystem::path file;
  std::string model_type;

  int vocab_size = 0;
  int hidden_size = 0;
  int intermediate_size = 0;      // dense MLP width
  int moe_intermediate_size = 0;  // one routed expert's width
  int num_hidden_layers = 0;
  int num_attention_heads = 0;

  int q_lora_rank = 0;
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
  double rope_theta = 10000.0;
  bool rope_interleave = true;           // main attention: GPT-J pairs (0,1),(2,3),...
  bool indexer_rope_interleave = false;  // indexer: split-half unless true

  int index_topk = 0;
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
  /// sparse with a full indexer.
  MlpKind mlp_kind(int layer) const;
  IndexerKind indexer_kind(int layer) const;
};

class TensorDirectory;

/// Parses DIR/config.json. Errors (glmrt::Error) name the file and the key:
/// a missing or mistyped key, another model_type (listing the supported ones),
/// an unsupported feature (rope_type other than default, FP8 quantization_config,
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
