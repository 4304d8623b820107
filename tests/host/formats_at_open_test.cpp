// The engine asks the kernels plugin about every weight format the run will
// use before any tensor is read: a named plugin that cannot run one is
// refused naming plugin and format, and `kernels: auto` passes over it.
#include <glmrt/base/error.h>
#include <glmrt/memory/memory_estimates.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>

#include "engine_fixture.h"

namespace glmrt {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

const std::filesystem::path kF32Only = std::filesystem::path(GLMRT_TEST_PLUGIN_DIR) / "f32-only";

/// int8 dense weights: the embedding and lm_head go bf16 (the boundary precision).
Profile int8_profile() {
  Profile profile = test_support::reference_profile();
  profile.dense_bits = WeightBits::int8;
  profile.history = false;
  return profile;
}

TEST(FormatsAtOpen, ANamedPluginThatCannotRunAFormatIsRefusedBeforeLoading) {
  Profile profile = int8_profile();
  profile.kernels = PluginChoice{(kF32Only / "libglmrt-test-f32-only.so").string(), {}, {}};
  try {
    test_support::open_tiny_engine(profile);
    FAIL() << "an f32-only plugin opened an int8 run";
  } catch (const Error& e) {
    EXPECT_THAT(std::string(e.what()),
                AllOf(HasSubstr("kernels plugin `test-f32-only`"),
                      HasSubstr("does not support bf16 weights"), HasSubstr("nothing was loaded")));
  }
}

TEST(FormatsAtOpen, AutoPassesOverAPluginThatCannotRunAFormat) {
  Profile profile = int8_profile();
  profile.kernels = PluginChoice{"auto", {}, {}};
  profile.plugin_paths.insert(profile.plugin_paths.begin(), kF32Only);
  testing::internal::CaptureStderr();
  const auto engine = test_support::open_tiny_engine(profile);
  const std::string notes = testing::internal::GetCapturedStderr();
  EXPECT_NE(engine->kernels_info().name, "test-f32-only");
  EXPECT_THAT(notes, HasSubstr("`test-f32-only` (score 900) does not support bf16 weights"));
  // With f32 weights only, the best score wins again.
  Profile f32 = test_support::reference_profile();
  f32.history = false;
  f32.kernels = PluginChoice{"auto", {}, {}};
  f32.plugin_paths.insert(f32.plugin_paths.begin(), kF32Only);
  EXPECT_EQ(test_support::open_tiny_engine(f32)->kernels_info().name, "test-f32-only");
}

TEST(FormatsAtOpen, FormatsInUseCoverDenseExpertsAndTheAttentionBlocks) {
  const TensorDirectory tensors = TensorDirectory::open(test_support::kTinyModel);
  const ModelConfig config = load_model_config(test_support::kTinyModel, tensors);
  Profile profile = test_support::reference_profile();
  profile.dense_bits = WeightBits::int8;
  profile.expert_bits = WeightPrecision(WeightBits::int4, 32);
  const auto layouts = plan_expert_layouts(config, tensors, config.num_hidden_layers + 1);
  std::vector<std::string> names;
  for (const UsedWeightFormat& f : weight_formats_in_use(profile, config, tensors, layouts))
    names.push_back(f.name());
  // int8 dense, the boundary and f32-kept matrices, int4-g32 experts.
  for (const char* expected : {"int8", "f32", "int4-g32"})
    EXPECT_NE(std::find(names.begin(), names.end(), expected), names.end()) << expected;
}

}  // namespace
}  // namespace glmrt
