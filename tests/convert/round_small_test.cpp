// round_small, the quantizers' rounding on baseline x86-64, against
// std::nearbyint over its whole range: halves (ties to even), both signs,
// the edges, NaN.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "weights/round_small.h"

namespace glmrt {
namespace {

TEST(RoundSmall, MatchesNearbyintBelowTwoToThe22) {
  for (float x : {0.f, 0.5f, 1.5f, 2.5f, -0.5f, -1.5f, -2.5f, 127.49998f, 127.5f, -128.5f, 4095.5f,
                  0x1.fffffcp21f, -0x1.fffffcp21f, 1e-30f, -1e-30f})
    EXPECT_EQ(round_small(x), std::nearbyint(x)) << x;
  std::mt19937 rng(4);
  std::uniform_real_distribution<float> wide(-0x1p22f, 0x1p22f), narrow(-200.f, 200.f);
  for (int i = 0; i < 100000; ++i) {
    const float a = wide(rng), b = narrow(rng);
    ASSERT_EQ(round_small(a), std::nearbyint(a)) << a;
    ASSERT_EQ(round_small(b), std::nearbyint(b)) << b;
    const float half = std::floor(b) + 0.5f;  // a tie
    ASSERT_EQ(round_small(half), std::nearbyint(half)) << half;
  }
  EXPECT_TRUE(std::isnan(round_small(std::nanf(""))));
}

}  // namespace
}  // namespace glmrt
