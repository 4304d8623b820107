// The core of multi-head latent attention, from the roped per-head queries to
// the per-head outputs that o_proj mixes: everything after the q/kv
// projections and before o_proj, callable without a Model (benchmarks and
// tests drive it on random inputs). Two equivalent forms:
//  - absorbed: q_nope is folded through kv_b's key block into latent space,
//    scores and the weighted sum run over cached [latent | k_rope] rows, kv_b's
//    value block is applied once per query afterwards. Cost grows with
//    queries x keys x heads x (2 kv_lora + rope).
//  - reconstructed: K_nope and V are expanded from the latent rows of the keys
//    the queries need (one matmul per head), then standard attention. Cost
//    grows with keys x heads x (qk_nope + v_head) x kv_lora, once for all
//    queries of a prefill chunk.
#pragma once

#include <glmrt/kv/kv_cache.h>
#include <glmrt/weights/kernels_backend.h>
#include <glmrt/weights/matrix.h>

#include <cstdint>
#include <span>
#include <vector>

namespace glmrt {

struct MlaDims {
  int64_t heads = 0, kv_lora = 0, rope = 0, nope = 0, v_head = 0;
  double score_multiplier = 1.0;  // YaRN's mscale(factor, mscale_all_dim)², else 1
  int64_t qk_head() const { return nope + rope; }
  int64_t cache_width() const { return kv_lora + rope; }
  float score_scale() const;  // score_multiplier / sqrt(qk_nope + qk_rope)
};

/// kv_b split per head (see AttentionWeights). The reconstructed form needs
/// the key block as stored ([qk_nope, kv_lora] per head); it transposes it
/// back from key_absorb, so both forms use the very same weight values and
/// only one copy stays resident.
struct MlaProjections {
  const Matrix& key_absorb;  // [heads * kv_lora, qk_nope]: key block transposed
  const Matrix& value;       // [heads * v_head, kv_lora]
};

/// The cached positions one query attends to: the DSA selection (ascending),
/// or, when it is empty, the first `visible` positions.
struct QueryKeys {
  std::span<const int32_t> selected;
  int64_t visible = 0;
  int64_t count() const {
    return selected.empty() ? visible : static_cast<int64_t>(selected.size());
  }
  int64_t at(int64_t i) const { return selected.empty() ? i : selected[i]; }
};

enum class AttentionForm { absorbed, reconstructed };

/// Which form a model runs: the cost model's choice, or one form forced
/// (tests and `glmrt validate --attention-form` check each against the oracle).
enum class AttentionFormChoice { automatic, absorbed, reconstructed };

/// Steps of at most this many queries (a decode step and the drafts it
/// verifies) always run absorbed, so each row is computed as it is alone.
constexpr int64_t kMaxAbsorbedOnlyRows = 16;

/// The faster form for S queries with these keys (rule measured by
/// bench/attention; see attention_form.cpp). Up to kMaxAbsorbedOnlyRows
/// queries are always absorbed.
AttentionForm faster_form(const MlaDims& dims, std::span<const QueryKeys> keys);

/// Buffers of the absorbed form, kept across positions, heads, layers and
/// steps so a step allocates nothing once they have grown: per thread for the
/// scan, the latent queries and contexts, the per-head products' list.
class LatentScratch {
 public:
  std::vector<float> q_cat;                    // [S, heads, cache_width]
  std::vector<float> ctx_latent;               // [S, heads, kv_lora]
  std::vector<glmrt_matmul_product> products;  // one per head

  struct Thread {
    std::vector<float> tile;      // [tile_keys, cache_width] rows widened to f32
    std::vector<float> scores;    // [heads, tile_keys]
    std::vector<float> acc;       // [heads, kv_lora] unnormalised weighted sum
    std::vector<float> max, sum;  // [heads] running softmax max and denominator
  };
  /// Buffers for `threads` threads of problems of these dims.
  std::span<Thread> prepare(const MlaDims& dims, int threads);

 private:
  std::vector<Thread> threads_;
};

/// Absorbed attention for one query, all heads: ctx_latent[h] = Σ softmax(q_cat[h] · row)
/// row[:kv_lora]. q_cat: [heads, cache_width] = [W_kᵀ q_nope | q_rope] per head; ctx_latent:
/// [heads, kv_lora]. One pass over the rows with an online softmax, split over threads by keys.
void attend_latent(const MlaDims& dims, std::span<const float> q_cat, const CacheRows& rows,
                   QueryKeys keys, LatentScratch& scratch, std::span<float> ctx_latent);

/// attend_latent for S queries: q_cat [S, heads, cache_width], keys [S],
/// ctx_latent [S, heads, kv_lora]. Positions go to threads when there are at
/// least as many positions as threads, else each position splits its keys.
void attend_latent_batch(const MlaDims& dims, std::span<const float> q_cat, const CacheRows& rows,
                         std::span<const QueryKeys> keys, LatentScratch& scratch,
                         std::span<float> ctx_latent);

/// Absorbed form for S queries. q: [S, heads, qk_head] roped; keys: [S];
/// out: [S, heads * v_head] (o_proj's input). The per-head products (q_nope
/// into latent space, the latent context through the value block) are one
/// grouped call each, reading and writing each head's slice in place.
void absorbed_attention(KernelsBackend& kernels, const MlaDims& dims, const MlaProjections& w,
                        std::span<const float> q, const CacheRows& rows,
                        std::span<const QueryKeys> keys, LatentScratch& scratch,
                        std::span<float> out);

/// The absorbed form's products alone, for queries stacked from several
/// sequences (each row's result is the one it gets alone): q_cat [S, heads,
/// cache_width] = [W_kᵀ q_nope | q_rope] per head from q [S, heads, qk_head];
/// and out [S, heads * v_head] from the latent contexts [S, heads, kv_lora].
void absorb_queries(KernelsBackend& kernels, const MlaDims& dims, const MlaProjections& w,
                    std::span<const float> q, int64_t S, std::span<float> q_cat,
                    std::vector<glmrt_matmul_product>& products);
void expand_latent_context(KernelsBackend& kernels, const MlaDims& dims, const MlaProjections& w,
                           std::span<const float> ctx_latent, int64_t S, std::span<float> out,
                           std::vector<glmrt_matmul_product>& products);

/// Reconstructed form for S queries: expands K_nope and V of the union of the
/// queries' keys, head by head. Same arguments and result as absorbed_attention.
void reconstructed_attention(KernelsBackend& kernels, const MlaDims& dims, const MlaProjections& w,
                             std::span<const float> q, const CacheRows& rows,
                             std::span<const QueryKeys> keys, std::span<float> out);

}  // namespace glmrt
