#include <glmrt/base/error.h>
#include <glmrt/model/norms.h>
#include <glmrt/model/router.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace glmrt {
namespace {

/// Each expert's sigmoid score, the score it is ranked by (+ bias), and
/// whether its group is kept when routing is group-limited. Outside the kept
/// groups the ranking score is 0, as transformers masks it (masked_fill 0.0,
/// not -inf): a dropped group's expert still outranks a kept one whose
/// biased score is negative.
struct RouterScores {
  std::vector<float> score, choice;
  std::vector<uint8_t> in_kept_group;
};

RouterScores router_scores(std::span<const float> logits, std::span<const float> bias,
                           const RouterParams& p) {
  const int E = p.n_experts;
  if (static_cast<int>(logits.size()) != E || static_cast<int>(bias.size()) != E)
    fail("router: {} logits and {} biases for {} experts", logits.size(), bias.size(), E);
  if (p.n_group < 1 || E % p.n_group || p.topk_group < 1 || p.topk_group > p.n_group ||
      p.top_k < 1 || p.top_k > E)
    fail("router: invalid grouping (experts {}, n_group {}, topk_group {}, top_k {})", E, p.n_group,
         p.topk_group, p.top_k);

  RouterScores s{std::vector<float>(E), std::vector<float>(E), std::vector<uint8_t>(E, 1)};
  for (int e = 0; e < E; ++e) {
    s.score[e] = sigmoid(logits[e]);
    s.choice[e] = s.score[e] + bias[e];
  }

  if (p.n_group > 1) {
    const int per_group = E / p.n_group;
    std::vector<float> group_score(p.n_group);
    for (int g = 0; g < p.n_group; ++g) {
      float best = -std::numeric_limits<float>::infinity(), second = best;
      for (int e = g * per_group; e < (g + 1) * per_group; ++e) {
        if (s.choice[e] > best) {
          second = best;
          best = s.choice[e];
        } else if (s.choice[e] > second) {
          second = s.choice[e];
        }
      }
      group_score[g] = per_group > 1 ? best + second : best;
    }
    std::vector<int> groups(p.n_group);
    std::iota(groups.begin(), groups.end(), 0);
    std::stable_sort(groups.begin(), groups.end(),
                     [&](int a, int b) { return group_score[a] > group_score[b]; });
    std::vector<bool> keep(p.n_group, false);
    for (int i = 0; i < p.topk_group; ++i) keep[groups[i]] = true;
    for (int e = 0; e < E; ++e)
      if (!keep[e / per_group]) {
        s.choice[e] = 0.f;
        s.in_kept_group[e] = 0;
      }
  }
  return s;
}

/// The top_k experts by `rank_by` (ties: the lower id), weighted by their
/// sigmoid `score`: normalised when norm_topk_prob (+1e-20), times
/// routed_scaling_factor. Best first.
std::vector<RoutedExpert> weighted_top_k(const std::vector<float>& rank_by,
                                         const std::vector<float>& score, const RouterParams& p) {
  std::vector<int> order(p.n_experts);
  std::iota(order.begin(), order.end(), 0);
  std::partial_sort(order.begin(), order.begin() + p.top_k, order.end(), [&](int a, int b) {
    return rank_by[a] > rank_by[b] || (rank_by[a] == rank_by[b] && a < b);
  });

  std::vector<RoutedExpert> chosen(p.top_k);
  float sum = 0.f;
  for (int k = 0; k < p.top_k; ++k) {
    chosen[k] = {order[k], score[order[k]]};
    sum += chosen[k].weight;
  }
  const float norm = p.norm_topk_prob ? 1.f / (sum + 1e-20f) : 1.f;
  for (auto& c : chosen) c.weight *= norm * p.routed_scaling_factor;
  return chosen;
}

}  // namespace

std::vector<RoutedExpert> route(std::span<const float> logits, std::span<const float> bias,
                                const RouterParams& p) {
  const RouterScores s = router_scores(logits, bias, p);
  return weighted_top_k(s.choice, s.score, p);
}

CacheBiasedChoice route_cache_biased(std::span<const float> logits, std::span<const float> bias,
                                     const RouterParams& p, std::span<const uint8_t> in_memory,
                                     float cache_bias) {
  if (static_cast<int>(in_memory.size()) != p.n_experts)
    fail("router: residency of {} experts for {} experts", in_memory.size(), p.n_experts);
  if (!(cache_bias >= 0.f) || !std::isfinite(cache_bias))
    fail("router: cache bias {} (expected a finite number >= 0)", cache_bias);
  const RouterScores s = router_scores(logits, bias, p);
  std::vector<float> biased = s.choice;
  // Experts outside the kept groups keep their masked score: the bias never
  // crosses the group limit.
  for (int e = 0; e < p.n_experts; ++e)
    if (in_memory[e] && s.in_kept_group[e]) biased[e] += cache_bias;
  CacheBiasedChoice c;
  c.chosen = weighted_top_k(biased, s.score, p);
  if (cache_bias > 0.f) {
    const std::vector<RoutedExpert> exact = weighted_top_k(s.choice, s.score, p);
    for (const RoutedExpert& used : c.chosen)
      if (std::none_of(exact.begin(), exact.end(),
                       [&](const RoutedExpert& r) { return r.expert == used.expert; }))
        ++c.substitutions;
  }
  return c;
}

}  // namespace glmrt
