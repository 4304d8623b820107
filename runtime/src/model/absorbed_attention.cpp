// Absorbed MLA: q_nope through kv_b's key block into latent space, the latent
// scan, then the latent context through kv_b's value block.
#include <glmrt/model/mla_core.h>
#include <glmrt/weights/linear.h>

#include <algorithm>
#include <cmath>

namespace glmrt {

float MlaDims::score_scale() const {
  return static_cast<float>(score_multiplier / std::sqrt(static_cast<double>(qk_head())));
}

namespace {

template <typename T>
std::span<T> sized(std::vector<T>& v, int64_t n) {
  if (static_cast<int64_t>(v.size()) < n) v.resize(static_cast<size_t>(n));
  return std::span(v).first(static_cast<size_t>(n));
}

}  // namespace

void absorb_queries(KernelsBackend& kernels, const MlaDims& d, const MlaProjections& w,
                    std::span<const float> q, int64_t S, std::span<float> q_cat,
                    std::vector<glmrt_matmul_product>& products) {
  const int64_t H = d.heads, L = d.kv_lora, R = d.rope, nope = d.nope;
  const int64_t qk = d.qk_head(), W = d.cache_width();
  // q_cat[s, h] = [W_k,hᵀ q_nope | q_rope]: head h's rows of key_absorb over
  // every query's q_nope slice, all heads in one grouped call.
  products.clear();
  for (int64_t h = 0; h < H; ++h)
    products.push_back(matmul_product(q.data() + h * qk, S, H * qk,
                                      w.key_absorb.view_rows(h * L, L), q_cat.data() + h * W,
                                      H * W));
  kernels.grouped_matmul(products);
  for (int64_t s = 0; s < S; ++s)
    for (int64_t h = 0; h < H; ++h)
      std::copy_n(q.begin() + (s * H + h) * qk + nope, R, q_cat.begin() + (s * H + h) * W + L);
}

void expand_latent_context(KernelsBackend& kernels, const MlaDims& d, const MlaProjections& w,
                           std::span<const float> ctx_latent, int64_t S, std::span<float> out,
                           std::vector<glmrt_matmul_product>& products) {
  const int64_t H = d.heads, L = d.kv_lora, vd = d.v_head;
  // Each head's latent context through its value block, all heads at once.
  products.clear();
  for (int64_t h = 0; h < H; ++h)
    products.push_back(matmul_product(ctx_latent.data() + h * L, S, H * L,
                                      w.value.view_rows(h * vd, vd), out.data() + h * vd, H * vd));
  kernels.grouped_matmul(products);
}

void absorbed_attention(KernelsBackend& kernels, const MlaDims& d, const MlaProjections& w,
                        std::span<const float> q, const CacheRows& rows,
                        std::span<const QueryKeys> keys, LatentScratch& scratch,
                        std::span<float> out) {
  const int64_t S = static_cast<int64_t>(keys.size());
  const std::span<float> q_cat = sized(scratch.q_cat, S * d.heads * d.cache_width());
  const std::span<float> ctx_latent = sized(scratch.ctx_latent, S * d.heads * d.kv_lora);
  absorb_queries(kernels, d, w, q, S, q_cat, scratch.products);
  attend_latent_batch(d, q_cat, rows, keys, scratch, ctx_latent);
  expand_latent_context(kernels, d, w, ctx_latent, S, out, scratch.products);
}

}  // namespace glmrt
