#include <glmrt/model/rope.h>

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace glmrt {
namespace {

TEST(Rope, InterleavedRotatesAdjacentPairs) {
  Rope rope(4, 10000.0);
  std::vector<float> x = {1, 0, 0, 1};
  rope.apply(x, 3, RopePairing::interleaved);
  // pair 0 (x0, x1) angle 3; pair 1 (x2, x3) angle 3 * 10000^-0.5 = 0.03
  EXPECT_NEAR(x[0], std::cos(3.0), 1e-6);
  EXPECT_NEAR(x[1], std::sin(3.0), 1e-6);
  EXPECT_NEAR(x[2], -std::sin(0.03), 1e-6);
  EXPECT_NEAR(x[3], std::cos(0.03), 1e-6);
}

TEST(Rope, SplitHalfRotatesMirroredPairs) {
  Rope rope(4, 10000.0);
  std::vector<float> x = {1, 0, 0, 1};
  rope.apply(x, 3, RopePairing::split_half);
  // pair 0 is (x0, x2) at angle 3; pair 1 is (x1, x3) at angle 0.03
  EXPECT_NEAR(x[0], std::cos(3.0), 1e-6);
  EXPECT_NEAR(x[2], std::sin(3.0), 1e-6);
  EXPECT_NEAR(x[1], -std::sin(0.03), 1e-6);
  EXPECT_NEAR(x[3], std::cos(0.03), 1e-6);
}

// deepseek_tiny's YaRN (factor 4, original context 64, beta 32/1, theta 1e4,
// 8 rope dims): the frequencies transformers computed, listed in its ref.json.
TEST(Rope, YarnBlendsFrequenciesAsTransformers) {
  RopeSettings settings;
  settings.theta = 10000.0;
  settings.yarn = true;
  settings.scaling = {
      .factor = 4, .original_max_position_embeddings = 64, .beta_fast = 32, .beta_slow = 1};
  const Rope rope(8, settings);
  const std::vector<double> expected = {1.0, 0.0625, 0.0025, 0.00025};
  ASSERT_EQ(rope.inv_freq().size(), expected.size());
  for (size_t j = 0; j < expected.size(); ++j) EXPECT_NEAR(rope.inv_freq()[j], expected[j], 1e-15);
  // Without truncation the ramp runs between the unrounded bounds.
  settings.scaling.truncate = false;
  const Rope smooth(8, settings);
  EXPECT_NE(smooth.inv_freq()[1], expected[1]);
  EXPECT_EQ(smooth.inv_freq()[0], 1.0);
}

TEST(Rope, AttentionFactorScalesCosAndSin) {
  RopeSettings settings;
  settings.attention_factor = 1.5;
  const Rope rope(2, settings);
  std::vector<float> x = {1, 0};
  rope.apply(x, 2, RopePairing::interleaved);
  EXPECT_NEAR(x[0], 1.5 * std::cos(2.0), 1e-6);
  EXPECT_NEAR(x[1], 1.5 * std::sin(2.0), 1e-6);
}

TEST(Rope, PositionZeroIsIdentityAndNormIsKept) {
  Rope rope(8, 500000.0);
  std::vector<float> x = {0.3f, -1.f, 2.f, 0.5f, 0.1f, 0.f, -0.7f, 1.2f}, y = x;
  rope.apply(y, 0, RopePairing::interleaved);
  EXPECT_EQ(x, y);
  rope.apply(y, 123456, RopePairing::split_half);
  double n0 = 0, n1 = 0;
  for (size_t i = 0; i < x.size(); ++i) n0 += x[i] * x[i], n1 += y[i] * y[i];
  EXPECT_NEAR(n0, n1, 1e-5);
}

}  // namespace
}  // namespace glmrt
