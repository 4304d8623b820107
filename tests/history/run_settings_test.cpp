// The run's settings are resolved once, and the engine, its memory plan and
// its expert store all read them: none derives a default of its own.
#include "engine_fixture.h"

#include <glmrt/memory/run_settings.h>

#include <gtest/gtest.h>

#include <omp.h>

namespace glmrt {
namespace {

using test_support::kTinyModel;

struct TinyConfig {
  TensorDirectory tensors = TensorDirectory::open(kTinyModel);
  ModelConfig config = load_model_config(kTinyModel, tensors);
};

TEST(RunSettings, DefaultsComeFromTheProfileAndTheModel) {
  const TinyConfig tiny;
  Profile profile = test_support::reference_profile();
  profile.threads = 0;
  profile.prefetch_slots.reset();
  profile.expert_cache_auto = true;
  profile.history = true;
  profile.history_folder = "/somewhere/histories";
  const RunSettings s = resolve_run_settings(profile, tiny.config);
  EXPECT_EQ(s.threads, omp_get_num_procs());
  EXPECT_EQ(s.prefetch_slots, tiny.config.num_experts_per_tok);
  EXPECT_TRUE(s.expert_cache_auto);
  EXPECT_EQ(s.expert_cache_per_layer, kDefaultExpertCachePerLayer);
  EXPECT_EQ(s.history_folder, std::filesystem::path("/somewhere/histories"));
  EXPECT_EQ(s.history_rows, tiny.config.num_hidden_layers + 1);  // glm_tiny declares MTP

  profile.threads = 3;
  profile.prefetch_slots = 0;
  profile.expert_cache_auto = false;
  profile.expert_cache_per_layer = 5;
  profile.history = false;
  const RunSettings fixed = resolve_run_settings(profile, tiny.config);
  EXPECT_EQ(fixed.threads, 3);
  EXPECT_EQ(fixed.prefetch_slots, 0);
  EXPECT_EQ(fixed.expert_cache_per_layer, 5);
  EXPECT_FALSE(fixed.history_folder);
}

TEST(RunSettings, TheEngineItsPlanAndItsStoreAgree) {
  Profile profile = test_support::reference_profile();
  profile.history = false;
  profile.threads = 2;
  profile.prefetch_slots.reset();    // auto: the model's experts per token
  profile.expert_cache_auto = true;  // and no budget: the default
  profile.memory_budget_bytes = 0;
  profile.memory_budget_auto = false;
  const auto engine = test_support::open_tiny_engine(profile);
  const RunSettings& s = engine->settings();
  EXPECT_EQ(s.prefetch_slots, engine->model().config().num_experts_per_tok);
  EXPECT_EQ(engine->experts().sizes().prefetch, s.prefetch_slots);
  EXPECT_EQ(engine->memory_plan().forward_threads, s.threads);
  EXPECT_EQ(engine->services().n_threads(), s.threads);
  EXPECT_EQ(engine->memory_plan().cache_per_layer, kDefaultExpertCachePerLayer);
  EXPECT_EQ(engine->experts().cache_per_layer(), engine->memory_plan().cache_per_layer);
  EXPECT_EQ(engine->expert_rows(), s.history_rows);
}

}  // namespace
}  // namespace glmrt
