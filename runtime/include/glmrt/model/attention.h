// Multi-head latent attention (MLA) of one decoder layer: projections, cache
// append, DSA selection, then the attention core (mla_core.h) in absorbed form
// for decode, or whichever form is faster for a prefill chunk, then o_proj.
#pragma once

#include <glmrt/model/layer_context.h>
#include <glmrt/model/model_weights.h>

#include <span>

namespace glmrt {

/// Attention for S new positions. x: normed hidden [S, hidden]; out: [S, hidden].
/// Appends the new positions to the layer's caches. `selection` carries the
/// indexer's choice between layers: a layer with its own indexer overwrites it,
/// a "shared" layer reuses it.
void mla_attention(const AttentionWeights& w, const LayerCall& ctx, std::span<const float> x,
                   int64_t S, KeySelection& selection, std::span<float> out);

/// The part of mla_attention that appends the cache rows of S new positions
/// (x: their input-normed states [S, hidden]): [normed latent | roped k_rope]
/// and the indexer's keys. What a row leaves for later positions; nothing of
/// its own output is computed.
void mla_cache_rows(const AttentionWeights& w, const LayerCall& ctx, std::span<const float> x,
                    int64_t S);

}  // namespace glmrt
