// Multi-head latent attention (MLA) over the latent KV cache, in absorbed form:
// each head's query is folded through kv_b's key block into the latent space,
// scores run over [latent | k_rope] rows, and kv_b's value block is applied
// after the weighted sum. K and V are never expanded per token.
#pragma once

#include <glmrt/model/layer_context.h>
#include <glmrt/model/model_weights.h>

#include <span>

namespace glmrt {

/// Attention for S new positions. x: normed hidden [S, hidden]; out: [S, hidden].
/// Appends the new positions to the layer's caches. `selection` carries the
/// indexer's choice between layers: a layer with its own indexer overwrites it,
/// a "shared" layer reuses it.
void mla_attention(const AttentionWeights& w, const LayerContext& ctx, std::span<const float> x,
                   int64_t S, KeySelection& selection, std::span<float> out);

}  // namespace glmrt
