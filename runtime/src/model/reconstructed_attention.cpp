// Reconstructed MLA: K_nope and V of every key the queries need are expanded
// from the latent rows (one matmul per head for all keys), then standard
// attention per head and query. Expanded keys are shared by all queries of a
// prefill chunk, which is what makes this form pay off for long chunks.
#include <glmrt/kv/row_math.h>
#include <glmrt/model/mla_core.h>
#include <glmrt/weights/linear.h>

#include <algorithm>
#include <cmath>

namespace glmrt {
namespace {

/// Ascending union of the positions the queries attend to.
std::vector<int32_t> needed_positions(std::span<const QueryKeys> keys) {
  int64_t dense = 0;
  std::vector<int32_t> positions;
  for (const QueryKeys& k : keys) {
    if (k.selected.empty())
      dense = std::max(dense, k.visible);
    else
      positions.insert(positions.end(), k.selected.begin(), k.selected.end());
  }
  for (int64_t t = 0; t < dense; ++t) positions.push_back(static_cast<int32_t>(t));
  std::sort(positions.begin(), positions.end());
  positions.erase(std::unique(positions.begin(), positions.end()), positions.end());
  return positions;
}

/// Head h's key block as kv_b stores it, W_k [qk_nope, kv_lora] in f32,
/// transposed back from key_absorb's rows [h*kv_lora, (h+1)*kv_lora). Its
/// values are key_absorb's at the profile's precision, so this form computes
/// with exactly the weights the absorbed form uses.
void head_key_block(const Matrix& key_absorb, int64_t h, int64_t L, int64_t nope,
                    std::span<float> column, std::span<float> out) {
  for (int64_t l = 0; l < L; ++l) {
    key_absorb.dequantize_row(h * L + l, column);
    for (int64_t r = 0; r < nope; ++r) out[r * L + l] = column[r];
  }
}

/// Softmax in place.
void softmax(std::span<float> scores) {
  const float top = *std::max_element(scores.begin(), scores.end());
  float sum = 0.f;
  for (float& s : scores) sum += (s = std::exp(s - top));
  const float inv = 1.f / sum;
  for (float& s : scores) s *= inv;
}

}  // namespace

void reconstructed_attention(KernelsBackend& kernels, const MlaDims& d, const MlaProjections& w,
                             std::span<const float> q, const CacheRows& rows,
                             std::span<const QueryKeys> keys, std::span<float> out) {
  const int64_t S = static_cast<int64_t>(keys.size());
  const int64_t H = d.heads, L = d.kv_lora, R = d.rope, nope = d.nope, vd = d.v_head;
  const int64_t qk = d.qk_head(), W = d.cache_width();
  const float scale = d.score_scale();

  const std::vector<int32_t> positions = needed_positions(keys);
  const int64_t U = static_cast<int64_t>(positions.size());
  std::vector<int32_t> slot(positions.empty() ? 0 : positions.back() + 1, -1);
  for (int64_t u = 0; u < U; ++u) slot[positions[u]] = static_cast<int32_t>(u);

  // The needed rows, split into latent [U, kv_lora] and k_rope [U, rope].
  std::vector<float> latent(U * L), k_rope(U * R);
#pragma omp parallel
  {
    std::vector<float> row(W);
#pragma omp for schedule(static)
    for (int64_t u = 0; u < U; ++u) {
      rows.load(positions[u], row);
      std::copy_n(row.begin(), L, latent.begin() + u * L);
      std::copy_n(row.begin() + L, R, k_rope.begin() + u * R);
    }
  }

  int64_t most_keys = 0;
  for (const QueryKeys& k : keys) most_keys = std::max(most_keys, k.count());
  // Per head: keys [U, qk_head] = [k_nope | k_rope], laid out like the queries.
  std::vector<float> k_nope(U * nope), k_cat(U * qk), v(U * vd);
  std::vector<float> key_block(nope * L), column(nope);
  for (int64_t h = 0; h < H; ++h) {
    head_key_block(w.key_absorb, h, L, nope, column, key_block);
    linear(kernels, latent, U, f32_view(key_block, nope, L), k_nope);
    linear(kernels, latent, U, w.value.view_rows(h * vd, vd), v);
    for (int64_t u = 0; u < U; ++u) {
      std::copy_n(k_nope.begin() + u * nope, nope, k_cat.begin() + u * qk);
      std::copy_n(k_rope.begin() + u * R, R, k_cat.begin() + u * qk + nope);
    }
#pragma omp parallel
    {
      std::vector<float> scores(most_keys);
#pragma omp for schedule(dynamic)
      for (int64_t s = 0; s < S; ++s) {
        const RowBlock query{q.data() + (s * H + h) * qk, 1, qk};
        const std::span<float> o = out.subspan((s * H + h) * vd, vd);
        std::fill(o.begin(), o.end(), 0.f);
        const int64_t n = keys[s].count();
        const std::span<float> p = std::span(scores).first(n);
        if (keys[s].selected.empty()) {
          // Dense: the keys are the first n expanded rows, contiguous.
          scaled_dots(query, {k_cat.data(), n, qk}, qk, scale, p, n);
          softmax(p);
          weighted_row_sum(p, {v.data(), n, vd}, o);
          continue;
        }
        for (int64_t i = 0; i < n; ++i)
          p[i] =
              dot({query.data, static_cast<size_t>(qk)}, k_cat.data() + slot[keys[s].at(i)] * qk) *
              scale;
        softmax(p);
        for (int64_t i = 0; i < n; ++i)
          axpy(p[i], {v.data() + slot[keys[s].at(i)] * vd, static_cast<size_t>(vd)}, o);
      }
    }
  }
}

}  // namespace glmrt
