// DeepSeek Sparse Attention's lightning indexer: scores every visible key of
// each query with a few small heads and keeps the best index_topk.
#pragma once

#include <glmrt/model/layer_context.h>
#include <glmrt/model/model_weights.h>

#include <span>

namespace glmrt {

/// The indexer keys of S new positions: LayerNorm(wk · x) with RoPE on its rope
/// slice ([rope | rest] per key). x: normed hidden [S, hidden]; out [S, index_dim].
void indexer_keys(const IndexerWeights& w, const LayerContext& ctx, std::span<const float> x,
                  int64_t S, int64_t pos0, std::span<float> out);

/// Chooses keys for S new positions (first at pos0) whose keys are already in
/// the cache. q_resid: q_a_layernorm output [S, q_lora]; x: normed hidden.
/// Rows whose position sees at most index_topk keys stay empty (dense).
KeySelection indexer_select(const IndexerWeights& w, const LayerContext& ctx,
                            std::span<const float> q_resid, std::span<const float> x, int64_t S,
                            int64_t pos0);

}  // namespace glmrt
