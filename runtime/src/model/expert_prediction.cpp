#include <glmrt/model/expert_prediction.h>
#include <glmrt/model/norms.h>
#include <glmrt/model/router.h>
#include <glmrt/weights/linear.h>

#include <algorithm>
#include <numeric>

namespace glmrt {

void predict_experts(const LayerWeights& next, const ModelConfig& c, KernelsBackend& kernels,
                     std::span<const float> h, int64_t S, size_t limit, MoeScratch& m) {
  const int64_t D = c.hidden_size, E = c.n_routed_experts, K = c.num_experts_per_tok;
  if (m.predict_normed.size() < static_cast<size_t>(S * D)) m.predict_normed.resize(S * D);
  if (m.predict_logits.size() < static_cast<size_t>(S * E)) m.predict_logits.resize(S * E);
  const std::span<float> normed(m.predict_normed.data(), static_cast<size_t>(S * D));
  const std::span<float> logits(m.predict_logits.data(), static_cast<size_t>(S * E));
  rms_norm_rows(h.first(static_cast<size_t>(S * D)), next.post_attention_norm,
                static_cast<float>(c.rms_norm_eps), normed);
  linear(kernels, normed, S, next.moe.router, logits);
  const RouterParams params{static_cast<int>(E), c.num_experts_per_tok,
                            c.n_group,           c.topk_group,
                            c.norm_topk_prob,    static_cast<float>(c.routed_scaling_factor)};
  // Votes: K - rank per position, so an expert every position picks first
  // beats one picked last by as many.
  m.votes.assign(static_cast<size_t>(E), 0);
  for (int64_t s = 0; s < S; ++s) {
    const auto chosen = route(logits.subspan(s * E, E), next.moe.correction_bias, params);
    for (size_t r = 0; r < chosen.size(); ++r)
      m.votes[static_cast<size_t>(chosen[r].expert)] += K - static_cast<int64_t>(r);
  }
  m.predicted.clear();
  for (int64_t e = 0; e < E; ++e)
    if (m.votes[e] > 0) m.predicted.push_back(static_cast<int32_t>(e));
  std::stable_sort(m.predicted.begin(), m.predicted.end(),
                   [&](int32_t a, int32_t b) { return m.votes[a] > m.votes[b]; });
  if (m.predicted.size() > limit) m.predicted.resize(limit);
}

}  // namespace glmrt
