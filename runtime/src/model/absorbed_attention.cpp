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

namespace {

template <typename T>
std::span<T> sized(std::vector<T>& v, int64_t n) {
  if (static_cast<int64_t>(v.size()) < n) v.resize(static_cast<size_t>(n));
  return std::span(v).first(static_cast<size_t>(n));
}

}  // namespace

void absorbed_attention(plugin::Kernels& kernels, const MlaDims& d, const MlaProjections& w,
                        std::span<const float> q, const CacheRows& rows,
                        std::span<const QueryKeys> keys, LatentScratch& scratch,
                        std::span<float> out, KernelLanes lanes) {
  const int64_t S = static_cast<int64_t>(keys.size());
  const int64_t H = d.heads, L = d.kv_lora, R = d.rope, nope = d.nope, vd = d.v_head;
  const int64_t qk = d.qk_head(), W = d.cache_width();
  const std::span<float> q_cat = sized(scratch.q_cat, S * H * W);
  const std::span<float> ctx_latent = sized(scratch.ctx_latent, S * H * L);

  // q_cat[s, h] = [W_k,hᵀ q_nope | q_rope]: one matmul per head for all S
  // queries. A single query's heads are read and written in place, side by
  // side on the lanes.
  if (S == 1) {
    for_each_on_lanes(lanes, kernels, H, [&](plugin::Kernels& k, int, int64_t h) {
      linear(k, q.subspan(h * qk, nope), 1, w.key_absorb.view_rows(h * L, L),
             q_cat.subspan(h * W, L));
      std::copy_n(q.begin() + h * qk + nope, R, q_cat.begin() + h * W + L);
    });
  } else {
    const std::span<float> q_nope = sized(scratch.head_in, S * nope);
    const std::span<float> q_latent = sized(scratch.head_out, S * L);
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
  }

  attend_latent_batch(d, q_cat, rows, keys, scratch, ctx_latent);

  // Each head's latent context through its value block.
  if (S == 1) {
    for_each_on_lanes(lanes, kernels, H, [&](plugin::Kernels& k, int, int64_t h) {
      linear(k, ctx_latent.subspan(h * L, L), 1, w.value.view_rows(h * vd, vd),
             out.subspan(h * vd, vd));
    });
    return;
  }
  const std::span<float> head_latent = sized(scratch.head_in, S * L);
  const std::span<float> head_out = sized(scratch.head_out, S * vd);
  for (int64_t h = 0; h < H; ++h) {
    for (int64_t s = 0; s < S; ++s)
      std::copy_n(ctx_latent.begin() + (s * H + h) * L, L, head_latent.begin() + s * L);
    linear(kernels, head_latent, S, w.value.view_rows(h * vd, vd), head_out);
    for (int64_t s = 0; s < S; ++s)
      std::copy_n(head_out.begin() + s * vd, vd, out.begin() + (s * H + h) * vd);
  }
}

}  // namespace glmrt
