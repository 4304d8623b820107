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
