#include <glmrt/base/error.h>
#include <glmrt/model/norms.h>
#include <glmrt/model/router.h>

#include <algorithm>
#include <limits>
#include <numeric>

namespace glmrt {

std::vector<RoutedExpert> route(std::span<const float> logits, std::span<const float> bias,
                                const RouterParams& p) {
  const int E = p.n_experts;
  if (static_cast<int>(logits.size()) != E || static_cast<int>(bias.size()) != E)
    fail("router: {} logits and {} biases for {} experts", logits.size(), bias.size(), E);
  if (p.n_group < 1 || E % p.n_group || p.topk_group < 1 || p.topk_group > p.n_group ||
      p.top_k < 1 || p.top_k > E)
    fail("router: invalid grouping (experts {}, n_group {}, topk_group {}, top_k {})", E, p.n_group,
         p.topk_group, p.top_k);

  std::vector<float> score(E), choice(E);
  for (int e = 0; e < E; ++e) {
    score[e] = sigmoid(logits[e]);
    choice[e] = score[e] + bias[e];
  }

  if (p.n_group > 1) {
    const int per_group = E / p.n_group;
    std::vector<float> group_score(p.n_group);
    for (int g = 0; g < p.n_group; ++g) {
      float best = -std::numeric_limits<float>::infinity(), second = best;
      for (int e = g * per_group; e < (g + 1) * per_group; ++e) {
        if (choice[e] > best) {
          second = best;
          best = choice[e];
        } else if (choice[e] > second) {
          second = choice[e];
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
      if (!keep[e / per_group]) choice[e] = -std::numeric_limits<float>::infinity();
  }

  std::vector<int> order(E);
  std::iota(order.begin(), order.end(), 0);
  std::partial_sort(order.begin(), order.begin() + p.top_k, order.end(), [&](int a, int b) {
    return choice[a] > choice[b] || (choice[a] == choice[b] && a < b);
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

}  // namespace glmrt
