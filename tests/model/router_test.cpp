#include <glmrt/base/error.h>
#include <glmrt/model/router.h>

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace glmrt {
namespace {

float logit_of(float p) {
  return std::log(p / (1 - p));
}

std::vector<float> logits_for(const std::vector<float>& probs) {
  std::vector<float> l;
  for (float p : probs) l.push_back(logit_of(p));
  return l;
}

TEST(Router, PicksTopKBySigmoidPlusBiasAndNormalises) {
  // sigmoid scores 0.9 0.2 0.6 0.8; bias lifts expert 1 above expert 2.
  const auto logits = logits_for({0.9f, 0.2f, 0.6f, 0.8f});
  const std::vector<float> bias = {0.f, 0.5f, 0.f, 0.f};
  RouterParams p{4, 2, 1, 1, true, 1.f};
  auto chosen = route(logits, bias, p);
  ASSERT_EQ(chosen.size(), 2u);
  // choice scores: 0.9, 0.7, 0.6, 0.8
  EXPECT_EQ(chosen[0].expert, 0);
  EXPECT_EQ(chosen[1].expert, 3);
  EXPECT_NEAR(chosen[0].weight, 0.9f / 1.7f, 1e-6);
  EXPECT_NEAR(chosen[1].weight, 0.8f / 1.7f, 1e-6);
}

TEST(Router, WeightsAreSigmoidNotBiasedScores) {
  const auto logits = logits_for({0.3f, 0.4f, 0.1f});
  const std::vector<float> bias = {0.f, 0.f, 1.f};  // expert 2 chosen only thanks to its bias
  RouterParams p{3, 1, 1, 1, false, 2.5f};
  auto chosen = route(logits, bias, p);
  ASSERT_EQ(chosen.size(), 1u);
  EXPECT_EQ(chosen[0].expert, 2);
  EXPECT_NEAR(chosen[0].weight, 0.1f * 2.5f, 1e-6);  // not normalised, scaled
}

TEST(Router, GroupLimitedSelectionKeepsBestGroupsBySumOfTopTwo) {
  // 8 experts in 4 groups of 2; topk_group = 2.
  // group scores (sum of both): g0 = .9+.1 = 1.0, g1 = .6+.6 = 1.2, g2 = .7+.2 = .9, g3 = .55+.55
  // = 1.1 Kept groups: g1, g3. The single best expert overall (0.9, group 0) must be excluded.
  const auto logits = logits_for({0.9f, 0.1f, 0.6f, 0.6f, 0.7f, 0.2f, 0.55f, 0.55f});
  const std::vector<float> bias(8, 0.f);
  RouterParams p{8, 3, 4, 2, true, 1.f};
  auto chosen = route(logits, bias, p);
  ASSERT_EQ(chosen.size(), 3u);
  std::vector<int> ids;
  for (auto& c : chosen) ids.push_back(c.expert);
  EXPECT_EQ(ids[0], 2);
  EXPECT_EQ(ids[1], 3);
  EXPECT_TRUE(ids[2] == 6 || ids[2] == 7);
  float sum = 0;
  for (auto& c : chosen) sum += c.weight;
  EXPECT_NEAR(sum, 1.f, 1e-6);
}

TEST(Router, GroupScoresUseBiasedScores) {
  // 4 experts, 2 groups of 2, keep 1 group. Raw: g0 = .5+.5 = 1.0, g1 = .45+.45 = .9,
  // but a bias of .2 on expert 2 makes g1 = 1.1.
  const auto logits = logits_for({0.5f, 0.5f, 0.45f, 0.45f});
  const std::vector<float> bias = {0.f, 0.f, 0.2f, 0.f};
  RouterParams p{4, 2, 2, 1, true, 1.f};
  auto chosen = route(logits, bias, p);
  EXPECT_EQ(chosen[0].expert, 2);
  EXPECT_EQ(chosen[1].expert, 3);
}

TEST(Router, RejectsInvalidGrouping) {
  std::vector<float> l(6, 0.f), b(6, 0.f);
  EXPECT_THROW(route(l, b, RouterParams{6, 2, 4, 1, true, 1.f}), Error);  // 4 does not divide 6
  EXPECT_THROW(route(l, b, RouterParams{6, 7, 1, 1, true, 1.f}), Error);  // top_k > experts
}

}  // namespace
}  // namespace glmrt
