#include <glmrt/base/error.h>
#include <glmrt/model/attention.h>
#include <glmrt/model/indexer.h>
#include <glmrt/model/norms.h>
#include <glmrt/weights/linear.h>

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <numeric>

namespace glmrt {
namespace {

// Softmax-weighted sum of latent rows for one query position, all heads at
// once: each cache row is read once for every head. q_cat: [H, kv_width] =
// [q_latent | q_rope] per head; ctx_latent: [H, kv_lora].
void attend_position(const CacheRows& kv, std::span<const int32_t> keys, int64_t n_keys, int64_t H,
                     int64_t kv_lora, float scale, std::span<const float> q_cat,
                     std::span<float> ctx_latent) {
  const int64_t width = kv.width;
  auto key_at = [&](int64_t i) -> int64_t { return keys.empty() ? i : keys[i]; };
  std::vector<float> scores(H * n_keys);
#pragma omp parallel
  {
    std::vector<float> row(width);
#pragma omp for schedule(static)
    for (int64_t i = 0; i < n_keys; ++i) {
      kv.load(key_at(i), row);
      for (int64_t h = 0; h < H; ++h) {
        const float* q = q_cat.data() + h * width;
        float dot = 0.f;
#pragma omp simd reduction(+ : dot)
        for (int64_t j = 0; j < width; ++j) dot += q[j] * row[j];
        scores[h * n_keys + i] = dot * scale;
      }
    }
#pragma omp for schedule(static)
    for (int64_t h = 0; h < H; ++h) {
      float* sc = scores.data() + h * n_keys;
      const float m = *std::max_element(sc, sc + n_keys);
      float sum = 0.f;
      for (int64_t i = 0; i < n_keys; ++i) sum += (sc[i] = std::exp(sc[i] - m));
      const float inv = 1.f / sum;
      for (int64_t i = 0; i < n_keys; ++i) sc[i] *= inv;
    }
  }
  // Split over keys with a private accumulator per thread, then reduce.
  const int threads = std::min<int64_t>(omp_get_max_threads(), std::max<int64_t>(1, n_keys / 16));
  std::vector<float> partial(static_cast<size_t>(threads) * H * kv_lora, 0.f);
#pragma omp parallel num_threads(threads)
  {
    const int tid = omp_get_thread_num();
    std::vector<float> row(width);
    float* acc = partial.data() + static_cast<size_t>(tid) * H * kv_lora;
#pragma omp for schedule(static)
    for (int64_t i = 0; i < n_keys; ++i) {
      kv.load(key_at(i), row);
      for (int64_t h = 0; h < H; ++h) {
        const float p = scores[h * n_keys + i];
        float* a = acc + h * kv_lora;
#pragma omp simd
        for (int64_t j = 0; j < kv_lora; ++j) a[j] += p * row[j];
      }
    }
  }
  std::fill(ctx_latent.begin(), ctx_latent.end(), 0.f);
  for (int t = 0; t < threads; ++t)
    for (int64_t j = 0; j < H * kv_lora; ++j) ctx_latent[j] += partial[t * H * kv_lora + j];
}

}  // namespace

void mla_attention(const AttentionWeights& w, const LayerContext& ctx, std::span<const float> x,
                   int64_t S, KeySelection& selection, std::span<float> out) {
  const ModelConfig& c = ctx.config;
  const int64_t H = c.num_attention_heads, L = c.kv_lora_rank, R = c.qk_rope_head_dim;
  const int64_t nope = c.qk_nope_head_dim, qk = c.qk_head_dim(), vd = c.v_head_dim;
  const int64_t width = L + R;
  const int64_t pos0 = ctx.cache.length(ctx.layer);

  // Queries: q_b(q_a_layernorm(q_a(x))), RoPE on each head's rope slice.
  std::vector<float> q_resid(S * c.q_lora_rank), q(S * H * qk);
  linear(ctx.kernels, x, S, w.q_a, q_resid);
  rms_norm_rows(q_resid, w.q_a_norm, 1e-6f, q_resid);
  linear(ctx.kernels, q_resid, S, w.q_b, q);
  for (int64_t s = 0; s < S; ++s)
    for (int64_t h = 0; h < H; ++h)
      ctx.rope.apply(std::span(q).subspan((s * H + h) * qk + nope, R), pos0 + s,
                     c.rope_interleave ? RopePairing::interleaved : RopePairing::split_half);

  // New cache rows: [normed latent | roped k_rope], and the indexer's keys.
  std::vector<float> kv(S * width);
  linear(ctx.kernels, x, S, w.kv_a, kv);
  for (int64_t s = 0; s < S; ++s) {
    auto row = std::span(kv).subspan(s * width, width);
    rms_norm(row.first(L), w.kv_a_norm, 1e-6f, row.first(L));
    ctx.rope.apply(row.subspan(L, R), pos0 + s,
                   c.rope_interleave ? RopePairing::interleaved : RopePairing::split_half);
  }
  std::vector<float> index_keys;
  if (w.indexer) {
    index_keys.resize(S * c.index_head_dim);
    indexer_keys(*w.indexer, ctx, x, S, pos0, index_keys);
  }
  ctx.cache.append(ctx.layer, S, kv, index_keys);

  if (w.indexer) {
    selection = indexer_select(*w.indexer, ctx, q_resid, x, S, pos0);
  } else if (static_cast<int64_t>(selection.rows.size()) != S) {
    fail("layer {}: a shared indexer layer needs the previous layer's selection", ctx.layer);
  }

  // Absorb: q_cat[s, h] = [W_k,hᵀ q_nope | q_rope].
  std::vector<float> q_cat(S * H * width), q_nope(S * nope), q_lat(S * L);
  for (int64_t h = 0; h < H; ++h) {
    for (int64_t s = 0; s < S; ++s)
      std::copy_n(q.begin() + (s * H + h) * qk, nope, q_nope.begin() + s * nope);
    linear(ctx.kernels, q_nope, S, w.key_absorb.view_rows(h * L, L), q_lat);
    for (int64_t s = 0; s < S; ++s) {
      float* dst = q_cat.data() + (s * H + h) * width;
      std::copy_n(q_lat.begin() + s * L, L, dst);
      std::copy_n(q.begin() + (s * H + h) * qk + nope, R, dst + L);
    }
  }

  const float scale = 1.f / std::sqrt(static_cast<float>(qk));
  const CacheRows rows = ctx.cache.kv_rows(ctx.layer);
  std::vector<float> ctx_latent(S * H * L);
  for (int64_t s = 0; s < S; ++s) {
    const auto& keys = selection.rows[s];
    const int64_t n_keys = keys.empty() ? pos0 + s + 1 : static_cast<int64_t>(keys.size());
    attend_position(rows, keys, n_keys, H, L, scale, std::span(q_cat).subspan(s * H * width, H * width),
                    std::span(ctx_latent).subspan(s * H * L, H * L));
  }

  // Un-absorb: each head's latent context through kv_b's value block.
  std::vector<float> head_latent(S * L), head_out(S * vd), attn(S * H * vd);
  for (int64_t h = 0; h < H; ++h) {
    for (int64_t s = 0; s < S; ++s)
      std::copy_n(ctx_latent.begin() + (s * H + h) * L, L, head_latent.begin() + s * L);
    linear(ctx.kernels, head_latent, S, w.value.view_rows(h * vd, vd), head_out);
    for (int64_t s = 0; s < S; ++s)
      std::copy_n(head_out.begin() + s * vd, vd, attn.begin() + (s * H + h) * vd);
  }
  linear(ctx.kernels, attn, S, w.o, out);
}

}  // namespace glmrt
