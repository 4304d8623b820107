// DeepSeek Sparse Attention's lightning indexer: scores every visible key of
// each query with a few small heads and keeps the best index_topk.
#pragma once

#include <glmrt/model/layer_context.h>
#include <glmrt/model/model_weights.h>

#include <span>
#include <vector>

namespace glmrt {

/// The indexer keys of S new rows (of one sequence or several stacked):
/// LayerNorm(wk · x) with RoPE at `positions[s]` on its rope slice ([rope |
/// rest] per key). x: normed hidden [S, hidden]; out [S, index_dim].
void indexer_keys(const IndexerWeights& w, const ModelContext& model, int layer,
                  std::span<const float> x, int64_t S, std::span<const int64_t> positions,
                  std::span<float> out);

/// Index scores of the first `visible` cached keys for one query:
/// Σ_h relu(q_h · k · index_dim^-½) · weight_h. q: [heads, index_dim] roped;
/// head_weights: [heads] (weights_proj · x, times heads^-½); scores: [visible].
void indexer_scores(std::span<const float> q, std::span<const float> head_weights,
                    const CacheRows& keys, int64_t visible, std::span<float> scores);

/// Positions of the `topk` highest scores in ascending order; ties go to the
/// earlier position.
std::vector<int32_t> top_keys(std::span<const float> scores, int64_t topk);
/// The same, ordering positions in `order` (scratch reused across queries).
std::vector<int32_t> top_keys(std::span<const float> scores, int64_t topk,
                              std::vector<int32_t>& order);

/// Chooses keys for S new positions (first at pos0) whose keys are already in
/// the cache. q_resid: q_a_layernorm output [S, q_lora]; x: normed hidden.
/// Rows whose position sees at most index_topk keys stay empty (dense).
KeySelection indexer_select(const IndexerWeights& w, const LayerCall& ctx,
                            std::span<const float> q_resid, std::span<const float> x, int64_t S,
                            int64_t pos0);

}  // namespace glmrt
