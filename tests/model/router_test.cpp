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

TEST(Router, DroppedGroupsRankByZeroAsTransformersMasksThem) {
  // 4 experts, 2 groups of 2, keep 1, top 2. Biased scores: e0 .5 + 1 = 1.5,
  // e1 .2 - .5 = -.3 (group 0: 1.2); e2 = e3 = .55 (group 1: 1.1). Group 0 is
  // kept, but transformers fills the dropped group's scores with 0.0, not
  // -inf, so expert 2 (0.0, the lower id of the tie) beats expert 1 (-.3).
  const auto logits = logits_for({0.5f, 0.2f, 0.55f, 0.55f});
  const std::vector<float> bias = {1.f, -0.5f, 0.f, 0.f};
  RouterParams p{4, 2, 2, 1, true, 1.f};
  auto chosen = route(logits, bias, p);
  ASSERT_EQ(chosen.size(), 2u);
  EXPECT_EQ(chosen[0].expert, 0);
  EXPECT_EQ(chosen[1].expert, 2);
  EXPECT_NEAR(chosen[0].weight, 0.5f / 1.05f, 1e-6);  // the plain sigmoid scores, normalised
  EXPECT_NEAR(chosen[1].weight, 0.55f / 1.05f, 1e-6);
}

TEST(Router, RejectsInvalidGrouping) {
  std::vector<float> l(6, 0.f), b(6, 0.f);
  EXPECT_THROW(route(l, b, RouterParams{6, 2, 4, 1, true, 1.f}), Error);  // 4 does not divide 6
  EXPECT_THROW(route(l, b, RouterParams{6, 7, 1, 1, true, 1.f}), Error);  // top_k > experts
}

TEST(CacheBiasedRouter, ZeroBiasChoosesExactlyAsTheRouter) {
  const auto logits = logits_for({0.9f, 0.2f, 0.6f, 0.8f, 0.55f});
  const std::vector<float> bias = {0.f, 0.5f, 0.f, 0.f, 0.1f};
  const RouterParams p{5, 2, 1, 1, true, 2.5f};
  const std::vector<uint8_t> in_memory = {0, 0, 1, 0, 1};
  const auto exact = route(logits, bias, p);
  const CacheBiasedChoice c = route_cache_biased(logits, bias, p, in_memory, 0.f);
  ASSERT_EQ(c.chosen.size(), exact.size());
  for (size_t k = 0; k < exact.size(); ++k) {
    EXPECT_EQ(c.chosen[k].expert, exact[k].expert);
    EXPECT_EQ(c.chosen[k].weight, exact[k].weight);  // bit for bit
  }
  EXPECT_EQ(c.substitutions, 0);
}

TEST(CacheBiasedRouter, AnExpertInMemoryWithinTheBiasReplacesTheWeakestAbsentOne) {
  // choice scores 0.9, 0.7, 0.6, 0.8, 0.65: exact top-2 = {0, 3}.
  const auto logits = logits_for({0.9f, 0.2f, 0.6f, 0.8f, 0.55f});
  const std::vector<float> bias = {0.f, 0.5f, 0.f, 0.f, 0.1f};
  const RouterParams p{5, 2, 1, 1, true, 2.5f};
  const std::vector<uint8_t> in_memory = {0, 0, 1, 0, 1};  // experts 2 (0.6) and 4 (0.65)
  // 0.1 is short of 0.8 - 0.65: nothing changes.
  EXPECT_EQ(route_cache_biased(logits, bias, p, in_memory, 0.1f).substitutions, 0);
  // 0.2: expert 4 (0.65 + 0.2) passes expert 3 (0.8), not expert 0 (0.9).
  const CacheBiasedChoice c = route_cache_biased(logits, bias, p, in_memory, 0.2f);
  ASSERT_EQ(c.chosen.size(), 2u);
  EXPECT_EQ(c.chosen[0].expert, 0);
  EXPECT_EQ(c.chosen[1].expert, 4);
  EXPECT_EQ(c.substitutions, 1);
  // The weights are the sigmoid scores of the experts used, renormalised
  // and scaled as the model does.
  EXPECT_NEAR(c.chosen[0].weight, 2.5f * 0.9f / (0.9f + 0.55f), 1e-6);
  EXPECT_NEAR(c.chosen[1].weight, 2.5f * 0.55f / (0.9f + 0.55f), 1e-6);
  // A selected expert already in memory keeps its place: with 0 also in
  // memory, only 3 can be replaced.
  const std::vector<uint8_t> both = {1, 0, 1, 0, 1};
  const CacheBiasedChoice d = route_cache_biased(logits, bias, p, both, 0.5f);
  EXPECT_EQ(d.chosen[0].expert, 0);
  EXPECT_EQ(d.substitutions, 1);
  // Everything in memory: the ranking is the exact one.
  const std::vector<uint8_t> all(5, 1);
  EXPECT_EQ(route_cache_biased(logits, bias, p, all, 5.f).substitutions, 0);
}

TEST(CacheBiasedRouter, TheBiasNeverCrossesTheGroupLimit) {
  // Two groups of two; group 0 (0.9 + 0.8) is kept, group 1 (0.3, 0.2) is
  // not, so its experts stay out however large the bias.
  const auto logits = logits_for({0.9f, 0.8f, 0.3f, 0.2f});
  const std::vector<float> bias(4, 0.f);
  const RouterParams p{4, 2, 2, 1, true, 1.f};
  const std::vector<uint8_t> in_memory = {0, 0, 1, 1};
  const CacheBiasedChoice c = route_cache_biased(logits, bias, p, in_memory, 10.f);
  EXPECT_EQ(c.substitutions, 0);
  EXPECT_EQ(c.chosen[0].expert, 0);
  EXPECT_EQ(c.chosen[1].expert, 1);
}

TEST(CacheBiasedRouter, BadResidencyOrBiasIsAnError) {
  const auto logits = logits_for({0.9f, 0.2f});
  const std::vector<float> bias(2, 0.f);
  const RouterParams p{2, 1, 1, 1, true, 1.f};
  const std::vector<uint8_t> short_mask = {1};
  EXPECT_THROW(route_cache_biased(logits, bias, p, short_mask, 0.1f), Error);
  const std::vector<uint8_t> mask = {0, 1};
  EXPECT_THROW(route_cache_biased(logits, bias, p, mask, -0.1f), Error);
  EXPECT_THROW(route_cache_biased(logits, bias, p, mask, NAN), Error);
}

}  // namespace
}  // namespace glmrt
