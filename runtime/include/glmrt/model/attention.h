// Multi-head latent attention (MLA) of one decoder layer: projections, cache
// append, DSA selection, then the attention core (mla_core.h) in absorbed form
// for decode, or whichever form is faster for a prefill chunk, then o_proj.
#pragma once

#include <glmrt/model/layer_context.h>
#include <glmrt/model/model_weights.h>

#include <span>

namespace glmrt {

/// Attention for the new rows of one or more sequences, stacked: x their
/// normed hidden states [rows, hidden], out [rows, hidden]. The dense
/// products (q_a, q_b, kv_a, the indexer's keys, o_proj) run over all rows at
/// once; RoPE, the cache append, the DSA selection and the attention core run
/// per sequence against its own cache. Each sequence's `selection` carries
/// the indexer's choice between layers: a layer with its own indexer
/// overwrites it, a "shared" layer reuses it.
void mla_attention(const AttentionWeights& w, const ModelContext& model, int layer,
                   std::span<SequenceRows> sequences, std::span<const float> x, int64_t rows,
                   std::span<float> out);

/// The part of mla_attention that appends the cache rows of S new positions
/// (x: their input-normed states [S, hidden]): [normed latent | roped k_rope]
/// and the indexer's keys. What a row leaves for later positions; nothing of
/// its own output is computed.
void mla_cache_rows(const AttentionWeights& w, const LayerCall& ctx, std::span<const float> x,
                    int64_t S);

}  // namespace glmrt
