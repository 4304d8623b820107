// resolve_sampling: generation_config.json first, the profile on top.
#include <glmrt/base/error.h>
#include <glmrt/sampling/sampler.h>

#include <gtest/gtest.h>

#include <fstream>

#include "temp_folder.h"

namespace glmrt {
namespace {

const std::filesystem::path kModel = std::filesystem::path(GLMRT_FIXTURES) / "glm_tiny";
const std::filesystem::path kConfigs = std::filesystem::path(GLMRT_SOURCE_DIR) / "configs";

std::filesystem::path model_with_generation_config(const std::string& name,
                                                   const std::string& json) {
  const auto dir = test::process_temp_folder() / ("glmrt_sampling_" + name);
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "generation_config.json") << json;
  return dir;
}

TEST(ResolveSampling, GenerationConfigGivesTheDefaults) {
  const SamplingParams p = resolve_sampling(kModel, Profile{});
  EXPECT_EQ(p.temperature, 1.0);
  EXPECT_EQ(p.top_p, 0.95);
  EXPECT_EQ(p.top_k, 0);
  EXPECT_EQ(p.max_new_tokens, 256);
}

TEST(ResolveSampling, TheProfileOverridesTheCheckpoint) {
  const SamplingParams p = resolve_sampling(kModel, load_profile(kConfigs / "reference.yaml"));
  EXPECT_EQ(p.temperature, 0.0);  // reference.yaml: greedy
  EXPECT_EQ(p.seed, 1u);
  EXPECT_EQ(p.top_p, 0.95);  // not in the profile: still the checkpoint's
  Profile profile;
  profile.generation.top_k = 40;
  profile.generation.presence_penalty = 0.5;
  profile.generation.frequency_penalty = 0.75;
  const SamplingParams q = resolve_sampling(kModel, profile);
  EXPECT_EQ(q.top_k, 40);
  EXPECT_EQ(q.presence_penalty, 0.5);
  EXPECT_EQ(q.frequency_penalty, 0.75);
}

TEST(ResolveSampling, DoSampleFalseMeansGreedy) {
  const auto dir =
      model_with_generation_config("greedy", R"({"do_sample": false, "temperature": 0.6})");
  EXPECT_EQ(resolve_sampling(dir, Profile{}).temperature, 0.0);
}

TEST(ResolveSampling, WithoutGenerationConfigTheBuiltInDefaultsApply) {
  const auto dir = test::process_temp_folder() / "glmrt_sampling_none";
  std::filesystem::create_directories(dir);
  const SamplingParams p = resolve_sampling(dir, Profile{});
  EXPECT_EQ(p.temperature, SamplingParams{}.temperature);
  EXPECT_EQ(p.top_p, SamplingParams{}.top_p);
}

TEST(ResolveSampling, AMistypedKeyIsAnErrorNamingFileAndKey) {
  const auto dir = model_with_generation_config("mistyped", R"({"top_k": "forty"})");
  try {
    resolve_sampling(dir, Profile{});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("generation_config.json"), std::string::npos) << message;
    EXPECT_NE(message.find("top_k"), std::string::npos) << message;
  }
  const auto broken = model_with_generation_config("broken", "{not json");
  EXPECT_THROW(resolve_sampling(broken, Profile{}), Error);
}

}  // namespace
}  // namespace glmrt
