// The buffers of one forward call, phase by phase, as the model allocates
// them (model/*.cpp, generate/session.cpp, generate/mtp_rows.cpp). A buffer
// that is kept between calls (MoeScratch, LatentScratch) is counted at the
// largest call; one that lives only inside a phase is counted in that
// phase's peak. Sizes are upper bounds: heap block headers are counted where
// a buffer is many small vectors (per-position routes and selections).
#include <glmrt/memory/forward_buffers.h>
#include <glmrt/model/moe_scratch.h>

#include <algorithm>

namespace glmrt {
namespace {

constexpr uint64_t kFloat = 4, kInt32 = 4, kInt64 = 8;
// A std::vector's three pointers plus glibc's block header and rounding.
constexpr uint64_t kSmallVector = 24 + 32;
// The absorbed form's latent scan tiles (latent_scan.cpp).
constexpr uint64_t kScanTileKeys = 16;
constexpr uint64_t kProduct = sizeof(glmrt_matmul_product);

struct Dims {
  uint64_t S, T, P, D, H, nope, rope, qk, vd, L, W, q_lora, index_heads, index_dim, topk, E, K;
  uint64_t dense_width, expert_width, shared_width, vocab, layers;
  bool indexer = false, dense = false, moe = false;
};

Dims dims_of(const ModelConfig& c, const ForwardShape& shape) {
  Dims d{};
  d.S = static_cast<uint64_t>(std::max<int64_t>(shape.positions, 1));
  d.T = static_cast<uint64_t>(std::max<int64_t>(shape.context, d.S));
  d.P = static_cast<uint64_t>(std::max(shape.threads, 1));
  d.D = uint64_t(c.hidden_size);
  d.H = uint64_t(c.num_attention_heads);
  d.nope = uint64_t(c.qk_nope_head_dim);
  d.rope = uint64_t(c.qk_rope_head_dim);
  d.qk = d.nope + d.rope;
  d.vd = uint64_t(c.v_head_dim);
  d.L = uint64_t(c.kv_lora_rank);
  d.W = d.L + d.rope;
  d.q_lora = uint64_t(std::max(c.q_lora_rank, 0));
  d.index_heads = uint64_t(c.index_n_heads);
  d.index_dim = uint64_t(c.index_head_dim);
  d.topk = uint64_t(c.index_topk);
  d.E = uint64_t(c.n_routed_experts);
  d.K = uint64_t(c.num_experts_per_tok);
  d.dense_width = uint64_t(c.intermediate_size);
  d.expert_width = uint64_t(c.moe_intermediate_size);
  d.shared_width = uint64_t(c.moe_intermediate_size) * uint64_t(std::max(c.n_shared_experts, 0));
  d.vocab = uint64_t(c.vocab_size);
  d.layers = uint64_t(std::max(c.num_hidden_layers, 0));
  // The MTP layer (index num_hidden_layers) runs like any decoder layer.
  for (int layer = 0; layer <= c.num_hidden_layers; ++layer) {
    d.indexer |= c.indexer_kind(layer) == IndexerKind::full;
    (c.mlp_kind(layer) == MlpKind::dense ? d.dense : d.moe) = true;
  }
  return d;
}

/// mla_attention: q_a output, the heads' queries and outputs, each query's
/// keys, then the largest of what runs between them.
uint64_t attention_phase(const Dims& d) {
  const uint64_t common = kFloat * d.S * (d.q_lora + d.H * d.qk + d.H * d.vd) + 24 * d.S;
  // mla_cache_rows: the new [latent | k_rope] rows, the observed latents, the indexer's keys.
  const uint64_t cache_rows = kFloat * d.S * (d.W + d.L + d.index_dim);
  // indexer_select: queries and head weights, one query's scores and order over T keys.
  const uint64_t indexer =
      d.indexer
          ? kFloat * d.S * (d.index_heads * d.index_dim + d.index_heads) + d.T * (kFloat + kInt32)
          : 0;
  // reconstructed_attention: every needed key expanded (U <= T), their
  // positions before and after de-duplication, the slot map, one head's key
  // block, and per thread a cache row and one query's scores.
  const uint64_t reconstructed = kFloat * d.T * (d.L + d.rope + d.nope + d.qk + d.vd) +
                                 kInt32 * (2 * d.T + d.S * d.topk) +
                                 kFloat * (d.nope * d.L + d.nope) + d.P * kFloat * (d.W + d.T);
  return common + std::max({cache_rows, indexer, reconstructed});
}

/// LatentScratch, kept between calls: q_cat and the latent contexts of every
/// query, each thread's scan state, the per-head products' list.
uint64_t absorbed_kept(const Dims& d) {
  return kFloat * d.S * (d.H * d.W + d.H * d.L) +
         d.P * kFloat * (kScanTileKeys * d.W + kScanTileKeys * d.H + d.H * d.L + 2 * d.H) +
         d.H * kProduct;
}

/// The session after a call: the call's hidden rows and their final norm;
/// with MTP rows, each row's pair state, the waiting pairs and mtp_absorb
/// (embeddings, the joined [e | h] rows, eh_proj's output, its norm, and the
/// new cache rows).
uint64_t session_phase(const Dims& d, bool mtp_rows) {
  const uint64_t rows = kFloat * d.S * 2 * d.D;
  if (!mtp_rows) return rows;
  return rows + kFloat * d.S * (2 * d.D + 5 * d.D + d.W + d.L + d.index_dim);
}

uint64_t moe_block(const Dims& d) {
  if (!d.moe) return 0;
  // MoeScratch, kept: router logits, user lists (and which have run), each user's output row, the
  // gathered rows and SwiGLU activations of one grouped call of experts (at
  // most max(S, kGroupedExpertRows) users per thread), its product list, the
  // shared expert's output, the next layer's prediction (and each layer's
  // last attention output row it adds, [layers, hidden]).
  const uint64_t users = d.S * d.K;
  const uint64_t grouped_users =
      std::min(users, d.P * std::max<uint64_t>(d.S, uint64_t(kGroupedExpertRows)));
  const uint64_t kept = kFloat * d.S * d.E + users * (kInt64 + kFloat + kInt64 + 1) +
                        d.E * (2 * kInt64 + kInt32) + kFloat * users * d.D +
                        kFloat * grouped_users * (d.D + 2 * d.expert_width) + 2 * d.E * kProduct +
                        kFloat * d.S * d.D + kFloat * d.S * (d.D + d.E) + d.E * (kInt32 + kInt64) +
                        kFloat * d.layers * d.D;
  // Per call: each position's routes, every choice for the routing
  // observer, the shared expert's gate and up rows.
  const uint64_t call = d.S * (kSmallVector + d.K * 8) + users * kInt32 +
                        kFloat * 2 * d.S * std::max<uint64_t>(d.shared_width, 1);
  return kept + call;
}

}  // namespace

ForwardBufferBytes forward_buffer_bytes(const ModelConfig& config, const ForwardShape& shape) {
  const Dims d = dims_of(config, shape);
  // Model::forward's hidden rows and decoder_layer's normed and delta rows;
  // the DSA selections of the previous and the current layer.
  const uint64_t rows = kFloat * 3 * d.S * d.D;
  const uint64_t selections = d.indexer ? 2 * d.S * (kSmallVector + d.topk * kInt32) : 0;
  const uint64_t dense_mlp = d.dense ? kFloat * 2 * d.S * d.dense_width : 0;
  const uint64_t layer_phase = rows + selections + std::max(attention_phase(d), dense_mlp);

  ForwardBufferBytes bytes;
  bytes.moe_block = moe_block(d);
  bytes.layers = absorbed_kept(d) + std::max(layer_phase, session_phase(d, shape.mtp_rows));
  // Generation: the verified positions' logits of every sequence and the
  // sampler's copy; scoring: a block of rows and one row's log-softmax.
  const uint64_t step_rows =
      2 * uint64_t(std::max(shape.sequences, 1)) * (1 + uint64_t(std::max(shape.draft_tokens, 0)));
  const uint64_t block = std::max<uint64_t>(
      1, uint64_t(kScoreLogitBlockBytes) / (kFloat * std::max<uint64_t>(d.vocab, 1)));
  const uint64_t score_rows = std::min(block, d.S) + 1;
  bytes.logits = kFloat * d.vocab * std::max(step_rows, score_rows);
  return bytes;
}

}  // namespace glmrt
