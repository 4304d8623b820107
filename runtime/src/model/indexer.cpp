#include <glmrt/base/parallel_work.h>
#include <glmrt/kv/row_math.h>
#include <glmrt/model/indexer.h>
#include <glmrt/model/norms.h>
#include <glmrt/weights/linear.h>

#include <algorithm>
#include <cmath>
#include <numeric>

namespace glmrt {
namespace {

RopePairing indexer_pairing(const ModelConfig& c) {
  return c.indexer_rope_interleave ? RopePairing::interleaved : RopePairing::split_half;
}

// Keys scored per tile: 64 rows of 128 f32 (32 KB) stay in L1/L2 for all heads.
constexpr int64_t kIndexerTileKeys = 64;

}  // namespace

void indexer_scores(std::span<const float> q, std::span<const float> head_weights,
                    const CacheRows& keys, int64_t visible, std::span<float> scores) {
  const int64_t heads = static_cast<int64_t>(head_weights.size());
  const int64_t d = static_cast<int64_t>(q.size()) / heads;
  const float dot_scale = 1.f / std::sqrt(static_cast<float>(d));
  const int64_t tiles = (visible + kIndexerTileKeys - 1) / kIndexerTileKeys;
#pragma omp parallel if (tiles > 1 && visible * d * heads >= kMinParallelMultiplyAdds)
  {
    std::vector<float> tile(kIndexerTileKeys * d), dots(heads * kIndexerTileKeys);
#pragma omp for schedule(static)
    for (int64_t b = 0; b < tiles; ++b) {
      const int64_t first = b * kIndexerTileKeys, n = std::min(kIndexerTileKeys, visible - first);
      for (int64_t i = 0; i < n; ++i) keys.load(first + i, std::span(tile).subspan(i * d, d));
      scaled_dots({q.data(), heads, d}, {tile.data(), n, d}, d, dot_scale, dots, kIndexerTileKeys);
      relu_weighted_sums(head_weights, dots.data(), kIndexerTileKeys, scores.subspan(first, n));
    }
  }
}

std::vector<int32_t> top_keys(std::span<const float> scores, int64_t topk,
                              std::vector<int32_t>& order) {
  order.resize(scores.size());
  std::iota(order.begin(), order.end(), 0);
  if (static_cast<int64_t>(order.size()) <= topk) return order;
  std::nth_element(order.begin(), order.begin() + topk, order.end(), [&](int32_t a, int32_t b) {
    return scores[a] > scores[b] || (scores[a] == scores[b] && a < b);
  });
  // A copy of exactly topk: every row of a prefill keeps its selection, so
  // a row sized to the keys it scored would make S rows cost S x visible.
  std::vector<int32_t> chosen(order.begin(), order.begin() + topk);
  std::sort(chosen.begin(), chosen.end());
  return chosen;
}

std::vector<int32_t> top_keys(std::span<const float> scores, int64_t topk) {
  std::vector<int32_t> order;
  return top_keys(scores, topk, order);
}

void indexer_keys(const IndexerWeights& w, const ModelContext& model, int layer,
                  std::span<const float> x, int64_t S, std::span<const int64_t> positions,
                  std::span<float> out) {
  const ModelConfig& c = model.config;
  const int64_t d = c.index_head_dim, rope = c.qk_rope_head_dim;
  observe_input(model.activations, {layer, -1, "self_attn.indexer", "wk.weight"}, x, S);
  linear(model.kernels, x, S, w.wk, out);
  for (int64_t s = 0; s < S; ++s) {
    auto key = out.subspan(s * d, d);
    layer_norm(key, w.k_norm_weight, w.k_norm_bias, 1e-6f, key);
    model.rope.apply(key.first(rope), positions[s], indexer_pairing(c));
  }
}

KeySelection indexer_select(const IndexerWeights& w, const LayerCall& ctx,
                            std::span<const float> q_resid, std::span<const float> x, int64_t S,
                            int64_t pos0) {
  const ModelConfig& c = ctx.model.config;
  const int64_t heads = c.index_n_heads, d = c.index_head_dim, rope = c.qk_rope_head_dim;
  const int64_t topk = c.index_topk;
  KeySelection selection;
  selection.rows.resize(S);
  // Observed even when no selection is needed: the statistics are of the
  // inputs, which exist either way.
  ctx.observe("self_attn.indexer", "wq_b.weight", q_resid, S);
  ctx.observe("self_attn.indexer", "weights_proj.weight", x, S);
  if (pos0 + S <= topk) return selection;  // every row sees at most topk keys

  std::vector<float> q(S * heads * d), weights(S * heads);
  linear(ctx.model.kernels, q_resid, S, w.wq_b, q);
  linear(ctx.model.kernels, x, S, w.weights_proj, weights);
  const float head_scale = 1.f / std::sqrt(static_cast<float>(heads));
  for (int64_t s = 0; s < S; ++s) {
    for (int64_t h = 0; h < heads; ++h)
      ctx.model.rope.apply(std::span(q).subspan((s * heads + h) * d, rope), pos0 + s,
                           indexer_pairing(c));
    for (int64_t h = 0; h < heads; ++h) weights[s * heads + h] *= head_scale;
  }

  const CacheRows keys = ctx.cache.index_key_rows(ctx.layer);
  std::vector<float> scores;
  std::vector<int32_t> order;
  for (int64_t s = 0; s < S; ++s) {
    const int64_t visible = pos0 + s + 1;
    if (visible <= topk) continue;
    scores.resize(visible);
    indexer_scores(std::span(q).subspan(s * heads * d, heads * d),
                   std::span(weights).subspan(s * heads, heads), keys, visible, scores);
    selection.rows[s] = top_keys(scores, topk, order);
  }
  return selection;
}

}  // namespace glmrt
