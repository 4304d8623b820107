// --target-gb's choice: the ladder down, steps to the layer whose next step
// costs the least estimated KL per byte, the target met with the fewest
// steps the greedy order allows, and a target below the lowest step refused
// naming the smallest size.
#include <glmrt/base/error.h>
#include <glmrt/convert/target_size.h>

#include <gtest/gtest.h>

namespace glmrt {
namespace {

TEST(TargetSize, StepsDownTheLadder) {
  const auto k = [](WeightBits b) { return WeightPrecision::two_level_of(b); };
  EXPECT_EQ(precision_name(precision_steps_down(WeightBits::int8, 1)), "int4-k32");
  EXPECT_EQ(precision_name(precision_steps_down(k(WeightBits::int4), 1)), "int3-k32");
  EXPECT_EQ(precision_name(precision_steps_down(k(WeightBits::int4), 2)), "int2-k16");
  EXPECT_EQ(precision_name(precision_steps_down(k(WeightBits::int2), 1)), "int2-k16");
  // Between rungs: the rung below first.
  EXPECT_EQ(precision_name(precision_steps_down(WeightPrecision{WeightBits::int4, 64}, 1)),
            "int4-k32");
  EXPECT_EQ(precision_name(precision_steps_down(WeightPrecision{WeightBits::int4, 64}, 2)),
            "int3-k32");
  EXPECT_EQ(precision_name(precision_steps_down(k(WeightBits::int3), 0)), "int3-k32");
}

TEST(TargetSize, LowersTheLeastSensitiveLayerPerByteFirst) {
  // Layer A saves 100 bytes a step at KL 1e-3, layer B 100 bytes at 1e-4.
  const std::vector<LayerLadder> ladders = {{1, {1000, 900, 800}, 1e-3}, {2, {1000, 900}, 1e-4}};
  const LayerStepChoice one = choose_layer_steps(1000, ladders, 950);
  EXPECT_EQ(one.steps, (std::vector<int>{0, 1}));
  EXPECT_EQ(one.bytes, 900u);
  // B has no second step: A goes next.
  const LayerStepChoice two = choose_layer_steps(1000, ladders, 850);
  EXPECT_EQ(two.steps, (std::vector<int>{1, 1}));
  EXPECT_EQ(two.bytes, 800u);
  // A's second step is estimated at 4x its first.
  EXPECT_NEAR(choose_layer_steps(1000, ladders, 700).estimated_kl, 1e-4 + 1e-3 + 4e-3, 1e-12);
  // Already fits: nothing moves.
  EXPECT_EQ(choose_layer_steps(1000, ladders, 1000).steps, (std::vector<int>{0, 0}));
}

TEST(TargetSize, RefusesATargetBelowTheLowestStep) {
  const std::vector<LayerLadder> ladders = {{1, {3'000'000'000, 2'000'000'000}, 1e-3}};
  try {
    choose_layer_steps(3'000'000'000, ladders, 1'500'000'000);
    ADD_FAILURE() << "an impossible target was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--target-gb 1.5: cannot be met"), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("takes 2 GB"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace glmrt
