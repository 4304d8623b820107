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

}  // namespace

void indexer_keys(const IndexerWeights& w, const LayerContext& ctx, std::span<const float> x,
                  int64_t S, int64_t pos0, std::span<float> out) {
  const ModelConfig& c = ctx.config;
  const int64_t d = c.index_head_dim, rope = c.qk_rope_head_dim;
  linear(ctx.kernels, x, S, w.wk, out);
  for (int64_t s = 0; s < S; ++s) {
    auto key = out.subspan(s * d, d);
    layer_norm(key, w.k_norm_weight, w.k_norm_bias, 1e-6f, key);
    ctx.rope.apply(key.first(rope), pos0 + s, indexer_pairing(c));
  }
}

KeySelection indexer_select(const IndexerWeights& w, const LayerContext& ctx,
                            std::span<const float> q_resid, std::span<const float> x, int64_t S,
                            int64_t pos0) {
  const ModelConfig& c = ctx.config;
  const int64_t heads = c.index_n_heads, d = c.index_head_dim, rope = c.qk_rope_head_dim;
  const int64_t topk = c.index_topk;
  KeySelection selection;
  selection.rows.resize(S);
  if (pos0 + S <= topk) return selection;  // every row sees at most topk keys

  std::vector<float> q(S * heads * d), weights(S * heads);
  linear(ctx.kernels, q_resid, S, w.wq_b, q);
  linear(ctx.kernels, x, S, w.weights_proj, weights);
  const float head_scale = 1.f / std::sqrt(static_cast<float>(heads));
  const float dot_scale = 1.f / std::sqrt(static_cast<float>(d));
  for (int64_t s = 0; s < S; ++s) {
    for (int64_t h = 0; h < heads; ++h)
      ctx.rope.apply(std::span(q).subspan((s * heads + h) * d, rope), pos0 + s, indexer_pairing(c));
    for (int64_t h = 0; h < heads; ++h) weights[s * heads + h] *= head_scale;
  }

  const CacheRows keys = ctx.cache.index_key_rows(ctx.layer);
  std::vector<float> scores;
  for (int64_t s = 0; s < S; ++s) {
    const int64_t visible = pos0 + s + 1;
    if (visible <= topk) continue;
    scores.resize(visible);
    const float* qs = q.data() + s * heads * d;
    const float* ws = weights.data() + s * heads;
#pragma omp parallel for schedule(static)
    for (int64_t t = 0; t < visible; ++t) {
      float total = 0.f;
      for (int64_t h = 0; h < heads; ++h) {
        const float dot = keys.dot(t, {qs + h * d, static_cast<size_t>(d)}) * dot_scale;
        total += std::max(dot, 0.f) * ws[h];
      }
      scores[t] = total;
    }
    auto& chosen = selection.rows[s];
    chosen.resize(visible);
    std::iota(chosen.begin(), chosen.end(), 0);
    std::nth_element(chosen.begin(), chosen.begin() + topk, chosen.end(), [&](int32_t a, int32_t b) {
      return scores[a] > scores[b] || (scores[a] == scores[b] && a < b);
    });
    chosen.resize(topk);
    std::sort(chosen.begin(), chosen.end());
  }
  return selection;
}

}  // namespace glmrt
