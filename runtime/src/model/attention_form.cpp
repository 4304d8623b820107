// Absorbed or reconstructed: a cost model in multiply-adds per form, weighted
// by how fast each kind of work runs here.
#include <glmrt/model/mla_core.h>

#include <algorithm>

namespace glmrt {
namespace {

// Nanoseconds per multiply-add of each kind of work, fitted to BM_Prefill of
// bench_attention (GLM-5 dims, kernels-avx2, f32 cache, OMP_NUM_THREADS=1, CPU
// time, one run on the shared 2-core dev box). Measured points (ms, absorbed
// vs reconstructed): fresh chunk S=16: 21.4 vs 23.5; S=64: 70.8 vs 62.9;
// S=256: 532 vs 309; after 2048 cached positions S=16: 195 vs 3100; S=64:
// 686 vs 3141; S=256: 3261 vs 4976. So a fresh chunk of more than ~100
// positions is cheaper reconstructed, and after 2048 cached positions a chunk
// needs ~600+ positions before expanding every key pays off.
constexpr double kAbsorbProjectionNs = 0.091;  // q absorb + value, per query
constexpr double kLatentScanNs = 0.0758;       // absorbed scan over [latent | k_rope]
constexpr double kExpandNs = 0.099;            // K_nope, V expansion, per key
constexpr double kHeadAttentionNs = 0.0889;    // reconstructed per-head scores and sum

}  // namespace

AttentionForm faster_form(const MlaDims& d, std::span<const QueryKeys> keys) {
  const int64_t S = static_cast<int64_t>(keys.size());
  // A decode step, with or without drafts to verify, stays absorbed: a verified
  // row must give bit for bit the logits decoding it alone (one query, always
  // absorbed) gives, and the other form sums in another order. The cost model
  // never prefers reconstructed for so few rows at GLM-5's sizes anyway
  // (S = 16 fresh: 21.4 vs 23.5 ms above).
  if (S <= kMaxAbsorbedOnlyRows) return AttentionForm::absorbed;
  int64_t pairs = 0, last_visible = 0;
  for (const QueryKeys& k : keys) {
    pairs += k.count();
    last_visible = std::max(last_visible, k.visible);
  }
  // Keys to expand: every visible one when dense, at most `pairs` under DSA.
  const int64_t expanded = std::min(last_visible, pairs);
  const double projection = static_cast<double>(d.heads * (d.nope + d.v_head) * d.kv_lora);
  const double absorbed =
      S * projection * kAbsorbProjectionNs +
      static_cast<double>(pairs) * d.heads * (2 * d.kv_lora + d.rope) * kLatentScanNs;
  const double reconstructed =
      expanded * projection * kExpandNs +
      static_cast<double>(pairs) * d.heads * (d.nope + d.rope + d.v_head) * kHeadAttentionNs;
  return reconstructed < absorbed ? AttentionForm::reconstructed : AttentionForm::absorbed;
}

}  // namespace glmrt
