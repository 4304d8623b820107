#include <glmrt/base/error.h>
#include <glmrt/model/attention.h>
#include <glmrt/model/indexer.h>
#include <glmrt/model/mla_core.h>
#include <glmrt/model/norms.h>
#include <glmrt/weights/linear.h>

#include <vector>

namespace glmrt {
namespace {

MlaDims mla_dims(const ModelConfig& c) {
  return {c.num_attention_heads, c.kv_lora_rank, c.qk_rope_head_dim,
          c.qk_nope_head_dim,    c.v_head_dim,   c.rope.softmax_multiplier};
}

/// Each new position's keys: its DSA selection, or every position up to itself.
std::vector<QueryKeys> query_keys(const KeySelection& selection, int64_t S, int64_t pos0) {
  std::vector<QueryKeys> keys(S);
  for (int64_t s = 0; s < S; ++s) keys[s] = {selection.rows[s], pos0 + s + 1};
  return keys;
}

AttentionForm chosen_form(AttentionFormChoice choice, const MlaDims& dims,
                          std::span<const QueryKeys> keys) {
  switch (choice) {
    case AttentionFormChoice::absorbed:
      return AttentionForm::absorbed;
    case AttentionFormChoice::reconstructed:
      return AttentionForm::reconstructed;
    case AttentionFormChoice::automatic:
      break;
  }
  return faster_form(dims, keys);
}

}  // namespace

void mla_cache_rows(const AttentionWeights& w, const LayerCall& ctx, std::span<const float> x,
                    int64_t S) {
  const ModelConfig& c = ctx.model.config;
  const int64_t L = c.kv_lora_rank, R = c.qk_rope_head_dim, width = L + R;
  const int64_t pos0 = ctx.cache.length(ctx.layer);
  // New cache rows: [normed latent | roped k_rope], and the indexer's keys.
  std::vector<float> kv(S * width);
  ctx.observe("self_attn", "kv_a_proj_with_mqa.weight", x, S);
  linear(ctx.model.kernels, x, S, w.kv_a, kv);
  std::vector<float> latents(ctx.model.activations ? S * L
                                                   : 0);  // kv_b_proj's input, when observed
  for (int64_t s = 0; s < S; ++s) {
    auto row = std::span(kv).subspan(s * width, width);
    rms_norm(row.first(L), w.kv_a_norm, static_cast<float>(c.lora_norm_eps), row.first(L));
    if (ctx.model.activations) std::copy_n(row.begin(), L, latents.begin() + s * L);
    ctx.model.rope.apply(row.subspan(L, R), pos0 + s,
                         c.rope_interleave ? RopePairing::interleaved : RopePairing::split_half);
  }
  ctx.observe("self_attn", "kv_b_proj.weight", latents, S);
  std::vector<float> index_keys;
  if (w.indexer) {
    index_keys.resize(S * c.index_head_dim);
    indexer_keys(*w.indexer, ctx, x, S, pos0, index_keys);
  }
  ctx.cache.append(ctx.layer, S, kv, index_keys);
}

void mla_attention(const AttentionWeights& w, const LayerCall& ctx, std::span<const float> x,
                   int64_t S, KeySelection& selection, std::span<float> out) {
  const ModelConfig& c = ctx.model.config;
  const int64_t H = c.num_attention_heads, R = c.qk_rope_head_dim;
  const int64_t nope = c.qk_nope_head_dim, qk = c.qk_head_dim(), vd = c.v_head_dim;
  const int64_t pos0 = ctx.cache.length(ctx.layer);

  // Queries: q_b(q_a_layernorm(q_a(x))), or q_proj(x) without the LoRA;
  // RoPE on each head's rope slice.
  std::vector<float> q_resid(S * c.q_lora_rank), q(S * H * qk);
  if (c.has_q_lora()) {
    ctx.observe("self_attn", "q_a_proj.weight", x, S);
    linear(ctx.model.kernels, x, S, w.q_a, q_resid);
    rms_norm_rows(q_resid, w.q_a_norm, static_cast<float>(c.lora_norm_eps), q_resid);
    ctx.observe("self_attn", "q_b_proj.weight", q_resid, S);
    linear(ctx.model.kernels, q_resid, S, w.q_b, q);
  } else {
    ctx.observe("self_attn", "q_proj.weight", x, S);
    linear(ctx.model.kernels, x, S, w.q_b, q);
  }
  for (int64_t s = 0; s < S; ++s)
    for (int64_t h = 0; h < H; ++h)
      ctx.model.rope.apply(std::span(q).subspan((s * H + h) * qk + nope, R), pos0 + s,
                           c.rope_interleave ? RopePairing::interleaved : RopePairing::split_half);

  mla_cache_rows(w, ctx, x, S);

  if (w.indexer) {
    selection = indexer_select(*w.indexer, ctx, q_resid, x, S, pos0);
  } else if (c.indexer_kind(ctx.layer) == IndexerKind::none) {
    selection.rows.assign(S, {});  // every query attends to every visible key
  } else if (static_cast<int64_t>(selection.rows.size()) != S) {
    fail("layer {}: a shared indexer layer needs the previous layer's selection", ctx.layer);
  }

  if (ctx.model.trace)
    for (int64_t s = 0; s < S; ++s)
      if (!selection.rows[s].empty())
        ctx.model.trace->record_selection(ctx.layer, pos0 + s, selection.rows[s]);

  const MlaDims dims = mla_dims(c);
  const MlaProjections projections{w.key_absorb, w.value};
  const std::vector<QueryKeys> keys = query_keys(selection, S, pos0);
  const CacheRows rows = ctx.cache.kv_rows(ctx.layer);
  std::vector<float> attn(S * H * vd);
  if (chosen_form(ctx.model.attention_form, dims, keys) == AttentionForm::reconstructed) {
    reconstructed_attention(ctx.model.kernels, dims, projections, q, rows, keys, attn);
  } else {
    absorbed_attention(ctx.model.kernels, dims, projections, q, rows, keys,
                       ctx.model.latent_scratch, attn);
  }
  ctx.observe("self_attn", "o_proj.weight", attn, S);
  linear(ctx.model.kernels, attn, S, w.o, out);
}

}  // namespace glmrt
