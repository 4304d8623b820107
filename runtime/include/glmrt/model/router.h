// The MoE router of DeepSeek-V3 / GLM-5 (noaux_tc): sigmoid scores, selection on
// score + correction bias, optionally limited to the best groups of experts.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace glmrt {

struct RouterParams {
  int n_experts = 0;
  int top_k = 0;
  int n_group = 1;
  int topk_group = 1;
  bool norm_topk_prob = true;
  float routed_scaling_factor = 1.f;
};

struct RoutedExpert {
  int32_t expert;
  float weight;
};

/// Chooses top_k experts for one position from its router logits [n_experts]:
/// choice score = sigmoid(logit) + bias; with n_group > 1 only the topk_group
/// groups with the largest sum of their two best choice scores keep their
/// choice score, the others' experts rank by 0 (as transformers masks them:
/// with strongly negative biases a dropped group's expert can win). The
/// weights are the plain sigmoid values of the chosen, normalised when
/// norm_topk_prob (+1e-20), times routed_scaling_factor. Order: by choice
/// score, best first.
std::vector<RoutedExpert> route(std::span<const float> logits, std::span<const float> bias,
                                const RouterParams& params);

/// A position's experts under cache-aware routing, and how many of them the
/// exact routing would not have chosen.
struct CacheBiasedChoice {
  std::vector<RoutedExpert> chosen;
  int substitutions = 0;
};

/// route() with `cache_bias` added to the choice score of every expert
/// `in_memory` marks (one flag per expert: pinned, in an LRU slot or arriving
/// in one): an expert in RAM then replaces a selected one that is not when
/// its choice score is within cache_bias of it (ties: the lower id). Groups
/// are kept as the exact scores choose them. The weights are the plain sigmoid
/// values of the experts actually chosen, normalised and scaled as route()
/// does. cache_bias 0 chooses exactly as route().
CacheBiasedChoice route_cache_biased(std::span<const float> logits, std::span<const float> bias,
                                     const RouterParams& params, std::span<const uint8_t> in_memory,
                                     float cache_bias);

}  // namespace glmrt
