#include <glmrt/base/error.h>
#include <glmrt/model/attention.h>
#include <glmrt/model/indexer.h>
#include <glmrt/model/mla_core.h>
#include <glmrt/model/norms.h>
#include <glmrt/weights/linear.h>

#include <algorithm>
#include <string_view>
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

RopePairing rope_pairing(const ModelConfig& c) {
  return c.rope_interleave ? RopePairing::interleaved : RopePairing::split_half;
}

/// Each stacked row's position: its sequence's cached length at this layer
/// (before this step's rows are appended) plus its offset in the sequence.
std::vector<int64_t> row_positions(std::span<const SequenceRows> sequences, int layer,
                                   int64_t rows) {
  std::vector<int64_t> positions(static_cast<size_t>(rows));
  for (const SequenceRows& seq : sequences) {
    const int64_t pos0 = seq.cache.length(layer);
    for (int64_t s = 0; s < seq.count; ++s) positions[seq.first + s] = pos0 + s;
  }
  return positions;
}

/// mla_cache_rows for the stacked rows of several sequences: the products
/// over all rows, each sequence's rows appended to its own cache.
void append_cache_rows(const AttentionWeights& w, const ModelContext& model, int layer,
                       std::span<const SequenceRows> sequences, std::span<const int64_t> positions,
                       std::span<const float> x, int64_t rows) {
  const ModelConfig& c = model.config;
  const int64_t L = c.kv_lora_rank, R = c.qk_rope_head_dim, width = L + R;
  // New cache rows: [normed latent | roped k_rope], and the indexer's keys.
  std::vector<float> kv(rows * width);
  observe_input(model.activations, {layer, -1, "self_attn", "kv_a_proj_with_mqa.weight"}, x, rows);
  linear(model.kernels, x, rows, w.kv_a, kv);
  // kv_b_proj's input, when observed.
  std::vector<float> latents(model.activations ? rows * L : 0);
  for (int64_t s = 0; s < rows; ++s) {
    auto row = std::span(kv).subspan(s * width, width);
    rms_norm(row.first(L), w.kv_a_norm, static_cast<float>(c.lora_norm_eps), row.first(L));
    if (model.activations) std::copy_n(row.begin(), L, latents.begin() + s * L);
    model.rope.apply(row.subspan(L, R), positions[s], rope_pairing(c));
  }
  observe_input(model.activations, {layer, -1, "self_attn", "kv_b_proj.weight"}, latents, rows);
  const int64_t index_width = w.indexer ? c.index_head_dim : 0;
  std::vector<float> index_keys(rows * index_width);
  if (w.indexer) indexer_keys(*w.indexer, model, layer, x, rows, positions, index_keys);
  for (const SequenceRows& seq : sequences)
    seq.cache.append(
        layer, seq.count, std::span(kv).subspan(seq.first * width, seq.count * width),
        std::span(index_keys).subspan(seq.first * index_width, seq.count * index_width));
}

}  // namespace

void mla_cache_rows(const AttentionWeights& w, const LayerCall& ctx, std::span<const float> x,
                    int64_t S) {
  const SequenceRows one[] = {{ctx.cache, 0, S}};
  append_cache_rows(w, ctx.model, ctx.layer, one, row_positions(one, ctx.layer, S), x, S);
}

void mla_attention(const AttentionWeights& w, const ModelContext& model, int layer,
                   std::span<SequenceRows> sequences, std::span<const float> x, int64_t rows,
                   std::span<float> out) {
  const ModelConfig& c = model.config;
  const int64_t H = c.num_attention_heads, R = c.qk_rope_head_dim;
  const int64_t nope = c.qk_nope_head_dim, qk = c.qk_head_dim(), vd = c.v_head_dim;
  const std::vector<int64_t> positions = row_positions(sequences, layer, rows);
  const auto observe = [&](std::string_view weight, std::span<const float> input) {
    observe_input(model.activations, {layer, -1, "self_attn", weight}, input, rows);
  };

  // Queries of every row: q_b(q_a_layernorm(q_a(x))), or q_proj(x) without
  // the LoRA; RoPE on each head's rope slice at the row's own position.
  std::vector<float> q_resid(rows * c.q_lora_rank), q(rows * H * qk);
  if (c.has_q_lora()) {
    observe("q_a_proj.weight", x);
    linear(model.kernels, x, rows, w.q_a, q_resid);
    rms_norm_rows(q_resid, w.q_a_norm, static_cast<float>(c.lora_norm_eps), q_resid);
    observe("q_b_proj.weight", q_resid);
    linear(model.kernels, q_resid, rows, w.q_b, q);
  } else {
    observe("q_proj.weight", x);
    linear(model.kernels, x, rows, w.q_b, q);
  }
  for (int64_t s = 0; s < rows; ++s)
    for (int64_t h = 0; h < H; ++h)
      model.rope.apply(std::span(q).subspan((s * H + h) * qk + nope, R), positions[s],
                       rope_pairing(c));

  append_cache_rows(w, model, layer, sequences, positions, x, rows);

  // Each sequence against its own cache: its DSA selection, its keys, the
  // attention form for its own rows (as alone).
  const MlaDims dims = mla_dims(c);
  const MlaProjections projections{w.key_absorb, w.value};
  std::vector<std::vector<QueryKeys>> keys(sequences.size());
  bool all_absorbed = true;
  std::vector<AttentionForm> forms;
  for (size_t i = 0; i < sequences.size(); ++i) {
    SequenceRows& seq = sequences[i];
    const LayerCall ctx{model, seq.cache, layer};
    const int64_t S = seq.count, first = seq.first, pos0 = positions[first];
    KeySelection& selection = seq.selection;
    if (w.indexer) {
      const int64_t q_lora = c.q_lora_rank;
      selection =
          indexer_select(*w.indexer, ctx, std::span(q_resid).subspan(first * q_lora, S * q_lora),
                         x.subspan(first * c.hidden_size, S * c.hidden_size), S, pos0);
    } else if (c.indexer_kind(layer) == IndexerKind::none) {
      selection.rows.assign(S, {});  // every query attends to every visible key
    } else if (static_cast<int64_t>(selection.rows.size()) != S) {
      fail("layer {}: a shared indexer layer needs the previous layer's selection", layer);
    }

    if (model.trace)
      for (int64_t s = 0; s < S; ++s)
        if (!selection.rows[s].empty())
          model.trace->record_selection(layer, pos0 + s, selection.rows[s]);
    keys[i] = query_keys(selection, S, pos0);
    forms.push_back(chosen_form(model.attention_form, dims, keys[i]));
    all_absorbed &= forms.back() == AttentionForm::absorbed;
  }

  std::vector<float> attn(rows * H * vd);
  LatentScratch& scratch = model.latent_scratch;
  if (all_absorbed && sequences.size() > 1) {
    // The absorbed form's products over every row at once (rows are
    // independent), the latent scan per sequence against its own cache.
    const int64_t W = dims.cache_width(), L = dims.kv_lora;
    if (static_cast<int64_t>(scratch.q_cat.size()) < rows * H * W)
      scratch.q_cat.resize(rows * H * W);
    if (static_cast<int64_t>(scratch.ctx_latent.size()) < rows * H * L)
      scratch.ctx_latent.resize(rows * H * L);
    const std::span<float> q_cat = std::span(scratch.q_cat).first(rows * H * W);
    const std::span<float> ctx_latent = std::span(scratch.ctx_latent).first(rows * H * L);
    absorb_queries(model.kernels, dims, projections, q, rows, q_cat, scratch.products);
    for (size_t i = 0; i < sequences.size(); ++i) {
      const SequenceRows& seq = sequences[i];
      attend_latent_batch(dims, q_cat.subspan(seq.first * H * W, seq.count * H * W),
                          seq.cache.kv_rows(layer), keys[i], scratch,
                          ctx_latent.subspan(seq.first * H * L, seq.count * H * L));
    }
    expand_latent_context(model.kernels, dims, projections, ctx_latent, rows, attn,
                          scratch.products);
  } else {
    for (size_t i = 0; i < sequences.size(); ++i) {
      const SequenceRows& seq = sequences[i];
      const CacheRows cached = seq.cache.kv_rows(layer);
      const int64_t S = seq.count, first = seq.first;
      const std::span<const float> q_seq = std::span(q).subspan(first * H * qk, S * H * qk);
      const std::span<float> attn_seq = std::span(attn).subspan(first * H * vd, S * H * vd);
      if (forms[i] == AttentionForm::reconstructed) {
        reconstructed_attention(model.kernels, dims, projections, q_seq, cached, keys[i], attn_seq);
      } else {
        absorbed_attention(model.kernels, dims, projections, q_seq, cached, keys[i], scratch,
                           attn_seq);
      }
    }
  }
  observe("o_proj.weight", attn);
  linear(model.kernels, attn, rows, w.o, out);
}

}  // namespace glmrt
