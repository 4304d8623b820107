#include <glmrt/base/error.h>
#include <glmrt/base/warning.h>
#include <glmrt/model/model_weights.h>

#include <fmt/format.h>

#include "kv_b_split.h"

namespace glmrt {
namespace {

class LayerLoader {
 public:
  LayerLoader(const ModelConfig& c, TensorLoader& t, const Profile& p, int layer)
      : c_(c), t_(t), bits_(p.dense_bits), prefix_(fmt::format("model.layers.{}.", layer)) {}

  std::string name(const std::string& suffix) const { return prefix_ + suffix; }
  Matrix matrix(const std::string& suffix, int64_t rows, int64_t cols) const {
    return t_.matrix(name(suffix), rows, cols, bits_, "dense weights");
  }
  Matrix f32_matrix(const std::string& suffix, int64_t rows, int64_t cols) const {
    return t_.matrix(name(suffix), rows, cols, WeightBits::f32, "dense weights");
  }
  std::vector<float> vector(const std::string& suffix, int64_t n) const {
    return t_.vector(name(suffix), n);
  }
  bool has(const std::string& suffix) const { return t_.contains(name(suffix)); }

  FeedForwardWeights feed_forward(const std::string& where, int64_t width) const {
    const int64_t D = c_.hidden_size;
    return {matrix(where + ".gate_proj.weight", width, D),
            matrix(where + ".up_proj.weight", width, D),
            matrix(where + ".down_proj.weight", D, width)};
  }

  AttentionWeights attention(IndexerKind indexer) const;
  LayerWeights layer(MlpKind kind, IndexerKind indexer) const;

 private:
  const ModelConfig& c_;
  TensorLoader& t_;
  WeightPrecision bits_;
  std::string prefix_;
};

// The config says whether queries go through the LoRA (q_a, q_a_layernorm,
// q_b) or a plain q_proj; a checkpoint holding the other form is refused
// naming both, rather than reported as a missing tensor.
void require_query_form(const ModelConfig& c, const LayerLoader& l) {
  const bool lora = c.has_q_lora();
  const std::string stray = lora ? "self_attn.q_proj.weight" : "self_attn.q_a_proj.weight";
  if (!l.has(stray)) return;
  fail(
      "tensor {} is present but {} says 'q_lora_rank' is {}: the checkpoint's query projection "
      "({}) disagrees with the config",
      l.name(stray), c.file, lora ? std::to_string(c.q_lora_rank) : "null (a plain q_proj)",
      lora ? "plain q_proj" : "the q_a_proj / q_b_proj LoRA");
}

AttentionWeights LayerLoader::attention(IndexerKind indexer) const {
  const int64_t D = c_.hidden_size, H = c_.num_attention_heads, L = c_.kv_lora_rank;
  const int64_t nope = c_.qk_nope_head_dim, vd = c_.v_head_dim;
  AttentionWeights a;
  require_query_form(c_, *this);
  if (c_.has_q_lora()) {
    a.q_a = matrix("self_attn.q_a_proj.weight", c_.q_lora_rank, D);
    a.q_a_norm = vector("self_attn.q_a_layernorm.weight", c_.q_lora_rank);
    a.q_b = matrix("self_attn.q_b_proj.weight", H * c_.qk_head_dim(), c_.q_lora_rank);
  } else {
    a.q_b = matrix("self_attn.q_proj.weight", H * c_.qk_head_dim(), D);
  }
  a.kv_a = matrix("self_attn.kv_a_proj_with_mqa.weight", L + c_.qk_rope_head_dim, D);
  a.kv_a_norm = vector("self_attn.kv_a_layernorm.weight", L);
  a.o = matrix("self_attn.o_proj.weight", D, H * vd);

  if (has("self_attn.kv_b_proj.key_absorb") && !has("self_attn.kv_b_proj.weight")) {
    // A GGUF stores kv_b split as attention multiplies with it (attn_k_b,
    // attn_v_b): both forms read these rows as they are.
    a.key_absorb = matrix("self_attn.kv_b_proj.key_absorb", H * L, nope);
    a.value = matrix("self_attn.kv_b_proj.value", H * vd, L);
  } else {
    const std::string kv_b_name = name("self_attn.kv_b_proj.weight");
    KvBSplit kv_b = load_kv_b(t_, kv_b_name, {H, nope, vd, L},
                              rearranged_precision(bits_, t_.directory().at(kv_b_name)));
    a.key_absorb = std::move(kv_b.key_absorb);
    a.value = std::move(kv_b.value);
  }

  if (indexer == IndexerKind::full) {
    const int64_t ih = c_.index_n_heads, id = c_.index_head_dim;
    IndexerWeights ix;
    // Under `stored` the indexer's projections are widened to f32 (exactly, as
    // the file's blocks dequantize): they decide the DSA selection, a discrete
    // choice that int8-quantized activations flip on near ties.
    const auto indexer_matrix = [&](const std::string& suffix, int64_t rows, int64_t cols) {
      return bits_.stored ? f32_matrix(suffix, rows, cols) : matrix(suffix, rows, cols);
    };
    ix.wq_b = indexer_matrix("self_attn.indexer.wq_b.weight", ih * id, c_.q_lora_rank);
    ix.wk = indexer_matrix("self_attn.indexer.wk.weight", id, D);
    ix.weights_proj = f32_matrix("self_attn.indexer.weights_proj.weight", ih, D);
    ix.k_norm_weight = vector("self_attn.indexer.k_norm.weight", id);
    ix.k_norm_bias = vector("self_attn.indexer.k_norm.bias", id);
    a.indexer = std::move(ix);
  } else {
    for (const char* part :
         {"wq_b.weight", "wk.weight", "weights_proj.weight", "k_norm.weight", "k_norm.bias"}) {
      const std::string stray = std::string("self_attn.indexer.") + part;
      if (has(stray))
        fail("tensor {} is present but {}", name(stray),
             indexer == IndexerKind::shared
                 ? "the config marks this layer's indexer \"shared\" (it reuses the previous "
                   "layer's selection and carries no indexer tensors)"
                 : fmt::format("model_type {} has no DSA indexer", c_.model_type));
    }
  }
  return a;
}

LayerWeights LayerLoader::layer(MlpKind kind, IndexerKind indexer) const {
  const int64_t D = c_.hidden_size;
  LayerWeights l;
  l.input_norm = vector("input_layernorm.weight", D);
  l.post_attention_norm = vector("post_attention_layernorm.weight", D);
  l.attention = attention(indexer);
  l.mlp_kind = kind;
  if (kind == MlpKind::dense) {
    l.dense = feed_forward("mlp", c_.intermediate_size);
  } else {
    l.moe.router = f32_matrix("mlp.gate.weight", c_.n_routed_experts, D);
    l.moe.correction_bias = vector("mlp.gate.e_score_correction_bias", c_.n_routed_experts);
    l.moe.shared =
        feed_forward("mlp.shared_experts", int64_t{c_.moe_intermediate_size} * c_.n_shared_experts);
  }
  return l;
}

}  // namespace

WeightPrecision boundary_bits(WeightPrecision dense) {
  switch (dense.bits) {
    case WeightBits::f32:
    case WeightBits::bf16:
      return dense;
    case WeightBits::int8:
      return WeightBits::bf16;
    default:
      return WeightBits::int8;
  }
}

WeightPrecision rearranged_precision(WeightPrecision dense, const TensorInfo& t) {
  if (!dense.stored) return dense;
  return t.dtype == DType::BF16 ? WeightBits::bf16 : WeightBits::f32;
}

ModelWeights load_model_weights(const ModelConfig& c, TensorLoader& t, const Profile& p) {
  const int64_t V = c.vocab_size, D = c.hidden_size;
  const WeightPrecision io_bits = boundary_bits(p.dense_bits);
  // A container quantized at the profile's dense precision keeps its
  // embed_tokens and lm_head as they are: widening them to io_bits would cost
  // memory and load time and restore nothing quantization removed.
  const auto boundary = [&](const std::string& name) {
    return t.matrix(name, V, D, io_bits, "dense weights", p.dense_bits);
  };
  ModelWeights w;
  w.embed = boundary("model.embed_tokens.weight");
  if (c.tie_word_embeddings && t.contains("lm_head.weight")) {
    // transformers ties lm_head to embed_tokens after loading, whatever the
    // checkpoint's lm_head holds.
    warn(
        "{}: tie_word_embeddings is true, so the output layer uses model.embed_tokens.weight and "
        "the checkpoint's lm_head.weight is ignored (as in transformers)",
        c.file);
    t.count_as_used("lm_head.weight");
  }
  w.lm_head = boundary(c.tie_word_embeddings ? "model.embed_tokens.weight" : "lm_head.weight");
  w.final_norm = t.vector("model.norm.weight", D);
  for (int i = 0; i < c.num_hidden_layers; ++i) {
    LayerLoader l(c, t, p, i);
    w.layers.push_back(l.layer(c.mlp_kind(i), c.indexer_kind(i)));
  }

  // The MTP layer is optional: a checkpoint converted without it runs without drafts.
  const int m = c.num_hidden_layers;
  LayerLoader l(c, t, p, m);
  if (c.num_nextn_predict_layers > 0 && l.has("eh_proj.weight")) {
    MtpWeights mtp;
    mtp.layer = l.layer(MlpKind::sparse, c.indexer_kind(m));
    mtp.eh_proj = l.matrix("eh_proj.weight", D, 2 * D);
    mtp.enorm = l.vector("enorm.weight", D);
    mtp.hnorm = l.vector("hnorm.weight", D);
    mtp.head_norm = l.vector("shared_head.norm.weight", D);
    if (l.has("embed_tokens.weight")) mtp.embed = boundary(l.name("embed_tokens.weight"));
    if (l.has("shared_head.head.weight")) mtp.head = boundary(l.name("shared_head.head.weight"));
    w.mtp = std::move(mtp);
  }
  t.finish();
  return w;
}

}  // namespace glmrt
