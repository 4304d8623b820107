// The resident (dense) part of a glm_moe_dsa model: everything but the routed
// experts, which the ExpertStore streams.
#pragma once

#include <glmrt/model_files/model_config.h>
#include <glmrt/profile/profile.h>
#include <glmrt/weights/matrix.h>
#include <glmrt/weights/tensor_loader.h>

#include <optional>
#include <vector>

namespace glmrt {

struct IndexerWeights {
  Matrix wq_b;          // [index_heads * index_dim, q_lora]
  Matrix wk;            // [index_dim, hidden]
  Matrix weights_proj;  // [index_heads, hidden], kept f32
  std::vector<float> k_norm_weight, k_norm_bias;
};

struct AttentionWeights {
  Matrix q_a;  // [q_lora, hidden]; empty without the query LoRA
  std::vector<float> q_a_norm;
  Matrix q_b;   // [heads * qk_head, q_lora], or q_proj [heads * qk_head, hidden]
  Matrix kv_a;  // [kv_lora + rope, hidden]
  std::vector<float> kv_a_norm;
  // kv_b split per head h: rows [h*kv_lora, (h+1)*kv_lora) of key_absorb hold
  // the key block transposed (absorbed form: q_nope · W_k lands in latent
  // space; the reconstructed form transposes it back per head, see
  // mla_core.h); rows [h*v_head, (h+1)*v_head) of value hold the value block.
  Matrix key_absorb;                      // [heads * kv_lora, qk_nope]
  Matrix value;                           // [heads * v_head, kv_lora]
  Matrix o;                               // [hidden, heads * v_head]
  std::optional<IndexerWeights> indexer;  // absent on layers whose indexer is shared
};

struct FeedForwardWeights {
  Matrix gate, up, down;
};

struct MoeWeights {
  Matrix router;  // [experts, hidden], f32: selection is sensitive
  std::vector<float> correction_bias;
  FeedForwardWeights shared;
};

struct LayerWeights {
  std::vector<float> input_norm, post_attention_norm;
  AttentionWeights attention;
  MlpKind mlp_kind = MlpKind::dense;
  FeedForwardWeights dense;  // when dense
  MoeWeights moe;            // when sparse
};

/// DeepSeek-V3 style multi-token-prediction layer.
struct MtpWeights {
  LayerWeights layer;
  Matrix eh_proj;  // [hidden, 2 * hidden]
  std::vector<float> enorm, hnorm, head_norm;
  Matrix embed, head;  // layer-local copies; empty when the main ones are shared
};

struct ModelWeights {
  Matrix embed;    // [vocab, hidden]
  Matrix lm_head;  // [vocab, hidden]
  std::vector<float> final_norm;
  std::vector<LayerWeights> layers;
  std::optional<MtpWeights> mtp;

  const Matrix& mtp_embed() const { return mtp && !mtp->embed.empty() ? mtp->embed : embed; }
  const Matrix& mtp_head() const { return mtp && !mtp->head.empty() ? mtp->head : lm_head; }
};

/// Checks every resident tensor against the config, then reads them all
/// (tensors.finish()); dense weights at profile.dense_bits.
ModelWeights load_model_weights(const ModelConfig& config, TensorLoader& tensors,
                                const Profile& profile);

/// Precision of embed_tokens and lm_head: the input/output boundary stays at
/// least bf16 for int8 dense weights and int8 for int4/int2 (quality drops
/// sharply when they follow the dense weights down). A container that stores
/// them pre-quantized at the dense precision keeps them so.
WeightPrecision boundary_bits(WeightPrecision dense);

/// The precision of kv_b_proj, which the loader splits and transposes, so its
/// bytes cannot be kept as they are: `dense`, or under `stored` the float type
/// tensor `t` holds (bf16 for BF16, else f32: exact for F16 and ggml blocks).
WeightPrecision rearranged_precision(WeightPrecision dense, const TensorInfo& t);

}  // namespace glmrt
