// Absorbed MLA: q_nope through kv_b's key block into latent space, the latent
// scan, then the latent context through kv_b's value block.
#include <glmrt/model/mla_core.h>
#include <glmrt/weights/linear.h>

#include <algorithm>
#include <cmath>

namespace glmrt {

float MlaDims::score_scale() const {
  return 1.f / std::sqrt(static_cast<float>(qk_head()));
}

void absorbed_attention(plugin::Kernels& kernels, const MlaDims& d, const MlaProjections& w,
                        std::span<const float> q, const CacheRows& rows,
                        std::span<const QueryKeys> keys, LatentScratch& scratch,
                        std::span<float> out) {
  const int64_t S = static_cast<int64_t>(keys.size());
  const int64_t H = d.heads, L = d.kv_lora, R = d.rope, nope = d.nope, vd = d.v_head;
  const int64_t qk = d.qk_head(), W = d.cache_width();

  // q_cat[s, h] = [W_k,hᵀ q_nope | q_rope]: one matmul per head for all S queries.
  std::vector<float> q_cat(S * H * W), q_nope(S * nope), q_latent(S * L);
  for (int64_t h = 0; h < H; ++h) {
    for (int64_t s = 0; s < S; ++s)
      std::copy_n(q.begin() + (s * H + h) * qk, nope, q_nope.begin() + s * nope);
    linear(kernels, q_nope, S, w.key_absorb.view_rows(h * L, L), q_latent);
    for (int64_t s = 0; s < S; ++s) {
      float* dst = q_cat.data() + (s * H + h) * W;
      std::copy_n(q_latent.begin() + s * L, L, dst);
      std::copy_n(q.begin() + (s * H + h) * qk + nope, R, dst + L);
    }
  }

  std::vector<float> ctx_latent(S * H * L);
  attend_latent_batch(d, q_cat, rows, keys, scratch, ctx_latent);

  // Each head's latent context through its value block.
  std::vector<float> head_latent(S * L), head_out(S * vd);
  for (int64_t h = 0; h < H; ++h) {
    for (int64_t s = 0; s < S; ++s)
      std::copy_n(ctx_latent.begin() + (s * H + h) * L, L, head_latent.begin() + s * L);
    linear(kernels, head_latent, S, w.value.view_rows(h * vd, vd), head_out);
    for (int64_t s = 0; s < S; ++s)
      std::copy_n(head_out.begin() + s * vd, vd, out.begin() + (s * H + h) * vd);
  }
}

}  // namespace glmrt
