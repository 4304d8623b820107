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
/// groups with the largest sum of their two best choice scores compete. The
/// weights are the plain sigmoid values of the chosen, normalised when
/// norm_topk_prob (+1e-20), times routed_scaling_factor. Order: by choice
/// score, best first.
std::vector<RoutedExpert> route(std::span<const float> logits, std::span<const float> bias,
                                const RouterParams& params);

}  // namespace glmrt
